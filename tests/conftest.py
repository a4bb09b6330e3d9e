"""Shared test helpers: the demo corpus, the real corpus (when available), in-process builds."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agenthropic_site.cli import main

REPO = Path(__file__).resolve().parent.parent
DEMO_CORPUS = REPO / "fixtures" / "corpus"
DEMO_EXPECTED = REPO / "fixtures" / "expected"
DEMO_NOW = "2026-06-01T00:00:00Z"
# Tests of what Graphviz draws (the committed demo site holds its SVGs) are skipped without it,
# as the browser tests are without Chromium: a machine without `dot` draws agent trees as lists.
DOT_MISSING = "Graphviz `dot` is not installed (apt-get install graphviz; .ci/run installs it)"
NEEDS_DOT = pytest.mark.skipif(shutil.which("dot") is None, reason=DOT_MISSING)


def build(corpus: Path, out: Path, cache: Path, *extra: str) -> int:
    """Run `agenthropic build` in-process and return its exit code."""
    return main(["build", "--corpus", str(corpus), "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW, "-q", *extra])


def build_subprocess(
    corpus: Path, out: Path, cache: Path, env: dict[str, str] | None = None, cwd: Path | None = None, options: tuple[str, ...] = ("-q",),
) -> subprocess.CompletedProcess[str]:
    """Run `agenthropic build` as a separate process, as a user would (quiet unless `options` say otherwise)."""
    command = [sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(corpus), "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW,
               *options]
    return subprocess.run(command, env={**os.environ, **(env or {})}, cwd=cwd, capture_output=True, text=True, timeout=120)


def run_entry(script: Path, words: list[str], setup: str, report: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run `agenthropic WORDS` as its console entry point does, in a process of its own (a script written to `script`).

    `setup` runs first (module-level code: a build's worker processes run it too), `report` (a
    Python expression) is printed to stderr after the run. Return the process and that last line.
    """
    script.write_text(
        f"import sys\n{setup}\nif __name__ == '__main__':\n    from agenthropic_site.entry import main\n"
        f"    sys.argv[0] = 'agenthropic'\n    code = main()\n    print({report}, file=sys.stderr)\n    sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, str(script), *words], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return done, done.stderr.splitlines()[-1]


# The build's record of what it published: its input digests come from the cache, which knows a
# session with a file not read whole by its files' inodes and mtimes, so it may differ between copies
# of a corpus; it is not part of the site (snapshot and diff skip it).
SITE_MANIFEST = ".agenthropic/manifest"


def fuzz_harness(name: str) -> Any:
    """Load a harness of tests/fuzz/ (a script, not a test module) as the module `name`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "fuzz" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = harness  # its dataclasses look their module up there
    spec.loader.exec_module(harness)
    return harness


def plain_copy(corpus: Path, target: Path) -> Path:
    """Copy a shared corpus file by file (links kept as links), so that every file has one name.

    The build refuses a transcript with more than one name (a hard link may be a file outside the
    corpus); a shared folder laid out with hard links would otherwise lose every file. Users of such
    corpora are told to build from a plain copy too (docs/format.md).
    """
    shutil.copytree(corpus, target, symlinks=True)
    return target


def session_pages(out: Path, session_id: str) -> str:
    """Return a session's page and every page of its transcripts (paged, or on an agent's page), joined in path order."""
    return "".join(path.read_text(encoding="utf-8") for path in sorted((out / "sessions" / session_id).rglob("*.html")))


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Map every file below a folder (relative POSIX path) to its bytes, the build's manifest aside."""
    files = {path.relative_to(folder).as_posix(): path for path in sorted(folder.rglob("*")) if path.is_file()}
    return {rel: path.read_bytes() for rel, path in files.items() if rel != SITE_MANIFEST}


def let_children_stop_on_sigint() -> None:
    """Let the processes this one starts be stopped with SIGINT, however it was started.

    A shell without job control starts a background command (`pytest &` in a script) with SIGINT
    ignored, every process it starts inherits that, and Python then never raises KeyboardInterrupt:
    a `build --watch` stopped with SIGINT would run on. A handler here is reset to the default
    in each child, where Python installs its own.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Let the processes tests start be stopped with SIGINT, and keep their bytecode out of the source tree."""
    let_children_stop_on_sigint()
    # Where PYTHONDONTWRITEBYTECODE is set (some CI images and sandboxes), each of the hundreds of
    # processes a run starts would compile the package from source, 0.2 s of CPU each: they keep
    # their bytecode under .cache/pycache instead (ignored by git), never in the source tree.
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(REPO / ".cache" / "pycache"))


def stop_with_sigint(process: subprocess.Popen, timeout: float = 30) -> int:
    """Stop a process as Ctrl-C would and return its exit code; one that does not stop is killed, and the test fails."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the slow tests first: the workers then end on short tests, at about the same time."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: the rest keep their order


class LogLines(logging.Handler):
    """Keep each logged message as a line."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def logged(name: str = "agenthropic_site") -> Iterator[list[str]]:
    """Collect what one logger of the package logs at INFO and above, in order (as the console shows it without -q)."""
    logger = logging.getLogger(name)
    handler, level = LogLines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def said() -> Iterator[list[str]]:
    """Collect what the package logs at INFO and above (what a build prints without -q), in order."""
    with logged() as lines:
        yield lines


