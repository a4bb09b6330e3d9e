"""`agenthropic snapshot`: deterministic archives of a built site, and reading a site or snapshot.

A snapshot is a gzip-compressed POSIX tar file. `MANIFEST.json` is its first member (so a
streaming reader knows what follows); the site's files follow in sorted path order, each at
the top level of the archive, so extracting it into an empty folder gives back the site.
Every member is a regular file with mode 0644, owner 0:0 without names, and the mtime of
`$SOURCE_DATE_EPOCH` (else 0); the gzip header carries no file name and mtime 0. The same
site therefore always gives the same archive bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
import tempfile
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager

import orjson

from agenthropic_site.audit import MANIFEST
from agenthropic_site.config import ConfigError
from agenthropic_site.digits import whole_number
from agenthropic_site.errors import UserError
from agenthropic_site.places import MARKER, STATE
from agenthropic_site.render.writer import has_marker, site_lock

MANIFEST_FORMAT = "agenthropic-snapshot/1"
# A snapshot given to `diff` is untrusted: bound what it may make us hold in memory.
MAX_SNAPSHOT_BYTES = 4 * 1024**3
SNAPSHOT_SUFFIXES = (".tar.gz", ".tgz")
# A redaction pass maps each file's bytes before they are archived (render/redact.py's
# `Redactor.file` by default; `--no-redact` archives the site's bytes as they are).
Redactor = Callable[[str, bytes], bytes]


class ArchiveError(UserError):
    """A site folder or snapshot cannot be read, or a snapshot cannot be written (exit code 2)."""


def snapshot_mtime(env: Mapping[str, str]) -> int:
    """Return the members' mtime: `$SOURCE_DATE_EPOCH` when set, else 0."""
    text = env.get("SOURCE_DATE_EPOCH", "").strip()
    if not text:
        return 0
    seconds = whole_number(text)
    if seconds is None:
        raise ConfigError(f"SOURCE_DATE_EPOCH is not a whole, non-negative number of seconds: {text!r}")
    return seconds


def archivable(name: str) -> bool:
    """Tell whether `name` is a relative POSIX path of printable text that cannot escape the folder it is in."""
    return bool(name) and not name.startswith("/") and "\\" not in name and name.isprintable() and not any(
        part in ("", ".", "..") for part in name.split("/")
    )


def check_member_name(name: str) -> str:
    """Return a relative POSIX path unchanged, or raise ArchiveError for anything that could escape."""
    if not archivable(name):
        raise ArchiveError(f"unsafe path in the snapshot: {name!r}")
    return name


# Which files a reader keeps whole (None: all); it keeps each other one as its SHA-256 digest (32
# bytes), which is all a comparison of two trees needs: a diff of two 120 MB sites held 248 MB.
Whole = Callable[[str], bool] | None


def kept(rel: str, data: bytes, whole: Whole) -> bytes:
    """Return a file's bytes as a reader keeps them: whole, or as their SHA-256 digest."""
    return data if whole is None or whole(rel) else hashlib.sha256(data).digest()


def read_site(site: Path, whole: Whole = None) -> dict[str, bytes]:
    """Read every file of a site folder built by agenthropic; links and special files are refused.

    The builds' own bookkeeping (`.agenthropic/`: the manifest of published files and the files a
    running build has staged) is not part of the site and is never read. `whole`: which files are
    kept whole; the others are kept as their SHA-256 digest.
    """
    with site_files(site) as listed:
        return {rel: kept(rel, _read_file(rel, path), whole) for rel, path in listed}


@contextmanager
def site_files(site: Path) -> Iterator[list[tuple[str, str]]]:
    """List a site folder's files, sorted by their relative paths, holding the site so that no build publishes meanwhile."""
    if not site.is_dir():
        raise ArchiveError(f"site folder not found: {site}")
    try:
        marked = has_marker(site)
    except ConfigError as exc:
        raise ArchiveError(str(exc)) from None
    if not marked:
        raise ArchiveError(f"{site} is not a site built by agenthropic (no {MARKER} file)")

    def fail(exc: OSError) -> None:
        raise ArchiveError(f"cannot read the site folder: {exc.filename}: {exc.strerror}")

    try:
        with site_lock(site, False):
            yield _listed(site, fail)
    except OSError as exc:
        raise ArchiveError(f"cannot read the site folder: {exc.filename}: {exc.strerror}") from None


