"""The `agenthropic` command line: the parser of every command, and the exit code of a run."""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from agenthropic_site import __version__, console
from agenthropic_site.errors import EXIT_INTERNAL, EXIT_USAGE, interrupted

# One module a command (or a pair): each has `register(subparsers)` and keeps its imports light,
# so `--help` and `hook` start fast.
COMMANDS: tuple[str, ...] = ("build", "pricing", "hooks", "snapshot", "diff", "verify")

DESCRIPTION = """\
Turn Claude Code's session transcripts (~/.claude/projects) into a static HTML site:
which agents each session spawned and who spawned whom, what each agent and branch cost,
where the context was compacted, and what failed.

Exit codes: 0 built; 1 built, but some sessions failed or could not be priced (see the
build report); 2 usage error or missing corpus; 3 a corpus path escapes the corpus root;
4 internal error (a bug); 130 interrupted.
"""


# Commands registered by a module of another name.
MODULE_OF = {"hook": "hooks"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser with every command and option documented (only `command`'s module when named)."""
    parser = argparse.ArgumentParser(prog="agenthropic", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"agenthropic {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    module = MODULE_OF.get(command or "", command)
    for name in (module,) if module in COMMANDS else COMMANDS:
        # Each adds its subcommands with set_defaults(handler=...).
        importlib.import_module(f"agenthropic_site.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    # A run names its command first: the other commands' modules need not load (a no-change build
    # and a hook event start faster); anything else, --help included, gets the whole parser.
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    args.words = tuple(words)  # word for word: the no-change stamp is keyed on them (pipeline/stamp.py)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    console.configure(console.verbosity(getattr(args, "quiet", False), getattr(args, "verbose", False)))
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        return interrupted()
    except Exception:  # noqa: BLE001 - a bug must not look like "built with failures" (exit 1)
        traceback.print_exc()
        print("agenthropic: internal error (a bug): please report it with the lines above", file=sys.stderr)
        return EXIT_INTERNAL
