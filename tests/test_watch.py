"""Watch mode: real subprocesses for the end-to-end path, an in-process loop for bursts and recovery."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from agenthropic_site.config import BuildConfig, parse_instant
from agenthropic_site.pipeline.watch import DEBOUNCE_MS, Pacing, WatchState, stopped_by_sigint, watch_loop
from conftest import DEMO_CORPUS, DEMO_NOW, logged, stop_with_sigint

SESSION = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"


def wait_for(check, timeout: float = 20.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def session_json(out: Path) -> dict | None:
    try:
        return json.loads((out / "data" / "sessions" / f"{SESSION}.json").read_text())
    except (OSError, ValueError):
        return None


def new_request_line(message_id: str, output_tokens: int) -> bytes:
    record = {"type": "assistant", "uuid": message_id, "parentUuid": None, "sessionId": SESSION, "requestId": f"req_{message_id}",
              "timestamp": "2026-04-18T13:17:00.000Z", "version": "2.1.114", "cwd": "/home/user/projects/api-server",
              "message": {"id": message_id, "model": "claude-sonnet-4-5-20250929", "role": "assistant", "stop_reason": "end_turn",
                          "content": [{"type": "text", "text": "more"}],
                          "usage": {"input_tokens": 1, "output_tokens": output_tokens, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}
    return json.dumps(record).encode() + b"\n"


def main_transcript(corpus: Path) -> Path:
    return next(corpus.rglob(f"{SESSION}.jsonl"))


def test_ctrl_c_stops_the_watch_even_when_a_finalizer_drops_its_keyboardinterrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python raises KeyboardInterrupt in whatever runs: in a finalizer it is printed and dropped, and the watch must stop anyway."""
    dropped: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: dropped.append(unraisable.exc_value))

    class Finalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # Ctrl-C arrives here, inside the finalizer

    stop = threading.Event()
    with stopped_by_sigint(stop):
        Finalized()  # dropped at once: its finalizer runs now
        assert len(dropped) == 1 and isinstance(dropped[0], KeyboardInterrupt)  # the exception never reached the loop
        assert stop.is_set()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stopped_watch_loop_ends_after_its_pass(tmp_path: Path) -> None:
    """The loop looks at its stop event between passes: set during a pass, no other pass starts."""
    config = BuildConfig(corpus=DEMO_CORPUS, out=tmp_path / "site", cache=tmp_path / "cache", now=parse_instant(DEMO_NOW))
    stop = threading.Event()
    stop.set()  # as Ctrl-C would while the first pass runs
    state = watch_loop(config, stop)
    assert sum(state.counts.values()) == 1


@pytest.mark.slow
def test_watch_end_to_end_with_a_hook_then_sigint(tmp_path: Path) -> None:
    corpus, out, cache = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache"
    shutil.copytree(DEMO_CORPUS, corpus)
    command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--corpus", str(corpus), "--out", str(out),
               "--cache", str(cache), "--now", DEMO_NOW]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first = wait_for(lambda: session_json(out), what="the first build")
        with main_transcript(corpus).open("ab") as handle:
            handle.write(new_request_line("msg_watch_test_1", 777))
        wait_for(lambda: (session_json(out) or first)["tokens"]["output"] == first["tokens"]["output"] + 777, what="the appended line")
        target = next(a["agent_id"] for a in first["agents"] if a["kind"] == "subagent" and a["status"] != "completed")
        payload = json.dumps({"hook_event_name": "SubagentStop", "session_id": SESSION, "agent_id": target}).encode()
        hook = subprocess.run([sys.executable, "-m", "agenthropic_site", "hook"], input=payload, capture_output=True,
                              env={**os.environ, "AGENTHROPIC_CACHE_DIR": str(cache)}, timeout=30)
        assert hook.returncode == 0
        wait_for(lambda: {a["agent_id"]: a["status"] for a in (session_json(out) or first)["agents"]}[target] == "completed",
                 what="the hook's status")
        assert "completed" in (out / "sessions" / SESSION / "index.html").read_text()
    finally:
        code = stop_with_sigint(process)
        stderr = process.stderr.read() if process.stderr else ""
    assert code == 0, stderr
    assert "Traceback" not in stderr


def config(tmp_path: Path, theme: Path | None = None) -> BuildConfig:
    corpus = tmp_path / "corpus"
    if not corpus.exists():
        shutil.copytree(DEMO_CORPUS, corpus)
    return BuildConfig(corpus=corpus, out=tmp_path / "site", cache=tmp_path / "cache", now=parse_instant(DEMO_NOW), theme=theme,
                       quiet=True, wait_for_cache=False)


def run_loop(settings: BuildConfig, state: WatchState, on_built=lambda: None) -> tuple[threading.Thread, threading.Event]:
    stop = threading.Event()
    thread = threading.Thread(target=watch_loop, args=(settings, stop), kwargs={"state": state, "on_built": on_built}, daemon=True)
    thread.start()
    return thread, stop


