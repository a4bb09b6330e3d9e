"""The benchmarks' own tools measure only builds that did their work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from build_bench import timed_build  # noqa: E402


def test_a_measured_build_that_fails_stops_the_benchmark(tmp_path: Path) -> None:
    """A build that exits with an error is not a figure: the benchmark stops and says which build failed."""
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    with pytest.raises(SystemExit, match="a measured build failed .exit 2.") as stopped:
        timed_build(tmp_path / "no-such-corpus", tmp_path / "site", tmp_path / "cache", env, tmp_path)
    assert "no-such-corpus" in str(stopped.value)


def test_a_measured_build_that_made_its_site_gives_its_time_and_memory(demo_corpus: Path, tmp_path: Path) -> None:
    """The demo corpus has sessions left out of the totals (exit 1): its site is made, and measured."""
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    wall, rss = timed_build(demo_corpus, tmp_path / "site", tmp_path / "cache", env, tmp_path)
    assert wall > 0 and rss > 1
    assert (tmp_path / "site" / "index.html").is_file()


@pytest.mark.parametrize("name", ["agenthropic_site.cache.store:Cache.no_such_method", "agenthropic_site.no_such_module:run"])
def test_build_phases_names_a_function_it_cannot_time(tmp_path: Path, name: str) -> None:
    """A `--time` name that does not resolve is one line that says what to give, not a traceback, and nothing is built."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(REPO / "bench" / "build_phases.py"), str(tmp_path / "corpus"), str(tmp_path / "site"),
                           str(tmp_path / "cache"), "--time", name], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"--time {name}: no such function or method (give MODULE:NAME or MODULE:CLASS.METHOD, as its callers look it up)"
    assert not (tmp_path / "site").exists()
