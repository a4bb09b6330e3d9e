"""Hostile cases for redaction: no byte of a secret reaches any file of a `--redact` site or a snapshot.

Each case writes a small corpus holding a credential as agents really meet it (a Read listing, grep
output, coloured terminal output, AWS CLI JSON, a spawn's description, a hook payload), builds it
for real, and looks for a distinctive piece of the secret in every file of the site, as stored and
as a reader gets it back (HTML entities, JSON escapes and ANSI codes undone).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from agenthropic_site.audit.archive import read_snapshot
from agenthropic_site.cli import main
from agenthropic_site.render.redact import Redactor
from conftest import NEEDS_DOT, build, tree_bytes
from records import assistant, usage, user, write

PROJECT = "-home-u-app"
SID = "00000000-0000-4000-8000-000000000014"
ESC = "\x1b"

# Fake credentials, put together at run time so that this file holds none of their shapes.
ANTHROPIC = "sk-" + "ant-api03-" + "Qm7Rt2Vx9Lp4Zc8Nb3Hd6Kf1Wg5Ys0Ja" + "-Tu8Eo3Ii7AA"
GITHUB = "gh" + "p_" + "Zr4Xw9Qv2Lm7Np3Ks8Ht1Jc6Fb5Dg0Ya2Eu7"
SLACK = "xo" + "xb-" + "123456789012-" + "Wq8Er5Ty2Ui9"
AWS_ID = "AS" + "IA" + "Z7X2M4K9P3R8T6W5"
AWS_SECRET = "Hq3Lw8Zr1Vx6Nm4Kp9Jt2Yb7Gc5Fd0Se8Aw3Qu" + "1P"
AWS_SESSION = "IQoJb3JpZ2luX2VjEJr" + "Lm4Kp9Jt2Yb7Gc5Fd0Se8Aw3QuHq3Lw8Zr1Vx6Nm" * 4 + "ZZ=="


def private_key(kind: str, lines: int = 6, width: int = 70) -> tuple[str, list[str], str]:
    """Return a fake key's BEGIN line, its body lines (deterministic base64) and its END line."""
    seed = kind.encode()
    stream = b""
    while len(stream) * 4 // 3 < lines * width + 8:
        seed = hashlib.sha256(seed).digest()
        stream += seed
    text = base64.b64encode(stream).decode()
    body = [text[i * width : (i + 1) * width] for i in range(lines)]
    body[-1] = body[-1][:24] + "=="  # the short last line of a real key
    label = f"{kind} " + "PRIVATE KEY"
    return f"-----BEGIN {label}-----", body, f"-----END {label}-----"


def middles(*secrets: str) -> list[str]:
    """The distinctive 12-character middle of each secret (or key line) that must appear nowhere."""
    return [secret[len(secret) // 2 - 6 : len(secret) // 2 + 6] for secret in secrets]


_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
TAGS = re.compile(rb"</?([A-Za-z][A-Za-z0-9:-]*)")


def readable_forms(data: bytes) -> list[str]:
    """A file's text as stored and as a reader gets it back: entities, JSON escapes, ANSI codes undone."""
    raw = data.decode("utf-8", "replace")
    forms = [raw, html.unescape(raw)]
    for form in list(forms):
        forms.append(_JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else _SIMPLE.get(m.group(2), m.group(2)), form))
    forms += [_ANSI.sub("", form) for form in forms]
    forms += [html.unescape(form) for form in forms]
    return forms


def leaks(files: dict[str, bytes], parts: list[str]) -> list[tuple[str, str]]:
    """Return (file, piece) for every piece of a secret found in any file, in any readable form."""
    found = []
    for rel, data in files.items():
        forms = readable_forms(data)
        found += [(rel, part) for part in parts if any(part in form for form in forms)]
    return found


def hook(cache: Path, payload: dict) -> None:
    """Run `agenthropic hook` as Claude Code does: a new process, the payload on stdin."""
    env = {**os.environ, "AGENTHROPIC_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-m", "agenthropic_site", "hook"], input=json.dumps(payload).encode(), env=env,
                          capture_output=True, timeout=60)
    assert done.returncode == 0


