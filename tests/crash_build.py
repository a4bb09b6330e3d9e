"""Run `agenthropic build` and SIGKILL it at one exact point of the pipeline (for test_crash.py).

Usage: python tests/crash_build.py POINT N BUILD-ARGUMENT...

POINT names a call of a public class of the build (POINTS) and N which one of them; there the
process kills itself with SIGKILL, so nothing of Python's shutdown runs (no `finally`, no atexit)
and the build's state is exactly what a kill -9 at that point leaves. A build that never reaches
the point exits with NOT_REACHED instead.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from agenthropic_site.cache import Cache
from agenthropic_site.cli import main
from agenthropic_site.render.writer import SiteWriter

NOT_REACHED = 3


def kill_at(owner: type, name: str, nth: int, *, after: bool = False, counts: Callable[..., bool] = lambda *args, **kwargs: True) -> None:
    """SIGKILL this process at the nth call of owner.name that `counts` accepts: as it starts, or as it returns (`after`)."""
    original = getattr(owner, name)
    calls = 0

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        before = len(args[0].written) if isinstance(args[0], SiteWriter) else 0
        if not after and counts(*args, **kwargs):
            calls += 1
            if calls == nth:
                os.kill(os.getpid(), signal.SIGKILL)
        value = original(*args, **kwargs)
        if after and counts(*args, written_before=before, **kwargs):
            calls += 1
            if calls == nth:
                os.kill(os.getpid(), signal.SIGKILL)
        return value

    setattr(owner, name, wrapper)


def staged(writer: SiteWriter, *args: Any, written_before: int, **kwargs: Any) -> bool:
    """Tell whether the SiteWriter.write call that just returned staged its file (bytes unlike the published ones)."""
    return len(writer.written) > written_before


POINTS: dict[str, Callable[[int], None]] = {
    # As the nth session's parsed rows are about to be written (one transaction a session).
    "write_session": lambda nth: kill_at(Cache, "write_session", nth),
    # As the nth batch of computed session views is about to be stored.
    "put_views": lambda nth: kill_at(Cache, "put_views", nth),
    # Right after the nth changed file was staged (under .agenthropic/staging, not published).
    "staged_write": lambda nth: kill_at(SiteWriter, "write", nth, after=True, counts=staged),
    # Every file staged, nothing published yet.
    "finish": lambda nth: kill_at(SiteWriter, "finish", nth),
    # Every staged file moved into place; the final manifest not written, the cache not told.
    "commit": lambda nth: kill_at(SiteWriter, "commit", nth, after=True),
    # The site published, the cache not yet told which folder it is current for.
    "site_signature": lambda nth: kill_at(Cache, "set_site_signature", nth, counts=lambda cache, signature: bool(signature)),
}


if __name__ == "__main__":
    point, nth, build_args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    POINTS[point](nth)
    code = main(["build", *build_args])
    print(f"crash_build: the build ended (exit {code}) without reaching call {nth} of {point}", file=sys.stderr)
    sys.exit(NOT_REACHED)
