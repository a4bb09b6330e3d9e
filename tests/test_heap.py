"""The garbage collector of a build's process (heap.py): paused for the imports, resumed for the work, left alone elsewhere."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthropic_site import heap
from conftest import DEMO_NOW


@pytest.fixture
def collector() -> Iterator[None]:
    """Give the test this process's collector back as it found it."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_a_paused_collector_resumes_with_what_exists_exempted_and_larger_young_batches(collector: None) -> None:
    heap.pause_for_imports()
    assert not gc.isenabled()
    made_while_paused = [[] for _ in range(1000)]
    heap.resume_after_imports()
    assert gc.isenabled()
    assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD
    assert gc.get_freeze_count() >= len(made_while_paused)


def test_a_running_collector_is_left_as_it_is(collector: None) -> None:
    gc.enable()
    gc.set_threshold(700, 10, 10)
    heap.resume_after_imports()  # a test or a library caller: nothing paused it
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


# The console entry point in a process of its own; the collector's state printed once it returns
# (before the exit's own freeze).
PROBE = (
    "import gc, sys; from agenthropic_site.entry import main; sys.argv[0] = 'agenthropic'; code = main(); "
    "print(code, gc.isenabled(), gc.get_threshold()[0], gc.get_freeze_count() > 0, file=sys.stderr)"
)


def _collector_after(words: list[str], cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *words], capture_output=True, text=True, timeout=300, cwd=cwd)
    return done.stderr.splitlines()[-1].split()


def test_a_build_that_renders_collects_garbage_while_it_renders(demo_corpus: Path, tmp_path: Path) -> None:
    words = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-q"]
    code, enabled, young, frozen = _collector_after(words, tmp_path)
    assert code == "1"  # built; the demo has sessions it cannot price
    assert (tmp_path / "site" / "index.html").is_file()
    assert (enabled, young, frozen) == ("True", str(heap.YOUNG_THRESHOLD), "True")


def test_other_commands_never_pause_the_collector(tmp_path: Path) -> None:
    code, enabled, young, frozen = _collector_after(["diff", str(tmp_path / "no-site"), str(tmp_path / "nor-this")], tmp_path)
    assert code == "2"  # there is no site to compare
    assert (enabled, frozen) == ("True", "False")
    assert young != str(heap.YOUNG_THRESHOLD)
