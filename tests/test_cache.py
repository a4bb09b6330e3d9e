"""The cache: price changes reach cached sessions, one build at a time, corrupt caches rebuilt."""

from __future__ import annotations

import json
import select
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agenthropic_site.cache import Cache
from agenthropic_site.cache.store import SEALED_TABLES, rows_digest
from agenthropic_site.pipeline.build import run_build
from conftest import DEMO_CORPUS, DEMO_EXPECTED, DEMO_NOW, build, tree_bytes
from fixtures.pricing import priced
from test_incremental import SESSION, assert_equals_cold_build, config, main_file

# A price for every model of the demo that has none (claude-nimbus-9, ...), from the generator's ground truth.
UNPRICED = sorted({m for p in DEMO_EXPECTED.glob("*-*-*-*-*.json") for m in json.loads(p.read_text())["by_model"] if not priced(m)})
NIMBUS_PRICES = {"families": {m: {"models": [m], "periods": [
    {"from": "2025-01-01", "input": "2", "output": "10", "cache_write_5m": "2.5", "cache_write_1h": "4", "cache_read": "0.2"}]} for m in UNPRICED}}


def test_a_pricing_file_unblocks_an_excluded_session_incrementally(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(NIMBUS_PRICES))
    assert build(DEMO_CORPUS, tmp_path / "inc", tmp_path / "cache") == 1  # the demo has unpriced models
    assert build(DEMO_CORPUS, tmp_path / "inc", tmp_path / "cache", "--pricing", str(prices)) == 0
    assert build(DEMO_CORPUS, tmp_path / "cold", tmp_path / "cold-cache", "--pricing", str(prices)) == 0
    assert tree_bytes(tmp_path / "inc") == tree_bytes(tmp_path / "cold")
    index = json.loads((tmp_path / "inc" / "data" / "index.json").read_text())
    assert all(s["excluded"] is None for s in index["sessions"]) and not index["totals"]["cost_lower_bound"]


def test_a_corrupt_cache_is_rebuilt_from_the_corpus(tmp_path: Path) -> None:
    assert build(DEMO_CORPUS, tmp_path / "a", tmp_path / "cache") == 1
    (tmp_path / "cache" / "cache.sqlite3").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (tmp_path / "cache" / f"cache.sqlite3{suffix}").unlink(missing_ok=True)
    assert build(DEMO_CORPUS, tmp_path / "b", tmp_path / "cache") == 1
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")


def test_a_second_build_waits_for_the_first(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    holder = Cache(cache_dir)
    command = [sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "out"),
               "--cache", str(cache_dir), "--now", DEMO_NOW]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        ready, _, _ = select.select([process.stderr], [], [], 60)
        assert ready, "the second build said nothing"
        assert "another build is using the cache" in process.stderr.readline()
        time.sleep(0.2)
        assert process.poll() is None, "the second build did not wait"
    finally:
        holder.close()
    assert process.wait(timeout=120) == 1
    assert (tmp_path / "out" / "index.html").is_file()


def test_damage_inside_the_cache_file_never_changes_the_site(tmp_path: Path) -> None:
    assert build(DEMO_CORPUS, tmp_path / "clean", tmp_path / "clean-cache") == 1
    assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache") == 1
    database = tmp_path / "cache" / "cache.sqlite3"
    for suffix in ("-wal", "-shm"):
        (tmp_path / "cache" / f"cache.sqlite3{suffix}").unlink(missing_ok=True)
    data = bytearray(database.read_bytes())
    for offset in range(4096 * 3, len(data), 4096 * 7):  # scribble over pages past the header
        data[offset : offset + 64] = b"\xa5" * 64
    database.write_bytes(bytes(data))
    (tmp_path / "site" / "index.html").unlink()  # make the build render something from the cache
    assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache") == 1
    assert tree_bytes(tmp_path / "site") == tree_bytes(tmp_path / "clean")


def test_a_damaged_stored_view_or_summary_is_derived_again(tmp_path: Path) -> None:
    import sqlite3

    assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache") == 1
    clean = tree_bytes(tmp_path / "site")
    conn = sqlite3.connect(tmp_path / "cache" / "cache.sqlite3")
    with conn:
        first, second = [row[0] for row in conn.execute("SELECT session_id FROM views ORDER BY session_id LIMIT 2")]
        conn.execute("UPDATE views SET summary = ? WHERE session_id = ?", (b'{"session_id": 1}', first))
        conn.execute("UPDATE views SET body = ? WHERE session_id = ?", (b"\xff not json", second))
    conn.close()
    (tmp_path / "site" / "sessions" / second / "index.html").unlink()  # the page whose view must be read
    assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache") == 1
    assert tree_bytes(tmp_path / "site") == clean


