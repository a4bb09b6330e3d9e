"""`agenthropic diff`: what changed between two built sites or snapshots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agenthropic_site.errors import EXIT_FAILURES, EXIT_OK, report


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `diff` command."""
    command = subparsers.add_parser(
        "diff",
        help="show what changed between two built sites or snapshots",
        description="Compare two builds, each a site folder or a snapshot made by `agenthropic snapshot`: the files "
        "added, removed and changed, then every session whose data/sessions/<id>.json changed (tokens by category, "
        "cost, status, exclusion, agents added or removed), the largest cost change first. A snapshot is read "
        "without being extracted; members with absolute paths, '..', links or devices are refused, and so is a file "
        "(in a snapshot or a site folder) whose name is not printable UTF-8. "
        "Exit codes (as diff(1)): 0 identical; 1 different; 2 error.",
    )
    command.add_argument("a", type=Path, metavar="A", help="the earlier build: a site folder or a .tar.gz snapshot")
    command.add_argument("b", type=Path, metavar="B", help="the later build: a site folder or a .tar.gz snapshot")
    command.add_argument("--json", action="store_true", help="print JSON (sorted keys) instead of text")
    command.set_defaults(handler=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    """Print the differences between two builds; return 0 identical, 1 different, 2 error."""
    # Imported here: every command's options are registered on each start, `build` included.
    from agenthropic_site.audit.archive import ArchiveError, read_tree
    from agenthropic_site.audit.compare import DiffError, diff_json, diff_text, is_session_json, session_changes, tree_delta

    try:
        # Only the sessions' JSON is read for what it says; every other file is compared by its digest.
        a, b = read_tree(args.a, is_session_json), read_tree(args.b, is_session_json)
        delta = tree_delta(a, b)
        sessions = session_changes(a, b, delta)
    except (ArchiveError, DiffError) as exc:
        return report(exc)
    if args.json:
        import orjson  # here, not at the top: a command's module is imported whenever the full parser is built

        from agenthropic_site.terminal import printable_json, stdout_is_unicode

        text = orjson.dumps(diff_json(delta, sessions), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode()
        # A snapshot's text is untrusted: no raw C1 or bidi control.
        sys.stdout.write(printable_json(text, ascii_only=not stdout_is_unicode()) + "\n")
    else:
        sys.stdout.write(diff_text(delta, sessions, len(b)))
    return EXIT_OK if delta.identical else EXIT_FAILURES