def assert_masked_everywhere(corpus: Path, tmp_path: Path, parts: list[str], hooks: tuple[dict, ...] = (), code: int = 0) -> dict[str, bytes]:
    """Build plain, with --redact and snapshot the plain site: the secret shows only in the plain site."""
    for name in ("c-plain", "c-red"):
        for payload in hooks:
            hook(tmp_path / name, payload)
    assert build(corpus, tmp_path / "plain", tmp_path / "c-plain") == code
    plain = tree_bytes(tmp_path / "plain")
    assert {part for _, part in leaks(plain, parts)} == set(parts), "every piece reaches the unmasked site"
    assert build(corpus, tmp_path / "red", tmp_path / "c-red", "--redact") == code
    red = tree_bytes(tmp_path / "red")
    assert leaks(red, parts) == []
    assert main(["snapshot", "--site", str(tmp_path / "plain"), "--out", str(tmp_path / "s.tar.gz")]) == 0
    snapshot = read_snapshot(tmp_path / "s.tar.gz")
    assert leaks(snapshot, parts) == []
    # Masking a page's bytes never removes markup.
    assert all(TAGS.findall(snapshot[rel]) == TAGS.findall(data) for rel, data in plain.items() if rel.endswith(".html"))
    # Masking the model's text left nothing for the snapshot's pass over the built bytes to find.
    masks = Redactor()
    assert {rel: masks.file(rel, data) for rel, data in red.items()} == red and sum(masks.counts.values()) == 0
    return red


def session(root: Path, *records: dict, sid: str = SID) -> None:
    write(root / PROJECT / f"{sid}.jsonl", *records)