def _listed(site: Path, fail: Callable[[OSError], None]) -> list[tuple[str, str]]:
    """Return (relative path, path) of every regular file of the site, refusing links, special files and names a snapshot cannot hold."""
    files: list[tuple[str, str]] = []
    for folder, dirnames, filenames in os.walk(site, onerror=fail):
        if folder == str(site):
            dirnames[:] = [name for name in dirnames if name != STATE]
            filenames = [name for name in filenames if name != STATE]
        for name in sorted(dirnames + filenames):
            path = os.path.join(folder, name)
            rel = Path(path).relative_to(site).as_posix()
            if not archivable(rel):
                # agenthropic writes no such name (one not UTF-8, or holding a control character): a
                # snapshot would refuse it and JSON cannot hold it, so `diff --json` and `snapshot` failed.
                raise ArchiveError(f"the site folder holds a file whose name a snapshot cannot hold: {rel!r}")
            try:
                mode = os.lstat(path).st_mode
            except OSError as exc:
                raise ArchiveError(f"cannot read {rel} in the site folder: {exc.strerror or exc}") from None
            if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise ArchiveError(f"the site folder holds a link or special file: {rel}")
            if stat.S_ISREG(mode):
                files.append((rel, path))
    return sorted(files)


def _read_file(rel: str, path: str) -> bytes:
    """Return the bytes of a file the listing found (never through a link swapped in since)."""
    try:
        with open(path, "rb", opener=_no_follow) as handle:
            return handle.read()
    except OSError as exc:
        raise ArchiveError(f"cannot read {rel} in the site folder: {exc.strerror or exc}") from None


