"""The output folder's record of what builds published there (its folders are opened by render/folders.py, never through a link).

The manifest (`.agenthropic/manifest`) lists every file the last build published with the input
digest it was rendered from: what a site holds is judged from it, per output folder, and only
files it lists are ever removed. Its bytes are one `digest path` line per file, sorted, with no
time and no absolute path; the digests depend on the cache's view of the corpus files, so the
manifest is bookkeeping, not part of the site: snapshot, diff and verify skip `.agenthropic/`.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from agenthropic_site.places import MANIFEST_HEADER, MANIFEST_NAME, STATE, UNKNOWN
from agenthropic_site.render.folders import FILE_FLAGS, LinkedFolder, OpenFolders
from agenthropic_site.records import record_class

STAGING = "staging"  # beside the manifest in the output folder's STATE folder (places.py names the rest)
# Every output path is made of ids the tool validated; this is the last line of defence.
_SAFE_PART = r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}"
# A whole output path: safe parts joined by single slashes (one match a path: a manifest lists thousands).
SAFE_PATH_RE = re.compile(rf"{_SAFE_PART}(?:/{_SAFE_PART})*")
_DIGEST_RE = re.compile(r"[0-9a-f]{64}")


@contextmanager
def open_folder(out: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """Open a folder under the output folder one component at a time, never through a link; create missing ones."""
    folders = OpenFolders(out)
    try:
        yield folders.open(parts, create)
    finally:
        folders.close()


@record_class(frozen=True)
class Published:
    """What an output folder's manifest says its last build published."""

    files: dict[str, str] = field(default_factory=dict)  # output path -> input digest ("" when not known)
    digest: str | None = None  # SHA-256 of the manifest's bytes; None without a readable one
    damaged: bool = False
    # The manifest's ctime as it was read: a file it lists whose ctime is later is not as published
    # (folders.py `missing_files`). None: not known, and files are only looked for.
    written_ns: int | None = field(default=None, compare=False)


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

    `known`: an earlier read of it, whose files are taken as they are when the manifest holds the
    same bytes (a manifest of 4,480 files takes 16 ms to parse).
    """
    try:
        with open_folder(out, (STATE,)) as state:
            with os.fdopen(os.open(MANIFEST_NAME, FILE_FLAGS, dir_fd=state), "rb") as handle:
                found = os.fstat(handle.fileno())
                if not stat.S_ISREG(found.st_mode):
                    return Published(damaged=True)
                data = handle.read()
    except FileNotFoundError:
        return Published()
    except (OSError, LinkedFolder):
        return Published(damaged=True)
    digest = hashlib.sha256(data).hexdigest()
    if known is not None and known.digest == digest:
        # The same bytes written again (after a build found files changed) is a later ctime.
        return known if known.written_ns == found.st_ctime_ns else Published(known.files, digest, written_ns=found.st_ctime_ns)
    files = parse_manifest(data)
    if files is None:
        return Published(damaged=True)
    return Published(files, digest, written_ns=found.st_ctime_ns)
