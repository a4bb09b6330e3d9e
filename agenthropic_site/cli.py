"""The `agenthropic` command line: the parser of every command, and the exit code of a run."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

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
build report), or not built for a full output or cache folder (the site left as it was);
2 usage error or missing corpus; 3 a corpus path escapes the corpus root; 4 internal error
(a bug); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
"""


# Commands registered by a module of another name.
MODULE_OF = {"hook": "hooks"}


def _help_width() -> int:
    """Return the width argparse's help is written to: the terminal's as `shutil.get_terminal_size` gives it (COLUMNS first), less 2."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class _Width:
    """argparse's width rule, without importing shutil.

    A HelpFormatter without a width asks `shutil.get_terminal_size()`, and `add_argument` makes
    one for each option to check it: importing shutil (and with it bz2, lzma and fnmatch) took
    3.6 ms of every run, a hook event's and an append's included.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _help_width() if width is None else width)  # type: ignore[call-arg]


class _Formatter(_Width, argparse.HelpFormatter):
    """argparse's HelpFormatter, its width taken without shutil."""


class _RawDescription(_Width, argparse.RawDescriptionHelpFormatter):
    """argparse's RawDescriptionHelpFormatter, its width taken without shutil."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help formatter does not import shutil; its subcommands' parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser with every command and option documented (only `command`'s module when named)."""
    parser = _Parser(prog="agenthropic", description=DESCRIPTION, formatter_class=_RawDescription)
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
    except KeyboardInterrupt as stopped_by:
        return interrupted(stopped_by)
    except Exception:  # noqa: BLE001 - a bug must not look like "built with failures" (exit 1)
        traceback.print_exc()
        print("agenthropic: internal error (a bug): please report it with the lines above", file=sys.stderr)
        return EXIT_INTERNAL
