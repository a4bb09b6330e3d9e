"""The console entry point: `agenthropic hook`, and a build with nothing to do, take short paths that import almost nothing."""

from __future__ import annotations

import sys


def main() -> int:
    """Run `agenthropic`; a bare `hook` (Claude Code runs it per event) and a build the stamp answers skip the command-line parser."""
    if sys.argv[1:] == ["hook"]:
        from agenthropic_site.live.spool import run_hook

        return run_hook()
    if sys.argv[1:2] == ["build"]:
        # A build with nothing to do is answered from the stamp its last run left, before the
        # command line parser and the rest of the package load (pipeline/stamp.py).
        from agenthropic_site.commands.summary import answer_unchanged

        code = answer_unchanged(sys.argv[1:])
        if code is not None:
            return code
    from agenthropic_site.cli import main as cli_main

    return cli_main()
