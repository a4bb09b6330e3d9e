"""The output folder's record of what builds published there, and a way into its folders that never follows a link.

The manifest (`.agenthropic/manifest`) lists every file the last build published with the input
digest it was rendered from: what a site holds is judged from it, per output folder, and only
files it lists are ever removed. Its bytes are one `digest path` line per file, sorted, with no
time and no absolute path; the digests depend on the cache's view of the corpus files, so the
manifest is bookkeeping, not part of the site: snapshot, diff and verify skip `.agenthropic/`.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from agenthropic_site.places import MANIFEST_HEADER, MANIFEST_NAME, STATE, UNKNOWN
from agenthropic_site.records import record_class

STAGING = "staging"  # beside the manifest in the output folder's STATE folder (places.py names the rest)
# Every output path is made of ids the tool validated; this is the last line of defence.
_SAFE_PART = r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}"
# A whole output path: safe parts joined by single slashes (one match a path: a manifest lists thousands).
SAFE_PATH_RE = re.compile(rf"{_SAFE_PART}(?:/{_SAFE_PART})*")
_DIGEST_RE = re.compile(r"[0-9a-f]{64}")
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # never blocks on a FIFO planted in a page's place


class LinkedFolder(Exception):
    """A folder component under the output folder is a link (or not a folder): never gone through."""


@contextmanager
def open_folder(out: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """Open a folder under the output folder one component at a time, never through a link; create missing ones."""
    folders = OpenFolders(out)
    try:
        yield folders.open(parts, create)
    finally:
        folders.close()


class OpenFolders:
    """The folder under the output folder opened last, kept open with each of its parents for the next file.

    Each part is opened below its parent's descriptor, never through a link (as `open_folder`
    does); a file in the same folder as the one before, or below it, opens no folder again. At
    most one descriptor a level of the path is held. Pickled, it is a new one that holds none.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self._parts: list[str] = []
        self._fds: list[int] = []  # the output folder's, then one for each of _parts

    def __reduce__(self) -> tuple[type[OpenFolders], tuple[Path]]:
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


@record_class(frozen=True)
class Published:
    """What an output folder's manifest says its last build published."""

    files: dict[str, str] = field(default_factory=dict)  # output path -> input digest ("" when not known)
    digest: str | None = None  # SHA-256 of the manifest's bytes; None without a readable one
    damaged: bool = False


def manifest_bytes(files: Mapping[str, str]) -> bytes:
    """Return the manifest of published files: one `digest path` line each, sorted by path, nothing else."""
    lines = (f"{files[rel] or UNKNOWN} {rel}\n" for rel in sorted(files))
    return MANIFEST_HEADER + "".join(lines).encode("ascii")


def parse_manifest(data: bytes) -> dict[str, str] | None:
    """Return the files a manifest lists, or None when any byte of it is not what `manifest_bytes` writes."""
    if not data.startswith(MANIFEST_HEADER):
        return None
    try:
        lines = data[len(MANIFEST_HEADER) :].decode("ascii").split("\n")
    except UnicodeDecodeError:
        return None
    if lines.pop() != "":
        return None
    files: dict[str, str] = {}
    for line in lines:
        digest, _, rel = line.partition(" ")
        if not (digest == UNKNOWN or _DIGEST_RE.fullmatch(digest)) or rel in files:
            return None
        if not SAFE_PATH_RE.fullmatch(rel):
            return None
        files[rel] = "" if digest == UNKNOWN else digest
    return files


def read_manifest(out: Path, known: Published | None = None) -> Published:
    """Read what the output folder's manifest says was published there (never through a link).

    `known`: an earlier read of it, returned as it is when the manifest holds the same bytes (a
    manifest of 4,480 files takes 16 ms to parse).
    """
    try:
        with open_folder(out, (STATE,)) as state:
            with os.fdopen(os.open(MANIFEST_NAME, FILE_FLAGS, dir_fd=state), "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    return Published(damaged=True)
                data = handle.read()
    except FileNotFoundError:
        return Published()
    except (OSError, LinkedFolder):
        return Published(damaged=True)
    digest = hashlib.sha256(data).hexdigest()
    if known is not None and known.digest == digest:
        return known
    files = parse_manifest(data)
    if files is None:
        return Published(damaged=True)
    return Published(files, digest)