def test_status_precedence_between_transcript_reads_and_hook_events(tmp_path: Path) -> None:
    from agenthropic_site.cache.checkpoints import FilesIdentity
    from agenthropic_site.parse.model import Agent, ParsedSession

    sid, child = "11111111-2222-4333-8444-555555555555", "a1"
    events: list[tuple[str | None, str, str]] = []  # (agent, event, at) received so far

    def read(main: tuple[str, str], sub: tuple[str, str]) -> dict[str, str]:
        """Project a parse with these (status, last activity), replay the hook events, return statuses."""
        session = ParsedSession(session_id=sid, project="p")
        session.agents = [Agent(agent_id=sid, kind="main", file="x", status=main[0], last_seen_at=main[1]),
                          Agent(agent_id=child, kind="subagent", file="y", parent_agent_id=sid, status=sub[0], last_seen_at=sub[1])]
        cache.write_session(session, FilesIdentity("fingerprint", "shape", "source"), [])
        for agent, event, at in events:
            cache.apply_event(sid, agent, event, at)  # the replay events.apply_hook_statuses makes after a re-read
        return dict(cache.conn.execute("SELECT agent_id, status FROM agents WHERE session_id = ?", (sid,)).fetchall())

    cache = Cache(tmp_path / "cache")
    try:
        t0, t1, t2 = "2026-01-01T10:00:00.000Z", "2026-01-01T10:00:01.000Z", "2026-01-01T10:00:02.000Z"
        assert read(("working", t0), ("working", t0)) == {sid: "working", child: "working"}
        # An inferred state needs a strictly later anchor: a Stop at the transcript's last activity changes nothing.
        events.append((None, "Stop", t0))
        assert read(("working", t0), ("working", t0))[sid] == "working"
        events.append((None, "Stop", t1))
        events.append((child, "SubagentStop", t1))
        assert read(("working", t0), ("working", t0)) == {sid: "waiting", child: "completed"}
        # A re-read with later activity: the main agent works again; the observed ending sticks.
        assert read(("working", t2), ("working", t2)) == {sid: "working", child: "completed"}
        # A transcript's own terminal (a failed notification) is what the transcript shows now.
        events.clear()
        assert read(("working", t2), ("error", t2)) == {sid: "working", child: "error"}
        assert read(("working", t2), ("working", t2)) == {sid: "working", child: "working"}
    finally:
        cache.close()


def test_a_stale_agent_is_unknown_at_the_injected_clock(tmp_path: Path) -> None:
    from agenthropic_site.model.gather import apply_watchdog
    from agenthropic_site.model.views import AgentView, SessionView

    def view(status: str, last: str | None) -> SessionView:
        agent = AgentView("s", None, "main", None, None, None, status, None, None, None, None, last)
        return SessionView("s", "fp", "p", None, None, None, None, [], None, None, None, None, [], [], {}, agents=[agent])

    fresh, stale, done, undated = view("working", "2026-06-01T00:00:00.000Z"), view("working", "2026-05-31T23:49:59.999Z"), view(
        "completed", "2020-01-01T00:00:00.000Z"), view("waiting", None)
    for session in (fresh, stale, done, undated):
        apply_watchdog(session, "2026-05-31T23:50:00.000Z")  # now 2026-06-01T00:00Z, watchdog 10 minutes
    assert (fresh.status, stale.status, done.status, undated.status) == ("working", "unknown", "completed", "unknown")


def test_new_code_forgets_what_the_old_code_derived(tmp_path: Path) -> None:
    """Message sizes and the carried usage windows are the code's work: another version measures and sums again."""
    cache = Cache(tmp_path / "cache")
    try:
        cache.invalidate_unless("version one")
        cache.put_layout_sizes({("s", "a"): b"k" * 16 + (5).to_bytes(4, "big")})
        cache.set_usage_state('{"format": 1}')
        assert cache.invalidate_unless("version one") is False
        assert cache.layout_sizes("s") and cache.usage_state() is not None
        assert cache.invalidate_unless("version two") is True
        assert cache.layout_sizes("s") == {} and cache.usage_state() is None
    finally:
        cache.close()


