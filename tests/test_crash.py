"""A build killed at any point, followed by a normal build, equals a clean build (real subprocesses).

The build runs in a subprocess (tests/crash_build.py) that SIGKILLs itself at one exact point of
the pipeline: while sessions are written to the cache, before the views are stored, while pages are
staged, before and after they are published, and before the cache records the published site.
Each case first checks that the kill happened there (the process died of SIGKILL, leaving a site
and cache unlike a clean build's), then that one normal build makes both equal a clean build.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEMO_NOW, build, dump_cache, tree_bytes
from fixtures.generate import generate_scale

SESSIONS = 20
CRASH_BUILD = Path(__file__).with_name("crash_build.py")
HALF = 0  # as nth: half as many calls as a clean build writes files


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("crash") / "corpus"
    generate_scale(folder, sessions=SESSIONS, seed=11, session_kb=32)
    return folder


@pytest.fixture(scope="module")
def clean(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], list[str]]:
    """The site and cache of one uninterrupted build, built once for every kill point."""
    base = tmp_path_factory.mktemp("clean")
    assert build(corpus, base / "site", base / "cache") == 0
    return tree_bytes(base / "site"), dump_cache(base / "cache")


KILL_POINTS = [
    ("write_session", 1),  # parsed, nothing in the cache yet
    ("write_session", SESSIONS // 2 + 1),  # half the sessions in the cache
    ("put_views", 1),  # every session in the cache, no view stored
    ("staged_write", 1),  # the first page staged
    ("staged_write", HALF),  # half the pages staged
    ("finish", 1),  # every page staged, none published
    ("commit", 1),  # every page published, the manifest still naming them with unknown inputs
    ("site_signature", 1),  # the site published, the cache not told it is current
]


@pytest.mark.parametrize(("point", "nth"), KILL_POINTS, ids=[f"{point}-{nth or 'half'}" for point, nth in KILL_POINTS])
def test_sigkill_then_rebuild_equals_a_clean_build(corpus: Path, clean: tuple[dict[str, bytes], list[str]], tmp_path: Path,
                                                   point: str, nth: int) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    nth = nth or len(clean[0]) // 2
    victim = subprocess.run(
        [sys.executable, str(CRASH_BUILD), point, str(nth), "--corpus", str(corpus), "--out", str(site), "--cache", str(cache),
         "--now", DEMO_NOW, "-q", "--jobs", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
    )
    assert victim.returncode == -signal.SIGKILL, f"the build was not killed at call {nth} of {point}: exit {victim.returncode}\n{victim.stderr}"
    assert (tree_bytes(site), dump_cache(cache)) != clean  # the kill left a build unfinished
    assert build(corpus, site, cache) == 0
    assert tree_bytes(site) == clean[0]
    assert dump_cache(cache) == clean[1]


# A build that SIGTERM reaches while it stages its pages (the fifth file): as a service manager or `kill` sends it.
TERMINATED_BUILD = """\
import os
import signal
import sys

from agenthropic_site.entry import main
from agenthropic_site.render.writer import SiteWriter

original, calls = SiteWriter.write, [0]


def write(self, rel, data):
    calls[0] += 1
    if calls[0] == 5:
        os.kill(os.getpid(), signal.SIGTERM)
    return original(self, rel, data)


SiteWriter.write = write
sys.argv = ["agenthropic", *sys.argv[1:]]
sys.exit(main())
"""


def test_sigterm_stops_a_build_as_ctrl_c_does_and_leaves_the_site_as_it_was(corpus: Path, clean: tuple[dict[str, bytes], list[str]],
                                                                           tmp_path: Path) -> None:
    """SIGTERM ended the process where it stood (exit -15, its staged files left); it now stops as Ctrl-C does."""
    site, cache = tmp_path / "site", tmp_path / "cache"
    script = tmp_path / "terminated_build.py"
    script.write_text(TERMINATED_BUILD)
    stopped = subprocess.run([sys.executable, str(script), "build", "--corpus", str(corpus), "--out", str(site), "--cache", str(cache),
                              "--now", DEMO_NOW, "-q", "--jobs", "1"], capture_output=True, text=True, timeout=120)
    assert (stopped.returncode, stopped.stderr) == (143, "agenthropic: terminated\n")
    assert not any((site / ".agenthropic" / "staging").iterdir())  # nothing left staged
    assert sorted(path.name for path in site.iterdir()) == [".agenthropic", ".agenthropic-site"]  # nothing published, no empty folder
    assert build(corpus, site, cache) == 0
    assert tree_bytes(site) == clean[0]
    assert dump_cache(cache) == clean[1]
