"""A message copied into several sessions counts once, in the session it was first recorded in."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenthropic_site.cache import Cache
from agenthropic_site.pipeline import rendering
from agenthropic_site.pipeline.build import run_build
from conftest import build, tree_bytes
from test_incremental import config
from records import OTHER_SID, SID, assistant, line, usage, user, write


def session_tokens(out: Path, sid: str) -> tuple[int, int]:
    data = json.loads((out / "data" / "sessions" / f"{sid}.json").read_text())
    return data["tokens"]["output"], data["collisions"]


def test_the_earliest_ending_session_owns_a_replayed_message(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shared = assistant("a1", "msg_shared", "req_shared", usage(1, 100), ts="2026-01-01T10:00:00.000Z")
    write(corpus / "p" / f"{SID}.jsonl", user("u1", "original", ts="2026-01-01T09:59:00.000Z"), shared)
    # The resumed session replays the record verbatim under its own id, then goes on longer.
    write(corpus / "p" / f"{OTHER_SID}.jsonl", {**shared, "sessionId": OTHER_SID},
          assistant("b1", "msg_new", "req_new", usage(1, 7), ts="2026-01-02T10:00:00.000Z", session=OTHER_SID))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    assert session_tokens(tmp_path / "out", SID) == (100, 0)
    assert session_tokens(tmp_path / "out", OTHER_SID) == (7, 1)


def test_an_explicit_origin_marker_wins_over_end_times(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shared = assistant("a1", "msg_shared", "req_shared", usage(1, 100), ts="2026-01-01T10:00:00.000Z")
    # The original goes on for days; the copy ends first but keeps the original's sessionId.
    write(corpus / "p" / f"{SID}.jsonl", shared, assistant("a2", "msg_late", "req_late", usage(1, 3), ts="2026-01-09T10:00:00.000Z"))
    write(corpus / "q" / f"{OTHER_SID}.jsonl", shared)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    assert session_tokens(tmp_path / "out", SID) == (103, 0)
    assert session_tokens(tmp_path / "out", OTHER_SID) == (0, 1)


def test_replaying_an_unpriced_request_does_not_exclude_the_session_that_replays_it(tmp_path: Path) -> None:
    """The halt gate reads ownership: only the session that owns a request without a price is excluded."""
    corpus = tmp_path / "corpus"
    unknown = assistant("a1", "msg_unknown", "req_unknown", usage(1, 100), model="claude-nimbus-9", ts="2026-01-01T10:00:00.000Z")
    write(corpus / "p" / f"{SID}.jsonl", user("u1", "original", ts="2026-01-01T09:59:00.000Z"), unknown)
    write(corpus / "p" / f"{OTHER_SID}.jsonl", {**unknown, "sessionId": OTHER_SID},
          assistant("b1", "msg_new", "req_new", usage(1, 7), ts="2026-01-02T10:00:00.000Z", session=OTHER_SID))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 1  # one session left out of the totals
    original = json.loads((tmp_path / "out" / "data" / "sessions" / f"{SID}.json").read_text())
    resumed = json.loads((tmp_path / "out" / "data" / "sessions" / f"{OTHER_SID}.json").read_text())
    assert original["excluded"] == {"reason": "no price for model claude-nimbus-9"} and original["cost_usd"] is None
    assert resumed["excluded"] is None and resumed["tokens"]["output"] == 7 and resumed["collisions"] == 1
    assert resumed["cost_usd"] is not None and float(resumed["cost_usd"]) > 0
    index = json.loads((tmp_path / "out" / "data" / "index.json").read_text())
    assert index["report"]["unpriced_models"] == {"no price for model claude-nimbus-9": [SID]}


ROW_IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d", "e"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(["s0", "s1", "s2", "s3"]), ROW_IDS, ROW_IDS), max_size=14),
       seeds=st.lists(st.sampled_from(["s0", "s1", "s2", "s3"]), min_size=1, max_size=3, unique=True))
def test_shared_requests_follow_every_link_between_sessions(tmp_path: Path, rows: list[tuple[str, str | None, str | None]], seeds: list[str]) -> None:
    """The linked rows are found as a plain closure over ids finds them; none when nothing crosses a session."""
    cache = Cache(tmp_path / f"cache-{len(list(tmp_path.iterdir()))}")
    try:
        cache.conn.execute("PRAGMA foreign_keys = OFF")  # token_usage rows alone: the query reads nothing else
        cache.conn.executemany(
            "INSERT INTO token_usage(session_id, seq, agent_id, message_id, request_id, model, input, output, cache_read, cache_write_5m, "
            "cache_write_1h, file, line, under_reported) VALUES (?, ?, 'a', ?, ?, 'm', 0, 0, 0, 0, 0, 'f', 1, 0)",
            [(sid, seq, "m" + message if message else None, "r" + request if request else None) for seq, (sid, message, request) in enumerate(rows)],
        )
        table = [("m" + m if m else None, "r" + r if r else None, sid, None) for sid, m, r in rows if m or r]
        linked = {row for row in table if row[2] in seeds}
        while True:
            ids = {row[0] for row in linked if row[0]} | {row[1] for row in linked if row[1]}
            more = {row for row in table if {row[0], row[1]} & ids} - linked
            if not more:
                break
            linked |= more
        crosses = len({row[2] for row in linked}) > 1
        key = repr  # rows hold None and text
        assert sorted(set(cache.shared_requests(seeds)), key=key) == (sorted(linked, key=key) if crosses else [])
    finally:
        cache.close()


def test_shared_requests_are_looked_for_again_only_after_a_row_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer holds while no row changed, by this connection or another; any change looks again."""
    cache = Cache(tmp_path / "cache")
    looked: list[str] = []
    real = Cache._linked_rows

    def counting(self: Cache, seeds: str, session_ids: list[str]) -> list[tuple[str | None, str | None, str, str | None]]:
        looked.append(seeds)
        return real(self, seeds, session_ids)

    monkeypatch.setattr(Cache, "_linked_rows", counting)
    insert = ("INSERT INTO token_usage(session_id, seq, agent_id, message_id, request_id, model, input, output, cache_read, cache_write_5m, "
              "cache_write_1h, file, line, under_reported) VALUES (?, ?, 'a', ?, NULL, 'm', 0, 0, 0, 0, 0, 'f', 1, 0)")
    try:
        cache.conn.execute("PRAGMA foreign_keys = OFF")  # token_usage rows alone: the query reads nothing else
        cache.conn.executemany(insert, [("s0", 0, "m1"), ("s1", 1, "m1")])
        first = cache.shared_requests(["s0"])
        assert sorted(row[2] for row in first) == ["s0", "s1"]
        assert cache.shared_requests(["s0"]) == first and len(looked) == 1  # nothing changed: not looked for again
        cache.conn.execute(insert, ("s2", 2, "m1"))  # this connection adds a copy
        assert sorted(row[2] for row in cache.shared_requests(["s0"])) == ["s0", "s1", "s2"] and len(looked) == 2
        other = sqlite3.connect(cache.path)  # another process's connection commits one more
        other.execute("PRAGMA foreign_keys = OFF")
        with other:
            other.execute(insert, ("s3", 3, "m1"))
        other.close()
        assert sorted(row[2] for row in cache.shared_requests(["s0"])) == ["s0", "s1", "s2", "s3"] and len(looked) == 3
        assert cache.shared_requests(["s1"]) and len(looked) == 4  # other sessions asked about: looked for
    finally:
        cache.close()