def test_a_build_checks_each_session_s_rows_once_unless_it_writes_them(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows this build checked or sealed are not read again to check them (only it writes the cache while it runs)."""
    assert build(demo_corpus, tmp_path / "site", tmp_path / "cache") == 1
    main = main_file(demo_corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    digested: Counter[tuple[str, str]] = Counter()
    real = Cache._digests

    def counting(self: Cache, table: str, session_ids: list[str]) -> dict[str, str]:
        digested.update((sid, table) for sid in session_ids)
        return real(self, table, session_ids)

    monkeypatch.setattr(Cache, "_digests", counting)
    assert build(demo_corpus, tmp_path / "site", tmp_path / "cache") == 1
    # The appended session's usage rows: read once, to check them before they are written (sealed from the rows
    # kept as read and those written as read back); every other table once, sealed.
    assert {table: n for (sid, table), n in digested.items() if sid == SESSION} == {table: 1 for table in SEALED_TABLES}
    assert all(n == 1 for (sid, _), n in digested.items() if sid != SESSION), digested
    assert_equals_cold_build(demo_corpus, tmp_path / "site", tmp_path)


def _request_id_indexes(cache: Path) -> list[str]:
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        return sorted(name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'token_usage_%'"))


def test_a_new_cache_indexes_requests_by_id_once_its_first_ingest_has_written_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold build into a new file asks no session for its neighbours (all are parsed), and leaves the indexes the next builds look them up by."""
    asked: list[list[str]] = []
    indexes_while_written: list[list[str]] = []
    real_neighbours, real_write = Cache.neighbours, Cache.write_session

    def neighbours(self: Cache, session_ids: list[str]) -> set[str]:
        asked.append(session_ids)
        return real_neighbours(self, session_ids)

    def write_session(self: Cache, *args: Any) -> None:
        indexes_while_written.append(_request_id_indexes(tmp_path / "cache"))
        real_write(self, *args)

    monkeypatch.setattr(Cache, "neighbours", neighbours)
    monkeypatch.setattr(Cache, "write_session", write_session)
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    run_build(config(corpus, tmp_path / "site", tmp_path / "cache"))
    assert len(indexes_while_written) > 10 and not any(indexes_while_written) and asked == [[]]  # the sessions gone: none
    assert _request_id_indexes(tmp_path / "cache") == ["token_usage_message", "token_usage_request"]
    indexes_while_written.clear()
    with main_file(corpus).open("ab") as handle:
        handle.write(main_file(corpus).read_bytes().splitlines(keepends=True)[-1].replace(b'"msg_', b'"msg_again_', 1))
    run_build(config(corpus, tmp_path / "site", tmp_path / "cache"))
    assert indexes_while_written == [["token_usage_message", "token_usage_request"]] and [SESSION] in asked
    assert_equals_cold_build(corpus, tmp_path / "site", tmp_path)


def test_views_look_for_sessions_sharing_requests_only_when_one_is_unchecked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold build wrote and sealed every session: its views check no neighbour; an append's view, with the others unchecked, does."""
    looked: list[list[str]] = []
    real_verify, real_shared = Cache.verify_for_views, Cache.shared_requests
    verifying: list[bool] = []

    def verify_for_views(self: Cache, session_ids: list[str]) -> None:
        verifying.append(True)
        try:
            real_verify(self, session_ids)
        finally:
            verifying.pop()

    def shared_requests(self: Cache, session_ids: list[str]) -> list[tuple[str | None, str | None, str, str | None]]:
        if verifying:
            looked.append(session_ids)
        return real_shared(self, session_ids)

    monkeypatch.setattr(Cache, "verify_for_views", verify_for_views)
    monkeypatch.setattr(Cache, "shared_requests", shared_requests)
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    run_build(config(corpus, tmp_path / "site", tmp_path / "cache"))
    assert looked == []
    with main_file(corpus).open("ab") as handle:
        handle.write(main_file(corpus).read_bytes().splitlines(keepends=True)[-1].replace(b'"msg_', b'"msg_again_', 1))
    run_build(config(corpus, tmp_path / "site", tmp_path / "cache"))
    assert looked == [[SESSION]]
    assert_equals_cold_build(corpus, tmp_path / "site", tmp_path)


def test_a_cache_whose_first_build_stopped_before_its_ingest_ended_is_indexed_when_opened(tmp_path: Path) -> None:
    Cache(tmp_path / "cache").close()  # made, then stopped: its rows not indexed by id yet
    assert _request_id_indexes(tmp_path / "cache") == []
    cache = Cache(tmp_path / "cache")
    try:
        assert cache.request_ids_indexed
    finally:
        cache.close()
    assert _request_id_indexes(tmp_path / "cache") == ["token_usage_message", "token_usage_request"]


def test_a_row_digest_tells_values_of_other_types_or_order_apart() -> None:
    """A stored value that changed type (the same text as a number or a blob), moved, or went missing changes the digest."""
    row = ("s1", 1, "claude-opus-4-5", None, 0.5)
    variants = [
        [("s1", "1", "claude-opus-4-5", None, 0.5)],
        [("s1", 1.0, "claude-opus-4-5", None, 0.5)],
        [("s1", 1, b"claude-opus-4-5", None, 0.5)],
        [("s1", 1, "claude-opus-4-5", "", 0.5)],
        [("s1", 1, "claude-opus-4-5", None, 0.50000001)],
        [("s1", 1, "claude-opus-4-5", None)],
        [("s1", 1, "claude-opus-4-5", None, 0.5), ("s1", 1, "claude-opus-4-5", None, 0.5)],
        [("s1", 1, None, "claude-opus-4-5", 0.5)],
    ]
    digests = {rows_digest([row])} | {rows_digest(rows) for rows in variants}
    assert len(digests) == len(variants) + 1
    assert rows_digest([row]) == rows_digest([tuple(row)])  # the same values: the same digest
