"""`agenthropic build --watch`: rebuild on every change, quietly, and with --serve serve each build (live/serve.py)."""

from __future__ import annotations

import gc
import logging
import dataclasses
import signal
import threading
from datetime import datetime, UTC
import time
from dataclasses import field
from pathlib import Path
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from agenthropic_site.config import BuildConfig, ConfigError
from agenthropic_site.corpus import ContainmentError, CorpusRootError, Skip
from agenthropic_site.errors import Terminated, terminate
from agenthropic_site.live.serve import LOOPBACK, local_server, port_problem, site_app
from agenthropic_site.records import record_class
from agenthropic_site.terminal import printable

log = logging.getLogger(__name__)

# A burst of appends (Claude Code streaming a reply) gives one rebuild once the corpus has been
# quiet for QUIET_MS. watchfiles ends a batch after a QUIET_MS step with no *new* path changed
# (1.3: repeated writes to the same files do not hold it open), so in a long stream the loop
# itself paces the builds: one starts at most every DEBOUNCE_MS, and never sooner than twice the
# last build's duration after it started, so a watch spends at most half its time building.
QUIET_MS = 80
DEBOUNCE_MS = 1000
# A pass runs at least this often even without events, to catch what the OS did not report.
PERIODIC_MS = 3000
# A skipped file that stays skipped is mentioned again at most this often.
REPEAT_SKIP_SECONDS = 300
# When the OS watcher cannot be set up (Linux's inotify limits, fs.inotify.max_user_watches, are
# reached on a large corpus; a watched folder vanished as it was set up), passes run on a timer,
# paced as ever, and the watcher is tried again after this long.
RETRY_WATCHER_SECONDS = 60
RELOAD_STAMP = "reload.stamp"

OUTCOMES = ("ingested", "unchanged", "no-corpus-root", "overlapped", "read-error", "write-error", "containment-halt", "build-error")
TROUBLE = frozenset({"no-corpus-root", "read-error", "write-error", "containment-halt", "build-error"})


