"""Load: many batches of generated sessions build cold and incrementally with a bounded number of whole views.

Memory is tested by counting, which is exact: whole session views (everything a session's pages
show) are computed and loaded a batch at a time (model/views.py VIEW_BATCH), so at no moment do more than
one batch of them exist, whatever the number of sessions; the index and project pages read only a
small summary of each session. The property depends on the number of batches, not on the size of
one, so the test lowers the batch (read by every module at call time) and builds several full batches
and a partial one instead of 5,000 sessions. Peak RSS at scale is measured, not asserted, by
`python bench/build_bench.py --sessions 5000 --session-kb 8` (docs/benchmarks.md).
"""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from agenthropic_site.model import stored as stored_views, views
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.config import BuildConfig, parse_instant
from conftest import DEMO_NOW
from fixtures.generate import generate_scale
from fixtures.stream import stream_line

BATCH = 4  # stands in for VIEW_BATCH (64): a test-sized batch
SESSIONS = 8 * BATCH + 3  # eight full batches and a partial one
SESSION_KB = 8  # the smallest sessions the generator writes: the count of sessions is what is tested


class ViewCounter:
    """Count the session views made, and the most alive at once."""

    def __init__(self) -> None:
        self.alive: dict[int, weakref.ref[views.SessionView]] = {}  # views are unhashable: keyed by id
        self.computed = 0
        self.loaded = 0
        self.peak = 0

    def track(self, made: Iterable[views.SessionView]) -> None:
        for view in made:
            key = id(view)
            self.alive[key] = weakref.ref(view, lambda _, key=key: self.alive.pop(key, None))
        if len(self.alive) > views.VIEW_BATCH:
            gc.collect()  # only unreachable cycles would still be counted; collect them first
        self.peak = max(self.peak, len(self.alive))


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lower VIEW_BATCH to BATCH: every module reads it from model/views.py when it batches."""
    assert views.VIEW_BATCH > BATCH
    monkeypatch.setattr(views, "VIEW_BATCH", BATCH)


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch, small_batches: None) -> Iterator[ViewCounter]:
    counting = ViewCounter()
    compute, decode = stored_views.compute_views, stored_views.decode_view

    def counted_compute(*args, **kwargs):  # type: ignore[no-untyped-def]
        made = compute(*args, **kwargs)
        counting.computed += len(made)
        counting.track(made.values())
        return made

    def counted_decode(body: bytes, usage: bytes) -> views.SessionView:
        view = decode(body, usage)
        counting.loaded += 1
        counting.track([view])
        return view

    monkeypatch.setattr(stored_views, "compute_views", counted_compute)
    monkeypatch.setattr(stored_views, "decode_view", counted_decode)
    yield counting



@pytest.mark.slow
def test_many_batches_of_sessions_hold_one_batch_of_views_cold_and_incrementally(tmp_path: Path, counter: ViewCounter) -> None:
    corpus = tmp_path / "corpus"
    generate_scale(corpus, SESSIONS, session_kb=SESSION_KB)
    out = tmp_path / "site"
    settings = BuildConfig(corpus=corpus, out=out, cache=tmp_path / "cache", now=parse_instant(DEMO_NOW), quiet=True)

    cold = run_build(settings)
    assert (cold.sessions, cold.parsed, cold.failed) == (SESSIONS, SESSIONS, 0)
    assert len(json.loads((out / "data" / "index.json").read_bytes())["sessions"]) == SESSIONS
    # Every view computed once and loaded once to render its pages, never all of them at once.
    assert (counter.computed, counter.loaded) == (SESSIONS, SESSIONS)
    # A module that still batched by 64 would hold all SESSIONS views at once: this bound catches it.
    assert counter.peak <= views.VIEW_BATCH == BATCH

    counter.computed = counter.loaded = counter.peak = 0
    unchanged = run_build(settings)
    assert (unchanged.parsed, unchanged.pages_written, counter.computed, counter.loaded) == (0, 0, 0, 0)

    # One live session gains a request: its view alone is computed again, and its pages are
    # rendered from that view, not from its stored copy decoded (model/stored.py ComputedAlone).
    mains = sorted(p for p in corpus.rglob("*.jsonl") if p.parent.parent == corpus and not p.name.startswith("agent-"))
    main = mains[len(mains) // 2]  # (flat-layout agent-*.jsonl files sit beside the main transcripts)
    before = json.loads((out / "data" / "sessions" / f"{main.stem}.json").read_bytes())
    with main.open("ab") as handle:
        handle.write(stream_line(main.stem, 1))
    appended = run_build(settings)
    after = json.loads((out / "data" / "sessions" / f"{main.stem}.json").read_bytes())
    assert appended.parsed == 1 and (counter.computed, counter.loaded) == (1, 0)
    assert after["tokens"]["output"] == before["tokens"]["output"] + 1
    # Rendered again: that session's page, the transcript page the reply lands on and its search
    # shard (its agents' pages are not: nothing they show changed); its project's page, the index,
    # the report, the list of sessions searched and the usage windows.
    assert len(after["agents"]) > 1
    assert appended.pages_rendered == 1 + 1 + 1 + 5
    assert counter.peak == 1


@pytest.mark.parametrize("bounded", [False, True])
def test_large_sessions_views_are_computed_and_loaded_in_smaller_batches(tmp_path: Path, counter: ViewCounter, monkeypatch: pytest.MonkeyPatch,
                                                                        bounded: bool) -> None:
    """A batch of views also stops at VIEW_BATCH_REQUESTS usage rows (computed) and VIEW_BATCH_BYTES of stored views (loaded).

    Sessions above both are held one at a time.
    """
    sessions = 6
    monkeypatch.setattr(views, "VIEW_BATCH", 64)  # the count alone would hold every view at once
    if bounded:
        monkeypatch.setattr(views, "VIEW_BATCH_REQUESTS", 1)
        monkeypatch.setattr(views, "VIEW_BATCH_BYTES", 1)
    corpus = tmp_path / "corpus"
    generate_scale(corpus, sessions, session_kb=SESSION_KB)
    settings = BuildConfig(corpus=corpus, out=tmp_path / "site", cache=tmp_path / "cache", now=parse_instant(DEMO_NOW), quiet=True, jobs=1)
    run_build(settings)
    assert (counter.computed, counter.loaded) == (sessions, sessions)
    assert counter.peak == (1 if bounded else sessions)
