"""Advisory locks (flock) that say once that they wait, then wait."""

from __future__ import annotations

import fcntl
import logging

log = logging.getLogger(__name__)


def take_lock(fd: int, exclusive: bool, message: str, wait: bool = True) -> None:
    """Lock an open file; when someone else holds it, log `message` and wait (or raise BlockingIOError)."""
    operation = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        if not wait:
            raise
        log.info(message)
        fcntl.flock(fd, operation)


def try_lock(fd: int) -> bool:
    """Lock an open file (or folder) exclusively if nobody holds it; return whether it is now ours."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
