"""Exit codes, and the errors a user can fix: each is said in one line with its own exit code."""

from __future__ import annotations

import sys

EXIT_OK, EXIT_FAILURES, EXIT_USAGE, EXIT_CONTAINMENT, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
# A finished build's last line when it exits 1 for sessions left out; a full output or cache
# folder exits 1 too, with its own line and nothing published (audit/verify.py tells them apart).
LEFT_OUT_LINE = "agenthropic: some sessions are left out of the cost totals; see report.html"


def build_exit_code(failed: int, excluded: int) -> int:
    """Return a build's exit code: 1 when sessions failed or are left out of the cost totals, else 0."""
    return EXIT_FAILURES if failed or excluded else EXIT_OK


def interrupted() -> int:
    """Say that Ctrl-C stopped the run, and return its exit code."""
    print("agenthropic: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


class UserError(Exception):
    """An error the user can fix (a path, a file, a setting): one line, no traceback."""

    exit_code = EXIT_USAGE

    def line(self) -> str:
        """Return the one line that tells the user what went wrong."""
        return f"agenthropic: {self}"


def report(exc: UserError) -> int:
    """Print the error's line (control characters made visible) and return its exit code."""
    # Imported here: `agenthropic hook` imports this module and must start fast.
    from agenthropic_site.terminal import printable, say

    say(printable(exc.line()))  # a path named in it may hold control characters
    return exc.exit_code
