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
