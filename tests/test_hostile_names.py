"""Hostile names and sizes (issue 14): undecodable names, huge block lists, colliding project keys,
control characters bound for a terminal, a spawn chain 1,000 deep, a hard link out of the corpus.

Each test builds a real corpus on disk and runs the real build (in-process, or as a subprocess where
the terminal is what is tested).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import adversarial as adv
from agenthropic_site.cli import main
from conftest import DEMO_NOW, NEEDS_DOT, build, session_pages, tree_bytes
from records import OTHER_SID, SID, assistant, line, usage, user, write

THIRD_SID = "33333333-3333-4333-8333-333333333333"
CONTROL_BYTES = (b"\x1b", b"\r", b"\x07", b"\xc2\x9b")  # ESC, CR, BEL, the C1 CSI in UTF-8


def index_data(out: Path) -> dict[str, Any]:
    return json.loads((out / "data" / "index.json").read_text(encoding="utf-8"))


def session_data(out: Path, sid: str = SID) -> dict[str, Any]:
    return json.loads((out / "data" / "sessions" / f"{sid}.json").read_text(encoding="utf-8"))


def tokens(input: int, output: int) -> dict[str, int]:
    return {"input": input, "output": output, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0}


def write_bytes_path(path: bytes, data: bytes) -> None:
    """Write a file whose name need not be UTF-8."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def agenthropic(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the command line as a user would; output as raw bytes (text mode would turn CR into LF)."""
    return subprocess.run([sys.executable, "-m", "agenthropic_site", *args], capture_output=True, timeout=120)


