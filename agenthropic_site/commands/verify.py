"""`agenthropic verify`: check agenthropic against a corpus, on a temporary copy."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from agenthropic_site.commands.options import verbosity_options
from agenthropic_site.config import ConfigError, default_corpus_dir, is_inside, parse_instant
from agenthropic_site.errors import report
from agenthropic_site.places import home_folder


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `verify` command."""
    command = subparsers.add_parser(
        "verify",
        help="check agenthropic against a corpus: determinism, token truth, agent graphs, incremental builds",
        description="Copy the corpus into a temporary folder ($TMPDIR) and check it there: two builds under different "
        "TZ, locale, PYTHONHASHSEED and folders are byte-identical (deterministic); the cache's token counts equal an "
        "independent re-scan of the transcripts (token-truth); every session's agent graph is a forest (dag); after a "
        "copy of a main transcript's last line is appended, an incremental build equals a cold one (incremental). "
        "Never writes to the corpus, your site or your cache. Prints a table. "
        "Exit codes: 0 every check passed; 1 a check failed; 2 usage error, missing corpus, or no room in $TMPDIR for the copy.",
    )
    command.add_argument(
        "--corpus", type=Path, metavar="DIR",
        help="folder of Claude Code project folders, read only (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)",
    )
    command.add_argument(
        "--now", metavar="ISO8601",
        help="the build clock given to every build (default: the current time, taken once)",
    )
    command.add_argument("--keep", action="store_true", help="keep the temporary folder with the copies and builds, and print where it is")
    verbosity_options(command, quiet="print no progress lines, only the table")
    command.set_defaults(handler=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    """Run the checks on a temporary copy, print the table, and return the exit code."""
    # Imported here: every command's options are registered on each start, `build` included.
    from agenthropic_site.audit.verify import exit_code, run_checks, table
    from agenthropic_site.corpus import CorpusRootError, real_root

    corpus = args.corpus if args.corpus is not None else default_corpus_dir(os.environ, Path(home_folder(os.environ)))
    try:
        root = Path(real_root(corpus))
        moment = parse_instant(args.now) if args.now else datetime.now(tz=UTC).replace(microsecond=0)
        if is_inside(Path(tempfile.gettempdir()), root):
            raise ConfigError(f"the temporary folder {tempfile.gettempdir()} is inside the corpus; set TMPDIR elsewhere")
    except (CorpusRootError, ConfigError) as exc:
        return report(exc)

    try:
        work = Path(tempfile.mkdtemp(prefix="agenthropic-verify-"))
    except OSError as exc:
        return report(ConfigError(f"cannot make a folder in the temporary folder {tempfile.gettempdir()} ({exc.strerror or exc}); set TMPDIR"))
    try:
        checks = run_checks(root, work, now=moment.isoformat().replace("+00:00", "Z"))
    except ConfigError as exc:  # the temporary folder has no room for the copy
        return report(exc)
    finally:
        if args.keep:
            print(f"agenthropic: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(table(checks))
    return exit_code(checks)
