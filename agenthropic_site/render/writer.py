"""Write the site: only changed bytes, atomically, into a folder this tool owns."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from agenthropic_site.config import ConfigError
from agenthropic_site.locks import take_lock

MARKER = ".agenthropic-site"
TEMP_PREFIX = ".tmp-"
MARKER_TEXT = b"This folder is written by `agenthropic build`; its files are replaced on every build.\n"
# Every output path is made of ids the tool validated; this is the last line of defence.
SAFE_PART_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$")


class OutputError(Exception):
    """The output folder cannot be written (exit code 1, previous site left as it was)."""


def prepare_output(out: Path) -> None:
    """Create the output folder, or refuse one that holds someone else's files."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output path is not a folder: {out}")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ConfigError(f"refusing to write into {out}: it is not empty and was not made by agenthropic (no {MARKER} file)")
    out.mkdir(parents=True, exist_ok=True)
    marker = out / MARKER
    if not marker.is_file():
        # Claim the folder before the first page, so an interrupted first build can be resumed.
        marker.write_bytes(MARKER_TEXT)


@contextmanager
def site_lock(out: Path, exclusive: bool, on_wait: Callable[[str], None]) -> Iterator[None]:
    """Hold the site folder's marker file locked while a build publishes (exclusive) or a reader copies it (shared).

    A snapshot or diff of a site that a build (or `--watch`) is publishing then sees the whole
    of one build, never a mix of two.
    """
    fd = os.open(out / MARKER, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if exclusive:
            take_lock(fd, True, on_wait, f"a snapshot or diff is reading {out}; waiting for it to finish before publishing")
        else:
            take_lock(fd, False, on_wait, f"a build is publishing {out}; waiting for it to finish")
        yield
    finally:
        os.close(fd)


@dataclass
class SiteWriter:
    """Collect output files; stage those whose bytes changed; publish them all at once at the end.

    Changed files are first written beside their targets as temporary files; only when every
    one of them is written are they moved into place (`commit`), so a build that fails part
    way — a full disk, a read-only folder, a bug — leaves the previous site as it was.
    """

    out: Path
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    _produced: set[str] = field(default_factory=set)
    _staged: list[tuple[str, Path]] = field(default_factory=list)

    def write(self, rel: str, data: bytes) -> None:
        """Stage one file under the output folder unless it already holds these bytes."""
        parts = rel.split("/")
        if not all(SAFE_PART_RE.match(part) for part in parts):
            raise OutputError(f"unsafe output path {rel!r}")
        self._produced.add(rel)
        target = self.out.joinpath(*parts)
        try:
            if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
                self.unchanged.append(rel)
                return
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, prefix=TEMP_PREFIX, suffix=".part")
            self._staged.append((temp, target))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            # mkstemp makes 0600 files; a published site is world-readable.
            os.chmod(temp, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
        self.written.append(rel)

    def commit(self) -> None:
        """Move every staged file into place (renames need no space, so this part does not fail on a full disk)."""
        try:
            for temp, target in self._staged:
                os.replace(temp, target)
        except OSError as exc:
            raise OutputError(f"cannot publish {target}: {exc.strerror or exc}") from None
        self._staged.clear()

    def abort(self) -> None:
        """Remove staged files: the previous site stays exactly as it was."""
        for temp, _ in self._staged:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
        self._staged.clear()

    @property
    def produced(self) -> set[str]:
        """Return every output this build produced so far (written, staged or kept)."""
        return self._produced

    @property
    def staged(self) -> list[tuple[str, Path]]:
        """Return the staged (temporary, target) files not yet published."""
        return self._staged

    def adopt(self, other: SiteWriter) -> None:
        """Take over what another writer of the same folder produced and staged (a render worker's)."""
        self._produced |= other.produced
        self._staged.extend(other.staged)
        self.written.extend(other.written)
        self.unchanged.extend(other.unchanged)

    def keep(self, rel: str) -> bool:
        """Keep a file from the last build as it is, if it is still there; return whether it was."""
        if not os.path.isfile(os.path.join(self.out, rel)):
            return False
        self._produced.add(rel)
        self.unchanged.append(rel)
        return True

    def finish(self, previous: set[str] | None = None) -> None:
        """Delete files of earlier builds not produced now, and folders left empty.

        With `previous` (what the last build produced) only those files are considered;
        without it every file under the output folder is.
        """
        self._produced.add(MARKER)
        self.commit()
        if previous is not None:
            stale = sorted(previous - self._produced)
            for rel in stale:
                path = self.out.joinpath(*rel.split("/"))
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    self.removed.append(rel)
                for parent in path.parents:
                    if parent == self.out or not parent.is_dir() or any(parent.iterdir()):
                        break
                    parent.rmdir()
            return
        for folder, dirnames, filenames in os.walk(self.out, topdown=False):
            base = Path(folder)
            for name in filenames:
                rel = (base / name).relative_to(self.out).as_posix()
                if rel not in self._produced:
                    (base / name).unlink()
                    self.removed.append(rel)
            for name in dirnames:
                path = base / name
                if not path.is_symlink() and path.is_dir() and not any(path.iterdir()):
                    path.rmdir()
        self.removed.sort()