def test_a_non_utf8_file_name_is_skipped_with_a_reason(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    adv.main_transcript(corpus)
    root = os.fsencode(corpus)
    project = adv.PROJECT.encode()
    session = line(user("x1", "never read", session=OTHER_SID))
    hostile = {
        b"/-home-\xe9/" + OTHER_SID.encode() + b".jsonl": session,  # a project folder
        b"/" + project + b"/" + THIRD_SID[:-1].encode() + b"\xff/subagents/agent-a1.jsonl": session,  # a session folder
        b"/" + project + b"/" + SID.encode() + b"/subagents/agent-\xff.jsonl": session,  # a file in subagents/
        b"/" + project + b"/" + SID.encode() + b"/subagents/w\xfe/agent-a2.jsonl": session,  # a folder in subagents/
        b"/" + project + b"/memory/n\xfe.md": b"notes\n",  # a memory/ file
        b"/root\xfd.txt": b"x\n",  # a file at the root
    }
    for rel, data in hostile.items():
        write_bytes_path(root + rel, data)
    expected = {
        "-home-\\xe9/": "non-utf8-name",
        f"{adv.PROJECT}/{THIRD_SID[:-1]}\\xff/": "non-utf8-name",
        f"{adv.PROJECT}/{SID}/subagents/agent-\\xff.jsonl": "non-utf8-name",
        f"{adv.PROJECT}/{SID}/subagents/w\\xfe/": "non-utf8-name",
        f"{adv.PROJECT}/memory/n\\xfe.md": "non-utf8-name",
        "root\\xfd.txt": "non-utf8-name",
    }
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0  # before: a crash (exit 4) of every build
    out = tmp_path / "out"
    report = index_data(out)["report"]
    assert {entry["path"]: entry["reason"] for entry in report["skipped"]} == expected
    assert [entry["path"] for entry in report["skipped"]] == sorted(expected)
    page = (out / "report.html").read_text(encoding="utf-8")
    for path in expected:
        assert f"<code>{path}</code>" in page
    assert [s["session_id"] for s in index_data(out)["sessions"]] == [SID]
    assert session_data(out)["tokens"] == tokens(1, 2)
    assert index_data(out)["totals"]["cost_lower_bound"] is True  # an unwalked folder may hold transcripts
    # Deterministic: a second, cold build gives the same bytes.
    assert build(corpus, tmp_path / "again", tmp_path / "again-cache") == 0
    assert tree_bytes(tmp_path / "again") == tree_bytes(out)


def test_memory_per_line_is_bounded_by_a_cap_on_content_blocks(tmp_path: Path) -> None:
    from agenthropic_site.cache.store import Cache
    from agenthropic_site.parse.messages import MAX_BLOCKS

    corpus = tmp_path / "corpus"
    tiny = [{"type": "text", "text": "x"}] * 200_000
    spawn = {"type": "tool_use", "id": "toolu_last", "name": "Agent", "input": {"description": "the last block", "prompt": "go"}}
    # One line of 200,000 blocks whose very last block spawns an agent, then one message whose
    # 150,000 + 150,000 blocks come on two lines that share a message id.
    big = assistant("big", "msg_big", "req_big", usage(3, 4), content=[*tiny, spawn], ts=adv.ts(2), stop="tool_use")
    result = adv.spawn_result("res", SID, "toolu_last", "alast", 3)
    halves = [assistant(f"half{n}", "msg_half", "req_half", usage(5, 6), content=tiny[:150_000], ts=adv.ts(4)) for n in (1, 2)]
    adv.main_transcript(corpus, SID, big, result, *halves)
    adv.agent_transcript(corpus, SID, "alast", *adv.agent_records(SID, "alast", 7))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    out = tmp_path / "out"
    data = session_data(out)
    # Usage and links still read every block: the spawn after the cap links its agent.
    assert data["tokens"] == tokens(1 + 3 + 5 + 7, 2 + 4 + 6 + 7)
    assert {a["agent_id"]: a["parent_agent_id"] for a in data["agents"]} == {SID: None, "alast": SID}
    cache = Cache.reader(tmp_path / "cache")
    try:
        messages = cache.transcript(SID, SID)
    finally:
        cache.conn.close()
    sizes = {message.uuid: len(message.blocks) for message in messages if message.role == "assistant"}
    assert sizes == {f"{SID[:4]}-a1": 1, "big": MAX_BLOCKS + 1, "half1": MAX_BLOCKS + 1}
    notices = [m.blocks[-1].text for m in messages if m.uuid in ("big", "half1")]
    assert notices == [f"[{200_001 - MAX_BLOCKS:,} more content blocks not stored]", f"[{300_000 - MAX_BLOCKS:,} more content blocks not stored]"]
    page = session_pages(out, SID)
    assert page.count("more content blocks not stored]") == 2
    assert page.count("<p>x</p>") <= 2 * MAX_BLOCKS


def test_two_project_folders_never_map_to_one_page(tmp_path: Path) -> None:
    from agenthropic_site.model.gather import project_key

    corpus = tmp_path / "corpus"
    unsafe = "-home-u-my project"  # not path-safe: its key is a hash
    digest = hashlib.sha256(unsafe.encode()).hexdigest()
    folders = {
        unsafe: SID,
        f"p-{digest[:16]}": OTHER_SID,  # the unsafe folder's key before the fix: a safe name, kept as is
        f"p-{digest[:32]}": THIRD_SID,  # and its key now, as a folder name
        "-home-u-app": "44444444-4444-4444-8444-444444444444",
    }
    for folder, sid in folders.items():
        adv.main_transcript(corpus, sid, project=folder)
    assert len(set(folders)) == 4
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    out = tmp_path / "out"
    projects = {p["project"]: p["key"] for p in index_data(out)["projects"]}
    assert set(projects) == set(folders)
    assert len(set(projects.values())) == 4, projects
    assert projects["-home-u-app"] == "-home-u-app" and projects[f"p-{digest[:16]}"] == f"p-{digest[:16]}"  # ordinary names stay
    assert projects[unsafe] == project_key(unsafe) == f"p-{digest[:32]}" != projects[f"p-{digest[:32]}"]
    for folder, sid in folders.items():
        page = (out / "projects" / projects[folder] / "index.html").read_text(encoding="utf-8")
        assert sid in page and all(other not in page for other in folders.values() if other != sid), folder


def test_characters_that_reorder_or_hide_text_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """A model id that reverses the rest of its line where a terminal applies the bidirectional algorithm ("Trojan Source")."""
    from agenthropic_site.terminal import printable

    hidden = "\u202e\u2066\u2069\u200f\u200b\u061c\ufeff\u2028"
    assert printable(f"claude{hidden}-x") == "claude\\u202e\\u2066\\u2069\\u200f\\u200b\\u061c\\ufeff\\u2028-x"
    assert printable("modèle-中文 model") == "modèle-中文 model"  # letters of any script, and spaces, are shown as they are
    corpus = tmp_path / "corpus"
    adv.main_transcript(corpus, SID, assistant("m1", "msg_m1", "req_m1", usage(1, 1), model=f"claude{hidden}", ts=adv.ts(5)))
    text = agenthropic("pricing", "--corpus", str(corpus), "--cache", str(tmp_path / "cache"))
    assert text.returncode == 1 and b"claude\\u202e\\u2066" in text.stdout  # no price: named, escaped
    as_json = agenthropic("pricing", "--json", "--corpus", str(corpus), "--cache", str(tmp_path / "cache"))
    assert f"claude{hidden}" in json.loads(as_json.stdout)["unpriced_models"]  # escaped as JSON, read back as it was
    assert not any(character.encode() in output for character in hidden for output in (text.stdout, text.stderr, as_json.stdout))


def test_an_output_stream_that_cannot_encode_a_character_shows_it_escaped(tmp_path: Path) -> None:
    """Standard output in a non-UTF-8 locale (ISO-8859-1, PYTHONIOENCODING=ascii) raised UnicodeEncodeError: exit 4."""
    corpus, out = tmp_path / "corpus", tmp_path / "sité"
    adv.main_transcript(corpus, SID, assistant("m1", "msg_m1", "req_m1", usage(1, 1), model="claude-日本-9😀", ts=adv.ts(5)))
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    run = [sys.executable, "-m", "agenthropic_site"]
    text = subprocess.run([*run, "pricing", "--corpus", str(corpus), "--cache", str(tmp_path / "cache")], capture_output=True, env=env, timeout=60)
    assert text.returncode == 1 and b"claude-\\u65e5\\u672c-9\\U0001f600" in text.stdout, text.stderr  # no price: named, escaped
    as_json = subprocess.run([*run, "pricing", "--json", "--corpus", str(corpus), "--cache", str(tmp_path / "cache")],
                             capture_output=True, env=env, timeout=60)
    # JSON's own escapes (a UTF-16 pair past the first plane): read back as it was.
    assert as_json.returncode == 1 and b"claude-\\u65e5\\u672c-9\\ud83d\\ude00" in as_json.stdout
    assert "claude-日本-9😀" in json.loads(as_json.stdout)["unpriced_models"]
    built = subprocess.run([*run, "build", "--corpus", str(corpus), "--out", str(out), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW],
                           capture_output=True, env=env, timeout=120)
    assert built.returncode == 1 and built.stdout == os.fsencode(out.resolve() / "index.html").replace("é".encode(), b"\\xe9") + b"\n"
    from agenthropic_site.terminal import printable_json

    value = {"id": "a\u202e日本😀\x9b", "n": 1}
    ascii_text = printable_json(json.dumps(value, ensure_ascii=False), ascii_only=True)  # as diff --json writes it there
    assert ascii_text.isascii() and json.loads(ascii_text) == value


@pytest.mark.slow
def test_model_ids_and_file_names_reach_the_terminal_with_controls_escaped(tmp_path: Path) -> None:
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    model = "claude-\x1b[2J\x1b]0;owned\x07-\x9b31m\r"
    reply = assistant("m1", "msg_m1", "req_m1", usage(1, 1), model=model, ts=adv.ts(5))
    adv.main_transcript(corpus, SID, reply)
    text = agenthropic("pricing", "--corpus", str(corpus), "--cache", str(tmp_path / "cache"))
    assert text.returncode == 1  # the model has no price
    assert b"claude-\\x1b[2J\\x1b]0;owned\\x07-\\x9b31m\\x0d" in text.stdout
    as_json = agenthropic("pricing", "--json", "--corpus", str(corpus), "--cache", str(tmp_path / "cache"))
    assert model in json.loads(as_json.stdout)["unpriced_models"]
    # A skipped transcript named with controls, printed by --watch, and one linked out of the root,
    # printed by a build that stops.
    adv.agent_transcript(corpus, SID, "a\r\x1b[31mred", *adv.agent_records(SID, "ared", 1))
    watch = subprocess.Popen(
        [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--corpus", str(corpus), "--out", str(tmp_path / "out"),
         "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    said: list[bytes] = []
    reader = threading.Thread(target=lambda: said.extend(iter(watch.stderr.readline, b"")), daemon=True)
    reader.start()
    give_up = time.monotonic() + 120  # a guard against hanging, not a timing assertion
    try:
        while watch.poll() is None and not any(b"skipped" in said_line for said_line in said) and time.monotonic() < give_up:
            reader.join(0.1)
        watch.send_signal(signal.SIGINT)
        watch_out, _ = watch.communicate(timeout=60)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    reader.join(10)
    skipped = [said_line for said_line in said if said_line.startswith(b"skipped ")]
    assert skipped == [f"skipped {adv.PROJECT}/{SID}/subagents/agent-a\\x0d\\x1b[31mred.jsonl: non-artifact "
                       "agent file name of an unexpected form\n".encode()]
    write(outside / "x.jsonl", user("o1", "outside"))
    os.symlink(outside / "x.jsonl", corpus / adv.PROJECT / "agent-\x1b[2J\r.jsonl")
    stopped = agenthropic("build", "--corpus", str(corpus), "--out", str(tmp_path / "out2"), "--cache", str(tmp_path / "cache2"))
    assert stopped.returncode == 3 and b"agent-\\x1b[2J\\x0d.jsonl" in stopped.stderr
    for output in (text.stdout, text.stderr, as_json.stdout, as_json.stderr, watch_out, b"".join(said), stopped.stdout, stopped.stderr):
        assert not any(control in output for control in CONTROL_BYTES), output


def spawn_chain(corpus: Path, depth: int) -> list[str]:
    """Write a session whose main agent spawns a1, which spawns a2, … down to `depth` agents."""
    ids = [f"a{index:016x}" for index in range(1, depth + 1)]

    def spawn_and_result(uuid: str, tool_use_id: str, child: str, second: int) -> list[dict[str, Any]]:
        return [adv.spawn(uuid, SID, tool_use_id, f"work for {child}", second), adv.spawn_result(f"{uuid}-r", SID, tool_use_id, child, second + 1)]

    adv.main_transcript(corpus, SID, *spawn_and_result("m-spawn", "toolu_0", ids[0], 2))
    for index, agent_id in enumerate(ids):
        records = adv.agent_records(SID, agent_id, 1)
        if index + 1 < depth:
            records += spawn_and_result(f"{agent_id}-spawn", f"toolu_{index + 1}", ids[index + 1], 12)
        adv.agent_transcript(corpus, SID, agent_id, *records)
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("graphviz", [pytest.param("dot", marks=NEEDS_DOT), "no-dot"])
def test_a_spawn_chain_1000_deep_does_not_fail_the_session(tmp_path: Path, graphviz: str, monkeypatch: pytest.MonkeyPatch, said: list[str]) -> None:
    ids = spawn_chain(tmp_path / "corpus", 1000)
    if graphviz == "no-dot":
        monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # no `dot`: the tree is a nested list
    arguments = ["build", "--corpus", str(tmp_path / "corpus"), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW]
    assert main([*arguments, "--jobs", "2"]) == 0  # not quiet: what it says is looked at
    # 1,001 pages, but of one session: one process renders them (no worker would share the work).
    # (Not quiet, so a build with workers would say so here; without `dot` it says that instead.)
    assert not any(line.startswith("rendering the pages of") for line in said), said
    assert any("Graphviz `dot` is not installed" in line for line in said) == (graphviz == "no-dot"), said
    out = tmp_path / "out"
    assert index_data(out)["report"]["failed_sessions"] == []
    data = session_data(out)
    parents = {a["agent_id"]: a["parent_agent_id"] for a in data["agents"]}
    assert parents == dict(zip([SID, *ids], [None, SID, *ids[:-1]]))  # every agent linked to the one before
    assert data["unlinked_agents"] == [] and [w for w in data["warnings"] if w["code"] == "graph_check"] == []
    assert data["critical_path"] == [SID, *ids]
    # The main agent's reply and spawn, each agent's reply and (but the last) its spawn, in one subtree.
    assert data["agents"][0]["subtree_tokens"] == tokens(1 + 1 + 2 * 999 + 1, 2 + 1 + 2 * 999 + 1)
    page = (out / "sessions" / SID / "index.html").read_text(encoding="utf-8")
    for agent_id in ids:
        assert (out / "sessions" / SID / "agents" / f"{agent_id}.html").is_file()
        assert f'href="agents/{agent_id}.html"' in page
    if graphviz == "no-dot":
        tree = page[page.index('<ul class="tree">') : page.index('<table class="sortable agents">')]
        assert tree.count("<li>") == tree.count("</li>") == 1001
        assert tree.count("<ul>") == 32  # lists nest 32 levels; deeper agents are listed there with their depth
        assert tree.count("</ul>") == 33 and "depth 1000</span>" in tree
    else:
        assert '<figure class="dag"><svg' in page


def test_a_hard_link_to_a_file_outside_the_corpus_is_not_read(tmp_path: Path) -> None:
    from agenthropic_site.corpus import FileRef, UnreadableError, read_bytes, real_root

    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    secret = "SECRET-7f3a-hard-link-line"
    target = write(outside / "secret.jsonl", user("s1", secret), assistant("s2", "msg_s", "req_s", usage(50, 50), ts=adv.ts(20)))
    adv.main_transcript(corpus)
    linked = adv.session_folder(corpus) / "agent-ahard.jsonl"
    linked.parent.mkdir(parents=True)
    os.link(target, linked)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    out = tmp_path / "out"
    rel = f"{adv.PROJECT}/{SID}/subagents/agent-ahard.jsonl"
    entry = next(e for e in index_data(out)["report"]["skipped"] if e["path"] == rel)
    assert entry["reason"] == "hard-link"
    assert session_data(out)["tokens"] == tokens(1, 2) and index_data(out)["totals"]["cost_lower_bound"] is True
    for path, data in [*tree_bytes(out).items(), *tree_bytes(tmp_path / "cache").items()]:
        assert secret.encode() not in data, path
    # A link made after the walk is refused when the file is opened.
    alone = write(corpus / adv.PROJECT / f"{OTHER_SID}.jsonl", user("o1", secret, session=OTHER_SID))
    st = alone.stat()
    ref = FileRef(f"{adv.PROJECT}/{OTHER_SID}.jsonl", st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    root = real_root(corpus)
    assert secret.encode() in read_bytes(root, ref, 1 << 20)
    os.link(alone, outside / "second-name.jsonl")
    with pytest.raises(UnreadableError) as refused:
        read_bytes(root, ref, 1 << 20)
    assert refused.value.reason == "hard-link"