def test_an_append_that_replays_another_sessions_request_moves_its_ownership(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that shared nothing, appended first its own request, then a copy of another's, takes the copy: as a cold build says.

    After a write, only the rows it wrote are asked about (the session's other rows were found
    sharing nothing just before): the indexes' join over every row of the session runs once.
    """
    corpus, out, cache = tmp_path / "corpus", tmp_path / "out", tmp_path / "cache"
    original = assistant("b1", "msg_shared", "req_shared", usage(1, 100), ts="2026-01-05T10:00:00.000Z", session=OTHER_SID)
    mine = corpus / "p" / f"{SID}.jsonl"
    write(mine, user("u1", "mine", ts="2026-01-01T09:00:00.000Z"), assistant("a1", "msg_mine", "req_mine", usage(1, 5), ts="2026-01-01T09:00:01.000Z"))
    # The other session goes on after the copy's time: the appended copy ends first and owns the request.
    write(corpus / "q" / f"{OTHER_SID}.jsonl", original,
          assistant("b2", "msg_later", "req_later", usage(1, 3), ts="2026-01-09T10:00:00.000Z", session=OTHER_SID))
    assert build(corpus, out, cache) == 0
    joins: list[str] = []
    connect = sqlite3.connect

    def tracing(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # type: ignore[arg-type]
        conn.set_trace_callback(lambda sql: joins.append(sql) if "JOIN token_usage o" in sql else None)
        return conn

    monkeypatch.setattr(sqlite3, "connect", tracing)
    with mine.open("ab") as handle:
        handle.write(line(assistant("a2", "msg_mine_2", "req_mine_2", usage(1, 2), ts="2026-01-01T09:00:02.000Z")))
    assert build(corpus, out, cache) == 0
    assert len(joins) == 1  # before the write; after it, only the appended row's ids were asked about
    assert session_tokens(out, SID) == (7, 0) and session_tokens(out, OTHER_SID) == (103, 0)
    with mine.open("ab") as handle:
        handle.write(line({**original, "sessionId": SID}))
    assert build(corpus, out, cache) == 0
    assert session_tokens(out, SID) == (107, 0) and session_tokens(out, OTHER_SID) == (3, 1)
    monkeypatch.undo()
    cold = tmp_path / "cold"
    shutil.copytree(corpus, cold / "corpus")
    assert build(cold / "corpus", cold / "out", cold / "cache") == 0
    assert tree_bytes(out) == tree_bytes(cold / "out")


def test_the_render_looks_for_owners_only_in_sessions_that_count_copies_elsewhere(demo_corpus: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose view counts none of its requests elsewhere owns each one: its messages' figures need no owner looked up (issue 18).

    The site is the same as when every session's owners are looked up.
    """
    real = rendering.request_figures
    asked: dict[str, bool] = {}

    def recording(cache: Cache, session_id: str, shared: bool = True) -> dict[str, Any]:
        asked[session_id] = shared
        return real(cache, session_id, shared)

    monkeypatch.setattr(rendering, "request_figures", recording)
    run_build(config(demo_corpus, tmp_path / "out", tmp_path / "cache"))
    collisions = {path.stem: json.loads(path.read_text())["collisions"] for path in (tmp_path / "out" / "data" / "sessions").glob("*.json")}
    assert asked == {sid: count > 0 for sid, count in collisions.items()}
    assert 0 < sum(asked.values()) < len(asked)  # the demo has sessions of both kinds
    monkeypatch.setattr(rendering, "request_figures", lambda cache, session_id, shared=True: real(cache, session_id))
    run_build(config(demo_corpus, tmp_path / "every", tmp_path / "every-cache"))
    assert tree_bytes(tmp_path / "out") == tree_bytes(tmp_path / "every")