@pytest.mark.slow
def test_one_rebuild_per_burst_and_recovery_after_a_failed_build(tmp_path: Path) -> None:
    # The periodic pass stays at its 3 s: a shorter one could land inside the burst and split it.
    theme = tmp_path / "theme" / "templates"
    theme.mkdir(parents=True)
    settings = config(tmp_path, theme.parent)
    state = WatchState()
    built: list[int] = []  # the session's output tokens in the site after each build, noted by the loop itself
    # What the watch itself says (its builds stay quiet, as in `build --watch`).
    with logged("agenthropic_site.pipeline.watch") as lines:
        _burst_then_recovery(settings, theme, state, built, lines)


def _burst_then_recovery(settings: BuildConfig, theme: Path, state: WatchState, built: list[int], lines: list[str]) -> None:
    thread, stop = run_loop(settings, state, on_built=lambda: built.append(session_json(settings.out)["tokens"]["output"]))
    try:
        wait_for(lambda: len(built) == 1 and state.counts["ingested"] == 1, what="the first build")
        with main_transcript(settings.corpus).open("ab") as handle:
            for index in range(20):  # a reply streamed as many lines in a burst
                handle.write(new_request_line(f"msg_burst_{index}", 5))
                handle.flush()
                time.sleep(0.002)
        wait_for(lambda: len(built) == 2, what="the burst's rebuild")
        assert built[1] == built[0] + 20 * 5  # the one rebuild after the burst read all of it
        good = (settings.out / "index.html").read_bytes()
        (theme / "report.html").write_text("{% broken")  # a theme with a syntax error: the build fails
        # Waited for by `last`, which the loop sets after it counts and logs the pass: a wait on the
        # count could end before `last` says "build-error", and the wait for the recovery below
        # would then end at once on the "ingested" still there.
        wait_for(lambda: state.last == "build-error", what="the failing build")
        assert state.counts["ingested"] == 2  # one rebuild for the whole burst: none between it and the theme change
        assert (settings.out / "index.html").read_bytes() == good  # the last good site stays
        assert any(line.startswith("watch: build-error") for line in lines)
        (theme / "report.html").unlink()  # fixed: the next build recovers by itself
        wait_for(lambda: state.last in ("ingested", "unchanged"), what="the recovery")
        assert any(line.startswith("watch: recovered") for line in lines)
        quiet, unchanged = len(lines), state.counts["unchanged"]
        # A steady state is silent, even across the periodic pass: wait for the next pass, which finds nothing.
        wait_for(lambda: state.counts["unchanged"] > unchanged, what="a periodic pass")
        assert len(lines) == quiet
    finally:
        stop.set()
        thread.join(timeout=15)
    assert not thread.is_alive()


def test_pacing_starts_a_build_at_most_every_second_and_never_builds_more_than_half_the_time() -> None:
    now = [100.0]
    pacing = Pacing(clock=lambda: now[0])
    assert pacing.wait() == 0.0  # nothing built yet: go
    pacing.started()
    now[0] += 0.3
    pacing.finished()  # a 0.3 s build
    assert pacing.wait() == pytest.approx(DEBOUNCE_MS / 1000 - 0.3)
    now[0] = 100.0 + DEBOUNCE_MS / 1000 + 5
    assert pacing.wait() == 0.0  # an append after a quiet spell is built at once
    pacing.started()
    now[0] += 2.0
    pacing.finished()  # a 2 s build (a large corpus): the next one waits as long again
    assert pacing.wait() == pytest.approx(2.0)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_serve_binds_to_loopback_and_never_serves_half_a_page(tmp_path: Path) -> None:
    corpus, out, cache = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache"
    shutil.copytree(DEMO_CORPUS, corpus)
    port = free_port()
    command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--serve", "--port", str(port), "--corpus", str(corpus),
               "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/sessions/{SESSION}/index.html"
    try:
        wait_for(lambda: _fetch(url), what="the server")
        fetched = 0
        for index in range(15):
            with main_transcript(corpus).open("ab") as handle:
                handle.write(new_request_line(f"msg_serve_{index}", 3))
            for _ in range(8):
                body = _fetch(url)
                assert body is not None and body.rstrip().endswith(b"</html>"), f"a half-written page was served: {FETCH_ERRORS[-1:]}"
                fetched += 1
                time.sleep(0.02)
        assert fetched == 120
        # Bound to 127.0.0.1 only: another loopback address (as good as any other interface) is refused.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", port), timeout=1).close()
    finally:
        code = stop_with_sigint(process)
    assert code == 0


FETCH_ERRORS: list[str] = []


