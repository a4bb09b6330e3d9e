"""A build killed at any point, followed by a normal build, equals a clean build (real subprocesses)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DEMO_NOW, build, dump_cache, tree_bytes
from fixtures.generate import generate_scale


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("crash") / "corpus"
    generate_scale(folder, sessions=20, seed=11, session_kb=120)
    return folder


def start_build(corpus: Path, out: Path, cache: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(corpus), "--out", str(out), "--cache", str(cache),
               "--now", DEMO_NOW, "-q"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_then_rebuild_equals_a_clean_build(corpus: Path, tmp_path: Path, seed: int) -> None:
    started = time.monotonic()
    assert build(corpus, tmp_path / "clean", tmp_path / "clean-cache") == 0
    full = time.monotonic() - started + 0.3  # plus the new process's start-up
    clean_site, clean_cache = tree_bytes(tmp_path / "clean"), dump_cache(tmp_path / "clean-cache")
    delay = random.Random(seed).uniform(0.05, full)
    victim = start_build(corpus, tmp_path / "site", tmp_path / "cache")
    time.sleep(delay)
    if victim.poll() is None:
        os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    assert build(corpus, tmp_path / "site", tmp_path / "cache") == 0
    assert tree_bytes(tmp_path / "site") == clean_site
    assert dump_cache(tmp_path / "cache") == clean_cache
