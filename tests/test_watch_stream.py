"""`build --watch` under a steady stream of appends keeps up, without unbounded queueing.

The stream is the issue's: 50 new assistant lines a second, round-robin over 10 generated sessions
(the same stream as bench/watch_stream.py, which reports each line's lag in docs/benchmarks.md).
It runs for 5 s, 250 lines: a few paced rebuilds in the middle of the stream besides the ones at
its two ends, while a watcher without pacing would rebuild several times as often (3 below); the
60 s run of the benchmark shows the steady state at length. The lines are written on a fixed
schedule (line i at i/50 s); a writer that falls behind on a loaded machine catches up in a burst,
so the number of lines is always 250.

Nothing is timed. The watcher runs as a real subprocess without -q, so each pass that changes the
site prints one `updated:` line on stderr (unchanged passes are silent); stderr goes to a file, and
the file's size read right after a write is an exact position in the watcher's log, which splits
the passes at the last append. The watcher is started through tests/watch_probe.py, which also
marks the start and end of every pass in that log, so the test waits for passes, not for time:
after the last append it stops the watcher once two passes have run that started after it (the
first reads everything, the second must find nothing new). The test counts:

1. every line in the final site: each session's data JSON grows by exactly the lines appended to
   it, in output tokens and in its main agent's requests;
2. at most 2 rebuilds after the last append: the pass in progress at that moment, and one pass
   started after it, which reads everything; a watcher with a queue of pending work would need
   more, and any later pass finds nothing new and stays silent;
3. rebuilds are paced: a build starts at most once a second (watch.Pacing, DEBOUNCE_MS), so the
   stream's rebuilds number at most its duration in seconds plus the one in progress when it
   began (5 in a 5 s stream, against 250 lines; one per line would be 250). watchfiles alone would not
   pace them: it ends a batch after a QUIET_MS step in which no *new* path changed, which a
   round-robin stream over 10 files reaches every 200-300 ms (some 17-25 rebuilds in 5 s).

Wall-clock limits below only guard against a hang and fail with a message; they are never the
measurement.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agenthropic_site.pipeline.watch import DEBOUNCE_MS
from conftest import DEMO_NOW, stop_with_sigint
from fixtures.stream import append_line, generate_stream_corpus, session_data
from watch_probe import passes_since

RATE = 50  # lines a second, the rate
SECONDS = 5
SESSIONS = 10
LINES = RATE * SECONDS
MAX_BUILDS_AFTER_LAST_APPEND = 2
HANG_GUARD = 180.0  # seconds for any one wait; generous for a loaded 2-core machine


def counts(out: Path, session_id: str) -> tuple[int, int] | None:
    """Return a session's (output tokens, main-agent requests) in the built site, or None."""
    data = session_data(out, session_id)
    if data is None:
        return None
    main = next(agent for agent in data["agents"] if agent["kind"] == "main")
    return data["tokens"]["output"], main["requests"]


def updates(log: str) -> int:
    """Count the passes that changed the site (each prints one `updated:` line)."""
    return sum(line.startswith("updated:") for line in log.splitlines())


@pytest.mark.slow
def test_watch_keeps_up_with_a_steady_stream_without_queueing(tmp_path: Path) -> None:
    corpus, out, cache, log_path = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache", tmp_path / "watch.log"
    mains = generate_stream_corpus(corpus, SESSIONS)
    assert len(mains) == SESSIONS
    command = [sys.executable, str(Path(__file__).with_name("watch_probe.py")), "build", "--watch", "--corpus", str(corpus), "--out", str(out),
               "--cache", str(cache), "--now", DEMO_NOW]
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log_file)

    def log() -> str:
        return log_path.read_text(errors="replace")

    def wait_for(check, what: str):
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            if process.poll() is not None:
                raise AssertionError(f"the watcher exited ({process.returncode}) while waiting for {what}:\n{log()[-3000:]}")
            time.sleep(0.05)
        raise AssertionError(f"hang guard: no {what} within {HANG_GUARD:.0f} s:\n{log()[-3000:]}")

    appended = {path.stem: 0 for path in mains}
    positions: dict[str, int] = {}
    try:
        wait_for(lambda: updates(log()) >= 1 and all(counts(out, p.stem) for p in mains), "first build")
        base = {path.stem: counts(out, path.stem) for path in mains}

        def stream() -> None:
            positions["before_stream"] = log_path.stat().st_size
            started = time.monotonic()
            for index in range(LINES):
                time.sleep(max(0.0, started + index / RATE - time.monotonic()))
                appended[append_line(mains, index).stem] += 1
            positions["after_last_append"] = log_path.stat().st_size  # passes logged past here ran after it
            positions["stream_ms"] = int((time.monotonic() - started) * 1000)

        writer = threading.Thread(target=stream, daemon=True)
        writer.start()
        writer.join(timeout=HANG_GUARD)
        assert not writer.is_alive(), f"hang guard: the stream of {LINES} lines did not finish within {HANG_GUARD:.0f} s"
        assert sum(appended.values()) == LINES

        # Watch on until two passes have run that started after the last append: the first reads
        # every line, the second (a periodic pass, at the latest) must find nothing new.
        wait_for(lambda: passes_since(log_path.read_bytes()[positions["after_last_append"]:].decode(errors="replace")) >= 2,
                 "two passes after the last append")
    finally:
        code = stop_with_sigint(process, timeout=60)
    raw = log_path.read_bytes()
    text = raw.decode(errors="replace")
    assert code == 0, text[-3000:]
    assert "Traceback" not in text and "watch:" not in text, text[-3000:]

    # (1) Every appended line is counted, in tokens and in requests, session by session.
    for session_id, lines in appended.items():
        tokens, requests = counts(out, session_id)
        assert (tokens - base[session_id][0], requests - base[session_id][1]) == (lines, lines), session_id

    # (2) Caught up within a bounded number of passes once the stream stopped: no backlog.
    after_last = updates(raw[positions["after_last_append"]:].decode(errors="replace"))
    assert after_last <= MAX_BUILDS_AFTER_LAST_APPEND, f"{after_last} rebuilds after the last append:\n{text[-3000:]}"

    # (3) Rebuilds are paced: at most one start a second while the stream ran, plus the bounded tail.
    during = updates(raw[positions["before_stream"]:positions["after_last_append"]].decode(errors="replace"))
    assert 1 <= during <= positions["stream_ms"] // DEBOUNCE_MS + 1, f"{during} rebuilds in {positions['stream_ms']} ms"
