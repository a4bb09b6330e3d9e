"""`build --redact` and `snapshot` mask credential shapes; the report counts masks, never secrets."""

from __future__ import annotations

import html
import json
import shutil
import sqlite3
import tarfile
from pathlib import Path

import pytest

from agenthropic_site.audit.archive import MANIFEST, read_snapshot
from agenthropic_site.cli import main
from agenthropic_site.render.redact import KINDS, Redactor, marker
from conftest import build, dump_cache, session_pages, tree_bytes
from records import assistant, usage, user, write

PROJECT = "-home-u-app"
# Fake credentials, put together at run time so that this file holds none of their shapes.
# kind: (what precedes the secret, the secret itself)
SECRETS: dict[str, tuple[str, str]] = {
    "anthropic-key": ("", "sk-" + "ant-api03-" + "Ab1Cd2Ef3" * 4),
    "openai-key": ("", "sk-" + "proj-" + "Xy9Zw8Vu7" * 3),
    "aws-access-key-id": ("", "AK" + "IA" + "QZ7X2M4K9P3R8T6W"),
    "aws-secret-key": ("aws_secret_" + "access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "zTEST12345"),
    "github-token": ("", "gh" + "p_" + "a1B2c3D4e5" * 4),
    "slack-token": ("", "xo" + "xb-" + "123456789012-" + "AbCdEf123456"),
    "private-key": ("", "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIBOgIBAAJBAKj34zz\nQWERTYuiop0987+/=\n-----END RSA " + "PRIVATE KEY-----"),
    "bearer-token": ("Authorization: Bearer ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0." + "c2lnbmF0dXJl" * 2),
    "api-key": ('api_key = "', "zq81Kd0xLmNw72Pq9RtVb3Yc" + '"'),
}
NEAR_MISSES = (
    "task-runner-configuration-manager-v2",
    "sk-ant-short",
    "sk-learn is not sklearn",
    "AKIA1234",
    "ghp_short",
    "xoxb-1",
    "the bearer of bad news",
    'api_key = os.environ["ANTHROPIC_API_KEY"]',
    "-----BEGIN CERTIFICATE-----",
)


def secret_of(kind: str) -> str:
    """The part of a credential that must never appear (the value of `name = value` shapes)."""
    return SECRETS[kind][1].rstrip('"')


def sid(index: int) -> str:
    return f"00000000-0000-4000-8000-{index:012d}"


def session_records(session: str, text: str) -> list[dict]:
    """A prompt (title, search), an assistant reply (markdown), a tool call (JSON) and its result (plain)."""
    return [
        user("u1", f"please use {text} now", session=session),
        assistant("a1", f"msg_{session[-4:]}", f"req_{session[-4:]}", usage(10, 5), stop="tool_use", session=session,
                  content=[{"type": "text", "text": f"I see {text}."},
                           {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": f"echo {text}"}}]),
        user("u2", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": text}]}],
             session=session, ts="2026-01-01T10:00:02.000Z"),
    ]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """One session per credential shape, one with a subagent, and one of near misses."""
    root = tmp_path / "corpus"
    for index, kind in enumerate(KINDS, start=1):
        prefix, secret = SECRETS[kind]
        write(root / PROJECT / f"{sid(index)}.jsonl", *session_records(sid(index), prefix + secret))
    write(root / PROJECT / f"{sid(50)}.jsonl", *session_records(sid(50), " ".join(NEAR_MISSES)))
    # A subagent whose description holds a GitHub token and whose transcript holds a Slack token.
    agents = sid(60)
    spawn = assistant("s1", "msg_s1", "req_s1", usage(1, 5), stop="tool_use", session=agents,
                      content=[{"type": "tool_use", "id": "toolu_a", "name": "Task",
                                "input": {"prompt": "go", "description": "push with " + secret_of("github-token")}}])
    result = user("r1", [{"type": "tool_result", "tool_use_id": "toolu_a", "content": [{"type": "text", "text": "done"}]}],
                  session=agents, ts="2026-01-01T10:00:05.000Z", toolUseResult={"status": "completed", "agentId": "aaa"})
    write(root / PROJECT / f"{agents}.jsonl", user("u0", "delegate", session=agents), spawn, result)
    write(root / PROJECT / agents / "subagents" / "agent-aaa.jsonl",
          user("b1", "token " + secret_of("slack-token"), session=agents, isSidechain=True, agentId="aaa"))
    return root


def site_text(site: Path) -> dict[str, str]:
    return {rel: data.decode() for rel, data in tree_bytes(site).items() if rel.endswith((".html", ".json", ".js"))}


def page_text(site: Path, session: str) -> str:
    """A session's pages as a reader sees them (entities decoded)."""
    return html.unescape(session_pages(site, session))


def test_every_shape_is_masked_in_pages_and_json_with_redact_and_shown_without(corpus: Path, tmp_path: Path) -> None:
    assert build(corpus, tmp_path / "plain", tmp_path / "c1") == 0
    assert build(corpus, tmp_path / "red", tmp_path / "c2", "--redact") == 0
    plain, red = site_text(tmp_path / "plain"), site_text(tmp_path / "red")
    for index, kind in enumerate(KINDS, start=1):
        secret = secret_of(kind)
        shown = page_text(tmp_path / "plain", sid(index))
        assert secret in shown, kind
        data = json.loads(plain[f"data/sessions/{sid(index)}.json"])
        assert " ".join(secret.split()) in data["title"], kind  # titles collapse whitespace
        # With --redact: the marker in the prompt, the reply, the tool call and the result; the secret nowhere.
        masked = page_text(tmp_path / "red", sid(index))
        assert masked.count(marker(kind)) >= 4, kind
        assert marker(kind) in json.loads(red[f"data/sessions/{sid(index)}.json"])["title"], kind
        assert marker(kind) in json.loads(red["data/index.json"])["sessions"][index - 1]["title"], kind
        leaks = [rel for rel, text in red.items() if secret in text or secret in html.unescape(text)]
        assert not leaks, (kind, leaks)
    # Descriptions and subagent transcripts too.
    description = json.loads(red[f"data/sessions/{sid(60)}.json"])["agents"][1]["description"]
    assert description == "push with " + marker("github-token")
    assert marker("slack-token") in red[f"sessions/{sid(60)}/agents/aaa.html"]
    assert secret_of("slack-token") in plain[f"sessions/{sid(60)}/agents/aaa.html"]
    # The search index in index.html holds the masked prompts.
    assert marker("anthropic-key") in red["index.html"] and secret_of("anthropic-key") in plain["index.html"]


def test_the_report_counts_masks_by_kind_and_never_the_secrets(corpus: Path, tmp_path: Path) -> None:
    assert build(corpus, tmp_path / "plain", tmp_path / "c1") == 0
    assert json.loads((tmp_path / "plain" / "data" / "index.json").read_text())["report"]["redactions"] is None
    assert "Not masked" in (tmp_path / "plain" / "report.html").read_text()
    assert build(corpus, tmp_path / "red", tmp_path / "c2", "--redact") == 0
    counts = json.loads((tmp_path / "red" / "data" / "index.json").read_text())["report"]["redactions"]
    assert list(counts) == sorted(KINDS)
    assert all(counts[kind] >= 4 for kind in KINDS), counts  # prompt, title, reply, tool call, result…
    report = (tmp_path / "red" / "report.html").read_text()
    for kind in KINDS:
        assert f"<code>{kind}</code>: {counts[kind]}" in report
    for text in (report, (tmp_path / "red" / "data" / "index.json").read_text()):
        assert not any(secret_of(kind) in html.unescape(text) for kind in KINDS)
    # The cache keeps the original text (masking is done at render time) and counts, never secrets.
    dump = dump_cache(tmp_path / "c2")
    assert any(secret_of("anthropic-key") in row for row in dump if row.startswith("transcript_pieces:"))
    counted = [row for row in dump if "redaction_counts" in row]
    assert counted and not any(secret_of(kind) in row for kind in KINDS for row in counted)


def test_near_misses_are_not_masked(corpus: Path, tmp_path: Path) -> None:
    redactor = Redactor()
    for text in NEAR_MISSES:
        assert redactor.text(text) == text
    assert sum(redactor.counts.values()) == 0
    assert build(corpus, tmp_path / "red", tmp_path / "c", "--redact") == 0
    page = page_text(tmp_path / "red", sid(50))
    assert "[redacted:" not in page
    for text in NEAR_MISSES:
        assert text in page


def test_masks_are_fixed_markers_and_each_kind_is_counted() -> None:
    redactor = Redactor()
    text = "\n".join(prefix + secret for prefix, secret in SECRETS.values())
    masked = redactor.text(text)
    assert redactor.report() == {kind: 1 for kind in sorted(KINDS)}
    assert not any(secret_of(kind) in masked for kind in KINDS)
    assert 'api_key = "[redacted:api-key]"' in masked and "Authorization: Bearer [redacted:bearer-token]" in masked
    assert Redactor().text(masked) == masked  # markers match nothing: masking twice masks nothing more
    # A value of a known shape is named by its shape; a private key cut short is masked to its end.
    assert Redactor().text("ANTHROPIC_API_KEY=" + secret_of("anthropic-key")) == "ANTHROPIC_API_KEY=[redacted:anthropic-key]"
    assert Redactor().text(secret_of("private-key")[:60] + "…") == "[redacted:private-key]…"
    # As the site writes text: HTML entities and JSON escapes around values, `\n` in JSON strings.
    escaped = 'api_key=&#34;zq81Kd0xLmNw72Pq9RtVb3Yc&#34; \\"api_key\\": \\"zq81Kd0xLmNw72Pq9RtVb3Yc\\"'
    assert "zq81" not in Redactor().text(escaped)
    assert Redactor().text(json.dumps(secret_of("private-key"))) == '"[redacted:private-key]"'
    assert Redactor().text(json.dumps("x\n" + secret_of("anthropic-key"))) == '"x\\n[redacted:anthropic-key]"'


def test_redaction_is_deterministic_and_incremental_builds_equal_cold_ones(corpus: Path, tmp_path: Path) -> None:
    assert build(corpus, tmp_path / "one", tmp_path / "c1", "--redact") == 0
    assert build(corpus, tmp_path / "two", tmp_path / "c2", "--redact") == 0
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")
    # Toggling --redact on a built site re-renders it: it then equals a cold build either way.
    assert build(corpus, tmp_path / "plain", tmp_path / "c3") == 0
    cold_plain = tree_bytes(tmp_path / "plain")
    assert build(corpus, tmp_path / "plain", tmp_path / "c3", "--redact") == 0
    assert tree_bytes(tmp_path / "plain") == tree_bytes(tmp_path / "one")
    assert build(corpus, tmp_path / "plain", tmp_path / "c3") == 0
    assert tree_bytes(tmp_path / "plain") == cold_plain
    # A new secret in one session: only it is read again, and the counts equal a cold build's.
    with (corpus / PROJECT / f"{sid(50)}.jsonl").open("ab") as handle:
        handle.write(json.dumps(user("u9", "also " + secret_of("github-token"), session=sid(50),
                                     ts="2026-01-01T10:00:09.000Z")).encode() + b"\n")
    assert build(corpus, tmp_path / "one", tmp_path / "c1", "--redact") == 0
    cold = tmp_path / "cold-corpus"
    shutil.copytree(corpus, cold)
    assert build(cold, tmp_path / "cold", tmp_path / "c4", "--redact") == 0
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "cold")
    counts = json.loads((tmp_path / "one" / "data" / "index.json").read_text())["report"]["redactions"]
    before = json.loads((tmp_path / "two" / "data" / "index.json").read_text())["report"]["redactions"]
    assert counts["github-token"] > before["github-token"]
    # Without the cache's record of the counts (c2 has not seen the new line yet), the pages that
    # are not rendered again are read to count their masks.
    conn = sqlite3.connect(tmp_path / "c2" / "cache.sqlite3")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'redaction_counts'")
    conn.close()
    assert build(corpus, tmp_path / "two", tmp_path / "c2", "--redact") == 0
    assert tree_bytes(tmp_path / "two") == tree_bytes(tmp_path / "cold")


def manifest(snapshot: Path) -> dict:
    with tarfile.open(snapshot) as tar:
        handle = tar.extractfile(MANIFEST)
        assert handle is not None
        return json.loads(handle.read())


def test_the_snapshot_masks_by_default_and_no_redact_keeps_the_bytes(corpus: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    assert build(corpus, site, tmp_path / "c") == 0
    capsys.readouterr()
    assert main(["snapshot", "--site", str(site), "--out", str(tmp_path / "masked.tar.gz")]) == 0
    assert "masked" in capsys.readouterr().err
    files = read_snapshot(tmp_path / "masked.tar.gz")
    assert set(files) == set(tree_bytes(site))
    for kind in KINDS:
        assert not any(secret_of(kind) in html.unescape(data.decode()) for data in files.values()), kind
    counts = manifest(tmp_path / "masked.tar.gz")["redactions"]
    assert list(counts) == sorted(KINDS) and all(counts[kind] >= 1 for kind in KINDS), counts
    # --no-redact archives the site's bytes as they are.
    assert main(["snapshot", "--no-redact", "--site", str(site), "--out", str(tmp_path / "raw.tar.gz")]) == 0
    assert read_snapshot(tmp_path / "raw.tar.gz") == tree_bytes(site)
    assert manifest(tmp_path / "raw.tar.gz")["redactions"] is None
    # A site built with --redact: the snapshot masks nothing more.
    assert build(corpus, tmp_path / "red", tmp_path / "c2", "--redact") == 0
    assert main(["snapshot", "--site", str(tmp_path / "red"), "--out", str(tmp_path / "red.tar.gz")]) == 0
    assert read_snapshot(tmp_path / "red.tar.gz") == tree_bytes(tmp_path / "red")
    assert manifest(tmp_path / "red.tar.gz")["redactions"] == {kind: 0 for kind in sorted(KINDS)}
