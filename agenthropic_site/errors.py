"""Exit codes, and the errors a user can fix: each is said in one line with its own exit code."""

from __future__ import annotations

import sys

EXIT_OK, EXIT_FAILURES, EXIT_USAGE, EXIT_CONTAINMENT, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a process SIGTERM ended
# A finished build's last line when it exits 1 for sessions left out; a full output or cache
# folder exits 1 too, with its own line and nothing published (audit/verify.py tells them apart).
LEFT_OUT_LINE = "agenthropic: some sessions are left out of the cost totals; see report.html"


def build_exit_code(failed: int, excluded: int) -> int:
    """Return a build's exit code: 1 when sessions failed or are left out of the cost totals, else 0."""
    return EXIT_FAILURES if failed or excluded else EXIT_OK


class Terminated(KeyboardInterrupt):
    """SIGTERM asked the run to stop (a service manager, `kill`): it stops as Ctrl-C stops it, cleaning up."""


def terminate(signum: int, frame: object) -> None:
    """Raise Terminated where the main thread is: the SIGTERM handler of a build."""
    raise Terminated


def interrupted(stopped_by: BaseException | None = None) -> int:
    """Say that Ctrl-C (or SIGTERM) stopped the run, and return its exit code."""
    if isinstance(stopped_by, Terminated):
        print("agenthropic: terminated", file=sys.stderr)
        return EXIT_TERMINATED
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
