"""Cache repair: derive again from the corpus whatever damage to the cache a build meets."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import TypeVar

from agenthropic_site.cache import Cache
from agenthropic_site.cache.store import CacheDamaged, cache_os_problem, cache_problem
from agenthropic_site.config import BuildConfig
from agenthropic_site.pipeline import stamp

log = logging.getLogger(__name__)

MAX_REPAIRS = 3  # times a build starts again after damaged rows, before it rebuilds the whole cache
SHOWN_REPAIRS = 3  # damaged rows named in the one line that reports them
T = TypeVar("T")


def with_repairs(config: BuildConfig, repairs: list[str], work: Callable[[list[str]], T]) -> T:
    """Run `work` on the cache; derive again whatever damage to the cache it meets, then run it again.

    The corpus is the truth and the cache only saves time. Rows that fail their checksum are
    forgotten (a session's are read again from the corpus); a file SQLite finds malformed is
    deleted under the lock. A cache that is busy, full or cannot be opened is never deleted:
    that is a one-line error (CacheError). Damage after a rebuild from nothing is not damage.
    """
    # The last build's no-change stamp no longer holds once this process may write the cache.
    stamp.forget(config.cache)
    rebuilt = False
    for attempt in range(MAX_REPAIRS + 2):
        try:
            return work(repairs)
        except CacheDamaged as exc:
            damage: Exception = exc
            _note(repairs, exc.what)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.ProgrammingError):
                raise  # a misuse of SQLite is a bug, not damage
            problem = cache_problem(exc, config.cache)
            if problem is not None:
                raise problem from None
            damage = exc
            _note(repairs, f"the cache file: {exc}")
        except OSError as exc:
            # Outside SQLite the cache folder is written by the template cache (render/theme.py).
            problem = cache_os_problem(exc, config.cache)
            if problem is not None:
                raise problem from None
            raise
        if rebuilt:
            raise damage
        # Said once, in the build's last line (repair_line), not at each attempt.
        if isinstance(damage, CacheDamaged) and attempt < MAX_REPAIRS and _forget(config, damage, repairs):
            continue
        # The corpus is the truth and the cache only saves time: start again without it.
        Cache.discard(config.cache, wait=config.wait_for_cache)
        rebuilt = True
    raise AssertionError("unreachable: the last attempt returns or raises")


def _forget(config: BuildConfig, damage: CacheDamaged, repairs: list[str]) -> bool:
    """Drop the damaged rows from the cache; return False when that cannot be done (rebuild it whole)."""
    try:
        cache = Cache(config.cache, wait=config.wait_for_cache, repairs=repairs)
        try:
            cache.forget_damaged(damage.forget)
        finally:
            cache.close()
    except sqlite3.DatabaseError as exc:
        problem = cache_problem(exc, config.cache)
        if problem is not None:
            raise problem from None
        return False
    return True


def _note(repairs: list[str], what: str) -> None:
    if what not in repairs:
        repairs.append(what)


def repair_line(repairs: list[str]) -> str:
    """Say in one line what damage to the cache this build found and derived again."""
    shown = "; ".join(repairs[:SHOWN_REPAIRS]) + (f"; and {len(repairs) - SHOWN_REPAIRS} more" if len(repairs) > SHOWN_REPAIRS else "")
    return f"agenthropic: the cache was damaged ({shown}); what it held was derived again from the corpus"
