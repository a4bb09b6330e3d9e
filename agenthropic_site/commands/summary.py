"""What `agenthropic build` says when it ends, and saying it from the stamp before anything else loads.

Imports nothing beyond the standard library's `os` and `sys` and the no-change check, so that a
build with nothing to do is answered in the time Python takes to start and list the corpus.
"""

from __future__ import annotations

import os
import sys

from agenthropic_site.errors import LEFT_OUT_LINE, build_exit_code, interrupted

TYPE_CHECKING = False  # `typing` costs more to import than answering from the stamp (mypy reads the name)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


def tell(counts: Mapping[str, Any], out: str, quiet: bool) -> int:
    """Print a build's summary line and its site's address (unless quiet), and what was left out; return its exit code."""
    if not quiet:
        print(
            f"{counts['sessions']} sessions: {counts['parsed']} parsed, {counts['reused']} unchanged, {counts['failed']} failed, "
            f"{counts['excluded']} unpriced; {counts['skips']} files skipped; "
            f"{counts['pages_written']} files written, {counts['pages_unchanged']} unchanged, {counts['files_removed']} removed",
            file=sys.stderr,
        )
        print(os.path.join(os.path.realpath(out), "index.html"))
    code = build_exit_code(counts["failed"], counts["excluded"])
    if code:
        print(LEFT_OUT_LINE, file=sys.stderr)
    return code


def answer_unchanged(words: Sequence[str]) -> int | None:
    """Say what `agenthropic build` with these words would, when the stamp its last run left still holds; None otherwise."""
    from agenthropic_site.pipeline.stamp import answer

    try:
        said = answer(words, os.environ, os.getcwd())
    except KeyboardInterrupt as stopped_by:
        return interrupted(stopped_by)
    except Exception:  # noqa: BLE001 - a stamp it cannot read is a reason to build, never an error
        return None
    if said is None:
        return None
    counts, out, quiet = said
    return tell(counts, out, quiet)
