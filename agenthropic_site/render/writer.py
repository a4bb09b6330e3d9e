"""Write the site: only changed bytes, staged out of sight, published at once, into a folder this tool owns.

The output folder is the user's. A build removes only files that the folder's own manifest says
a build published there, never anything else, whatever the cache holds; and it never writes,
creates or removes anything through a link inside the folder: every folder under it is opened
one component at a time with O_NOFOLLOW (openat-style), so a link planted anywhere is refused.
"""

from __future__ import annotations

import logging
import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from agenthropic_site.config import ConfigError
from agenthropic_site.errors import EXIT_FAILURES, UserError
from agenthropic_site.locks import take_lock, try_lock
from agenthropic_site.places import MANIFEST_NAME, MARKER, STATE
from agenthropic_site.records import record_class
from agenthropic_site.render.folders import FILE_FLAGS, FOLDER_FLAGS, LinkedFolder, OpenFolders, missing_files
from agenthropic_site.render.manifest import SAFE_PATH_RE, STAGING, Published, manifest_bytes, open_folder, read_manifest

log = logging.getLogger(__name__)

MARKER_TEXT = b"This folder is written by `agenthropic build`; its files are replaced on every build.\n"


class OutputError(UserError):
    """The output folder cannot be written (exit code 1, previous site left as it was)."""

    exit_code = EXIT_FAILURES
    site_before = True  # the folder held a site this build would have replaced (pipeline/build.py says when not)

    def line(self) -> str:
        """Say that nothing was lost."""
        # A first build has no previous site to speak of.
        kept = "the previous site was left as it was" if self.site_before else "nothing was published"
        return f"agenthropic: {self}; {kept}"