@record_class
class WatchState:
    """What the watch loop remembers between passes: outcome counts and what it last said."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    last: str | None = None
    skip_said: dict[str, float] = field(default_factory=dict)
    watcher_trouble: str | None = None  # why the OS watcher could not be set up, while passes run on a timer


def run_pass(config: BuildConfig, state: WatchState) -> str:
    """Run one incremental build; return its outcome and log only what a person needs to know."""
    from agenthropic_site.pipeline.build import run_build
    from agenthropic_site.cache import CacheBusyError
    from agenthropic_site.cache.store import CacheFullError
    from agenthropic_site.cost import PricingFileError
    from agenthropic_site.render.theme import ThemeError
    from agenthropic_site.render.writer import OutputError

    detail = ""
    if config.live_clock:
        # A watch runs for hours: statuses age with the real clock, pass by pass.
        config = dataclasses.replace(config, now=datetime.now(tz=UTC))
    try:
        result = run_build(config)
    except CacheBusyError:
        outcome, detail = "overlapped", "another build holds the cache"
    except CorpusRootError as exc:
        outcome, detail = "no-corpus-root", str(exc)
    except ContainmentError as exc:
        outcome, detail = "containment-halt", f"FATAL: corpus containment violation - {exc}"
    except (OutputError, CacheFullError) as exc:
        # The output or cache folder is full or read-only: was said as a "read-error".
        outcome, detail = "write-error", str(exc)
    except OSError as exc:
        outcome, detail = "read-error", str(exc)
    except (ConfigError, PricingFileError, ThemeError) as exc:
        outcome, detail = "build-error", str(exc)
    except Exception as exc:  # noqa: BLE001 - a failing build keeps the last good site and the loop alive
        outcome, detail = "build-error", f"{type(exc).__name__}: {exc}"
    else:
        changed = result.parsed or result.removed_sessions or result.pages_written or result.files_removed or result.repriced
        outcome = "ingested" if changed or result.hook_events else "unchanged"
        if outcome == "ingested":
            log.info(f"updated: {result.parsed} session(s) read, {result.hook_events} hook event(s), "
                f"{result.pages_written} file(s) written, {result.files_removed} removed")
        _say_new_skips(config, state)
    state.counts[outcome] += 1
    if outcome in TROUBLE and (state.last != outcome):
        log.warning(f"watch: {outcome}: {printable(detail)} (the last good site stays in place)")
    elif state.last in TROUBLE and outcome not in TROUBLE:
        log.warning(f"watch: recovered from {state.last}")
    state.last = outcome
    # A build leaves its Jinja environment in reference cycles (its templates, macros and their
    # contexts: some 260 objects, 270 KB on the demo corpus), and a watch collects young objects in
    # batches of 200,000 (heap.py): passes over the demo corpus grew from 36 to 115 MB in 300
    # before its first collection. The pass's objects are all young: collecting them is 0.2 ms.
    gc.collect(1)
    return outcome


def _say_new_skips(config: BuildConfig, state: WatchState) -> None:
    """Mention each skipped transcript once, then at most every few minutes while it stays skipped."""
    import orjson

    try:
        report = orjson.loads((config.out / "data" / "index.json").read_bytes())["report"]
    except (OSError, ValueError, KeyError):
        return
    now = time.monotonic()
    for skip in report.get("skipped", []):
        if not Skip(skip.get("path", ""), skip.get("reason", ""), skip.get("detail", "")).uncounted:
            continue  # only skips that leave tokens out of the totals are worth a line
        key = f"{skip['path']}|{skip['reason']}"
        said = state.skip_said.get(key)
        if said is None or now - said >= REPEAT_SKIP_SECONDS:
            state.skip_said[key] = now
            # Paths and details come from the corpus: controls are shown, never sent to the terminal.
            log.info(printable(f"skipped {skip['path']}: {skip['reason']} {skip.get('detail', '')}".rstrip()))


@record_class
class Pacing:
    """When the next build may start: DEBOUNCE_MS after the last one started, or twice its duration."""

    clock: Callable[[], float] = time.monotonic
    start: float | None = None
    duration: float = 0.0

    def wait(self) -> float:
        """Return the seconds to wait before the next build may start (0 when it may start now)."""
        if self.start is None:
            return 0.0
        earliest = self.start + max(DEBOUNCE_MS / 1000, 2 * self.duration)
        return max(earliest - self.clock(), 0.0)

    def started(self) -> None:
        """Note that a build starts now."""
        self.start = self.clock()

    def finished(self) -> None:
        """Note that the build that started last has ended."""
        if self.start is not None:
            self.duration = self.clock() - self.start


def watch_paths(config: BuildConfig) -> list[Path]:
    """Return what to watch: the corpus, the hook spool folder, and a user theme."""
    spool = config.cache / "hooks"
    spool.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths = [spool]
    if config.corpus.is_dir():
        paths.append(config.corpus)
    if config.theme is not None and config.theme.is_dir():
        paths.append(config.theme)
    return paths


def watch_loop(config: BuildConfig, stop: threading.Event, on_built: Callable[[], None] = lambda: None,
               state: WatchState | None = None) -> WatchState:
    """Build once, then again after each burst of changes and every few seconds, until `stop` is set."""
    import watchfiles

    state = state or WatchState()
    pacing = Pacing()
    if run_pass(config, state) in ("ingested", "unchanged"):
        on_built()
    while not stop.is_set():
        # The corpus root may appear later (no-corpus-root); watch what exists, and wake up
        # periodically for a fingerprint pass that catches anything the OS did not report.
        watched = watch_paths(config)
        try:
            for _changes in watchfiles.watch(*watched, debounce=DEBOUNCE_MS, step=QUIET_MS, stop_event=stop,
                                             rust_timeout=PERIODIC_MS, yield_on_timeout=True):
                if state.watcher_trouble is not None:
                    state.watcher_trouble = None
                    log.warning("watch: watching the corpus for changes again")
                # Changes made while this waits are gathered by watchfiles and read by this pass
                # or, if they come after it starts, by the next one: nothing queues up.
                if not _paced_pass(config, state, stop, pacing, on_built) or watch_paths(config) != watched:
                    break  # stopped, or the corpus appeared or vanished: watch the new set of paths
        except FileNotFoundError:
            # A watched folder vanished as the watcher was set up (watchfiles 1.3): set it up again after a pause.
            stop.wait(PERIODIC_MS / 1000)
        except (OSError, RuntimeError) as exc:
            # The watcher gave up as it was set up, and was set up again, and again: a watch of a
            # corpus past the inotify limit never built after its first pass, and said nothing.
            _build_on_a_timer(config, state, stop, pacing, on_built, watched, exc)
    return state


def _paced_pass(config: BuildConfig, state: WatchState, stop: threading.Event, pacing: Pacing, on_built: Callable[[], None]) -> bool:
    """Run a pass once the pacing allows it; return False (and run none) when `stop` is set meanwhile."""
    if stop.wait(pacing.wait()):
        return False
    pacing.started()
    outcome = run_pass(config, state)
    pacing.finished()
    if outcome == "ingested":
        on_built()
    return True


def _build_on_a_timer(config: BuildConfig, state: WatchState, stop: threading.Event, pacing: Pacing, on_built: Callable[[], None],
                      watched: list[Path], exc: Exception) -> None:
    """Without the OS watcher, run a paced pass every second until the watcher may be tried again."""
    trouble = f"{type(exc).__name__}: {exc}"
    if state.watcher_trouble is None:
        # watchfiles 1.3 raises OSError("OS file watch limit reached. ...") for inotify's limit.
        log.warning(f"watch: cannot watch the corpus for changes ({printable(trouble)}); looking every second instead "
                    "(on Linux, a large corpus may need a higher fs.inotify.max_user_watches)")
    state.watcher_trouble = trouble
    retry = time.monotonic() + RETRY_WATCHER_SECONDS
    while time.monotonic() < retry and watch_paths(config) == watched:
        if stop.wait(DEBOUNCE_MS / 1000) or not _paced_pass(config, state, stop, pacing, on_built):
            return


def serve_and_watch(config: BuildConfig, port: int) -> int:
    """Watch in a thread and serve the output folder on 127.0.0.1 with livereload until Ctrl-C."""
    import sys

    from tornado.ioloop import IOLoop
    from tornado.netutil import bind_sockets

    from agenthropic_site.errors import EXIT_USAGE

    # Take the port before building anything, so a port in use is one line, not a build then a crash.
    # (getaddrinfo takes a port past 65535 modulo 65536: 70000 would quietly listen on 4464.)
    try:
        if not 0 < port < 65536:
            raise OverflowError(port)
        sockets = bind_sockets(port, LOOPBACK)
    except (OSError, OverflowError) as exc:
        print(f"agenthropic: {port_problem(port, exc)}", file=sys.stderr)
        return EXIT_USAGE
    stamp = config.cache / RELOAD_STAMP
    stamp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp.write_text("0\n")

    def touch() -> None:
        stamp.write_text(f"{time.monotonic_ns()}\n")

    stop = threading.Event()
    worker = threading.Thread(target=watch_loop, args=(config, stop, touch), daemon=True)
    worker.start()
    # From here a Ctrl-C or SIGTERM stops the worker's build and waits for it: one that came while
    # the server was being made left the process with a build running in a thread it then killed.
    try:
        server = local_server(sockets, port, site_app(config.out))
        # Browsers reload only after a completed build: livereload watches a stamp the loop touches
        # when every page of a build is in place (pages are written atomically, never half).
        server.watch(str(stamp))
        log.info(f"serving {config.out} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        loop = IOLoop.current()  # the main thread's, which `serve` runs

        def interrupted() -> None:
            stop.set()
            loop.stop()

        # Ctrl-C is an event of the server's loop, not a KeyboardInterrupt: one raised inside a
        # finalizer is printed and dropped (see stopped_by_sigint), and the server went on serving.
        # SIGTERM (a service manager stopping the watch) the same way.
        loop.asyncio_loop.add_signal_handler(signal.SIGINT, interrupted)  # type: ignore[attr-defined]
        loop.asyncio_loop.add_signal_handler(signal.SIGTERM, interrupted)  # type: ignore[attr-defined]
        server.serve(host=LOOPBACK, port=port, open_url_delay=None, restart_delay=0, debug=False)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        worker.join(timeout=10)
    return 0


def watch_forever(config: BuildConfig) -> int:
    """Watch without serving until Ctrl-C (SIGINT); exit 0."""
    stop = threading.Event()
    with stopped_by_sigint(stop):
        try:
            watch_loop(config, stop)
        except KeyboardInterrupt:
            stop.set()
    return 0


@contextmanager
def stopped_by_sigint(stop: threading.Event) -> Iterator[None]:
    """While the block runs, make Ctrl-C set `stop` before it raises KeyboardInterrupt as Python does.

    Python raises KeyboardInterrupt in whatever the main thread runs. Raised in a finalizer (a
    `__del__`, a weakref callback, a generator closed by the collector: a pass frees its objects
    as it ends) it is printed and dropped, and the watch went on: a test's Ctrl-C, sent as a pass
    ended, was once not obeyed for 30 s. The event is set first, so the loop ends at its next
    check whatever becomes of the exception. A handler someone else installed is left alone.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        stop.set()
        raise KeyboardInterrupt

    def end(signum: int, frame: FrameType | None) -> None:
        stop.set()
        raise Terminated

    signal.signal(signal.SIGINT, interrupt)
    # SIGTERM (a service manager stopping the watch) the same way, unless someone chose otherwise.
    term = signal.getsignal(signal.SIGTERM)
    if term in (signal.SIG_DFL, terminate):
        signal.signal(signal.SIGTERM, end)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if term in (signal.SIG_DFL, terminate):
            signal.signal(signal.SIGTERM, term)


__all__ = ["OUTCOMES", "RETRY_WATCHER_SECONDS", "WatchState", "run_pass", "serve_and_watch", "stopped_by_sigint", "watch_forever", "watch_loop", "watch_paths"]
