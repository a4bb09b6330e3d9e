"""Incremental builds equal cold builds; work is counted, not timed."""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agenthropic_site.cache.store import USAGE_COLUMNS, Cache, rows_digest
from agenthropic_site.model import views
from agenthropic_site.pipeline import ingest, parsing, stamp
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.places import CACHE_FILE
from agenthropic_site.render import site as render_site
from agenthropic_site.config import BuildConfig, parse_instant
from conftest import DEMO_CORPUS, DEMO_NOW, fuzz_harness, plain_copy, tree_bytes
from records import OTHER_SID, SID, assistant, usage, user, write

SESSION = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"  # main + subagents + compaction in the demo corpus


def config(corpus: Path, out: Path, cache: Path) -> BuildConfig:
    return BuildConfig(corpus=corpus, out=out, cache=cache, now=parse_instant(DEMO_NOW), quiet=True)



def assert_equals_cold_build(corpus: Path, live: Path, tmp_path: Path) -> None:
    """Build a copy of the corpus from scratch and check the live site has the same bytes."""
    cold = tmp_path / "cold-corpus"
    shutil.copytree(corpus, cold)
    run_build(config(cold, tmp_path / "cold", tmp_path / "cold-cache"))
    assert tree_bytes(live) == tree_bytes(tmp_path / "cold")


def main_file(corpus: Path) -> Path:
    return next(corpus.rglob(f"{SESSION}.jsonl"))