@pytest.fixture
def chunks_given(monkeypatch: pytest.MonkeyPatch) -> list[list[object]]:
    """Collect each chunk of items the worker pool gives a worker process (pipeline/pool.py), in order."""
    from concurrent.futures import ProcessPoolExecutor

    given: list[list[object]] = []
    original = ProcessPoolExecutor.submit

    def counted(self: ProcessPoolExecutor, *args: object, **kwargs: object) -> object:
        given.append(list(args[1]))  # type: ignore[call-overload]  # (the chunk's function, its items)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ProcessPoolExecutor, "submit", counted)
    return given


@pytest.fixture
def demo_corpus(tmp_path: Path) -> Path:
    """A private copy of the committed demo corpus that a test may change."""
    target = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, target, symlinks=True)
    return target


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus built once for read-only checks."""
    base = tmp_path_factory.mktemp("demo-site")
    code = build(DEMO_CORPUS, base / "site", base / "cache")
    assert code in (0, 1), code
    return base / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium for each test module that uses it, the system's (tests/test_browser.py says why and how).

    Each test gets a fresh context of it (`context`): its own storage, cookies and pages. Not one
    for the whole run: while Playwright runs, a thread of its own waits for its driver, and a build
    never forks its process aside in a process with threads, so the tests of tests/test_look_aside.py
    that ran after a browser test in the same process found no process aside.
    """
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM, FLAGS

    with sync_playwright() as playwright:
        # Playwright gives every launch a fresh temporary profile (user data dir).
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def context(browser) -> Iterator[object]:
    """A fresh browser context (its own storage) for one test."""
    ctx = browser.new_context(java_script_enabled=True)
    ctx.set_default_timeout(15_000)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only shared folder with real transcripts; set AGENTHROPIC_SHARED_DIR (.ci/run does)."""
    value = os.environ.get("AGENTHROPIC_SHARED_DIR")
    if not value or not Path(value, "corpora").is_dir():
        pytest.skip("AGENTHROPIC_SHARED_DIR is not set: the real-transcript tests need the shared corpora (.ci/run sets it)")
    return Path(value)


def stored_bodies(folder: Path) -> dict[tuple[str, str], bytes]:
    """Return every transcript body a cache folder's file holds, its pieces joined, by (session, agent)."""
    import sqlite3

    conn = sqlite3.connect(folder / "cache.sqlite3")
    try:
        bodies: dict[tuple[str, str], bytes] = {}
        for sid, agent_id, piece in conn.execute("SELECT session_id, agent_id, bytes FROM transcript_pieces ORDER BY session_id, agent_id, piece"):
            bodies[(sid, agent_id)] = bodies.get((sid, agent_id), b"") + bytes(piece)
        return bodies
    finally:
        conn.close()


def dump_cache(folder: Path) -> list[str]:
    """Dump every table of a cache in a stable order (the build counter aside), for comparison."""
    import sqlite3

    conn = sqlite3.connect(folder / "cache.sqlite3")
    try:
        lines = []
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            for row in sorted(repr(r) for r in rows):
                if table == "meta" and "'builds'" in row:
                    continue
                lines.append(f"{table}: {row}")
        return lines
    finally:
        conn.close()


def differences(computed: object, decoded: object, where: str = "$") -> list[str]:
    """List where two values differ in anything a page could show: type, dict key order, decimal digits, float repr (empty: exactly alike)."""
    import dataclasses
    from decimal import Decimal

    if type(computed) is not type(decoded):
        return [f"{where}: {type(computed).__name__} against {type(decoded).__name__}"]
    if dataclasses.is_dataclass(computed):
        return [found for f in dataclasses.fields(computed)
                for found in differences(getattr(computed, f.name), getattr(decoded, f.name), f"{where}.{f.name}")]
    if isinstance(computed, dict):
        assert isinstance(decoded, dict)
        if list(computed) != list(decoded):
            return [f"{where}: keys {list(computed)[:4]} against {list(decoded)[:4]}"]
        return [found for key in computed for found in differences(computed[key], decoded[key], f"{where}[{key!r}]")]
    if isinstance(computed, (list, tuple)):
        assert isinstance(decoded, (list, tuple))
        if len(computed) != len(decoded):
            return [f"{where}: {len(computed)} items against {len(decoded)}"]
        return [found for index, pair in enumerate(zip(computed, decoded)) for found in differences(*pair, f"{where}[{index}]")]
    if isinstance(computed, (Decimal, float)):
        return [] if repr(computed) == repr(decoded) else [f"{where}: {computed!r} against {decoded!r}"]
    return [] if computed == decoded else [f"{where}: {computed!r:.60} against {decoded!r:.60}"]