def tool_exchange(name: str, tool_input: dict, result: str, *, sid: str = SID, n: int = 1) -> list[dict]:
    """An assistant's tool call and the tool's result, as a transcript records them."""
    call = assistant(f"a{n}", f"msg_{n}", f"req_{n}", usage(10, 5), stop="tool_use", session=sid, ts=f"2026-01-01T10:00:0{n}.000Z",
                     content=[{"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": tool_input}])
    answer = user(f"r{n}", [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": result}], session=sid,
                  ts=f"2026-01-01T10:00:0{n}.500Z")
    return [call, answer]


def test_a_private_key_in_a_read_tool_numbered_listing_is_masked_whole(tmp_path: Path) -> None:
    begin, body, end = private_key("OPENSSH")
    listing = "\n".join(f"{number:>6}→{line}" for number, line in enumerate([begin, *body, end, ""], start=1))
    # Read with a limit: the listing stops inside the key, with no END line.
    cut = "\n".join(f"{number:>6}→{line}" for number, line in enumerate([begin, *body[:3]], start=1))
    root = tmp_path / "corpus"
    session(root, user("u0", "show me the deploy key", session=SID),
            *tool_exchange("Read", {"file_path": "/home/u/.ssh/id_ed25519"}, listing),
            *tool_exchange("Read", {"file_path": "/home/u/.ssh/id_ed25519", "limit": 4}, cut, n=2))
    red = assert_masked_everywhere(root, tmp_path, middles(*body))
    page = html.unescape(pages_of(red, SID))
    assert "     1→[redacted:private-key]\n     9→" in page  # the listing around the key stays


def pages_of(site: dict[str, bytes], session_id: str) -> str:
    """Return a session's pages in a built site's files, joined in path order."""
    return "".join(data.decode() for rel, data in sorted(site.items()) if rel.startswith(f"sessions/{session_id}/") and rel.endswith(".html"))


def test_a_private_key_in_grep_output_is_masked(tmp_path: Path) -> None:
    begin, body, end = private_key("RSA", lines=8, width=64)
    path = "config/deploy_rsa"
    whole = "\n".join(
        [f"{path}:12:{begin}", *(f"{path}-{13 + i}-{line}" for i, line in enumerate(body)), f"{path}-{13 + len(body)}-{end}"]
    )
    # `grep -A 3`: the key's first lines only, then another match.
    excerpt = "\n".join([f"{path}:12:{begin}", *(f"{path}-{13 + i}-{line}" for i, line in enumerate(body[:3])), "--",
                         "src/app.py:40:key = load()"])
    root = tmp_path / "corpus"
    session(root, user("u0", "find keys", session=SID),
            *tool_exchange("Bash", {"command": "grep -rn -A 40 'PRIVATE KEY' ."}, whole),
            *tool_exchange("Grep", {"pattern": "PRIVATE", "-A": 3}, excerpt, n=2))
    red = assert_masked_everywhere(root, tmp_path, middles(*body))
    assert "src/app.py:40:key = load()" in html.unescape(pages_of(red, SID))


def test_a_key_after_an_ansi_escape_is_masked(tmp_path: Path) -> None:
    # A colour before a key, right after a word, and grep --color=always around a match.
    coloured = f"{ESC}[31m{ANTHROPIC}{ESC}[0m\nWARN{ESC}[0m{ANTHROPIC}\n"
    grep = f"token={ESC}[01;31m{ESC}[K{GITHUB}{ESC}[m{ESC}[K\n"
    # A colour code inside a token, and one written in the command that printed it.
    split = f"token: {SLACK[:9]}{ESC}[0m{SLACK[9:]}\n"
    root = tmp_path / "corpus"
    session(root, user("u0", f"why is {ESC}[1m{GITHUB}{ESC}[0m red", session=SID),
            *tool_exchange("Bash", {"command": "env --color"}, coloured + grep + split),
            *tool_exchange("Bash", {"command": f"printf '\\e[31m{GITHUB}\\033[0m'"}, "ok", n=2))
    red = assert_masked_everywhere(root, tmp_path, middles(ANTHROPIC, GITHUB, SLACK))
    counts = json.loads(red["data/index.json"])["report"]["redactions"]
    assert counts["anthropic-key"] >= 1 and counts["github-token"] >= 3 and counts["slack-token"] >= 1


def test_a_secret_access_key_in_aws_cli_json_is_masked(tmp_path: Path) -> None:
    output = json.dumps({"Credentials": {"AccessKeyId": AWS_ID, "SecretAccessKey": AWS_SECRET, "SessionToken": AWS_SESSION,
                                         "Expiration": "2026-01-01T11:00:00+00:00"}}, indent=4)
    root = tmp_path / "corpus"
    # The CLI's output, and the same JSON written to a file by the agent (JSON inside a tool call's JSON).
    session(root, user("u0", "assume the deploy role", session=SID),
            *tool_exchange("Bash", {"command": "aws sts assume-role --role-arn arn:aws:iam::1:role/deploy"}, output),
            *tool_exchange("Write", {"file_path": "/tmp/creds.json", "content": output}, "written", n=2),
            *tool_exchange("Bash", {"command": "cat ~/.aws/credentials"},
                           f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n", n=3))
    red = assert_masked_everywhere(root, tmp_path, middles(AWS_SECRET, AWS_SESSION, AWS_ID))
    page = html.unescape(pages_of(red, SID))
    assert '"SecretAccessKey": "[redacted:aws-secret-key]"' in page
    assert '"Expiration": "2026-01-01T11:00:00+00:00"' in page  # what is not a secret stays


@NEEDS_DOT
def test_a_key_in_an_agent_description_is_masked_in_the_graph_table_and_json(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    spawn = assistant("s1", "msg_s1", "req_s1", usage(1, 5), stop="tool_use", session=SID,
                      content=[{"type": "tool_use", "id": "toolu_a", "name": "Task",
                                "input": {"prompt": "go", "description": f"deploy with {ANTHROPIC} and {GITHUB}",
                                          "subagent_type": ANTHROPIC}}])
    result = user("r1", [{"type": "tool_result", "tool_use_id": "toolu_a", "content": [{"type": "text", "text": "done"}]}],
                  session=SID, ts="2026-01-01T10:00:05.000Z", toolUseResult={"status": "completed", "agentId": "aaa"})
    session(root, user("u0", "delegate", session=SID), spawn, result)
    agent_dir = root / PROJECT / SID / "subagents"
    write(agent_dir / "agent-aaa.jsonl", user("b1", "work", session=SID, isSidechain=True, agentId="aaa"))
    (agent_dir / "agent-aaa.meta.json").write_text(json.dumps({"agentType": ANTHROPIC, "description": f"deploy with {ANTHROPIC} and {GITHUB}"}))
    red = assert_masked_everywhere(root, tmp_path, middles(ANTHROPIC, GITHUB))
    page = red[f"sessions/{SID}/index.html"].decode()
    graph = page.split('<figure class="dag">')[1].split("</figure>")[0]
    assert "<svg" in graph and "[redacted:anthropic-key]" in html.unescape(graph)  # Graphviz writes `-` as `&#45;` there
    agents = json.loads(red[f"data/sessions/{SID}.json"])["agents"]
    assert agents[1]["description"] == "deploy with [redacted:anthropic-key] and [redacted:github-token]"
    assert agents[1]["agent_type"] == "[redacted:anthropic-key]"


def test_hook_event_names_in_the_report_are_masked(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    session(root, user("u0", "hello", session=SID), assistant("a1", "msg_1", "req_1", usage(10, 5), session=SID))
    # Event names are enum-like words (the hook keeps letters and underscores only), which still
    # fit an AWS key id or a GitHub token made of letters.
    names = ["AK" + "IA" + "QZXMKPRTWYVBNDSE", "gh" + "p_" + "ZrXwQvLmNpKsHtJcFbDgYaEuRqWeTyUiOpAsDf"]
    hooks = (*({"hook_event_name": name, "session_id": SID} for name in names), {"hook_event_name": "Stop", "session_id": SID})
    red = assert_masked_everywhere(root, tmp_path, middles(*names), hooks=hooks)
    events = json.loads(red["data/index.json"])["report"]["hook_events"]
    assert events == {"Stop": 1, "[redacted:aws-access-key-id]": 1, "[redacted:github-token]": 1}
    assert "<code>[redacted:github-token]</code>: 1" in red["report.html"].decode()


def token(field: str) -> str:
    """A GitHub token of its own for each field, so that each field is shown to be masked."""
    return "gh" + "p_" + hashlib.sha256(field.encode()).hexdigest()[:36]


def test_every_transcript_text_the_site_shows_is_masked(tmp_path: Path) -> None:
    """Model ids, tool names, record subtypes, unknown record types and Claude Code versions, besides the texts above."""
    root = tmp_path / "corpus"
    version = "2.1.39-" + "AS" + "IA" + hashlib.sha256(b"version").hexdigest()[:16].upper()
    session(root,
            user("u0", "start", session=SID),
            assistant("a1", "msg_1", "req_1", usage(10, 5), session=SID, model=f"claude-{token('model')}", version=version),
            {"type": f"x-{token('record type')}", "sessionId": SID, "uuid": "x1", "timestamp": "2026-01-01T10:00:03.000Z"},
            {"type": "system", "subtype": f"note {token('subtype')}", "sessionId": SID, "uuid": "y1",
             "timestamp": "2026-01-01T10:00:04.000Z", "content": "system says hi", "level": "info"},
            *tool_exchange(f"mcp__{token('tool name')}", {"q": 1}, "ok", n=5))
    parts = middles(*(token(field) for field in ("model", "record type", "subtype", "tool name")), version[7:])
    assert_masked_everywhere(root, tmp_path, parts, code=1)  # 1: the model has no price
