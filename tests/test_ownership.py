"""A message copied into several sessions counts once, in the session it was first recorded in."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import build
from records import OTHER_SID, SID, assistant, usage, user, write


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
