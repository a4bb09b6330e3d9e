"""Exit codes, and the errors a user can fix: each is said in one line with its own exit code."""

from __future__ import annotations

import sys

EXIT_OK, EXIT_FAILURES, EXIT_USAGE, EXIT_CONTAINMENT, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """An error the user can fix (a path, a file, a setting): one line, no traceback."""

    exit_code = EXIT_USAGE

    def line(self) -> str:
        """Return the one line that tells the user what went wrong."""
        return f"agenthropic: {self}"


def report(exc: UserError) -> int:
    """Print the error's line (control characters made visible) and return its exit code."""
    # Imported here: `agenthropic hook` imports this module and must start fast.
    from agenthropic_site.terminal import printable

    print(printable(exc.line()), file=sys.stderr)  # a path named in it may hold control characters
    return exc.exit_code
