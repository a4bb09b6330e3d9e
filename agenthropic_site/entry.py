"""The console entry point: `agenthropic hook` takes a short path that imports almost nothing."""

from __future__ import annotations

import sys


def main() -> int:
    """Run `agenthropic`; a bare `hook` skips the command-line parser (Claude Code runs it per event)."""
    if sys.argv[1:] == ["hook"]:
        from agenthropic_site.live.spool import run_hook

        return run_hook()
    from agenthropic_site.cli import main as cli_main

    return cli_main()
