"""What a build says on stderr: nothing but trouble with -q, progress by default, every decision with -v."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import DEMO_CORPUS, DEMO_NOW, build_subprocess, main

SESSION = "-srv-repos-infra/2819f2e1-f6f7-415b-ac5e-d74da980f22d"


def run(tmp_path: Path, corpus: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Run `agenthropic build` as a user would, with these options."""
    return build_subprocess(corpus, tmp_path / "site", tmp_path / "cache", options=options)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEMO_CORPUS, tmp_path / "corpus"))


def test_verbose_explains_why_sessions_are_read_and_pages_rendered(tmp_path: Path, corpus: Path) -> None:
    """-v names each session read and why, each skipped file and why, and why each page is rendered."""
    cold = run(tmp_path, corpus, "-v").stderr.splitlines()
    assert f"read: {SESSION}: not in the cache yet" in cold
    assert "skipped: -home-user-projects-webapp/sessions-index.json: non-artifact" in cold
    assert "render: index.html: new" in cold
    unchanged = run(tmp_path, corpus, "-v").stderr.splitlines()
    assert not any(line.startswith(("read:", "render:")) for line in unchanged), unchanged
    assert any(line.startswith("rendered nothing: ") for line in unchanged), unchanged
    transcript = corpus / f"{SESSION}.jsonl"
    transcript.write_bytes(transcript.read_bytes() + b"\n")  # an empty line: the file changed, its records did not
    touched = run(tmp_path, corpus, "-v").stderr.splitlines()
    assert f"read: {SESSION}: its files changed (size, time or inode)" in touched
    assert [line for line in touched if line.startswith("read:")] == [f"read: {SESSION}: its files changed (size, time or inode)"]


def test_default_prints_progress_and_quiet_only_trouble(tmp_path: Path, corpus: Path) -> None:
    """Without -v no decision is explained; with -q no progress line is printed, only what went wrong."""
    normal = run(tmp_path, corpus)
    assert normal.returncode == 1  # the demo corpus has an unpriced session on purpose
    assert not any(line.startswith(("read:", "render:", "skipped:")) for line in normal.stderr.splitlines())
    assert any(re.match(r"\d+ sessions: \d+ parsed, ", line) for line in normal.stderr.splitlines()), normal.stderr
    shutil.rmtree(tmp_path / "cache")  # a cold build again: the most a build has to say
    quiet = run(tmp_path, corpus, "-q")
    assert quiet.stderr.splitlines() == ["agenthropic: some sessions are left out of the cost totals; see report.html"]
    assert quiet.stdout == ""


def test_a_command_leaves_the_log_configured_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Running the command line twice in one process prints each line once (no handler piles up)."""
    for _ in range(2):
        main(["build", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-v"])
    lines = capsys.readouterr().err.splitlines()
    assert lines.count("render: index.html: new") == 1
    handlers = [handler for handler in logging.getLogger("agenthropic_site").handlers if type(handler).__name__ == "_Console"]
    assert len(handlers) == 1