def _no_follow(path: str, flags: int) -> int:
    # The walk saw a regular file; refuse a link swapped in since.
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def manifest_bytes(entries: Mapping[str, tuple[int, str]], redactions: Mapping[str, int] | None = None) -> bytes:
    """Return the manifest: path, size and SHA-256 of every file (`entries`), sorted, and the masks made by
    kind (`redactions`, null when the files were not redacted), as JSON with sorted keys."""
    listed = [{"path": rel, "sha256": digest, "size": size} for rel, (size, digest) in sorted(entries.items())]
    document = {"files": listed, "format": MANIFEST_FORMAT, "redactions": None if redactions is None else dict(redactions)}
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def write_snapshot(members: Iterable[tuple[str, bytes]], out: Path, mtime: int = 0) -> None:
    """Write the members (the manifest first), taken one at a time, as a deterministic tar.gz, replacing `out` atomically."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=out.parent, prefix=".tmp-", suffix=".part")
    except OSError as exc:
        raise ArchiveError(f"cannot write {out}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            # filename="" and mtime=0: the gzip header must not depend on where or when it was made.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as zipped:
                with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
                    for rel, data in members:
                        tar.addfile(_member(rel, len(data), mtime), io.BytesIO(data))
        os.chmod(temp, 0o644)
        os.replace(temp, out)
    except BaseException as exc:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise ArchiveError(f"cannot write {out}: {exc.strerror or exc}") from None
        raise


def _member(rel: str, size: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(rel)
    info.type = tarfile.REGTYPE
    info.size = size
    info.mtime = mtime
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def snapshot_site(
    site: Path, out: Path, *, mtime: int = 0, redact: Redactor | None = None, counts: Callable[[], Mapping[str, int]] | None = None
) -> dict[str, tuple[int, str]]:
    """Archive a built site into `out` (mapped through `redact` when given); return the size and SHA-256 of each file archived.

    `counts`, called once every file is mapped, gives the masks made by kind for the manifest. The
    manifest comes first in the archive and names every file's digest, so the files are read twice,
    one at a time: a site was held whole in memory (144 MB for a site of 120 MB). Only the files the
    mapping changed (those with a credential in them) are kept between the two readings.
    """
    with site_files(site) as listed:
        if any(rel == MANIFEST for rel, _ in listed):
            raise ArchiveError(f"the site has a file named {MANIFEST}, which the snapshot needs for its manifest")
        entries: dict[str, tuple[int, str]] = {}
        mapped: dict[str, bytes] = {}
        for rel, path in listed:
            data = _read_file(rel, path)
            archived = data if redact is None else redact(rel, data)
            if archived != data:
                mapped[rel] = archived
            entries[rel] = (len(archived), hashlib.sha256(archived).hexdigest())

        def members() -> Iterator[tuple[str, bytes]]:
            yield MANIFEST, manifest_bytes(entries, counts() if counts is not None else None)
            for rel, path in listed:
                data = mapped.pop(rel, None)
                if data is None:
                    data = _read_file(rel, path)
                    if (len(data), hashlib.sha256(data).hexdigest()) != entries[rel]:
                        raise ArchiveError(f"{rel} in the site folder changed while it was archived; nothing was written")
                yield rel, data

        write_snapshot(members(), out, mtime)
    return entries


def read_snapshot(path: Path, whole: Whole = None) -> dict[str, bytes]:
    """Read a snapshot into memory without extracting it, checked against its manifest; `whole` as for `read_site`."""
    members: dict[str, bytes] = {}
    actual: dict[str, tuple[int, str]] = {}  # each member's size and SHA-256, as its manifest lists them
    total = 0
    try:
        with tarfile.open(path, mode="r:gz", encoding="utf-8") as tar:
            for member in tar:
                name = check_member_name(member.name)
                if member.isdir():
                    continue
                if not member.isreg():
                    raise ArchiveError(f"the snapshot holds a link or special file: {name}")
                if name in members:
                    raise ArchiveError(f"the snapshot holds {name} twice")
                total += member.size
                if total > MAX_SNAPSHOT_BYTES:
                    raise ArchiveError(f"the snapshot holds more than {MAX_SNAPSHOT_BYTES // 1024**3} GiB")
                handle = tar.extractfile(member)
                data = handle.read() if handle is not None else b""
                actual[name] = (len(data), hashlib.sha256(data).hexdigest())
                members[name] = data if name == MANIFEST else kept(name, data, whole)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"not a readable snapshot: {path} ({exc})") from None
    manifest = members.pop(MANIFEST, None)
    actual.pop(MANIFEST, None)
    if manifest is None or MARKER not in members:
        raise ArchiveError(f"not a snapshot of an agenthropic site (no {MANIFEST} or {MARKER}): {path}")
    try:
        expected = orjson.loads(manifest)
        if expected["format"] != MANIFEST_FORMAT:
            raise ArchiveError(f"unknown snapshot format {expected['format']!r}: {path}")
        listed: dict[str, tuple[int, str]] = {}
        for entry in expected["files"]:
            path, size, digest = entry["path"], entry["size"], entry["sha256"]
            # A path of another kind (5, null) was compared and sorted with the members' names: a traceback.
            if not isinstance(path, str) or type(size) is not int or not isinstance(digest, str):
                raise TypeError(f"an entry that is not a path, a size and a SHA-256: {entry!r:.80}")
            listed[path] = (size, digest)
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise ArchiveError(f"the snapshot's {MANIFEST} is malformed: {path} ({exc})") from None
    if listed != actual:
        differing = sorted(set(listed) ^ set(actual) | {rel for rel in set(listed) & set(actual) if listed[rel] != actual[rel]})
        raise ArchiveError(f"the snapshot does not match its manifest: {differing[0]}")
    return dict(sorted(members.items()))


def read_tree(path: Path, whole: Whole = None) -> dict[str, bytes]:
    """Read a site folder or a snapshot into {relative path: bytes}; `whole` as for `read_site`."""
    if path.is_dir():
        return read_site(path, whole)
    if path.is_file():
        return read_snapshot(path, whole)
    raise ArchiveError(f"no site folder or snapshot at {path}")


def default_snapshot_path(site: Path) -> Path:
    """Return `<site>-snapshot.tar.gz` beside the site folder, never inside it."""
    resolved = site.resolve()
    return resolved.parent / f"{resolved.name or 'site'}-snapshot.tar.gz"
