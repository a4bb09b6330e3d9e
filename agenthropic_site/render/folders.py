"""Folders under the output folder, opened one component at a time without following a link, and which published files are gone.

Imports nothing but the standard library's `os`, `errno` and `stat` (`hashlib` too, to answer for
a manifest; not `pathlib`): the process a build starts to look at its output folder meanwhile
(pipeline/stamp.py `look_aside`) loads it only once it has sent the walk it was asked for.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Sequence

TYPE_CHECKING = False  # `typing` is not loaded for the name alone (mypy reads it)
if TYPE_CHECKING:
    from pathlib import Path

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # never blocks on a FIFO planted in a page's place


class LinkedFolder(Exception):
    """A folder component under the output folder is a link (or not a folder): never gone through."""


class OpenFolders:
    """The folder under the output folder opened last, kept open with each of its parents for the next file.

    Each part is opened below its parent's descriptor, never through a link (as `open_folder`
    does); a file in the same folder as the one before, or below it, opens no folder again. At
    most one descriptor a level of the path is held. Pickled, it is a new one that holds none.
    """

    def __init__(self, out: Path | str) -> None:
        self.out = out
        self._parts: list[str] = []
        self._fds: list[int] = []  # the output folder's, then one for each of _parts

    def __reduce__(self) -> tuple[type[OpenFolders], tuple[Path | str]]:
        return OpenFolders, (self.out,)

    def open(self, parts: Sequence[str], create: bool = False) -> int:
        """Return a descriptor of the folder `parts` below the output folder (the caller does not close it); create missing ones."""
        if not self._fds:
            self._fds.append(os.open(self.out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        shared = 0
        for mine, wanted in zip(self._parts, parts):
            if mine != wanted:
                break
            shared += 1
        self._keep(shared)
        for depth in range(shared, len(parts)):
            part, fd = parts[depth], self._fds[-1]
            try:
                try:
                    child = os.open(part, FOLDER_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, dir_fd=fd)
                    except FileExistsError:
                        pass
                    child = os.open(part, FOLDER_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkedFolder("/".join(parts[: depth + 1])) from None
                raise
            self._parts.append(part)
            self._fds.append(child)
        return self._fds[-1]

    def _keep(self, depth: int) -> None:
        while len(self._parts) > depth:
            self._parts.pop()
            os.close(self._fds.pop())

    def close(self) -> None:
        """Close every folder held."""
        self._keep(0)
        while self._fds:
            os.close(self._fds.pop())

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit `os` may be gone: the process closes them
            pass


def missing_files(rels: Iterable[str], folder: Callable[[Sequence[str]], int], split: Callable[[str], list[str]],
                  since_ns: int | None = None) -> list[str]:
    """Return those of these output files that are no longer regular files in the folder (a link never is one), or were changed.

    `folder` opens a folder below the output folder from its parts (never through a link), `split`
    cuts an output path into parts. Each folder is opened once for all of its files. `since_ns`:
    the ctime of the manifest that lists them (None: not compared). Publishing renames every file
    into place before it writes the manifest, and a rename sets a file's ctime, which no one can
    set back: a later one means the file was written, replaced, linked or chmodded since (a page
    edited by hand, a `git checkout` in the folder), and it is judged again as if it were missing.
    (On Windows st_ctime_ns is the creation time: a file replaced is seen, one written in place is not.)
    """
    by_folder: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for rel in rels:
        parts = split(rel)
        by_folder.setdefault(tuple(parts[:-1]), []).append((rel, parts[-1]))
    gone = []
    for folder_parts, files in by_folder.items():
        try:
            parent = folder(folder_parts)
            for rel, name in files:
                try:
                    found = os.stat(name, dir_fd=parent, follow_symlinks=False)
                    there = stat.S_ISREG(found.st_mode) and (since_ns is None or found.st_ctime_ns <= since_ns)
                except OSError:
                    there = False
                if not there:
                    gone.append(rel)
        except (OSError, LinkedFolder):
            gone += [rel for rel, _ in files]
    return gone


def missing_answer(out: str, state: str, manifest_name: str) -> bytes:
    """Say which files an output folder's manifest lists are missing or changed since it was written.

    The answer: the folder's device and inode, the manifest's SHA-256, then one path a line.
    Answered by a process of its own while a build imports and reads (pipeline/stamp.py); empty
    when the folder or its manifest cannot be read or names a path no build writes, and the build
    then looks for itself. The build takes the answer only for a manifest of the same digest,
    which it has parsed and checked itself.
    """
    import hashlib

    folders = OpenFolders(out)
    try:
        top = os.fstat(folders.open(()))
        with os.fdopen(os.open(manifest_name, FILE_FLAGS, dir_fd=folders.open((state,))), "rb") as handle:
            written_ns = os.fstat(handle.fileno()).st_ctime_ns
            data = handle.read()
        rels = [line.partition(" ")[2] for line in data.decode("ascii").split("\n")[1:-1]]
        if any(part in ("", ".", "..") for rel in rels for part in rel.split("/")):
            return b""
        gone = missing_files(rels, folders.open, lambda rel: rel.split("/"), written_ns)
    except (OSError, UnicodeDecodeError, LinkedFolder):
        return b""
    finally:
        folders.close()
    return "\n".join([f"{top.st_dev} {top.st_ino} {hashlib.sha256(data).hexdigest()}", *gone]).encode("ascii")
