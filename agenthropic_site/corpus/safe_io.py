"""Open corpus files without following links and without leaving the corpus root."""

from __future__ import annotations

import errno
import os
import stat

from agenthropic_site.errors import EXIT_CONTAINMENT, UserError
from agenthropic_site.records import record_class
from agenthropic_site.terminal import printable

# A hard link is the outside file itself under a second name: no path check can tell where its
# other names are, so a file with more than one name is not read (as a symbolic link is not).
HARD_LINK_DETAIL = "another name links to this file (a hard link), maybe from outside the corpus: never read"


class CorpusRootError(UserError):
    """The corpus root is missing, not a folder, or unreadable (exit code 2)."""


class ContainmentError(UserError):
    """A path resolves outside the corpus root (exit code 3)."""

    exit_code = EXIT_CONTAINMENT

    def line(self) -> str:
        """Say it as the violation it is."""
        return f"FATAL: corpus containment violation - {self}"


class UnreadableError(Exception):
    """A file could not be read; `reason` is a skip reason, `detail` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@record_class(frozen=True, order=True)
class FileRef:
    """A corpus file as `lstat` saw it: the fingerprint's unit, no content read."""

    rel: str
    size: int
    mtime_ns: int
    inode: int
    # Every write sets it to the clock and nothing but the clock sets it back (utime cannot): a file
    # rewritten in place with its size, inode and modification time restored is seen by it.
    ctime_ns: int


def real_root(root: os.PathLike[str] | str) -> str:
    """Return the real path of the corpus root, or raise CorpusRootError with one clear line."""
    text = os.fspath(root)
    try:
        st = os.stat(text)
    except FileNotFoundError:
        raise CorpusRootError(f"corpus folder not found: {text}") from None
    except OSError as exc:
        raise CorpusRootError(f"corpus folder unreadable: {text} ({errno.errorcode.get(exc.errno or 0, exc.errno)})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise CorpusRootError(f"corpus path is not a folder: {text}")
    if not os.access(text, os.R_OK | os.X_OK):
        raise CorpusRootError(f"corpus folder unreadable: {text} (permission denied)")
    return os.path.realpath(text)


def check_contained(root: str, path: str) -> None:
    """Raise ContainmentError unless the real path of `path` lies under the real `root`."""
    resolved = os.path.realpath(path)
    if os.path.commonpath([resolved, root]) != root:
        raise ContainmentError(printable(f"{path} resolves to {resolved}, outside the corpus root {root}"))


def read_bytes(root: str, ref: FileRef, max_bytes: int) -> bytes:
    """Read one corpus file safely: no link followed, regular files of one name only, same inode as walked."""
    data = _read(root, ref, max_bytes, limit=max_bytes + 1)
    if len(data) > max_bytes:
        raise UnreadableError("oversize", f"grew past the cap {max_bytes} while read")
    return data


def read_head(root: str, ref: FileRef, limit: int) -> bytes:
    """Read at most `limit` leading bytes of a corpus file, with the same checks as read_bytes."""
    return _read(root, ref, max_bytes=None, limit=limit)


def _read(root: str, ref: FileRef, max_bytes: int | None, limit: int) -> bytes:
    path = os.path.join(root, *ref.rel.split("/"))
    check_contained(root, os.path.dirname(path))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableError("symlink", "became a symbolic link after the walk") from None
        raise UnreadableError("unreadable", errno.errorcode.get(exc.errno or 0, str(exc.errno))) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableError("not-regular-file", "not a regular file when opened")
        if st.st_ino != ref.inode:
            # Replaced between the walk and the open; the next build sees the new file.
            raise UnreadableError("unreadable", "file replaced during the build")
        if st.st_nlink > 1:
            raise UnreadableError("hard-link", HARD_LINK_DETAIL)  # linked after the walk
        if max_bytes is not None and st.st_size > max_bytes:
            raise UnreadableError("oversize", f"{st.st_size} bytes > cap {max_bytes}")
        # One read of the whole file where the system gives it (Linux does, up to 2 GiB): chunks
        # joined afterwards held a 60 MB transcript twice. Further reads only if it came short.
        chunks = [os.read(fd, min(limit, st.st_size + 1))]  # one byte more: a file that grew reads on
        remaining = limit - len(chunks[0])
        while remaining > 0 and chunks[-1]:
            chunks.append(os.read(fd, min(remaining, 1 << 20)))
            remaining -= len(chunks[-1])
        return chunks[0] if len(chunks) == 1 or not any(chunks[1:]) else b"".join(chunks)
    except OSError as exc:
        raise UnreadableError("unreadable", errno.errorcode.get(exc.errno or 0, str(exc.errno))) from None
    finally:
        os.close(fd)