def has_marker(folder: Path) -> bool:
    """Tell whether a folder holds agenthropic's marker file; a marker that is a link or not a file is a ConfigError."""
    try:
        mode = os.lstat(folder / MARKER).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise ConfigError(f"cannot read {folder}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"refusing to use {folder}: its {MARKER} is a link or not a regular file")
    return True


def prepare_output(out: Path) -> None:
    """Create the output folder, or refuse one that holds someone else's files."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output path is not a folder: {out}")
    marked = has_marker(out)
    if out.is_dir() and not marked and any(out.iterdir()):
        raise ConfigError(f"refusing to write into {out}: it is not empty and was not made by agenthropic (no {MARKER} file)")
    out.mkdir(parents=True, exist_ok=True)
    if not marked:
        # Claim the folder before the first page, so an interrupted first build can be resumed;
        # O_EXCL|O_NOFOLLOW: a link planted meanwhile is never written through.
        try:
            fd = os.open(out / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            has_marker(out)  # another build claimed it first; refuse a link
            return
        with os.fdopen(fd, "wb") as handle:
            handle.write(MARKER_TEXT)


@contextmanager
def site_lock(out: Path, exclusive: bool) -> Iterator[None]:
    """Hold the site folder's marker file locked while a build publishes (exclusive) or a reader copies it (shared).

    A snapshot or diff of a site that a build (or `--watch`) is publishing then sees the whole
    of one build, never a mix of two.
    """
    fd = os.open(out / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if exclusive:
            take_lock(fd, True, f"a snapshot or diff is reading {out}; waiting for it to finish before publishing")
        else:
            take_lock(fd, False, f"a build is publishing {out}; waiting for it to finish")
        yield
    finally:
        os.close(fd)


def _parts(rel: str) -> list[str]:
    if not SAFE_PATH_RE.fullmatch(rel):
        raise OutputError(f"unsafe output path {rel!r}")
    return rel.split("/")


Pieces = Sequence[bytes | memoryview]  # a file's bytes in pieces, written one after the other (never joined)


def _holds(folder: int, name: str, pieces: Pieces) -> bool:
    """Tell whether `name` in `folder` is a regular file holding exactly the pieces' bytes (a link never is)."""
    try:
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a folder is in its place")
    if not stat.S_ISREG(found.st_mode) or found.st_size != sum(len(piece) for piece in pieces):
        return False  # a link, FIFO or other file in a page's place is replaced by the page
    with os.fdopen(os.open(name, FILE_FLAGS, dir_fd=folder), "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return False
        # Piece by piece: a 17 MB search shard is compared without a second copy of it in memory.
        return all(handle.read(len(piece)) == piece for piece in pieces) and handle.read(1) == b""


def _read_regular(folder: int, name: str, since_ns: int | None = None) -> bytes | None:
    """Return the bytes of `name` in `folder` when it is a regular file (a link never is) not changed after `since_ns`, else None."""
    try:
        with os.fdopen(os.open(name, FILE_FLAGS, dir_fd=folder), "rb") as handle:
            found = os.fstat(handle.fileno())
            if not stat.S_ISREG(found.st_mode) or (since_ns is not None and found.st_ctime_ns > since_ns):
                return None
            return handle.read()
    except OSError:
        return None


def _random_name() -> str:
    """Return 16 random hex digits (the `secrets` module's token_hex, without its import of `random` and `base64`)."""
    return os.urandom(8).hex()


def _create_staged(folder: int) -> tuple[int, str]:
    """Create a new file with a random name in a staging folder; return its descriptor and name."""
    while True:
        name = _random_name() + ".part"
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder), name
        except FileExistsError:
            continue


def _empty(parent: int, name: str) -> None:
    """Remove a staging folder and the files in it (a build's or a dead one's)."""
    try:
        fd = os.open(name, FOLDER_FLAGS, dir_fd=parent)
    except OSError:
        return
    try:
        for entry in os.listdir(fd):
            try:
                os.unlink(entry, dir_fd=fd)
            except OSError:
                pass
        os.rmdir(name, dir_fd=parent)
    except OSError:
        pass
    finally:
        os.close(fd)


# The folders a site is made of (the rest are files at its top: index.html, report.html, search.html).
SITE_FOLDERS = ("data", "projects", "search", "sessions", "static")


def _remove_empty_folders(out: Path) -> None:
    """Remove the empty folders of the site's own top folders, deepest first, never a dot-folder or a link.

    Pages' folders are made as they are rendered; a build that fails part way (a theme's fault, a
    full disk) left them, 52 empty folders in a first build's output after a theme fault. Only the
    folders a site is made of are looked in: a user's own folders (a `.git` whose empty `refs/`
    git needs) are never touched.
    """
    try:
        marker = os.open(out / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        # Another build publishing into this folder moves its files into folders it may have just
        # made: while it holds the site lock, no folder is judged empty.
        if not try_lock(marker):
            return
        for top in SITE_FOLDERS:
            path = os.path.join(out, top)
            if os.path.islink(path):
                continue  # os.walk would go where it points: a build never writes through a link
            found: list[str] = []
            for folder, subfolders, _ in os.walk(path):  # never into a link inside it
                subfolders[:] = [name for name in subfolders if not name.startswith(".")]
                found.append(folder)
            for folder in reversed(found):  # each folder after every folder inside it
                try:
                    os.rmdir(folder)  # only an empty folder goes
                except OSError:
                    pass
    finally:
        os.close(marker)


def _holds_more_than_bookkeeping(out: Path) -> bool:
    with os.scandir(out) as entries:
        return any(entry.name not in (MARKER, STATE) for entry in entries)


def _new_stage(staging: int) -> tuple[int, str]:
    """Make this build's staging folder and hold it locked, so that no other build clears it."""
    while True:
        name = _random_name()
        try:
            os.mkdir(name, 0o700, dir_fd=staging)
        except FileExistsError:
            continue
        fd = os.open(name, FOLDER_FLAGS, dir_fd=staging)
        # Another build clearing dead staging folders may have taken it between mkdir and lock.
        if try_lock(fd) and os.fstat(fd).st_nlink > 0:
            return fd, name
        os.close(fd)


@record_class
class SiteWriter:
    """Collect output files; stage those whose bytes changed; publish them all at once at the end.

    Changed files are first written into this build's staging folder (`.agenthropic/staging/<id>`,
    which snapshots never see); only when every one of them is written are they moved into place
    (`finish`), so a build that fails part way — a full disk, a read-only folder, a bug — leaves
    the previous site as it was. Render workers stage into the same folder (`spawn`).
    """

    out: Path
    stage: str = ""  # this build's staging folder under .agenthropic/staging (made by `begin`)
    previous: dict[str, str] = field(default_factory=dict)  # what the folder's manifest says was published
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    manifest_digest: str | None = None  # SHA-256 of the manifest now in the folder
    # The files of `previous` that a process aside found missing as the build started (stamp.kept_missing); None: not looked at.
    seen_missing: frozenset[str] | None = None
    previous_ns: int | None = None  # the ctime of the manifest `previous` was read from (Published.written_ns)
    published: Published | None = None  # what the manifest says once `finish` has published
    # Some published file was missing or changed: the manifest is written again at the end even with
    # the same bytes, so that files found the same as rendered (a chmod, a hard link) are judged by its new ctime.
    looked_again: bool = False
    _produced: set[str] = field(default_factory=set)
    _staged: list[tuple[str, str]] = field(default_factory=list)  # (staged file name, output path)
    _lock: int | None = None  # the staging folder, held locked by the build that made it
    # Under each top-level folder of the output (data/, sessions/, search/...), the folder of the file
    # written or kept last there, and a render worker's staging folder: kept open for the next file.
    _folders: dict[str, OpenFolders] = field(default_factory=dict, repr=False, compare=False)
    _stage_folder: OpenFolders | None = field(default=None, repr=False, compare=False)

    @classmethod
    def begin(cls, out: Path, published: Published, seen_missing: frozenset[str] | None = None) -> SiteWriter:
        """Start a build's writer: clear the staging folders of builds that died, and make this build's.

        `seen_missing`: the published files a process aside found missing (pipeline/stamp.py), if it looked at this manifest.
        """
        if published.damaged:
            log.info(f"notice: the record of published files in {out} ({STATE}/{MANIFEST_NAME}) is damaged; "
                   "no file of an earlier build is removed this time, and every page is rendered again")
        elif published.digest is None and _holds_more_than_bookkeeping(out):
            log.info(f"notice: {out} has no record of the files earlier builds published ({STATE}/{MANIFEST_NAME}); "
                   "none of them is removed this time")
        try:
            with open_folder(out, (STATE, STAGING), create=True) as staging:
                for name in sorted(os.listdir(staging)):
                    try:
                        fd = os.open(name, FOLDER_FLAGS, dir_fd=staging)
                    except OSError:
                        continue
                    try:
                        if try_lock(fd):  # nobody holds it: the build that made it is gone
                            _empty(staging, name)
                    finally:
                        os.close(fd)
                lock, stage = _new_stage(staging)
        except LinkedFolder as exc:
            raise OutputError(f"cannot write into {out}: {exc} in it is a link or not a folder, and agenthropic never writes through one") from None
        except OSError as exc:
            raise OutputError(f"cannot write into {out}: {exc.strerror or exc}") from None
        return cls(out, stage, dict(published.files), manifest_digest=published.digest, seen_missing=seen_missing,
                   previous_ns=published.written_ns, _lock=lock)

    def spawn(self) -> SiteWriter:
        """Return a writer for a render worker: the same folder, staging and record, nothing produced yet."""
        return SiteWriter(self.out, self.stage, self.previous, previous_ns=self.previous_ns)

    def _staging(self) -> int:
        """Return a descriptor of this build's staging folder (the one it holds locked, or a render worker's own)."""
        if self._lock is not None:
            return self._lock
        if self._stage_folder is None:
            self._stage_folder = OpenFolders(self.out)
        return self._stage_folder.open((STATE, STAGING, self.stage))

    def _folder(self, parts: Sequence[str], create: bool = False) -> int:
        """Return a descriptor of an output folder (held for the next file; closed by `close_folders`)."""
        top = parts[0] if parts else ""
        if top not in self._folders:
            self._folders[top] = OpenFolders(self.out)
        return self._folders[top].open(parts, create)

    def close_folders(self) -> None:
        """Close the folders held open for the next file (before publishing moves files and removes folders)."""
        for folders in [*self._folders.values(), self._stage_folder]:
            if folders is not None:
                folders.close()

    def write(self, rel: str, data: bytes | Pieces) -> None:
        """Stage one file under the output folder unless it already holds these bytes (given whole or in pieces)."""
        pieces = [data] if isinstance(data, bytes) else data
        parts = _parts(rel)
        self._produced.add(rel)
        try:
            if _holds(self._folder(parts[:-1], create=True), parts[-1], pieces):
                self.unchanged.append(rel)
                return
            fd, name = _create_staged(self._staging())
            self._staged.append((name, rel))
            with os.fdopen(fd, "wb") as handle:
                # A published site is world-readable, whatever the umask.
                os.fchmod(handle.fileno(), 0o644)
                for piece in pieces:
                    handle.write(piece)
        except LinkedFolder as exc:
            raise OutputError(f"cannot write {rel}: {exc} in the output folder is a link or not a folder, and agenthropic never writes through one") from None
        except OSError as exc:
            raise OutputError(f"cannot write {self.out / rel}: {exc.strerror or exc}") from None
        self.written.append(rel)

    def read_previous(self, rel: str) -> bytes | None:
        """Return the bytes of a file the last build published, if it is still a regular file in the folder (None otherwise)."""
        if rel not in self.previous:
            return None
        parts = _parts(rel)
        try:
            return _read_regular(self._folder(parts[:-1]), parts[-1], self.previous_ns)
        except (OSError, LinkedFolder):
            return None

    def keep(self, rel: str) -> bool:
        """Keep a file from the last build as it is, if it is still there; return whether it was."""
        if self.missing([rel]):
            return False
        self.kept([rel])
        return True

    def missing(self, rels: Iterable[str]) -> list[str]:
        """Return those of the last build's files that are no longer regular files in the folder (a link never is one).

        What a process aside found when the build started (`seen_missing`) answers for every file
        the manifest lists; any other is looked for now, each folder opened once for all of its files.
        """
        if self.seen_missing is None:
            found = missing_files(rels, self._folder, _parts, self.previous_ns)
        else:
            rels = list(rels)
            unseen = [rel for rel in rels if rel not in self.previous]
            gone = set(missing_files(unseen, self._folder, _parts, self.previous_ns)) if unseen else set()
            found = [rel for rel in rels if rel in self.seen_missing or rel in gone]
        self.looked_again |= bool(found)
        return found

    def kept(self, rels: Iterable[str]) -> None:
        """Count files of the last build, just found in the folder (`missing`), as kept as they are."""
        for rel in rels:
            self._produced.add(rel)
            self.unchanged.append(rel)

    @property
    def produced(self) -> set[str]:
        """Return every output this build produced so far (written, staged or kept)."""
        return self._produced

    @property
    def staged(self) -> list[tuple[str, str]]:
        """Return the staged (file name in the staging folder, output path) pairs not yet published."""
        return self._staged

    def adopt(self, other: SiteWriter) -> None:
        """Take over what another writer of the same build produced and staged (a render worker's)."""
        self._produced |= other.produced
        self._staged.extend(other.staged)
        self.written.extend(other.written)
        self.unchanged.extend(other.unchanged)
        self.looked_again |= other.looked_again

    def commit(self) -> None:
        """Move every staged file into place (renames need no space, so this part does not fail on a full disk)."""
        if not self._staged:
            return
        rel = ""
        try:
            staging = self._staging()
            for name, rel in self._staged:
                parts = rel.split("/")
                os.replace(name, parts[-1], src_dir_fd=staging, dst_dir_fd=self._folder(parts[:-1], create=True))
        except LinkedFolder as exc:
            raise OutputError(f"cannot publish {rel}: {exc} in the output folder is a link or not a folder") from None
        except OSError as exc:
            raise OutputError(f"cannot publish {self.out / rel}: {exc.strerror or exc}") from None
        self._staged.clear()

    def finish(self, digests: Mapping[str, str]) -> None:
        """Publish: move staged files into place, remove the files of earlier builds not produced now, record it.

        Call it with the site locked (`site_lock`). Only files the folder's manifest lists are
        ever removed. The manifest is written last; before anything moves it also lists every
        file this build may leave, the staged ones with unknown inputs, so that a build stopped
        part way leaves nothing the next one does not know about.
        """
        # Folders opened before the lock was taken are walked again: another build may have published since.
        self.close_folders()
        # Read again under the lock, for the same reason (parsed again only when its bytes changed).
        current = read_manifest(self.out, Published(self.previous, self.manifest_digest))
        recorded, self.manifest_digest = current.files, current.digest
        stale = sorted(set(recorded) - self._produced)
        final = {rel: digests.get(rel, "") for rel in self._produced}
        # Every file moved into place has a ctime of now: the manifest's must be later (`missing`).
        again = self.looked_again or bool(self._staged)
        if self._staged or stale:
            self._write_manifest({**recorded, **final, **{rel: "" for _, rel in self._staged}})
        self.commit()
        self.close_folders()  # removing files removes the folders they leave empty
        for rel in stale:
            outcome = self._remove(rel)
            if outcome == "removed":
                self.removed.append(rel)
            elif outcome == "kept":
                final[rel] = recorded[rel]  # could not be removed: the next build tries again
        self._write_manifest(final, again)
        self.published = Published(final, self.manifest_digest)
        self.removed.sort()
        self.close()

    def _write_manifest(self, files: Mapping[str, str], again: bool = False) -> None:
        """Replace the folder's manifest atomically, unless it already holds these bytes (`again`: even then)."""
        data = manifest_bytes(files)
        digest = hashlib.sha256(data).hexdigest()
        if digest == self.manifest_digest and not again:
            return
        try:
            staging = self._staging()
            with open_folder(self.out, (STATE,)) as state:
                fd, name = _create_staged(staging)
                with os.fdopen(fd, "wb") as handle:
                    os.fchmod(handle.fileno(), 0o644)
                    handle.write(data)
                os.replace(name, MANIFEST_NAME, src_dir_fd=staging, dst_dir_fd=state)
        except LinkedFolder as exc:
            raise OutputError(f"cannot record the published files: {exc} in the output folder is a link or not a folder") from None
        except OSError as exc:
            raise OutputError(f"cannot record the published files in {self.out}: {exc.strerror or exc}") from None
        self.manifest_digest = digest

    def _remove(self, rel: str) -> str:
        """Remove one file an earlier build published, then the folders it leaves empty; never through a link.

        Return "removed", "gone" (missing, or a link or folder now: not ours to remove) or "kept"
        (it could not be removed).
        """
        parts = rel.split("/")
        fds = [os.open(self.out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
        try:
            try:
                for part in parts[:-1]:
                    fds.append(os.open(part, FOLDER_FLAGS, dir_fd=fds[-1]))
                if not stat.S_ISREG(os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False).st_mode):
                    return "gone"
                os.unlink(parts[-1], dir_fd=fds[-1])
            except (FileNotFoundError, NotADirectoryError):
                return "gone"
            except OSError as exc:
                return "gone" if exc.errno == errno.ELOOP else "kept"
            for depth in range(len(parts) - 2, -1, -1):
                try:
                    os.rmdir(parts[depth], dir_fd=fds[depth])  # only an empty folder goes
                except OSError:
                    break
            return "removed"
        finally:
            for fd in fds:
                os.close(fd)

    def close(self) -> None:
        """Remove this build's staging folder, with any file in it (a dead worker's), and release it."""
        self.close_folders()
        if self._lock is None:
            return
        try:
            with open_folder(self.out, (STATE, STAGING)) as staging:
                _empty(staging, self.stage)
        except (OSError, LinkedFolder):
            pass  # the next build clears it
        finally:
            os.close(self._lock)
            self._lock = None

    def abort(self) -> None:
        """Remove staged files and the empty folders made for them: the previous site stays exactly as it was."""
        try:
            staging = self._staging()
            for name, _ in self._staged:
                try:
                    os.unlink(name, dir_fd=staging)
                except FileNotFoundError:
                    pass
        except (OSError, LinkedFolder):
            pass
        self._staged.clear()
        if self._lock is not None:  # the build's own writer (a render worker's leaves this to it)
            self.close_folders()
            _remove_empty_folders(self.out)
        self.close()