def _fetch(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read()
    except Exception as exc:  # noqa: BLE001 - recorded for the assertion message
        FETCH_ERRORS.append(repr(exc))
        return None


def test_a_watch_without_a_fixed_clock_ages_statuses_with_the_real_clock(tmp_path: Path) -> None:
    from agenthropic_site.pipeline.watch import run_pass

    settings = config(tmp_path)
    early = replace(settings, now=parse_instant("2000-01-01T00:00:00Z"))  # before every demo line: nothing is stale
    state = WatchState()
    assert run_pass(early, state) == "ingested"
    assert session_json(settings.out)["status"] == "working"
    assert run_pass(replace(early, live_clock=True), state) == "ingested"
    assert session_json(settings.out)["status"] == "unknown"  # now is long after the demo's last line


@pytest.mark.slow
def test_a_watch_the_os_will_not_watch_builds_every_second_says_why_and_watches_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past Linux's inotify limit (fs.inotify.max_user_watches) watchfiles raises as it sets up: the watch never built again, silently."""
    import watchfiles

    from agenthropic_site.pipeline import watch as watch_module

    real_watch, refusing, refused = watchfiles.watch, threading.Event(), []
    refusing.set()

    def watch_or_refuse(*paths: Path, **options: object):
        if refusing.is_set():
            refused.append(paths)
            raise OSError("OS file watch limit reached.")  # what watchfiles 1.3 raises for inotify's limit, as it starts
        return real_watch(*paths, **options)

    monkeypatch.setattr(watchfiles, "watch", watch_or_refuse)
    monkeypatch.setattr(watch_module, "RETRY_WATCHER_SECONDS", 3, raising=False)
    settings, state = config(tmp_path), WatchState()
    with logged("agenthropic_site.pipeline.watch") as lines:
        thread, stop = run_loop(settings, state)
        try:
            first = wait_for(lambda: session_json(settings.out), what="the first build")
            with main_transcript(settings.corpus).open("ab") as handle:
                handle.write(new_request_line("msg_no_watcher", 777))
            wait_for(lambda: (session_json(settings.out) or first)["tokens"]["output"] == first["tokens"]["output"] + 777,
                     what="the appended line, built on the timer")
            assert refused and state.watcher_trouble == "OSError: OS file watch limit reached."
            refusing.clear()
            wait_for(lambda: state.watcher_trouble is None, what="the watcher tried again")
        finally:
            stop.set()
            thread.join(timeout=15)
    assert not thread.is_alive()
    said = [line for line in lines if line.startswith(("watch: cannot watch", "watch: watching"))]
    assert said == ["watch: cannot watch the corpus for changes (OSError: OS file watch limit reached.); looking every second instead "
                    "(on Linux, a large corpus may need a higher fs.inotify.max_user_watches)",
                    "watch: watching the corpus for changes again"], lines


def test_a_pass_leaves_no_garbage_in_reference_cycles(tmp_path: Path) -> None:
    """A watch collects young objects in batches of 200,000 (heap.py): each build's Jinja environment, left in
    reference cycles, stayed for hundreds of passes (36 to 115 MB in 300 passes of the demo corpus)."""
    import gc

    from agenthropic_site import heap
    from agenthropic_site.pipeline.watch import run_pass

    settings, state = config(tmp_path), WatchState()
    assert run_pass(settings, state) == "ingested"
    with main_transcript(settings.corpus).open("ab") as handle:
        handle.write(new_request_line("msg_garbage", 7))
    threshold = gc.get_threshold()
    gc.collect()
    gc.set_threshold(heap.YOUNG_THRESHOLD, *threshold[1:])  # as in a watch: no collection while the pass runs
    try:
        assert run_pass(settings, state) == "ingested"
        left = gc.collect()
    finally:
        gc.set_threshold(*threshold)
    assert left == 0, f"{left} object(s) of the pass left in reference cycles"


def test_a_pass_that_cannot_write_its_output_is_a_write_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full or read-only output folder was said as a "read-error"."""
    import errno

    from agenthropic_site.pipeline.watch import run_pass
    from test_output_faults import fail_after

    settings, state = config(tmp_path), WatchState()
    fail_after(monkeypatch, 0, errno.ENOSPC)
    with logged("agenthropic_site.pipeline.watch") as lines:
        assert run_pass(settings, state) == "write-error"
    assert [line.split(":")[0:2] for line in lines] == [["watch", " write-error"]], lines
    assert "cannot write" in lines[0] and "simulated" in lines[0]  # the failure fail_after makes
    monkeypatch.undo()
    assert run_pass(settings, state) == "ingested"


def test_sigterm_stops_a_watch_as_ctrl_c_does(tmp_path: Path) -> None:
    """A service manager stops a watch with SIGTERM: it ended the process where it stood; now exit 0, as Ctrl-C."""
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    for serve in ([], ["--serve", "--port", str(free_port())]):
        out, cache = tmp_path / f"site{len(serve)}", tmp_path / f"cache{len(serve)}"  # each process's first build is its own
        command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", *serve, "--corpus", str(corpus), "--out", str(out),
                   "--cache", str(cache), "--now", DEMO_NOW]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda site=out: session_json(site), what="the first build")
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = process.stderr.read() if process.stderr else ""
        assert code == 0 and "Traceback" not in stderr, (serve, code, stderr)
        assert not any((out / ".agenthropic" / "staging").iterdir())  # nothing left staged