def test_cut_mid_line_then_completed_equals_the_whole_file(demo_corpus: Path, tmp_path: Path) -> None:
    path = main_file(demo_corpus)
    whole = path.read_bytes()
    cut = whole.rfind(b"\n", 0, len(whole) // 2) + 40  # inside a line, as Claude Code mid-write
    path.write_bytes(whole[:cut])
    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live)
    with path.open("ab") as handle:
        handle.write(whole[cut:])
    second = run_build(live)
    assert second.parsed == 1  # only the appended session is read again
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_progress_counts_the_sessions_rendered_not_those_looked_at(
    demo_corpus: Path, tmp_path: Path, said: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A line every 4 sessions rendered, batches of 2: the 21 demo sessions stand for thousands.
    monkeypatch.setattr(render_site, "PROGRESS_EVERY", 4)
    monkeypatch.setattr(ingest, "PARSE_PROGRESS_EVERY", 2)
    monkeypatch.setattr(views, "VIEW_BATCH", 2)
    path = main_file(demo_corpus)
    whole = path.read_bytes()
    path.write_bytes(whole[: whole.rfind(b"\n", 0, len(whole) // 2) + 1])
    live = replace(config(demo_corpus, tmp_path / "site", tmp_path / "cache"), jobs=1)
    run_build(live)
    # A line a tenth of the way (3 of 21 sessions) or each PARSE_PROGRESS_EVERY, whichever is more, and one at the end.
    assert [line for line in said if line.startswith("parsed ")] == [f"parsed {done}/21 changed sessions" for done in range(3, 22, 3)]
    progress = [line for line in said if line.startswith("rendered the pages of")]
    assert progress[0] == "rendered the pages of 4 sessions (4/21 looked at)"
    assert len(progress) == 21 // 4
    said.clear()
    with path.open("ab") as handle:
        handle.write(whole[len(path.read_bytes()) :])
    assert run_build(live).parsed == 1
    # Every session's inputs were looked at, one session's pages rendered: no progress to tell.
    assert [line for line in said if line.startswith("rendered")] == []


def test_a_build_decodes_only_the_summaries_that_changed_since_the_last_in_its_process(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch (or a process that builds again) decodes only the session summaries whose stored bytes changed."""
    import sqlite3
    from contextlib import closing

    from agenthropic_site.model import stored
    from agenthropic_site.places import CACHE_FILE

    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")

    def stored_summaries() -> dict[str, bytes]:
        with closing(sqlite3.connect(tmp_path / "cache" / CACHE_FILE)) as conn:  # closed at once, not left to the collector
            return {sid: bytes(summary) for sid, summary in conn.execute("SELECT session_id, summary FROM views")}

    run_build(live)
    before = stored_summaries()
    decoded: list[bytes] = []
    real_decode = stored.decode_summary
    monkeypatch.setattr(stored, "decode_summary", lambda body: decoded.append(body) or real_decode(body))
    with main_file(demo_corpus).open("ab") as handle:
        handle.write(main_file(demo_corpus).read_bytes().splitlines(keepends=True)[-1].replace(b'"msg_', b'"msg_again_', 1))
    assert run_build(live).parsed == 1
    changed = {sid: body for sid, body in stored_summaries().items() if before.get(sid) != body}
    assert len(before) > 5 and changed and sorted(decoded) == sorted(changed.values())
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)  # the summaries kept from the last build are as good


def test_a_process_that_builds_again_reads_the_manifest_it_wrote_without_parsing_it(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch's next pass knows the manifest it published; one another build wrote since is parsed."""
    from agenthropic_site.render import manifest

    parsed: list[int] = []
    parse = manifest.parse_manifest
    monkeypatch.setattr(manifest, "parse_manifest", lambda data: parsed.append(len(data)) or parse(data))
    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live)
    path = main_file(demo_corpus)
    with path.open("ab") as handle:
        handle.write(path.read_bytes().splitlines(keepends=True)[-1])
    parsed.clear()
    assert run_build(live).parsed == 1 and parsed == []
    # Another folder built in between: this one's manifest is parsed again, and still holds.
    run_build(config(demo_corpus, tmp_path / "other", tmp_path / "cache"))
    (tmp_path / "live" / "index.html").unlink()
    parsed.clear()
    assert run_build(live).pages_written == 1 and len(parsed) == 1
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_decoded_once_decodes_a_key_again_only_when_its_bytes_change_or_it_was_forgotten() -> None:
    from agenthropic_site.model.decoded import DecodedOnce

    calls: list[tuple[str, bytes]] = []
    decoded = DecodedOnce(lambda key, data: calls.append((key, data)) or [key, data])
    first = decoded("a", b"1")
    assert decoded("a", b"1") is first and decoded("b", b"1") == ["b", b"1"]  # the same bytes under another key are its own
    assert decoded("a", b"2") == ["a", b"2"] and decoded("a", b"2") is not first
    decoded.keep_only(["b"])  # "a" is gone from the corpus
    decoded("a", b"2")
    decoded("b", b"1")
    assert calls == [("a", b"1"), ("b", b"1"), ("a", b"2"), ("a", b"2")]
    # Given the checksum the cache verified, the key is known by it: the same checksum, no decoding.
    calls.clear()
    checked = decoded("c", b"3", "sum of 3")
    assert decoded("c", b"3", "sum of 3") is checked and decoded("c", b"4", "sum of 4") == ["c", b"4"]
    assert calls == [("c", b"3"), ("c", b"4")]


def test_removing_a_session_removes_its_pages(demo_corpus: Path, tmp_path: Path) -> None:
    settings = config(demo_corpus, tmp_path / "site", tmp_path / "cache")
    run_build(settings)
    assert (tmp_path / "site" / "sessions" / SESSION / "index.html").is_file()
    main_file(demo_corpus).unlink()
    shutil.rmtree(main_file_folder(demo_corpus))
    result = run_build(settings)
    assert result.removed_sessions == 1 and result.parsed == 0
    assert not (tmp_path / "site" / "sessions" / SESSION).exists()
    assert not (tmp_path / "site" / "data" / "sessions" / f"{SESSION}.json").exists()


def test_a_skipped_file_that_grows_shows_its_new_size(demo_corpus: Path, tmp_path: Path) -> None:
    """The report names each skipped file with its size: a duplicate session's copy that grows changes the report."""
    copy = demo_corpus / "-zzz-copy" / f"{SESSION}.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(main_file(demo_corpus), copy)
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    with copy.open("ab") as handle:
        handle.write(main_file(demo_corpus).read_bytes().splitlines(keepends=True)[-1])
    run_build(settings)
    skipped = {entry["path"]: entry for entry in json.loads((tmp_path / "live" / "data" / "index.json").read_bytes())["report"]["skipped"]}
    assert skipped[f"-zzz-copy/{SESSION}.jsonl"] == {"path": f"-zzz-copy/{SESSION}.jsonl", "reason": "duplicate-session",
                                                      "detail": "session also in -home-user-projects-api-server", "bytes": copy.stat().st_size}
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_removing_a_session_that_shares_nothing_removes_its_pages(tmp_path: Path) -> None:
    """A session no other session shares a request with: its removal dirties no view, yet every page listing it changes.

    Its agents were seen a minute before the build's clock: none is stale, so no status the pages
    show changes with it either.
    """
    corpus = tmp_path / "corpus"
    for sid, mid in ((SID, "msg_1"), (OTHER_SID, "msg_2")):
        write(corpus / "-home-u-app" / f"{sid}.jsonl", user(f"u-{sid}", "hello", session=sid, ts="2026-05-31T23:59:00.000Z"),
              assistant(f"a-{sid}", mid, f"req-{mid}", usage(10, 5), session=sid, ts="2026-05-31T23:59:01.000Z"))
    settings = config(corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    assert (tmp_path / "live" / "sessions" / OTHER_SID / "index.html").is_file()
    (corpus / "-home-u-app" / f"{OTHER_SID}.jsonl").unlink()
    result = run_build(settings)
    assert result.removed_sessions == 1 and result.parsed == 0
    assert not (tmp_path / "live" / "sessions" / OTHER_SID).exists()
    assert [entry["session_id"] for entry in json.loads((tmp_path / "live" / "data" / "index.json").read_bytes())["sessions"]] == [SID]
    assert_equals_cold_build(corpus, tmp_path / "live", tmp_path)


def main_file_folder(corpus: Path) -> Path:
    return next(p for p in corpus.rglob(SESSION) if p.is_dir())


def test_cache_content_is_deterministic_and_a_replay_changes_nothing(tmp_path: Path) -> None:
    import sqlite3

    from conftest import DEMO_CORPUS, dump_cache

    first = config(DEMO_CORPUS, tmp_path / "a", tmp_path / "cache-a")
    run_build(first)
    run_build(config(DEMO_CORPUS, tmp_path / "b", tmp_path / "cache-b"))
    dump = dump_cache(tmp_path / "cache-a")
    assert dump == dump_cache(tmp_path / "cache-b")
    conn = sqlite3.connect(tmp_path / "cache-a" / "cache.sqlite3")
    with conn:
        conn.execute("DELETE FROM ingest_checkpoints")  # every session is ingested a second time
    conn.close()
    replay = run_build(first)
    assert replay.parsed == replay.sessions and replay.pages_written == 0
    assert dump_cache(tmp_path / "cache-a") == dump


def test_in_place_edit_of_the_same_length_is_seen(demo_corpus: Path, tmp_path: Path) -> None:
    path = main_file(demo_corpus)
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    data = path.read_bytes()
    edited = data.replace(b"Billing", b"Bolling")
    assert edited != data and len(edited) == len(data)
    path.write_bytes(edited)
    result = run_build(settings)
    assert result.parsed == 1
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)
    assert b"Bolling" in (tmp_path / "live" / "sessions" / SESSION / "index.html").read_bytes()


@pytest.mark.parametrize("checkpoints", [False, True])
def test_an_in_place_edit_with_its_time_set_back_is_seen(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checkpoints: bool) -> None:
    """A rewrite that keeps its size, inode and modification time (set back, as `touch -r` or a restoring tool does) is seen by its ctime."""
    if checkpoints:
        monkeypatch.setattr(parsing, "CHECKPOINT_MIN_BYTES", 0)  # the file's checkpoint names its lstat: taken as it was without ctime
    path = main_file(demo_corpus)
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    before = path.stat()
    edited = path.read_bytes().replace(b"Billing", b"Bolling")
    with path.open("r+b") as handle:  # in place: the same inode
        handle.write(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert after.st_ctime_ns != before.st_ctime_ns
    result = run_build(settings)
    assert result.parsed == 1 and result.transcripts_opened >= 1
    assert b"Bolling" in (tmp_path / "live" / "sessions" / SESSION / "index.html").read_bytes()
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_a_copied_corpus_is_compared_by_its_bytes_and_not_parsed_again(demo_corpus: Path, tmp_path: Path) -> None:
    """A copy (a restored backup, another disk) gives every file a new inode: each transcript is read once to compare, none parsed."""
    from dataclasses import replace

    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    cold = run_build(settings)
    site = tree_bytes(tmp_path / "live")
    copy = tmp_path / "copy"
    shutil.copytree(demo_corpus, copy)  # the files' times kept, their inodes new
    copied = run_build(replace(settings, corpus=copy))
    assert (copied.parsed, copied.reused, copied.sessions) == (0, cold.sessions, cold.sessions)
    # What a cold build opens: each transcript (here to compare it), and each flat agent file once
    # more to find its session (the cache knows owners by inode).
    assert copied.transcripts_opened == cold.transcripts_opened
    assert copied.pages_written == 0 and tree_bytes(tmp_path / "live") == site
    again = run_build(replace(settings, corpus=copy))
    assert (again.parsed, again.transcripts_opened) == (0, 0)


def test_a_touched_transcript_is_read_to_compare_and_its_session_is_not_parsed(demo_corpus: Path, tmp_path: Path) -> None:
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    site = tree_bytes(tmp_path / "live")
    agent = min(main_file_folder(demo_corpus).rglob("agent-*.jsonl"))
    os.utime(agent, ns=(agent.stat().st_atime_ns, agent.stat().st_mtime_ns + 10**9))
    touched = run_build(settings)
    assert (touched.parsed, touched.transcripts_opened, touched.pages_written) == (0, 1, 0)
    assert tree_bytes(tmp_path / "live") == site
    assert run_build(settings).transcripts_opened == 0


def test_an_added_subagent_file_is_seen(demo_corpus: Path, tmp_path: Path) -> None:
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    folder = main_file_folder(demo_corpus) / "subagents"
    line = (b'{"type":"user","isSidechain":true,"agentId":"a0000000000000001","sessionId":"' + SESSION.encode()
            + b'","uuid":"x1","timestamp":"2026-04-18T13:20:00.000Z","message":{"role":"user","content":"late agent"}}\n')
    (folder / "agent-a0000000000000001.jsonl").write_bytes(line)
    result = run_build(settings)
    assert result.parsed == 1
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)
    assert (tmp_path / "live" / "sessions" / SESSION / "agents" / "a0000000000000001.html").is_file()


def _usage_rows(cache: Path) -> dict[int, tuple[object, ...]]:
    """Return the demo session's stored usage rows by seq, each with its SQLite rowid first (a row written again gets a new one)."""
    with closing(sqlite3.connect(cache / CACHE_FILE)) as conn:
        return {row[2]: row for row in conn.execute("SELECT rowid, * FROM token_usage WHERE session_id = ?", (SESSION,))}


@pytest.mark.parametrize("transcript", ["main", "agent-a441699d70da96ad9.jsonl"])
def test_a_new_request_writes_its_usage_row_and_leaves_every_other_as_it_was(demo_corpus: Path, tmp_path: Path, transcript: str) -> None:
    """An append to any transcript of a session writes the new request's row alone: the other rows keep their keys and rowids."""
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    before = _usage_rows(tmp_path / "cache")
    path = main_file(demo_corpus) if transcript == "main" else main_file_folder(demo_corpus) / "subagents" / transcript
    replies = [line for line in path.read_bytes().splitlines(keepends=True) if b'"msg_' in line and b'"usage"' in line]
    with path.open("ab") as handle:
        handle.write(replies[-1].replace(b'"msg_', b'"msg_again_', 1).replace(b'"requestId":"req_', b'"requestId":"req_again_', 1))
    assert run_build(settings).parsed == 1
    after = _usage_rows(tmp_path / "cache")
    assert len(before) > 10 and len(after) == len(before) + 1
    assert {seq: row for seq, row in after.items() if seq in before} == before  # the same rows, never deleted and inserted again
    (new,) = [row for seq, row in after.items() if seq not in before]
    assert new[4] == json.loads(replies[-1])["message"]["id"].replace("msg_", "msg_again_", 1)
    # The seal made as the rows were written is the digest of the rows as stored.
    with closing(sqlite3.connect(tmp_path / "cache" / CACHE_FILE)) as conn:
        stored = conn.execute("SELECT session_id, * FROM token_usage WHERE session_id = ? ORDER BY seq", (SESSION,)).fetchall()
        (sealed,) = conn.execute("SELECT digest FROM row_sums WHERE session_id = ? AND tbl = 'token_usage'", (SESSION,)).fetchone()
    assert sealed == rows_digest(stored)
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_a_new_file_sorting_first_moves_the_other_rows_without_writing_them_again(demo_corpus: Path, tmp_path: Path) -> None:
    """A file that sorts before a session's others gives their rows new keys: each row is moved there with its rowid, keyed as a cold build keys it."""
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    before = {row[1:2] + row[3:]: row for row in _usage_rows(tmp_path / "cache").values()}  # by the row without its rowid and seq
    assert len(before) > 10
    agents = main_file_folder(demo_corpus) / "subagents"
    source = sorted(agents.glob("agent-a*.jsonl"))[0]
    lines = source.read_bytes().splitlines(keepends=True)
    (agents / "agent-a0000000000000001.jsonl").write_bytes(b"".join(
        line.replace(b'"msg_', b'"msg_first_').replace(b'"req_', b'"req_first_').replace(source.stem.removeprefix("agent-").encode(), b"a0000000000000001")
        for line in lines
    ))
    assert run_build(settings).parsed == 1
    after = _usage_rows(tmp_path / "cache")
    kept = {row[1:2] + row[3:]: row for row in after.values() if row[1:2] + row[3:] in before}
    assert kept.keys() == before.keys() and all(kept[key][0] == row[0] for key, row in before.items())  # every row there, with its rowid
    assert sum(kept[key][2] != row[2] for key, row in before.items()) > len(before) // 2  # most of them under a new key
    requests = {json.loads(line)["message"]["id"] for line in lines if b'"usage"' in line and b'"type":"assistant"' in line}
    assert len(after) - len(before) == len(requests)  # the new file's requests, inserted
    with closing(sqlite3.connect(tmp_path / "cache" / CACHE_FILE)) as conn:
        stored = conn.execute("SELECT session_id, * FROM token_usage WHERE session_id = ? ORDER BY seq", (SESSION,)).fetchall()
        (sealed,) = conn.execute("SELECT digest FROM row_sums WHERE session_id = ? AND tbl = 'token_usage'", (SESSION,)).fetchone()
    assert sealed == rows_digest(stored)
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)
    assert sorted(row[1:] for row in after.values()) == sorted(row[1:] for row in _usage_rows(tmp_path / "cold-cache").values())


def test_an_append_reads_its_sessions_requests_whole_once(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The appended session's requests are read whole once, checked before its write; its view takes them as the write left them (issue 18)."""
    settings = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(settings)
    whole: list[str] = []  # the statements that read every column of a session's requests (not the few rows a write changed)
    connect = sqlite3.connect

    def tracing(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(lambda sql: whole.append(sql) if sql.startswith(("SELECT * FROM token_usage", "SELECT session_id, * FROM token_usage"))
                                and "seq IN" not in sql else None)
        return conn

    monkeypatch.setattr(sqlite3, "connect", tracing)
    path = main_file(demo_corpus)
    replies = [line for line in path.read_bytes().splitlines(keepends=True) if b'"msg_' in line and b'"usage"' in line]
    with path.open("ab") as handle:
        handle.write(replies[-1].replace(b'"msg_', b'"msg_again_', 1).replace(b'"requestId":"req_', b'"requestId":"req_again_', 1))
    assert run_build(settings).parsed == 1
    assert len(whole) == 1, whole
    monkeypatch.undo()
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_the_usage_columns_are_the_tables_in_its_order(tmp_path: Path) -> None:
    """The ingest compares its rows with `SELECT *` and inserts them without naming columns: both follow the table."""
    Cache(tmp_path / "cache").close()
    with closing(sqlite3.connect(tmp_path / "cache" / CACHE_FILE)) as conn:
        assert tuple(column[1] for column in conn.execute("PRAGMA table_info(token_usage)")) == USAGE_COLUMNS


def test_a_theme_change_rerenders_without_reparsing(tmp_path: Path) -> None:
    from dataclasses import replace

    from conftest import DEMO_CORPUS

    theme = tmp_path / "theme"
    (theme / "static").mkdir(parents=True)
    settings = config(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache")
    first = run_build(replace(settings, theme=theme))
    (theme / "static" / "style.css").write_text("body { color: teal; }\n")
    second = run_build(replace(settings, theme=theme))
    assert (second.parsed, second.transcripts_opened) == (0, 0)
    assert second.pages_rendered == first.pages_rendered > 0  # every page rendered again
    assert second.pages_written == 1  # only the stylesheet's bytes changed
    assert (tmp_path / "site" / "static" / "style.css").read_text() == "body { color: teal; }\n"


@pytest.mark.parametrize("which", ["the session's JSON", "an agent's page"])
def test_a_file_gone_from_an_unchanged_session_is_written_again_and_every_file_counted_once(demo_corpus: Path, tmp_path: Path,
                                                                                           which: str) -> None:
    from agenthropic_site.render.manifest import read_manifest

    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live)
    published = read_manifest(tmp_path / "live").files
    before = tree_bytes(tmp_path / "live")
    agent_pages = sorted(rel for rel in published if rel.startswith(f"sessions/{SESSION}/agents/"))
    gone = f"data/sessions/{SESSION}.json" if which == "the session's JSON" else agent_pages[0]
    (tmp_path / "live" / gone).unlink()
    again = run_build(live)
    # Its session is rendered again, and each of its files counted once: written or unchanged.
    assert (again.pages_written, again.pages_written + again.pages_unchanged) == (1, len(published))
    assert tree_bytes(tmp_path / "live") == before


def after_the_manifest(out: Path) -> None:
    """Wait until a file written now gets a later ctime than the folder's manifest (a file system's clock ticks every few ms)."""
    written = (out / ".agenthropic" / "manifest").stat().st_ctime_ns
    probe = out.parent / "clock-probe"
    while True:
        probe.write_bytes(b"")
        if probe.stat().st_ctime_ns > written:
            probe.unlink()
            return


def test_a_published_file_changed_in_the_folder_is_written_again(demo_corpus: Path, tmp_path: Path) -> None:
    """A page edited by hand, or an older build's copy put back (a `git checkout` in the folder), was kept: its inputs had not changed."""
    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live)
    before = tree_bytes(tmp_path / "live")
    after_the_manifest(tmp_path / "live")
    (tmp_path / "live" / "index.html").write_bytes(b"<p>edited</p>\n")
    older = tmp_path / "live" / "data" / "sessions" / f"{SESSION}.json"
    older.write_bytes(older.read_bytes().replace(b'"cost_usd": "', b'"cost_usd": "9'))  # the same file as another build left it
    again = run_build(live)
    assert (again.parsed, again.pages_written) == (0, 2)
    assert tree_bytes(tmp_path / "live") == before
    assert run_build(live).pages_written == 0  # and the folder is as built again


def test_a_published_file_linked_elsewhere_is_looked_at_once_and_kept(demo_corpus: Path, tmp_path: Path) -> None:
    """A hard link (`cp -al`, an rsync --link-dest snapshot) changes a file's ctime, not its bytes: one look, no write."""
    from agenthropic_site.render.manifest import read_manifest

    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live)
    after_the_manifest(tmp_path / "live")
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    published = sorted(read_manifest(tmp_path / "live").files)
    for number, rel in enumerate(published):
        os.link(tmp_path / "live" / rel, snapshot / str(number))
    looked = run_build(live)
    assert (looked.pages_written, looked.pages_unchanged) == (0, len(published))
    assert stamp.unchanged(live)[0] is not None  # the manifest written again: the next build looks at nothing


def test_a_build_computes_the_insights_of_the_projects_whose_sessions_changed_and_takes_the_others_kept(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index JSON's project insights are made again only for a project whose sessions changed, and read as made."""
    import dataclasses
    import sqlite3
    from contextlib import closing

    from agenthropic_site.cache.store import _sum
    from agenthropic_site.places import CACHE_FILE
    from agenthropic_site.render import site

    made: list[str] = []
    real = site.project_insights_json
    monkeypatch.setattr(site, "project_insights_json", lambda project, tz: made.append(project.folder) or real(project, tz))
    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live)
    projects = sorted(made)
    assert len(projects) > 2  # a first build makes every project's
    path = main_file(demo_corpus)
    with path.open("ab") as handle:
        handle.write(path.read_bytes().splitlines(keepends=True)[-1].replace(b'"msg_', b'"msg_again_', 1))
    made.clear()
    assert run_build(live).parsed == 1
    assert made == [path.parent.name]  # only the project of the session appended to
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)
    # Another zone is another site: every project's again (their weeks start elsewhere).
    made.clear()
    run_build(dataclasses.replace(live, tz="Asia/Tokyo"))
    assert sorted(made) == projects
    # What was kept, damaged: every project's made again, to the same JSON. A checksum that fails
    # (the cache notes it), and entries of another shape under a checksum that holds.
    tokyo = dataclasses.replace(live, tz="Asia/Tokyo")
    index = (tmp_path / "live" / "data" / "index.json").read_bytes()
    kept = json.loads(kept_insights(tokyo))
    for value, checksum in (
        ("{}", "not its checksum"),
        (json.dumps({**kept, "projects": {key: "another shape" for key in kept["projects"]}}), None),
    ):
        with closing(sqlite3.connect(tmp_path / "cache" / CACHE_FILE)) as conn, conn:
            conn.execute("UPDATE meta SET value = ?, value_sum = ? WHERE key = 'project_insights'",
                         (value, checksum or _sum("project_insights", value)))
        (tmp_path / "live" / "data" / "index.json").unlink()
        made.clear()
        run_build(tokyo)
        assert sorted(made) == projects, value
        assert (tmp_path / "live" / "data" / "index.json").read_bytes() == index


def kept_insights(settings: BuildConfig) -> str:
    """Return the projects' insights the cache of `settings` keeps (its last build made them)."""
    import sqlite3
    from contextlib import closing

    from agenthropic_site.places import CACHE_FILE

    with closing(sqlite3.connect(settings.cache / CACHE_FILE)) as conn:
        (value,) = conn.execute("SELECT value FROM meta WHERE key = 'project_insights'").fetchone()
    return str(value)


def _append_copy(path: Path, kind: str, text: str | None = None) -> None:
    """Append a copy of the last user tool result ("tool") or assistant text reply ("text", its text made `text` if given), with fresh ids, dated after it."""
    lines = path.read_bytes().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    last_uuid = next(record["uuid"] for record in reversed(records) if record.get("uuid"))

    def blocks(record: dict) -> list:
        content = record.get("message", {}).get("content") if isinstance(record.get("message"), dict) else None
        return content if isinstance(content, list) else []

    wanted = "tool_result" if kind == "tool" else "text"
    role = "user" if kind == "tool" else "assistant"
    record = next(record for record in reversed(records)
                  if record.get("type") == role and any(isinstance(block, dict) and block.get("type") == wanted for block in blocks(record)))
    copy = json.loads(json.dumps(record))
    copy["parentUuid"], copy["uuid"] = last_uuid, f"{kind}-copy-{len(lines)}"
    copy["timestamp"] = max(r["timestamp"] for r in records if isinstance(r.get("timestamp"), str))[:19] + ".999Z"
    if role == "assistant":
        for block in blocks(copy):
            if text is not None and isinstance(block, dict) and block.get("type") == "text":
                block["text"] = text
        copy["message"]["id"] = f"msg_{kind}_copy_{len(lines)}"
        copy["requestId"] = f"req_{kind}_copy_{len(lines)}"
    with path.open("ab") as handle:
        handle.write(json.dumps(copy).encode() + b"\n")


def test_markdown_it_loads_only_for_a_build_that_renders_more_than_plain_paragraphs(demo_corpus: Path, tmp_path: Path) -> None:
    # A process of its own for each build: what it loaded is what an `agenthropic build` loads.
    arguments = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "live"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-q"]
    probe = "import sys; from agenthropic_site.cli import main; code = main(sys.argv[1:]); print(code, 'markdown_it' in sys.modules)"

    def build() -> str:
        done = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, timeout=300)
        return done.stdout.strip()

    assert build() == "1 True"  # a cold build renders every text (the demo has sessions it cannot price: exit 1)
    _append_copy(main_file(demo_corpus), "tool")
    assert build() == "1 False"  # the new message is a tool result: no Markdown to render
    _append_copy(main_file(demo_corpus), "text", "Done: `make test` passes.\n\nNothing else changed.")
    assert build() == "1 False"  # plain paragraphs and a code span: written as markdown-it would (render/markdown.py)
    _append_copy(main_file(demo_corpus), "text", "**Done**:\n\n- `make test` passes")
    assert build() == "1 True"
    assert_equals_cold_build(demo_corpus, tmp_path / "live", tmp_path)


def test_the_incremental_harness_compares_rebuilds_with_cold_builds_and_names_a_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """tests/fuzz/incremental_differential.py (runs longer than this file's) must keep working, and must see a rebuild that differs."""
    harness = fuzz_harness("incremental_differential")
    tally = harness.compare([DEMO_CORPUS], tmp_path / "first", 600.0, 4, steps=2)
    assert tally.compared == 2 and tally.different == [], tally
    built = harness.build_live

    def with_a_page_changed(corpus: Path, out: Path, cache: Path, rng: Any, options: Any) -> tuple[int, str]:
        code, how = built(corpus, out, cache, rng, options)
        with (out / "report.html").open("ab") as handle:
            handle.write(b"\n")
        return code, how

    monkeypatch.setattr(harness, "build_live", with_a_page_changed)
    tally = harness.compare([DEMO_CORPUS], tmp_path / "second", 600.0, 4, steps=2)
    assert tally.compared == 2 and len(tally.different) == 2, tally
    assert all(line.startswith(f"step {step} (built ") and ": 1 file differs: report.html; after: " in line
               for step, line in enumerate(tally.different, start=1)), tally
    assert harness.main([str(DEMO_CORPUS), "--steps", "1", "--keep", str(tmp_path / "kept")]) == 1
    assert capsys.readouterr().out.endswith("1 steps compared, 1 different\n")
    assert (tmp_path / "kept" / "live" / "site" / "report.html").read_bytes().endswith(b"\n\n")


@pytest.mark.parametrize("keep_sessions", [False, True])
def test_the_incremental_harness_can_keep_every_session_and_append_to_the_longest(tmp_path: Path, keep_sessions: bool) -> None:
    """`--keep-sessions` pins the sessions given (a run on one large session keeps it); `--long-share 1` appends only to the longest transcripts."""
    harness = fuzz_harness("incremental_differential")
    root = plain_copy(DEMO_CORPUS, tmp_path / "corpus")
    corpus = harness.Corpus(root, random.Random(7), keep_sessions=keep_sessions, long_share=1.0)
    sessions = {path.relative_to(root) for path in corpus.main_files()}
    assert len(sessions) >= 3 and len(corpus.transcripts()) > 10
    said = [corpus.change() for _ in range(150)]
    appended_to = {line.rsplit(" to ", 1)[1] for line in said if line.startswith("appended ")}
    assert 1 <= len(appended_to) <= 6, appended_to  # among the three longest of the moment
    after = {path.relative_to(root) for path in corpus.main_files()}
    touched = [line for line in said if line.startswith(("removed session", "copied session")) or
               any(line == f"removed {session.as_posix()}" for session in sessions)]
    if keep_sessions:
        assert after == sessions and touched == [], touched
    else:
        assert after != sessions and touched, "the same draws without the option remove or copy a session"


def test_the_incremental_harness_names_a_watch_that_ignores_ctrl_c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch that does not end on Ctrl-C is killed and named as a difference, not a crash of the run (started from a script in the background, one did)."""
    harness = fuzz_harness("incremental_differential")
    monkeypatch.setattr(harness, "stop_with_sigint", functools.partial(harness.stop_with_sigint, timeout=1))
    watch = harness.Watch(tmp_path / "corpus", tmp_path / "site", tmp_path / "cache", tmp_path / "watch.log")
    (tmp_path / "watch.log").write_text("the watch's last words\n")
    deaf = "import signal, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    watch.process = subprocess.Popen([sys.executable, "-c", deaf], stdout=subprocess.PIPE)
    assert watch.process.stdout is not None and watch.process.stdout.readline() == b"ready\n"
    process = watch.process
    said = watch.stop()
    assert said == "--watch did not end within 1 s of Ctrl-C and was killed: the watch's last words"
    assert process.poll() is not None and watch.process is None and watch.stop() is None


@pytest.mark.slow
def test_the_incremental_harness_drives_a_real_watch_and_names_a_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `--watch` the live site is kept by a real `agenthropic build --watch` process, stopped when the run ends."""
    harness = fuzz_harness("incremental_differential")
    stops: list[str | None] = []
    stop = harness.Watch.stop

    def counted_stop(self: Any) -> str | None:
        running = self.process is not None
        said = stop(self)
        if running:
            stops.append(said)
        return said

    monkeypatch.setattr(harness.Watch, "stop", counted_stop)
    tally = harness.compare([DEMO_CORPUS], tmp_path / "first", 600.0, 4, steps=2, watching=True)
    assert tally.compared == 2 and tally.different == [], tally
    assert stops and set(stops) == {None}  # stopped by Ctrl-C, cleanly: at the end (and when the options changed)
    first_stops = len(stops)
    start = harness.Watch.start

    def in_another_zone(self: Any, options: Any) -> str:
        # The watch shows its times in a zone the cold builds do not: every page with a time differs.
        return start(self, harness.Options(options.now, "Pacific/Chatham" if options.tz != "Pacific/Chatham" else "UTC", options.redact))

    monkeypatch.setattr(harness.Watch, "start", in_another_zone)
    tally = harness.compare([DEMO_CORPUS], tmp_path / "second", 600.0, 4, steps=2, watching=True)
    assert tally.compared == 2 and len(tally.different) == 2, tally
    assert all(line.startswith(f"step {step} (built by --watch): ") and " files differ: " in line and "index.html" in line
               for step, line in enumerate(tally.different, start=1)), tally
    assert len(stops) >= first_stops + 3 and set(stops) == {None}  # and after each difference, to start from the cold build
