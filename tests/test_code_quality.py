"""The linter and the type checker pass over the code, so `make test` and CI keep them clean.

ruff (pycodestyle, pyflakes, bugbear, pyupgrade) over the whole repository and mypy over the
package, with the settings in pyproject.toml; both come with the `test` extra.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO


def run_tool(*command: str) -> subprocess.CompletedProcess[str]:
    """Run a tool of this interpreter's environment from the repository root."""
    return subprocess.run([sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = run_tool("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_finds_nothing() -> None:
    # The checkout's .mypy_cache, as `make lint` uses (ignored by git): after `make lint`, as in
    # .ci/run, mypy checks again only what changed (0.2 s instead of 5 s from nothing).
    done = run_tool("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
