"""The SQLite cache: one transaction per session; the corpus is the truth, the cache saves time."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import itertools
import operator
import os
import sqlite3
import stat
from datetime import datetime
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Mapping, Sequence

import orjson

from agenthropic_site.cache.checkpoints import BodyShape, FilesIdentity, FileScanned, ParsedFile, ScanCheckpoint, last_start, spliced
from agenthropic_site.cache.schema import REQUEST_ID_INDEXES, SCHEMA, SCHEMA_VERSION
from agenthropic_site.config import ConfigError, is_inside, stale_cutoff
from agenthropic_site.corpus import FileRef
from agenthropic_site.errors import EXIT_FAILURES
from agenthropic_site.locks import take_lock
from agenthropic_site.parse.checkpoint import chunk_digest
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Message, ParsedSession, Tokens, message_from_row, message_row
from agenthropic_site.parse.session import REPLAYING_KINDS
from agenthropic_site.parse.tools import session_tool_calls
from agenthropic_site.places import CACHE_FILE
from agenthropic_site.records import record_class

SESSION_COLUMNS = (
    "session_id", "project", "source", "title", "title_source", "cwd", "git_branch", "versions", "started_at", "ended_at",
    "main_ended_at", "details",
)
# A re-read replaces what the transcripts said before: for an append-only file the new parse
# shows everything the old one did, and a file rewritten shorter shows what it holds now, as a
# cold build would. Status precedence (design: status lifecycle) is applied between the parse and
# the hook events, which are replayed onto these rows after every re-read (Cache.apply_event).
# The tables write_session writes only the changed rows of (`Cache._write_rows`): each one's key after the session, then its other columns.
AGENT_COLUMNS = (("agent_id",), ("position", "parent_agent_id", "kind", "edge_source", "agent_type", "description", "file", "status",
                 "outcome_cause", "notification_status", "spawn_tool_use_id", "first_seen_at", "last_seen_at", "has_transcript", "reported"))
EDGE_COLUMNS = (("parent", "child"), ("source", "tool_use_id"))
COMPACTION_COLUMNS = (("seq",), ("agent_id", "uuid", "at", "trigger", "pre_tokens", "post_tokens", "compaction_agent_id"))
PARSED_FILE_COLUMNS = (("rel",), ("size", "mtime_ns", "inode", "ctime_ns", "digest", "sidecar", "row_sum"))
# A usage row's columns in the table's order (schema.py), as `SELECT *` gives them and the row digests read them.
USAGE_COLUMNS = (
    "session_id", "seq", "agent_id", "message_id", "request_id", "model", "input", "output", "cache_read", "cache_write_5m", "cache_write_1h",
    "family", "cost", "cost_input", "cost_output", "cost_cache_read", "cost_cache_write_5m", "cost_cache_write_1h", "price_problem",
    "segment", "at", "speed", "file", "line", "under_reported", "origin_session",
)
QUARANTINE_AFTER = 3
MAX_QUARANTINE_BUILDS = 32
LOCK_FILE = "build.lock"
BUSY_TIMEOUT = 30.0  # seconds a statement waits for another process's write lock before the cache is "busy"
# The tables holding what a session's transcripts said, each sealed per session by a digest of its
# rows in `row_sums`: (columns, order), no columns meaning all. Transcript bodies have checksums of
# their own (too large to digest at every check): here only which agents have one, and its sum.
SEALED_TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "sessions": ((), "session_id"),
    "agents": ((), "agent_id"),
    "orchestration_edges": ((), "parent, child"),
    "token_usage": ((), "seq"),
    "compactions": ((), "seq"),
    "transcripts": (("agent_id", "body_sum"), "agent_id"),
}
BODY_PIECE = 1 << 20  # bytes of a stored transcript body a row holds (schema.py `transcript_pieces`)
MESSAGE_DIGEST_BYTES = 16  # of each stored message's digest (`message_digest`)
EMPTY_DIGEST = "no rows"
UNDECODABLE = "a text that is not UTF-8"  # never a digest: the rows are damaged
FAILURE_COLUMNS = "session_id, project, fingerprint, reason, consecutive, retry_at_build"
_IN_SESSIONS = "session_id IN (SELECT value FROM json_each(?))"
# The per-session tables views are computed from, each with the order its rows are read in.
_SESSION_ROW_ORDER = {
    "sessions": "session_id", "agents": "session_id, position", "orchestration_edges": "session_id, parent, child",
    "token_usage": "session_id, seq", "compactions": "session_id, seq",
}


def rows_digest(rows: list[tuple[Any, ...]]) -> str:
    """Digest rows as SQLite returned them: as JSON every value keeps its type (text quoted, numbers bare, a blob as its hex)."""
    # orjson, not repr(): the 60 MB session's 9,455 usage rows digest in 9-11 ms instead of 30-46 ms (schema 21).
    return hashlib.sha256(orjson.dumps(rows, default=_blob)).hexdigest()


def _blob(value: Any) -> dict[str, str]:
    """Write a blob where a text or number was stored (only damage puts one in these tables): unlike any text."""
    if isinstance(value, bytes):
        return {"blob": value.hex()}
    raise TypeError(f"a stored row cannot hold {type(value).__name__}")


def _moves(rows: list[tuple[Any, ...]], stored: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], list[tuple[tuple[Any, ...], int]]]:
    """Split usage rows to write (USAGE_COLUMNS) into those to insert and (stored row, new seq) pairs: a stored row equal to one but for its seq.

    A stored row is as `_digests` reads it (its session id, then USAGE_COLUMNS).
    """
    if not rows or not stored:
        return rows, []
    spare: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for was in stored:
        spare.setdefault(was[1:2] + was[3:], []).append(was)
    inserted, moved = [], []
    for row in rows:
        same = spare.get(row[:1] + row[2:])
        if same:
            moved.append((same.pop(), row[1]))
        else:
            inserted.append(row)
    return inserted, moved


def _dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


# A usage row's price as stored: family, cost, cost by category (input, output, cache read, cache
# writes 5m and 1h) as exact decimal text, and the problem; a row that cannot be priced has no
# family or cost and says why (whether that excludes its session depends on who owns the row).
PriceColumns = tuple[str | None, ...]
Priced = list[tuple[int, PriceColumns]]  # each usage row's seq and price
PRICE_COLUMNS = ("family", "cost", "cost_input", "cost_output", "cost_cache_read", "cost_cache_write_5m", "cost_cache_write_1h", "price_problem")
# What a row's price is a function of (ingest.py price_rows): its model, tokens, time and speed.
PRICED_BY = ("model", "input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "at", "speed")


@record_class(frozen=True)
class PricedRow:
    """A usage row as the pricing step sees it."""

    seq: int
    model: str
    tokens: Tokens
    at: str | None
    speed: str | None


class CacheError(ConfigError):
    """The cache folder cannot be used as it is (exit code 2): a part that is a file, a file that is a folder, no access."""


class CacheBusyError(CacheError):
    """Another build or program holds the cache and this build stopped waiting (watch mode: at once)."""


class CacheFullError(CacheError):
    """No space is left on the cache's device (exit code 1: the site is left whole)."""

    # Like a full output folder: nothing is lost, the site is whole and the cache consistent.
    exit_code = EXIT_FAILURES

    def line(self) -> str:
        """Say what to do, and that nothing was lost."""
        return f"agenthropic: {self}; the site was left whole: free some space and build again"


class CacheDamaged(Exception):
    """Stored rows failed their checksum: the build forgets them and starts again, deriving them anew.

    `forget` holds ("session", id): its rows, read again from the corpus; ("view", id): its stored
    view; ("svg", digest): a drawn graph. Raised where a row cannot be derived again on the spot
    (a render worker, a session's rows), and picklable, so a worker's reaches the build.
    """

    def __init__(self, what: str, forget: tuple[tuple[str, str], ...]) -> None:
        super().__init__(what, forget)
        self.what = what
        self.forget = forget

    def __str__(self) -> str:
        return self.what


def transcript_damaged(session_id: str) -> CacheDamaged:
    """Say that a stored transcript of a session is not as written: the session is read again from the corpus."""
    return CacheDamaged(f"the stored transcript of an agent of session {session_id}", (("session", session_id),))


# SQLite's answers that say the cache cannot be used now, as opposed to damage (which is rebuilt).
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_ACCESS_CODES = (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH,
                 sqlite3.SQLITE_NOLFS, sqlite3.SQLITE_NOMEM)
_ACCESS_TEXTS = ("disk I/O error", "attempt to write a readonly database", "unable to open database file", "out of memory")


def cache_problem(exc: sqlite3.Error, folder: Path) -> CacheError | None:
    """Return the error an SQLite failure means for the user, or None when it means damage (rebuild the cache).

    A lock another process holds is "busy" and a full disk is "full": deleting the cache would
    not help, and a busy cache is someone else's work in progress.
    """
    code = getattr(exc, "sqlite_errorcode", None)  # lost when a worker's error was pickled: the text says it too
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in _BUSY_CODES or text.startswith(("database is locked", "database table is locked")):
        return CacheBusyError(
            f"the cache in {folder} is in use by another process ({text}); it was left as it is: build again when that process is done"
        )
    if primary == sqlite3.SQLITE_FULL or text.startswith("database or disk is full") or (
        # A full disk shows as an I/O error when SQLite cannot grow its shared-memory file.
        (primary == sqlite3.SQLITE_IOERR or text.startswith("disk I/O error")) and _no_space(folder)
    ):
        return CacheFullError(f"no space left for the cache in {folder} ({text})")
    if primary in _ACCESS_CODES or text.startswith(_ACCESS_TEXTS):
        return CacheError(f"cannot use the cache in {folder} ({text})")
    return None


def _no_space(folder: Path) -> bool:
    """Tell whether the device of a folder has no space left."""
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


def os_problem(exc: OSError, what: str) -> CacheError:
    """Return the one-line error for a file-system failure while setting up or writing the cache."""
    if exc.errno == errno.ENOSPC:
        return CacheFullError(f"no space left for the cache: {what} ({exc.strerror})")
    return CacheError(f"{what}: {exc.strerror or exc}")


def cache_os_problem(exc: OSError, folder: Path) -> CacheError | None:
    """Return the one-line error for a file-system failure in the cache folder, or None when it happened elsewhere."""
    in_folder = isinstance(exc.filename, str) and is_inside(Path(exc.filename), folder)
    if in_folder or (exc.filename is None and exc.errno == errno.ENOSPC and _no_space(folder)):
        return os_problem(exc, f"cannot write in the cache folder {folder}")
    return None


def _sum(*parts: str | bytes | bytearray | memoryview | int | None) -> str:
    """Return the checksum kept beside a stored row (over its key and its values)."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, (bytes, bytearray, memoryview)):
            # The same bytes as the other kinds' (length, tag, value), without copying a large value twice.
            digest.update((len(part) + 1).to_bytes(8, "big") + b"b")
            digest.update(part)
            continue
        if part is None:
            data = b"n"
        elif isinstance(part, int):
            data = b"i" + str(part).encode()
        else:
            data = b"s" + part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _body_sum(session_id: str, agent_id: str, piece_sums: Sequence[str], digests: bytes | bytearray) -> str:
    """Return a stored body's checksum: over its pieces' checksums in order (`_pieces`) and its messages' digests."""
    return _sum(session_id, agent_id, "".join(piece_sums), digests)


def _pieces(session_id: str, agent_id: str, first: int, data: bytes | bytearray) -> list[tuple[int, memoryview, str]]:
    """Cut a body's bytes from piece `first` on into pieces of BODY_PIECE bytes (one at least): each with its index and checksum."""
    view = memoryview(data)
    pieces = []
    for number in range(max(1, -(-len(view) // BODY_PIECE))):
        part = view[number * BODY_PIECE : (number + 1) * BODY_PIECE]
        pieces.append((first + number, part, _sum(session_id, agent_id, first + number, part)))
    return pieces


def _view_row_sound(session_id: str, excluded: int, body_sum: str, summary_sum: str, row_sum: str) -> bool:
    return row_sum == _sum(session_id, excluded, body_sum, summary_sum)


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already (it does on a full disk)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def delete_cache_files(folder: Path) -> None:
    """Delete the cache database and its WAL files (never the lock, which a waiting build holds open)."""
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{folder / CACHE_FILE}{suffix}")
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise os_problem(exc, f"cannot delete the damaged cache file {folder / CACHE_FILE}{suffix}") from None


def _make_folder(folder: Path) -> None:
    """Create the cache folder (0700), or say in one line why it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except FileExistsError:
        raise CacheError(f"the cache folder {folder} is a file, not a folder; choose another --cache") from None
    except OSError as exc:
        raise os_problem(exc, f"cannot create the cache folder {folder}") from None


def _get_meta(conn: sqlite3.Connection, key: str) -> tuple[str | None, bool]:
    """Return a stored setting (None when absent) and whether it failed its checksum."""
    row = conn.execute("SELECT value, value_sum FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None, False
    if row[1] != _sum(key, row[0]):
        return None, True
    return row[0], False


def _put_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value, value_sum) VALUES (?, ?, ?)", (key, value, _sum(key, value)))


class Cache:
    """A connection to the cache file with the operations the build needs.

    Damage found in a row as it is read is noted in `repairs` (one short phrase each) and derived
    again on the spot when it can be, else raised as CacheDamaged for the build to start again.
    """

    def __init__(
        self, folder: Path, wait: bool = True, repairs: list[str] | None = None,
    ) -> None:
        _make_folder(folder)
        self.path = folder / CACHE_FILE
        self.rebuilt_reason: str | None = None
        self.repairs = repairs if repairs is not None else []
        self.read_only = False
        # False while the file is new and its requests are not indexed by id (schema.REQUEST_ID_INDEXES):
        # it holds only what this build writes.
        self.request_ids_indexed = True
        self._remember_nothing()
        self._lock: int | None = self._acquire(folder / LOCK_FILE, wait)
        try:
            self.conn = self._open()
        except BaseException:
            os.close(self._lock)  # else a build that starts again in this process waits for itself
            raise

    @classmethod
    def reader(cls, folder: Path) -> Cache:
        """Open the cache of a running build for reading only (a render worker of that build)."""
        cache = cls.__new__(cls)
        cache.path = folder / CACHE_FILE
        cache.rebuilt_reason = None
        cache.repairs = []
        cache.read_only = True  # damage is raised to the build, which repairs it
        cache.request_ids_indexed = True  # as far as a reader asks: the build made them before its workers read
        cache._lock = None  # the build that started this worker holds it
        cache._remember_nothing()  # the build writes no sealed row while its workers read
        cache.conn = sqlite3.connect(cache.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        cache.conn.execute("PRAGMA query_only=ON")
        return cache

    def _remember_nothing(self) -> None:
        """Start a connection with nothing checked or remembered of the file."""
        # The (session, table) pairs whose rows this process checked or sealed since it last changed
        # them: only this build writes the cache while it holds the lock, so a second check of the
        # same rows in one build would read them again for nothing (a 54 MB session: 0.2 s a time).
        # A transaction's own seals count once it commits.
        self._sound: set[tuple[str, str]] = set()
        self._sound_pending: set[tuple[str, str]] | None = None
        self._flat_owners: dict[str, tuple[int, int, int, int, str | None, str]] | None = None  # read on first use (flat_owner)
        # The last answer of shared_requests, with the sessions asked about and what had changed the
        # file then (this connection's changed rows, other connections' commits): asked again before
        # any row changed, it holds (an append asks three times in a row after writing its session:
        # 10 ms each for a 60 MB session).
        self._linked: tuple[tuple[int, int], str, list[tuple[str | None, str | None, str, str | None]]] | None = None
        # The usage rows of the one session last checked, with the mark of the cache's contents they were read at (_stored_usage).
        self._usage_read: tuple[tuple[int, int], str, list[tuple[Any, ...]]] | None = None
        # The usage rows of the one session last written, as its write left them (as `_digests` reads them), with the mark after it (`usage_table`).
        self._usage_written: tuple[tuple[int, int], str, list[tuple[Any, ...]]] | None = None
        # The one session last found sharing no request, with that mark; then, once written, the
        # message and request ids of the usage rows its write changed, with the mark after it
        # (only those can share a request now: _linked_rows).
        self._alone: tuple[tuple[int, int], str] | None = None
        self._written_alone: tuple[tuple[int, int], str, list[str], list[str]] | None = None
        # Whether every session holding usage rows was sound, with the mark of the file and the count of sound pairs then.
        self._holders_sound: tuple[tuple[tuple[int, int], int], bool] | None = None

    @classmethod
    def discard(cls, folder: Path, wait: bool = True) -> None:
        """Delete a damaged cache file under the lock (never under another build's feet)."""
        lock = cls._acquire(folder / LOCK_FILE, wait)
        try:
            delete_cache_files(folder)
        finally:
            os.close(lock)

    @staticmethod
    def _acquire(path: Path, wait: bool) -> int:
        """Hold the cache for one build at a time; a second build waits and says so (or gives up)."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except IsADirectoryError:
            raise CacheError(f"the cache lock {path} is a folder, not a file; remove it or choose another --cache") from None
        except OSError as exc:
            raise os_problem(exc, f"cannot open the cache lock {path}") from None
        try:
            take_lock(fd, True, f"another build is using the cache in {path.parent}; waiting for it to finish", wait)
        except BlockingIOError:
            os.close(fd)
            raise CacheBusyError(f"another build is using the cache in {path.parent}") from None
        return fd

    def _open(self) -> sqlite3.Connection:
        self._check_file()
        if self.path.exists():
            conn, reason = self._open_existing()
            if conn is not None:
                try:
                    # A new file whose build stopped before its first ingest ended has no such indexes yet.
                    conn.executescript(REQUEST_ID_INDEXES)
                except sqlite3.DatabaseError as exc:
                    conn.close()
                    raise cache_problem(exc, self.path.parent) or exc from None
                return conn
            self._delete_files()
            self.rebuilt_reason = reason  # None for damage: the build reports that in its last line
        try:
            conn = self._connect()
            with conn:  # executescript commits on its own; the `with` commits the schema version after it
                conn.executescript(SCHEMA)
                _put_meta(conn, "schema_version", str(SCHEMA_VERSION))
        except sqlite3.DatabaseError as exc:
            raise cache_problem(exc, self.path.parent) or exc from None
        self.request_ids_indexed = False
        return conn

    def index_request_ids(self) -> None:
        """Index a new file's requests by their ids, once its first ingest has written them (schema.REQUEST_ID_INDEXES)."""
        if not self.request_ids_indexed:
            self.conn.executescript(REQUEST_ID_INDEXES)
            self.request_ids_indexed = True

    def _open_existing(self) -> tuple[sqlite3.Connection | None, str | None]:
        """Open the cache file when it is of this version and its header is sound, else say why it is rebuilt."""
        conn = None
        damage = None
        try:
            conn = self._connect()
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None or row[0] != str(SCHEMA_VERSION):
                conn.close()
                return None, "cache of another version"
            if _get_meta(conn, "schema_version") == (str(SCHEMA_VERSION), False):
                # Deeper damage is found as rows are read (their checksums) or shows up as a
                # DatabaseError, and build.run_build repairs it; a full check here would read it all.
                return conn, ""
            damage = "its schema version fails its checksum"
        except sqlite3.DatabaseError as exc:
            problem = cache_problem(exc, self.path.parent)
            if problem is not None:
                if conn is not None:
                    conn.close()
                raise problem from None
            damage = str(exc)
        if conn is not None:
            conn.close()
        self._note(f"the cache file: {damage}")
        return None, None

    def _check_file(self) -> None:
        """Refuse a cache file that is not a regular file (a folder in its place): deleting it is not ours to do."""
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise os_problem(exc, f"cannot look at the cache file {self.path}") from None
        if stat.S_ISDIR(mode):
            raise CacheError(f"the cache file {self.path} is a folder, not a file; remove it or choose another --cache")
        if not stat.S_ISREG(mode):
            raise CacheError(f"the cache file {self.path} is not a regular file; remove it or choose another --cache")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            os.chmod(self.path, 0o600)
        except OSError as exc:
            conn.close()
            raise os_problem(exc, f"cannot use the cache file {self.path}") from None
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _delete_files(self) -> None:
        delete_cache_files(self.path.parent)

    def close(self) -> None:
        """Close the connection and let the next build in."""
        self.conn.close()
        if self._lock is not None:
            os.close(self._lock)

    # -- checksums ------------------------------------------------------------------------------

    def _note(self, what: str) -> None:
        """Remember a damaged row that was derived again (reported in one line at the end of the build)."""
        if what not in self.repairs:
            self.repairs.append(what)

    def _damaged(self, what: str, forget: tuple[tuple[str, str], ...]) -> None:
        """Note damage this connection derives again on the spot, or raise it to the build from a reader."""
        if self.read_only:
            raise CacheDamaged(what, forget)
        self._note(what)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block as one write transaction: committed when it ends, rolled back when anything raises."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")  # the write lock first: no other writer can slip in between reads and writes
        self._sound_pending = set()
        try:
            yield conn
            conn.execute("COMMIT")
            self._sound |= self._sound_pending
        except BaseException:
            _rollback(conn)
            raise
        finally:
            self._sound_pending = None

    def _meta(self, key: str) -> str | None:
        """Return a stored setting; one that fails its checksum is noted and taken as absent (derived again)."""
        value, damaged = _get_meta(self.conn, key)
        if damaged and not self.read_only:
            self._note(f"a stored setting ({key})")
        return value

    def _set_meta(self, key: str, value: str) -> None:
        _put_meta(self.conn, key, value)

    def _digests(self, table: str, session_ids: list[str]) -> dict[str, str]:
        """Digest each session's rows in one table exactly as stored (no rows: no entry; text that no longer decodes: UNDECODABLE)."""
        columns, order = SEALED_TABLES[table]
        sql = (f"SELECT session_id, {', '.join(columns) or '*'} FROM {table} "
               f"WHERE session_id IN (SELECT value FROM json_each(?)) ORDER BY session_id, {order}")
        try:
            rows = self.conn.execute(sql, (orjson.dumps(sorted(session_ids)).decode(),)).fetchall()
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):  # "Could not decode to UTF-8 column ...": a damaged byte in a text
                raise
            if len(session_ids) == 1:
                return {session_ids[0]: UNDECODABLE}
            return {sid: digest for one in session_ids for sid, digest in self._digests(table, [one]).items()}
        if table == "token_usage" and len(session_ids) == 1:
            # The session about to be written has just been checked (`neighbours`): `_write_usage` compares with these.
            self._usage_read = (self._changes(), session_ids[0], rows)
        return {sid: rows_digest(list(group)) for sid, group in itertools.groupby(rows, key=lambda row: row[0])}

    def _seal(self, session_id: str, tables: tuple[str, ...] = (), known: dict[str, str] | None = None) -> None:
        """Record the digest of a session's rows (in the caller's transaction, after writing them); `known`: digests made as they were written."""
        known = known or {}
        self.conn.executemany(
            "INSERT OR REPLACE INTO row_sums VALUES (?, ?, ?)",
            [(session_id, table, known[table] if table in known else self._digests(table, [session_id]).get(session_id, EMPTY_DIGEST))
             for table in tables or SEALED_TABLES],
        )
        self._checked([(session_id, table) for table in tables or SEALED_TABLES])

    def _checked(self, pairs: list[tuple[str, str]]) -> None:
        """Note rows as sound: at once outside a transaction, when it commits inside one."""
        (self._sound if self._sound_pending is None else self._sound_pending).update(pairs)

    def verify_sessions(self, session_ids: list[str], tables: tuple[str, ...] = ()) -> None:
        """Raise CacheDamaged naming every one of these sessions whose rows are not as written (no rows and no digest is sound)."""
        ids = sorted(set(session_ids))
        if not ids:
            return
        stored = {
            (sid, table): digest for sid, table, digest in self.conn.execute(
                "SELECT session_id, tbl, digest FROM row_sums WHERE session_id IN (SELECT value FROM json_each(?))",
                (orjson.dumps(ids).decode(),),
            )
        }
        damaged: set[str] = set()
        for table in tables or SEALED_TABLES:
            unchecked = [sid for sid in ids if (sid, table) not in self._sound]
            found = self._digests(table, unchecked) if unchecked else {}
            bad = {sid for sid in unchecked if stored.get((sid, table), EMPTY_DIGEST) != found.get(sid, EMPTY_DIGEST)}
            self._checked([(sid, table) for sid in unchecked if sid not in bad])
            damaged |= bad
        if damaged:
            first = min(damaged)
            named = first if len(damaged) == 1 else f"{first} and {len(damaged) - 1} more"
            raise CacheDamaged(f"the stored rows of session {named}", tuple(("session", sid) for sid in sorted(damaged)))

    def verify_for_views(self, session_ids: list[str]) -> None:
        """Check the rows a view of these sessions is computed from: theirs and those of every session sharing a request."""
        self.verify_sessions(session_ids)
        if self._every_holder_sound():
            # Whichever session shares a request is sound: it is not looked for (a cold build wrote
            # every session; 500 sessions: 0.13 s, in this process before the views' workers start).
            return
        self.verify_sessions(sorted({row[2] for row in self.shared_requests(session_ids)} - set(session_ids)))

    def _every_holder_sound(self) -> bool:
        """Tell whether every session holding usage rows had all its rows checked or written by this build (asked again only after a change)."""
        mark = (self._changes(), len(self._sound))
        if self._holders_sound is None or self._holders_sound[0] != mark:
            def sound(ids: list[str]) -> bool:
                return all((sid, table) in self._sound for sid in ids for table in SEALED_TABLES)

            # The sessions table first (an append checked one session: the answer is no at once), then
            # the rows' own session ids: rows left without their session (damage) would be shared
            # requests of an unchecked holder.
            answer = sound(self.session_ids()) and sound([row[0] for row in self.conn.execute("SELECT DISTINCT session_id FROM token_usage")])
            self._holders_sound = (mark, answer)
        return self._holders_sound[1]

    def forget_damaged(self, forget: tuple[tuple[str, str], ...]) -> None:
        """Drop what failed its checksum, so that the build derives it again.

        A session's rows go with its checkpoint (it is read again from the corpus), and with them
        every stored view (another session's view may have counted a request of this one) and its
        layouts (a memo, which may be what misled the read: render/facts.py).
        """
        with self.transaction() as conn:
            for kind, key in forget:
                if kind == "session":
                    self._delete_rows(key)
                    conn.execute("DELETE FROM views")
                    conn.execute("DELETE FROM layouts WHERE session_id = ?", (key,))
                elif kind == "view":
                    conn.execute("DELETE FROM views WHERE session_id = ?", (key,))
                elif kind == "svg":
                    conn.execute("DELETE FROM svg_cache WHERE digest = ?", (key,))
            # The next attempt renders: no folder is taken as current for this cache.
            conn.execute("DELETE FROM meta WHERE key = 'site_signature'")

    def invalidate_unless(self, inputs_digest: str) -> bool:
        """Forget every checkpoint when the tool version changed; return whether it did."""
        known = self._meta("inputs_digest")
        if known == inputs_digest:
            return False
        with self.transaction():
            self.conn.execute("DELETE FROM ingest_checkpoints")
            self.conn.execute("DELETE FROM parsed_files")
            # Derived by the code too: views, the sizes of rendered messages, the usage windows carried forward.
            self.conn.execute("DELETE FROM views")
            self.conn.execute("DELETE FROM layouts")
            self.conn.execute("DELETE FROM scan_checkpoints")
            self.conn.execute("DELETE FROM checkpoint_chunks")
            self.conn.execute("DELETE FROM meta WHERE key IN ('usage_state', 'project_insights')")
            self._set_meta("inputs_digest", inputs_digest)
        return known is not None

    def flat_owner(self, ref: FileRef) -> tuple[bool, str | None]:
        """Return (known, session id) for a flat agent file as lstat saw it."""
        if self._flat_owners is None:
            # Every row at once: a corpus of the flat layout has one per sub-agent (579 lookups: 5 -> 1 ms).
            self._flat_owners = {row[0]: row[1:] for row in self.conn.execute(
                "SELECT rel, size, mtime_ns, inode, ctime_ns, session_id, row_sum FROM flat_owners")}
        row = self._flat_owners.get(ref.rel)
        if row is None or row[:4] != (ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns):
            return False, None
        if row[5] != _sum(ref.rel, ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns, row[4]):
            self._note("the stored session of a flat agent file")
            return False, None  # read again; put_flat_owner replaces the row
        return True, row[4]

    def put_flat_owner(self, ref: FileRef, session_id: str | None) -> None:
        """Remember which session a flat agent file names, keyed by its lstat signature."""
        signature = (ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns)
        row_sum = _sum(ref.rel, *signature, session_id)
        self.conn.execute("INSERT OR REPLACE INTO flat_owners VALUES (?,?,?,?,?,?,?)", (ref.rel, *signature, session_id, row_sum))
        if self._flat_owners is not None:
            self._flat_owners[ref.rel] = (*signature, session_id, row_sum)

    # -- ingest -------------------------------------------------------------------------------

    def checkpoints(self) -> dict[str, str]:
        """Return the fingerprint of every session projected successfully (a checkpoint that fails its checksum is dropped)."""
        return {session_id: fingerprint for session_id, (fingerprint, _) in self.identities().items()}

    def identities(self) -> dict[str, tuple[str, str]]:
        """Return the fingerprint and shape of every session projected successfully, as its files were when it was parsed.

        A checkpoint or failure record that fails its checksum is dropped first: its session is
        then read again from the corpus in this build.
        """
        found = {}
        damaged = []
        for rowid, session_id, fingerprint, shape, row_sum in self.conn.execute(
            "SELECT rowid, session_id, fingerprint, shape, row_sum FROM ingest_checkpoints"
        ):
            if row_sum == _sum(session_id, fingerprint, shape):
                found[session_id] = (fingerprint, shape)
            else:
                damaged.append(rowid)
        if damaged:
            self.conn.executemany("DELETE FROM ingest_checkpoints WHERE rowid = ?", [(rowid,) for rowid in damaged])
            self._note(f"the stored checkpoints of {len(damaged)} session(s)")
        self._drop_damaged_failures()
        return found

    def _drop_damaged_failures(self) -> None:
        """Delete failure records that fail their checksum: their sessions are read again."""
        damaged = [
            (rowid,) for rowid, *row, row_sum in self.conn.execute(f"SELECT rowid, {FAILURE_COLUMNS}, row_sum FROM ingest_failures")
            if row_sum != _sum(*row)
        ]
        if damaged:
            self.conn.executemany("DELETE FROM ingest_failures WHERE rowid = ?", damaged)
            self._note(f"the stored failure records of {len(damaged)} session(s)")

    def _update_failures(self, assignment: str) -> None:
        """Change every failure record and write its checksum again (in the caller's transaction; damaged ones go first)."""
        self._drop_damaged_failures()
        self.conn.execute(f"UPDATE ingest_failures SET {assignment}")
        rows = self.conn.execute(f"SELECT rowid, {FAILURE_COLUMNS} FROM ingest_failures").fetchall()
        self.conn.executemany("UPDATE ingest_failures SET row_sum = ? WHERE rowid = ?", [(_sum(*row), rowid) for rowid, *row in rows])

    def parsed_files(self, session_id: str, sidecars_only: bool = False) -> dict[str, ParsedFile]:
        """Return each file the session's last parse read whole, by path: its lstat then, the digest of its bytes, a small sidecar's bytes.

        A row that fails its checksum is left out (and reported): its file is then not known, and the session is parsed.
        `sidecars_only`: only the files whose bytes are kept (the 60 MB session's 734 sidecars of its 1,533 files).
        """
        found = {}
        for rel, size, mtime_ns, inode, ctime_ns, digest, sidecar, row_sum in self.conn.execute(
            "SELECT rel, size, mtime_ns, inode, ctime_ns, digest, sidecar, row_sum FROM parsed_files WHERE session_id = ?"
            + (" AND sidecar IS NOT NULL" if sidecars_only else ""), (session_id,),
        ):
            sidecar = None if sidecar is None else bytes(sidecar)
            if row_sum == _sum(session_id, rel, size, mtime_ns, inode, ctime_ns, digest, sidecar):
                found[rel] = (FileRef(rel, size, mtime_ns, inode, ctime_ns), digest, sidecar)
            else:
                self._damaged(f"the stored file digests of session {session_id}", (("session", session_id),))
        return found

    def adopt(self, session_id: str, fingerprint: str, shape: str, read: Sequence[ParsedFile]) -> None:
        """Take a session's files as they are now, each in `read` as Cache.parsed_files gave it: the paths, sizes and bytes of its last parse, new lstats."""
        with self.transaction() as conn:
            conn.execute("UPDATE ingest_checkpoints SET fingerprint = ?, row_sum = ? WHERE session_id = ?",
                         (fingerprint, _sum(session_id, fingerprint, shape), session_id))
            self._insert_parsed_files(session_id, read)
            self._restat_checkpoints(session_id, read)

    def _restat_checkpoints(self, session_id: str, read: Sequence[ParsedFile]) -> None:
        """Give each scan checkpoint of a whole file taken as it is the file's new lstat: the next append opens only the file it changes."""
        now = {ref.rel: (ref, digest) for ref, digest, _ in read}
        updates = []
        for rowid, *values, row_sum in self.conn.execute(
            "SELECT rowid, session_id, rel, agent_id, size, mtime_ns, inode, ctime_ns, scanned, scanned_digest, body_sum, body_len, body_last, "
            "state, row_sum FROM scan_checkpoints WHERE session_id = ?", (session_id,),
        ).fetchall():
            values[12] = bytes(values[12])
            ref, digest = now.get(values[1], (None, None))
            if ref is None or row_sum != _sum(*values) or (values[7], values[8]) != (ref.size, digest):
                continue  # damaged (read from its start next time), or it covers part of the file
            values[3:7] = [ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns]
            updates.append((ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns, _sum(*values), rowid))
        self.conn.executemany("UPDATE scan_checkpoints SET size = ?, mtime_ns = ?, inode = ?, ctime_ns = ?, row_sum = ? WHERE rowid = ?", updates)

    def _insert_parsed_files(self, session_id: str, read: Sequence[ParsedFile]) -> None:
        rows = [(ref.rel, ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns, digest, sidecar) for ref, digest, sidecar in read]
        self._write_rows("parsed_files", session_id, PARSED_FILE_COLUMNS, [(*row, _sum(session_id, *row)) for row in rows])

    def _write_rows(self, table: str, sid: str, columns: tuple[tuple[str, ...], tuple[str, ...]], rows: list[tuple[Any, ...]]) -> None:
        """Make a session's rows of a table these, `columns` (key, then the others) in order, writing only the rows that differ.

        An append leaves almost every row of a session as it was: the 60 MB session's 798 agents,
        797 edges and 1,533 parsed files were deleted and inserted again at every append. A stored
        row equal to the one to write holds what writing it would store (each column's affinity
        maps equal Python values to one stored value). A row is updated in place, never deleted
        first (agents name their parents); the rows no longer there are unlinked, then deleted.
        """
        key, values = columns
        width = len(key)
        names = ", ".join(key + values)
        stored = {row[:width]: row for row in self.conn.execute(f"SELECT {names} FROM {table} WHERE session_id = ?", (sid,))}
        changed = [row for row in rows if stored.pop(row[:width], None) != row]
        self.conn.executemany(
            f"INSERT INTO {table} (session_id, {names}) VALUES ({', '.join('?' * (1 + len(key) + len(values)))}) "
            f"ON CONFLICT (session_id, {', '.join(key)}) DO UPDATE SET {', '.join(f'{name} = excluded.{name}' for name in values)}",
            [(sid, *row) for row in changed],
        )
        # Then the rows gone: no row written names one as its parent, but they may name each other.
        where = " AND ".join(f"{name} = ?" for name in ("session_id", *key))
        gone = [(sid, *row_key) for row_key in sorted(stored)]
        if gone and table == "agents":
            self.conn.executemany(f"UPDATE agents SET parent_agent_id = NULL WHERE {where}", gone)
        self.conn.executemany(f"DELETE FROM {table} WHERE {where}", gone)

    def write_session(self, parsed: ParsedSession, files: FilesIdentity, priced: Priced, scanned: dict[str, FileScanned] | None = None,
                      used: dict[str, ScanCheckpoint] | None = None, encoded: Mapping[str, EncodedMessages] | None = None) -> None:
        """Replace everything cached for one session, priced, in a single transaction (all or nothing).

        With the files as they were read (`scanned`, by path) and the checkpoints the parse carried
        on from (`used`, by agent), the transcripts scanned from one are spliced onto their stored
        bodies and the session's new checkpoints are kept. `encoded`: transcripts a parse worker
        encoded (`encode_messages`), in place of their lists in `parsed.transcripts`.
        """
        with self.transaction() as conn:
            # Taken first: the rows read to check them just before are still the stored ones only until something is written.
            stored_usage = self._stored_usage(parsed.session_id)
            alone, self._alone, self._written_alone = self._alone == (self._changes(), parsed.session_id), None, None
            # The tables written row by row below (only the rows that differ) are not emptied first.
            self._delete_rows(parsed.session_id, keep=("sessions", "transcripts", "scan_checkpoints", "checkpoint_chunks", "token_usage", "agents",
                                                       "orchestration_edges", "compactions", "parsed_files"))
            details = {
                "warnings": [[w.code, w.message, w.agent_id] for w in parsed.warnings],
                "line_errors": [[e.file, e.line, e.code, e.message] for e in parsed.line_errors],
                "unknown_types": parsed.unknown_types,
                "pending_lines": parsed.pending_lines,
                "prompts": parsed.prompts,
                "main_state": parsed.main_state,
                "under_reported": parsed.under_reported,
                # Each agent's tool calls, kept with the session so a project's figures never load a transcript.
                "tools": session_tool_calls(parsed.tool_calls, (a.agent_id for a in parsed.agents if a.kind in REPLAYING_KINDS)),
            }
            conn.execute(
                "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET "
                + ", ".join(f"{column} = excluded.{column}" for column in SESSION_COLUMNS[1:]),
                (
                    parsed.session_id, parsed.project, files.source, parsed.title, parsed.title_source, parsed.cwd,
                    parsed.git_branch, _dumps(parsed.versions), parsed.started_at, parsed.ended_at, parsed.main_ended_at,
                    _dumps(details),
                ),
            )
            usage_digest, written, usage_now = self._write_usage(parsed.session_id, _usage_rows(parsed, priced), stored_usage)  # after its session row
            shapes = self._insert_detail(parsed, used or {}, encoded or {})
            self._insert_checkpoints(parsed, shapes, scanned or {}, used or {})
            identity = (parsed.session_id, files.fingerprint, files.shape)
            conn.execute("INSERT INTO ingest_checkpoints VALUES (?, ?, ?, ?)", (*identity, _sum(*identity)))
            self._insert_parsed_files(parsed.session_id, files.read)
            conn.execute("DELETE FROM ingest_failures WHERE session_id = ?", (parsed.session_id,))
            self._seal(parsed.session_id, known={"token_usage": usage_digest})
        self._usage_written = (self._changes(), parsed.session_id, usage_now)
        if alone:
            message_ids, request_ids = (sorted({row[column] for row in written if row[column] is not None}) for column in (_MESSAGE_ID, _REQUEST_ID))
            self._written_alone = (self._changes(), parsed.session_id, message_ids, request_ids)

    def _insert_detail(self, parsed: ParsedSession, used: dict[str, ScanCheckpoint], encoded: Mapping[str, EncodedMessages]) -> dict[str, BodyShape]:
        """Write a session's agents, edges, compactions and changed transcripts; return the shape of each body written or kept.

        `encoded`: transcripts encoded already (`encode_messages`, where the session was parsed), in place of `parsed.transcripts`' lists.
        """
        conn, sid = self.conn, parsed.session_id
        # In tree order, parents first: a row's parent is in the table when the row is written (the foreign key).
        self._write_rows("agents", sid, AGENT_COLUMNS, [
            (a.agent_id, position, a.parent_agent_id, a.kind, a.edge_source, a.agent_type, a.description, a.file,
             a.status, a.outcome_cause, a.notification_status, a.spawn_tool_use_id, a.first_seen_at, a.last_seen_at,
             int(a.has_transcript), None if a.reported is None else _dumps(a.reported))
            for position, a in enumerate(parsed.agents)
        ])
        self._write_rows("orchestration_edges", sid, EDGE_COLUMNS, [(e.parent, e.child, e.source, e.tool_use_id) for e in parsed.edges])
        self._write_rows("compactions", sid, COMPACTION_COLUMNS, [
            (seq, c.agent_id, c.uuid, c.timestamp, c.trigger, c.pre_tokens, c.post_tokens, c.compaction_agent_id)
            for seq, c in enumerate(parsed.compactions)
        ])
        # Only the transcripts that changed are written (an append to a 60 MB session changes one of
        # its hundreds), one body at a time: its bodies would otherwise all be alive at once in a list.
        stored = dict(conn.execute("SELECT agent_id, body_sum FROM transcripts WHERE session_id = ?", (sid,)).fetchall())
        conn.executemany("DELETE FROM transcripts WHERE session_id = ? AND agent_id = ?",
                         [(sid, agent_id) for agent_id in sorted(set(stored) - set(parsed.transcripts) - set(encoded) - set(parsed.tails))])
        # Scanned from a checkpoint with no message after the stored ones: the body stands as it is.
        encoded = dict(encoded)  # each body taken (popped) as it is written: one alive at a time
        shapes = {agent_id: BodyShape(checkpoint.body_sum, checkpoint.body_len, checkpoint.body_last)
                  for agent_id, checkpoint in used.items()
                  if agent_id in parsed.tails and not (encoded[agent_id].count if agent_id in encoded else parsed.transcripts.get(agent_id))}

        for agent_id in sorted({*parsed.transcripts, *encoded}):
            if agent_id in shapes:
                continue
            made = encoded.pop(agent_id, None) or encode_messages(parsed.transcripts[agent_id])
            body: bytes | bytearray = made.body  # from piece `first` on: the pieces before it stand as stored
            digests, last_len = made.digests, made.last_len
            many = made.count >= 2
            del made  # the body's only reference is `body`, dropped once written
            first = 0
            kept_sums: list[str] = []  # the checksums of the stored pieces that stand: none for a body written whole
            if agent_id in parsed.tails:
                keep = used[agent_id].body_last if parsed.tails[agent_id] else used[agent_id].body_len - 1
                first, kept_sums, body, digests = self._spliced(sid, agent_id, used[agent_id], keep, body, digests, replaced=parsed.tails[agent_id])
                many = many or keep > 1
            pieces = _pieces(sid, agent_id, first, body)
            body_sum = _body_sum(sid, agent_id, [*kept_sums, *(piece_sum for _, _, piece_sum in pieces)], digests)
            body_len = first * BODY_PIECE + len(body)
            shapes[agent_id] = BodyShape(body_sum, body_len, last_start(body_len, last_len, many))
            if stored.get(agent_id) != body_sum:
                self._put_body(sid, agent_id, pieces, digests, body_sum, first if agent_id in stored else 0)
            del body, pieces  # one body alive at a time
        return shapes

    def _write_usage(self, sid: str, rows: list[tuple[Any, ...]], stored: list[tuple[Any, ...]] | None
                     ) -> tuple[str, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """Make a session's stored usage rows (`stored`, from `_stored_usage`) these, writing only those that differ.

        Return their digest, the rows written, and every row as stored now (as `_digests` reads them, in seq order).

        A row's seq is its file's place and its own among that file's requests (parse/usage.py
        usage_key), so an append to a transcript leaves every stored row as it was but the new ones:
        the 60 MB session's 9,455 rows were deleted and inserted again at every append (0.13 s).
        A stored row equal to the one to write holds what writing it would store (every column's
        affinity maps equal Python values to one stored value); one damaged, or unreadable, is written.
        The digest (`_seal`'s) is made of the rows kept as read and the rows written as read back.

        A new file that sorts before others moves the seq of every later file's rows: a stored row
        equal to one to write but for its seq is moved to it (its seq alone updated), not deleted
        and inserted again with its indexes (3,893 of the 60 MB session's 9,491 rows for an agent sorting first).
        The rows written are those inserted: a moved row keeps its ids.
        """
        conn = self.conn
        if stored is None:  # a damaged byte in a text: every row is written again
            conn.execute("DELETE FROM token_usage WHERE session_id = ?", (sid,))
            stored = []
        by_seq = {row[2]: row for row in stored}  # each as _digests reads it: (session_id, *USAGE_COLUMNS)
        kept: list[tuple[Any, ...]] = []
        changed: list[tuple[Any, ...]] = []
        unmatched: list[tuple[Any, ...]] = []  # stored rows whose seq now holds another row
        for row in rows:
            was = by_seq.pop(row[1], None)
            if was is not None and was[1:] == row:
                kept.append(was)
            else:
                changed.append(row)
                if was is not None:
                    unmatched.append(was)
        left = [*unmatched, *by_seq.values()]
        changed, moved = _moves(changed, left)
        gone = {was[2] for was in left} - {was[2] for was, _ in moved}
        conn.executemany("DELETE FROM token_usage WHERE session_id = ? AND seq = ?", [(sid, seq) for seq in sorted(gone)])
        if moved:
            # Through negative seqs (never a row's): a row moved onto the seq another leaves is never two rows at once.
            conn.executemany("UPDATE token_usage SET seq = ? WHERE session_id = ? AND seq = ?", [(-1 - seq, sid, was[2]) for was, seq in moved])
            conn.execute("UPDATE token_usage SET seq = -1 - seq WHERE session_id = ? AND seq < 0", (sid,))
            kept += [(*was[:2], seq, *was[3:]) for was, seq in moved]
        conn.executemany(f"INSERT OR REPLACE INTO token_usage VALUES ({', '.join('?' * len(USAGE_COLUMNS))})", changed)
        if changed:
            kept += conn.execute(
                "SELECT session_id, * FROM token_usage WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))",
                (sid, orjson.dumps([row[1] for row in changed]).decode()),
            ).fetchall()
        if changed or moved:
            kept.sort(key=lambda row: row[2])
        return (rows_digest(kept) if kept else EMPTY_DIGEST), changed, kept

    def _stored_usage(self, sid: str) -> list[tuple[Any, ...]] | None:
        """Return a session's stored usage rows as `_digests` reads them, in seq order; None when a text no longer decodes.

        The rows its last check read are taken when nothing was written to the cache since (by this
        connection or any other): an append reads the 60 MB session's 9,455 rows once, not three times.
        """
        read, self._usage_read = self._usage_read, None  # taken once: its memory is the caller's now
        if read is not None and read[:2] == (self._changes(), sid):
            return read[2]
        try:
            return self.conn.execute("SELECT session_id, * FROM token_usage WHERE session_id = ? ORDER BY seq", (sid,)).fetchall()
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise
            return None

    def stored_prices(self, sid: str) -> dict[tuple[Any, ...], PriceColumns]:
        """Return the stored prices of a session's usage rows by what each was priced from (PRICED_BY).

        Only from the rows the check before its write read (`neighbours`), while nothing was
        written since; else none. The cache's rows are priced with the price table and code of
        this build (ingest.py reprices every cached session first when either changed).
        """
        read = self._usage_read
        if read is None or read[:2] != (self._changes(), sid):
            return {}
        return {_priced_by(row): _price_of(row) for row in read[2]}

    def _changes(self) -> tuple[int, int]:
        """Return a mark of the cache file's contents: it differs after any write, by this connection or another."""
        return self.conn.total_changes, self.conn.execute("PRAGMA data_version").fetchone()[0]

    def _put_body(self, sid: str, agent_id: str, pieces: list[tuple[int, memoryview, str]], digests: bytes, body_sum: str, first: int) -> None:
        """Store a transcript's checksum, its messages' digests and its pieces from `first` on (`_pieces`; the first pieces stand as stored)."""
        conn = self.conn
        conn.execute("INSERT INTO transcripts VALUES (?, ?, ?, ?) ON CONFLICT(session_id, agent_id) DO UPDATE SET "
                     "body_sum = excluded.body_sum, digests = excluded.digests", (sid, agent_id, body_sum, digests))
        conn.execute("DELETE FROM transcript_pieces WHERE session_id = ? AND agent_id = ? AND piece >= ?", (sid, agent_id, first))
        conn.executemany("INSERT INTO transcript_pieces VALUES (?, ?, ?, ?, ?)",
                         ((sid, agent_id, index, piece_sum, data) for index, data, piece_sum in pieces))

    def _stored_body(self, sid: str, agent_id: str, body_sum: str, digests: bytes) -> bytearray | None:
        """Return a transcript's stored body, its pieces joined in order, when each piece and the body's checksum are as written; else None."""
        body = bytearray()  # grown in place: the pieces and a joined copy are never all alive at once
        sums = []
        for index, (piece, piece_sum, data) in enumerate(self.conn.execute(
            "SELECT piece, piece_sum, bytes FROM transcript_pieces WHERE session_id = ? AND agent_id = ? ORDER BY piece", (sid, agent_id)
        )):
            if piece != index or not isinstance(data, bytes) or _sum(sid, agent_id, piece, data) != piece_sum:
                return None
            body += data
            sums.append(piece_sum)
        return body if _body_sum(sid, agent_id, sums, digests) == body_sum else None

    def _spliced(self, sid: str, agent_id: str, checkpoint: ScanCheckpoint, keep: int, tail: bytes | bytearray, tail_digests: bytes,
                 replaced: bool) -> tuple[int, list[str], bytes, bytes]:
        """Return how a transcript scanned from a checkpoint is stored: its first `keep` bytes as they are, then the scan's messages.

        That is the piece its stored body changes from, the checksums of the pieces before it,
        the bytes from that piece on, and every message's digest. Only that piece is read: the
        checksums of all are checked against the body's (the pieces' bytes are checked where read).
        `replaced`: the scan's first message replaces the last stored one (the bytes kept end before it).
        """
        digests = self._stored_digests(sid, agent_id)
        rows = self.conn.execute("SELECT piece, piece_sum FROM transcript_pieces WHERE session_id = ? AND agent_id = ? ORDER BY piece",
                                 (sid, agent_id)).fetchall()
        first, within = divmod(keep, BODY_PIECE)
        head: bytes | memoryview = b""
        if within:
            row = self.conn.execute("SELECT piece_sum, bytes FROM transcript_pieces WHERE session_id = ? AND agent_id = ? AND piece = ?",
                                    (sid, agent_id, first)).fetchone()
            sound = row is not None and isinstance(row[1], bytes) and len(row[1]) >= within and _sum(sid, agent_id, first, row[1]) == row[0]
            head = memoryview(row[1])[:within] if sound else b""
        else:
            sound = True
        sums = [piece_sum for _, piece_sum in rows]
        sound = sound and [piece for piece, _ in rows] == list(range(len(rows))) and all(isinstance(piece_sum, str) for piece_sum in sums)
        if not sound or _body_sum(sid, agent_id, sums, digests) != checkpoint.body_sum:  # checked when the checkpoint was read: changed since
            raise transcript_damaged(sid)
        kept = len(digests) - (MESSAGE_DIGEST_BYTES if replaced and digests else 0)
        return first, sums[:first], spliced(head, keep, tail), digests[:kept] + tail_digests

    def _stored_digests(self, sid: str, agent_id: str) -> bytes:
        """Return the digests of a transcript's stored messages, in order (empty when it has none stored)."""
        row = self.conn.execute("SELECT digests FROM transcripts WHERE session_id = ? AND agent_id = ?", (sid, agent_id)).fetchone()
        return bytes(row[0]) if row is not None and isinstance(row[0], bytes) else b""

    def _insert_checkpoints(self, parsed: ParsedSession, shapes: dict[str, BodyShape], scanned: dict[str, FileScanned],
                            used: dict[str, ScanCheckpoint]) -> None:
        """Keep each transcript's new checkpoint with the file it was read from and the body it goes with.

        A checkpoint the parse carried on from and left as it was (a transcript with nothing new)
        stays where it is stored; the others are replaced or removed.
        """
        sid = parsed.session_id
        files = {agent.agent_id: agent.file for agent in parsed.agents}
        rows, kept = [], []
        for agent_id, state in sorted(parsed.scan_states.items()):
            rel = files.get(agent_id)
            read = scanned.get(rel or "")
            shape = shapes.get(agent_id)
            if read is None or shape is None:
                continue
            was = used.get(agent_id)
            if was is not None and ScanCheckpoint(read, agent_id, shape.body_sum, shape.body_len, shape.body_last, state, was.chunks) == was:
                # Checked as it was read, and written again it would be the same row. Rewriting it
                # costs twice its size in writes (the cache's SQLite zeroes what it deletes): an append
                # to the 60 MB session rewrote 7.7 MB of unchanged checkpoints, 4,195 pages.
                kept.append(read.rel)
                continue
            values = (sid, read.rel, agent_id, read.size, read.mtime_ns, read.inode, read.ctime_ns, read.scanned, read.scanned_digest,
                      shape.body_sum, shape.body_len, shape.body_last, state)
            rows.append((*values, _sum(*values)))
            self._write_chunks(sid, read.rel, parsed.scan_chunks.get(agent_id, {}), was)
        self.conn.execute(
            "DELETE FROM scan_checkpoints WHERE session_id = ? AND rel NOT IN (SELECT value FROM json_each(?))", (sid, orjson.dumps(kept).decode()),
        )
        self.conn.executemany("INSERT INTO scan_checkpoints VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        self.conn.execute("DELETE FROM checkpoint_chunks WHERE session_id = ? AND rel NOT IN (SELECT rel FROM scan_checkpoints WHERE session_id = ?)",
                          (sid, sid))

    def _write_chunks(self, sid: str, rel: str, named: dict[str, bytes], was: ScanCheckpoint | None) -> None:
        """Make a checkpoint's stored chunks those its new state names: the new ones written, the others kept, those no longer named deleted.

        Kept are only chunks of the checkpoint the parse carried on from whose bytes match their
        digest (an append to the 60 MB session writes one chunk or none, not its 2.9 MB again).
        """
        if was is None:
            self.conn.execute("DELETE FROM checkpoint_chunks WHERE session_id = ? AND rel = ?", (sid, rel))
            sound: set[str] = set()
        else:
            sound = {digest for digest, data in was.chunks if digest in named and chunk_digest(data) == digest}
            self.conn.executemany("DELETE FROM checkpoint_chunks WHERE session_id = ? AND rel = ? AND digest = ?",
                                  [(sid, rel, digest) for digest, _ in was.chunks if digest not in sound])
        self.conn.executemany("INSERT OR REPLACE INTO checkpoint_chunks VALUES (?, ?, ?, ?)",
                              [(sid, rel, digest, data) for digest, data in sorted(named.items()) if digest not in sound])

    def scan_checkpoints(self, session_id: str) -> dict[str, ScanCheckpoint]:
        """Return a session's checkpoints by path: each whose checksum holds and whose stored transcript is still the one it goes with."""
        found = {}
        for *values, row_sum, stored_sum in self.conn.execute(
            "SELECT c.session_id, c.rel, c.agent_id, c.size, c.mtime_ns, c.inode, c.ctime_ns, c.scanned, c.scanned_digest, c.body_sum, "
            "c.body_len, c.body_last, c.state, c.row_sum, t.body_sum FROM scan_checkpoints c LEFT JOIN transcripts t "
            "ON t.session_id = c.session_id AND t.agent_id = c.agent_id WHERE c.session_id = ? ORDER BY c.rel", (session_id,),
        ):
            values[12] = bytes(values[12])
            if row_sum != _sum(*values) or stored_sum != values[9]:
                continue  # damaged, or its transcript changed since: that file is read from its start
            _, rel, agent_id, size, mtime_ns, inode, ctime_ns, scanned, digest, body_sum, body_len, body_last, state = values
            found[rel] = ScanCheckpoint(FileScanned(rel, size, mtime_ns, inode, ctime_ns, scanned, digest), agent_id, body_sum, body_len, body_last,
                                        state)
        if found:
            chunks: dict[str, list[tuple[str, bytes]]] = {}
            for rel, digest, data in self.conn.execute(
                "SELECT rel, digest, bytes FROM checkpoint_chunks WHERE session_id = ? ORDER BY rel, digest", (session_id,),
            ):
                chunks.setdefault(rel, []).append((digest, bytes(data)))
            for rel, named in chunks.items():  # checked when decoded: a chunk whose bytes do not match its digest is not used
                if rel in found:
                    found[rel] = dataclasses.replace(found[rel], chunks=tuple(named))
        return found

    def _delete_rows(self, session_id: str, keep: tuple[str, ...] = ()) -> None:
        self._sound -= {(session_id, table) for table in SEALED_TABLES}
        for table in ("views", "transcripts", "compactions", "token_usage", "orchestration_edges", "agents", "sessions", "ingest_checkpoints",
                      "parsed_files", "row_sums", "scan_checkpoints", "checkpoint_chunks"):
            if table in keep:
                continue
            if table == "agents":
                # Children reference parents: clear the links before the rows.
                self.conn.execute("UPDATE agents SET parent_agent_id = NULL WHERE session_id = ?", (session_id,))
            self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    def usage_rows(self, session_id: str) -> list[PricedRow]:
        """Return a session's usage rows for pricing (checked: a price change must not bless damaged rows)."""
        self.verify_sessions([session_id], ("token_usage",))
        return [
            PricedRow(seq, model, Tokens(i, o, r, w5, w1), at, speed)
            for seq, model, i, o, r, w5, w1, at, speed in self.conn.execute(
                "SELECT seq, model, input, output, cache_read, cache_write_5m, cache_write_1h, at, speed "
                "FROM token_usage WHERE session_id = ? ORDER BY seq",
                (session_id,),
            )
        ]

    def set_prices(self, session_id: str, priced: Priced) -> None:
        """Store each row's family and cost by category, or why it cannot be priced."""
        with self.transaction():
            self._apply_prices(session_id, priced)
            self._seal(session_id, ("token_usage",))

    def _apply_prices(self, session_id: str, priced: Priced) -> None:
        """Write row costs inside the caller's transaction."""
        self.conn.executemany(
            "UPDATE token_usage SET family = ?, cost = ?, cost_input = ?, cost_output = ?, cost_cache_read = ?, "
            "cost_cache_write_5m = ?, cost_cache_write_1h = ?, price_problem = ? WHERE session_id = ? AND seq = ?",
            [(*columns, session_id, seq) for seq, columns in priced],
        )

    def neighbours(self, session_ids: list[str]) -> set[str]:
        """Return other sessions that share a request with these (ownership may move between them)."""
        self.verify_sessions(session_ids, ("token_usage",))  # a damaged id would hide a neighbour
        return {row[2] for row in self.shared_requests(session_ids)} - set(session_ids)

    def shared_requests(self, session_ids: list[str]) -> list[tuple[str | None, str | None, str, str | None]]:
        """Return (message_id, request_id, session_id, origin_session) of the usage rows linked to these sessions.

        Rows are linked when they share a message id or a request id, transitively: a copy of a
        session may keep the requestId and replace the message id (issue 13), a resume keeps both.
        When no row of another session is linked and only one of these sessions has rows, nothing
        is shared and the answer is empty (a session alone owns its requests).
        """
        if not session_ids:
            return []
        self.index_request_ids()
        seeds = orjson.dumps(sorted(session_ids)).decode()
        changes = self._changes()
        if self._linked is not None and self._linked[:2] == (changes, seeds):
            return list(self._linked[2])
        linked = self._linked_rows(seeds, session_ids)
        self._linked = (changes, seeds, linked)
        return list(linked)

    def _linked_rows(self, seeds: str, session_ids: list[str]) -> list[tuple[str | None, str | None, str, str | None]]:
        """Look for the rows shared_requests returns (`seeds`: the session ids as a sorted JSON list)."""
        if len(set(session_ids)) == 1 and not self._shares_an_id(seeds, session_ids[0]):
            # Most sessions share nothing: asked by the indexes, without loading the session's rows
            # (15-35 ms instead of 80 ms for a session of 9,445 requests).
            self._alone = (self._changes(), session_ids[0])
            return []
        own = set(
            self.conn.execute(
                "SELECT message_id, request_id, session_id, origin_session FROM token_usage "
                "WHERE session_id IN (SELECT value FROM json_each(?)) AND (message_id IS NOT NULL OR request_id IS NOT NULL)",
                (seeds,),
            )
        )
        # Every row of these sessions is in `own`: the search looks at other sessions' rows only.
        message_ids: set[str] = set()
        request_ids: set[str] = set()
        found: set[tuple[str | None, str | None, str, str | None]] = set()
        rows = own
        while True:
            new_messages = {row[0] for row in rows if row[0] is not None} - message_ids
            new_requests = {row[1] for row in rows if row[1] is not None} - request_ids
            if not new_messages and not new_requests:
                break
            message_ids |= new_messages
            request_ids |= new_requests
            rows = set(
                self.conn.execute(
                    "SELECT message_id, request_id, session_id, origin_session FROM token_usage "
                    "WHERE session_id NOT IN (SELECT value FROM json_each(?)) "
                    "AND (message_id IN (SELECT value FROM json_each(?)) OR request_id IN (SELECT value FROM json_each(?)))",
                    (seeds, orjson.dumps(sorted(new_messages)).decode(), orjson.dumps(sorted(new_requests)).decode()),
                )
            ) - found
            found |= rows
        if not found and len({row[2] for row in own}) <= 1:
            return []
        return sorted(own | found, key=lambda row: (row[2], row[0] or "", row[1] or "", row[3] or ""))

    def _shares_an_id(self, seeds: str, session_id: str) -> bool:
        """Tell whether a row of another session than these (a JSON list, `session_id` first) has a message or request id of one of theirs."""
        written, self._written_alone = self._written_alone, None
        if written is not None and written[:2] == (self._changes(), session_id):
            # Found alone just before its write, and nothing else written since: only the ids of the
            # rows that write changed can be shared now (an append: 1 or 2 rows of 9,600, not 15-20 ms).
            return bool(self.conn.execute(
                "SELECT EXISTS (SELECT 1 FROM token_usage WHERE message_id IN (SELECT value FROM json_each(?2)) AND session_id != ?1) "
                "OR EXISTS (SELECT 1 FROM token_usage WHERE request_id IN (SELECT value FROM json_each(?3)) AND session_id != ?1)",
                (session_id, orjson.dumps(written[2]).decode(), orjson.dumps(written[3]).decode()),
            ).fetchone()[0])
        linked = " OR ".join(
            f"EXISTS (SELECT 1 FROM token_usage s JOIN token_usage o ON o.{column} = s.{column} "
            "WHERE s.session_id IN (SELECT value FROM json_each(?1)) AND o.session_id NOT IN (SELECT value FROM json_each(?1)))"
            for column in ("message_id", "request_id")
        )
        return bool(self.conn.execute(f"SELECT {linked}", (seeds,)).fetchone()[0])

    def put_views(self, rows: dict[str, tuple[bytes, bytes, bool, bytes]]) -> None:
        """Store computed session views with their summaries, whether the session is excluded, and its owned requests."""
        stored = []
        for sid, (body, summary, excluded, usage) in sorted(rows.items()):
            body_sum, summary_sum = _sum(body), _sum(summary)
            stored.append((sid, int(excluded), body_sum, summary_sum, _sum(sid, int(excluded), body_sum, summary_sum), _sum(sid, usage),
                           summary, usage, body))
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO views (session_id, excluded, body_sum, summary_sum, row_sum, usage_sum, summary, usage, body) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", stored,
            )

    def usage_state(self) -> str | None:
        """Return what the last build kept to carry its usage windows forward (model/corpus_usage.py), or None."""
        return self._meta("usage_state")

    def set_usage_state(self, state: str) -> None:
        """Keep what the next build needs to carry the usage windows forward."""
        with self.transaction():
            self._set_meta("usage_state", state)

    def project_insights(self) -> str | None:
        """Return the projects' insights the last build kept, or None (render/site.py `project_insights`)."""
        return self._meta("project_insights")

    def set_project_insights(self, kept: str) -> None:
        """Keep the projects' insights, by what they were made from, for the next build (unless they are the same)."""
        if kept and kept != self._meta("project_insights"):
            with self.transaction():
                self._set_meta("project_insights", kept)

    def view_usage_sums(self) -> list[tuple[str, str]]:
        """Return the checksum of every session's owned requests, by session id, without reading the requests."""
        return self.conn.execute("SELECT session_id, usage_sum FROM views ORDER BY session_id").fetchall()

    def view_usage(self, session_ids: list[str]) -> Iterator[tuple[str, bytes, str]]:
        """Yield these sessions' owned requests as their views stored them, with their checksums, by session id (CacheDamaged when one fails its checksum)."""
        for sid, usage, usage_sum in self.conn.execute(
            f"SELECT session_id, usage, usage_sum FROM views WHERE {_IN_SESSIONS} ORDER BY session_id", (orjson.dumps(session_ids).decode(),)
        ):
            if usage_sum != _sum(sid, bytes(usage)):
                raise CacheDamaged(f"the stored requests of session {sid}", (("view", sid),))
            yield sid, bytes(usage), usage_sum

    def view_summaries(self) -> Iterator[tuple[str, bytes | None, str]]:
        """Yield every stored session summary by session id, with its checksum (None when damaged: derive it again).

        Not the views: those are read one by one.
        """
        for sid, summary, *sums in self.conn.execute(
            "SELECT session_id, summary, excluded, body_sum, summary_sum, row_sum FROM views ORDER BY session_id"
        ):
            if _view_row_sound(sid, *sums) and _sum(bytes(summary)) == sums[2]:
                yield sid, bytes(summary), sums[2]
            else:
                self._damaged(f"the stored summary of session {sid}", (("view", sid),))
                yield sid, None, ""

    def view_body(self, session_id: str) -> tuple[bytes, bytes] | None:
        """Return one session's stored view and its owned requests (None when there is none, or it is damaged: derive it again)."""
        row = self.conn.execute(
            "SELECT body, usage, usage_sum, excluded, body_sum, summary_sum, row_sum FROM views WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None:
            return None
        body, usage = bytes(row[0]), bytes(row[1])
        if _view_row_sound(session_id, *row[3:]) and _sum(body) == row[4] and _sum(session_id, usage) == row[2]:
            return body, usage
        self._damaged(f"the stored view of session {session_id}", (("view", session_id),))
        return None

    def sessions_without_view(self) -> list[str]:
        """Return sessions whose view was never computed (a new cache, an interrupted build)."""
        return [row[0] for row in self.conn.execute(
            "SELECT session_id FROM sessions WHERE session_id NOT IN (SELECT session_id FROM views) ORDER BY session_id")]

    def failures(self) -> list[tuple[str, str, str, int]]:
        """Return (session id, project, reason, consecutive failures) of every failed session."""
        return list(self.conn.execute("SELECT session_id, project, reason, consecutive FROM ingest_failures ORDER BY session_id"))

    def is_quarantined(self, session_id: str, fingerprint: str, build: int) -> bool:
        """Tell whether a failed session must not be read in this build."""
        row = self.conn.execute(
            "SELECT fingerprint, consecutive, retry_at_build FROM ingest_failures WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None or row[1] < QUARANTINE_AFTER:
            return False
        # Quarantined: read again only when its bytes changed, and not before its turn.
        return row[0] == fingerprint or build < row[2]

    def settled_reuse(self, fingerprints: dict[str, str]) -> int | None:
        """Count the sessions the next build would reuse if no file changed; None when it would read one again.

        A session is read again when its checkpoint differs from its files (a partial read, a
        failure not yet quarantined); a quarantined one waits until its bytes change.
        """
        checkpoints = self.checkpoints()
        waiting = {
            session_id: fingerprint
            for session_id, fingerprint, consecutive in self.conn.execute("SELECT session_id, fingerprint, consecutive FROM ingest_failures")
            if consecutive >= QUARANTINE_AFTER
        }
        if any(checkpoints.get(sid) != fingerprint and waiting.get(sid) != fingerprint for sid, fingerprint in fingerprints.items()):
            return None
        return sum(1 for sid, fingerprint in fingerprints.items() if checkpoints.get(sid) == fingerprint)

    def watchdog_bounds(self, now: datetime, watchdog_minutes: int) -> tuple[str | None, str | None]:
        """Return the latest activity already stale at this clock and the earliest not yet, of agents without an ending."""
        stale_before = stale_cutoff(now, watchdog_minutes)
        open_agents = "FROM agents WHERE status NOT IN ('completed', 'error') AND last_seen_at IS NOT NULL AND last_seen_at"
        stale = self.conn.execute(f"SELECT MAX(last_seen_at) {open_agents} < ?", (stale_before,)).fetchone()[0]
        fresh = self.conn.execute(f"SELECT MIN(last_seen_at) {open_agents} >= ?", (stale_before,)).fetchone()[0]
        return stale, fresh

    def site_signature(self) -> str | None:
        """Return the signature of the last build that rendered a site (tied to that folder's manifest)."""
        return self._meta("site_signature")

    def set_site_signature(self, signature: str) -> None:
        """Remember the signature of the build that just rendered the site."""
        with self.transaction():
            self._set_meta("site_signature", signature)

    def redaction_counts(self) -> dict[str, Any]:
        """Return the last `--redact` build's masks in each session's transcripts: {session: [inputs digest, {kind: n}]}."""
        value = self._meta("redaction_counts")  # damaged: counted again as pages load
        try:
            counts = orjson.loads(value) if value is not None else {}
        except orjson.JSONDecodeError:
            return {}
        return counts if isinstance(counts, dict) else {}

    def set_redaction_counts(self, counts: dict[str, Any]) -> None:
        """Remember the masks counted in each session's transcripts (counts only, never the text)."""
        with self.transaction():
            self._set_meta("redaction_counts", _dumps(counts))

    def stale_agents(self, now: datetime, watchdog_minutes: int) -> list[tuple[str, str]]:
        """Return the agents the watchdog shows as unknown at this clock (pages change when this does)."""
        stale_before = stale_cutoff(now, watchdog_minutes)
        # Sorted here: ordered by SQLite, the rows would be read through the primary key's index, every agent.
        return sorted(self.conn.execute(
            "SELECT session_id, agent_id FROM agents WHERE status NOT IN ('completed', 'error') "
            "AND (last_seen_at IS NULL OR last_seen_at < ?)",
            (stale_before,),
        ))

    def excluded_count(self) -> int:
        """Count the sessions left out of the totals for want of a price."""
        count = 0
        for sid, *sums in self.conn.execute("SELECT session_id, excluded, body_sum, summary_sum, row_sum FROM views"):
            if not _view_row_sound(sid, *sums):
                raise CacheDamaged(f"the stored summary of session {sid}", (("view", sid),))
            count += bool(sums[0])
        return count

    # -- hook events ----------------------------------------------------------------------------

    def spool_offset(self) -> int:
        """Return how many bytes of the spool were ingested (0 when a spool setting is damaged: it is read again)."""
        offset, damaged = _get_meta(self.conn, "spool_offset")
        if damaged or _get_meta(self.conn, "spool_bad_lines")[1]:
            self._reread_spool()
            return 0
        return int(offset) if offset is not None else 0

    def _reread_spool(self) -> None:
        """Read the whole spool again: idempotency keys drop the events already stored, and bad lines are counted anew."""
        self._note("a stored setting (the hook spool's offset)")
        with self.transaction():
            self._set_meta("spool_offset", "0")
            self._set_meta("spool_bad_lines", "0")

    def add_events(self, rows: list[tuple[str, str, str, str | None]], offset: int, bad_lines: int) -> int:
        """Store spool lines (key, received_at, line, session) and the new offset in one transaction."""
        with self.transaction() as conn:
            added = 0
            for key, received_at, line, _ in rows:
                cursor = conn.execute("INSERT OR IGNORE INTO events_raw(idempotency_key, received_at, body) VALUES (?,?,?)",
                                      (key, received_at, line))
                if cursor.rowcount:
                    added += 1
                    record = orjson.loads(line)
                    payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
                    conn.execute(
                        "INSERT INTO events VALUES (?,?,?,?,?)",
                        (cursor.lastrowid, _text(payload.get("session_id")), _text(payload.get("agent_id")),
                         _text(payload.get("hook_event_name")), received_at),
                    )
            self._set_meta("spool_offset", str(offset))
            previous = _get_meta(conn, "spool_bad_lines")[0]  # checked by spool_offset, read just before
            self._set_meta("spool_bad_lines", str((int(previous) if previous is not None else 0) + bad_lines))
        return added

    def spool_bad_lines(self) -> int:
        """Count the spool lines that could not be read (cut short by a crash, or not hook records)."""
        value, damaged = _get_meta(self.conn, "spool_bad_lines")
        if damaged:
            self._reread_spool()  # counted anew by the next build
            return 0
        return int(value) if value is not None else 0

    def event_counts(self) -> dict[str, int]:
        """Count stored hook events by event name."""
        return dict(self.conn.execute("SELECT COALESCE(event, '?'), COUNT(*) FROM events GROUP BY event ORDER BY event"))

    def events_for(self, session_ids: list[str]) -> list[tuple[str, str | None, str | None, str]]:
        """Return (session, agent, event, at) of these sessions' hook events in arrival order."""
        return list(self.conn.execute(
            "SELECT session_id, agent_id, event, at FROM events WHERE session_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY at, raw_seq",
            (orjson.dumps(session_ids).decode(),),
        ))

    def apply_event(self, session_id: str, agent_id: str | None, event: str | None, at: str) -> int:
        """Move one agent's status for a hook event; only rows the parser created are touched."""
        if event == "SubagentStop" and agent_id and agent_id != session_id:
            # An observed ending; an agent id that is the session id is refused (main never "completes").
            sql = ("UPDATE agents SET status = 'completed' WHERE session_id = ? AND agent_id = ? "
                   "AND status NOT IN ('completed', 'error')")
            params: tuple[str, ...] = (session_id, agent_id)
        elif event in ("Stop", "UserPromptSubmit"):
            # Inferred states: the main agent waits after a turn and works after a prompt, but only
            # when this event is later than all activity seen so far (the anchor strictly advances).
            sql = ("UPDATE agents SET status = ?, last_seen_at = ? WHERE session_id = ? AND agent_id = ? "
                   "AND status NOT IN ('completed', 'error') AND (last_seen_at IS NULL OR last_seen_at < ?)")
            params = ("waiting" if event == "Stop" else "working", at, session_id, session_id, at)
        else:
            return 0
        with self.transaction() as conn:
            # Checked first: a status moved on damaged rows would make their digest look sound.
            self.verify_sessions([session_id], ("agents",))
            changed = conn.execute(sql, params).rowcount
            if changed:
                self._seal(session_id, ("agents",))
        return changed

    def requests_per_model(self) -> dict[str, int]:
        """Count the deduplicated requests of each model id, by model id."""
        return dict(self.conn.execute("SELECT model, COUNT(*) FROM token_usage GROUP BY model ORDER BY model").fetchall())

    def usage_requests(self) -> list[sqlite3.Row]:
        """Return every session's usage rows (ids, time, model, tokens, cost parts, price problem), checked, by session and seq."""
        # Checked like every row a page shows: a damaged row must be derived again, never summed.
        self.verify_sessions(self.session_ids(), ("token_usage",))
        costs = ", ".join(f"cost_{name}" for name in TOKEN_CATEGORIES)
        cursor = self.conn.execute(
            "SELECT session_id, agent_id, message_id, request_id, at, model, input, output, cache_read, cache_write_5m, cache_write_1h, "
            f"{costs}, price_problem FROM token_usage ORDER BY session_id, seq"
        )
        cursor.row_factory = sqlite3.Row
        return cursor.fetchall()

    def request_counts(self, session_ids: list[str]) -> dict[str, int]:
        """Return the number of usage rows of each of these sessions that has any: what computing its view reads (a weight for batching, never shown)."""
        return dict(self.conn.execute(
            "SELECT session_id, count(*) FROM token_usage WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
            (orjson.dumps(session_ids).decode(),),
        ))

    def view_sizes(self) -> dict[str, int]:
        """Return the bytes of each session's stored view and owned requests: what rendering its pages loads (a weight for batching, never shown)."""
        return dict(self.conn.execute("SELECT session_id, length(body) + length(usage) FROM views"))

    def session_ids(self) -> list[str]:
        """Return every cached session id."""
        return [row[0] for row in self.conn.execute("SELECT session_id FROM sessions ORDER BY session_id")]

    def prices_digest(self) -> str | None:
        """Return the digest of the price table every cached session was priced with."""
        return self._meta("prices_digest")

    def set_prices_digest(self, digest: str) -> None:
        """Record that every cached session is priced with this table; failures get a fresh budget."""
        with self.transaction():
            self._set_meta("prices_digest", digest)
            self._update_failures("consecutive = 0")

    def build_number(self) -> int:
        """Count this build (the quarantine schedule is measured in builds, not time)."""
        value, damaged = _get_meta(self.conn, "builds")
        number = int(value) + 1 if value is not None else 1
        with self.transaction():
            if damaged:
                # The count starts again: so does every quarantine's wait, lest it outlast the count.
                self._note("a stored setting (the build count)")
                self._update_failures("retry_at_build = 0")
            self._set_meta("builds", str(number))
        return number

    def record_failure(self, session_id: str, project: str, fingerprint: str, reason: str, build: int = 0) -> int:
        """Record a failed ingest, dropping the session's stale rows; return consecutive failures.

        After QUARANTINE_AFTER failures in a row the session waits 1, 2, 4 … 32 builds (and a
        change of its bytes) before it is read again.
        """
        with self.transaction() as conn:
            self._delete_rows(session_id)
            row = conn.execute("SELECT consecutive FROM ingest_failures WHERE session_id = ?", (session_id,)).fetchone()
            consecutive = (row[0] if row else 0) + 1
            wait = min(2 ** (consecutive - QUARANTINE_AFTER), MAX_QUARANTINE_BUILDS) if consecutive >= QUARANTINE_AFTER else 0
            values = (session_id, project, fingerprint, reason, consecutive, build + wait)
            conn.execute("INSERT OR REPLACE INTO ingest_failures VALUES (?,?,?,?,?,?,?)", (*values, _sum(*values)))
        return consecutive

    def missing_sessions(self, present: set[str], keep_projects: set[str]) -> list[str]:
        """Return cached sessions no longer in the corpus, except those of folders that could not be listed."""
        # Their ids first, from the primary key's index: reading every session's project would walk
        # each row of `sessions` (500 sessions: 4 ms of a one-append build; a row holds 3 KB of details).
        ids = self.conn.execute("SELECT session_id FROM sessions UNION SELECT session_id FROM ingest_failures").fetchall()
        absent = orjson.dumps(sorted({sid for (sid,) in ids} - present)).decode()
        if absent == "[]":
            return []
        rows = self.conn.execute(
            f"SELECT session_id, project FROM sessions WHERE {_IN_SESSIONS} UNION SELECT session_id, project FROM ingest_failures WHERE {_IN_SESSIONS}",
            (absent, absent),
        )
        return [session_id for session_id, project in sorted(rows.fetchall()) if project not in keep_projects]

    def forget(self, gone: list[str]) -> None:
        """Delete everything cached for these sessions."""
        for session_id in gone:
            with self.transaction():
                self._delete_rows(session_id)
                self.conn.execute("DELETE FROM ingest_failures WHERE session_id = ?", (session_id,))
                self.conn.execute("DELETE FROM layouts WHERE session_id = ?", (session_id,))

    # -- reading back -------------------------------------------------------------------------

    def usage_table(self, session_ids: list[str]) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """Return the usage rows of these sessions in their stored order, with the names of their columns.

        The rows of the one session written last are taken as its write left them when nothing was
        written since (by this connection or any other): an append reads the 60 MB session's 9,500
        rows once, to check them before its write, not again for its view (40 ms).
        """
        written, self._usage_written = self._usage_written, None  # taken once: its memory is the caller's now
        if written is not None and [written[1]] == session_ids and written[0] == self._changes():
            return USAGE_COLUMNS, [row[1:] for row in written[2]]  # each as _digests reads it: its session id, then USAGE_COLUMNS
        cursor = self.conn.execute(f"SELECT * FROM token_usage WHERE {_IN_SESSIONS} ORDER BY {_SESSION_ROW_ORDER['token_usage']}",
                                   (orjson.dumps(session_ids).decode(),))
        return tuple(column[0] for column in cursor.description), cursor.fetchall()

    def session_rows(self, table: str, session_ids: list[str]) -> list[sqlite3.Row]:
        """Return the rows of one per-session table for these sessions, in their stored order."""
        order = _SESSION_ROW_ORDER[table]  # a fixed set of tables: no caller's text reaches the SQL
        cursor = self.conn.execute(f"SELECT * FROM {table} WHERE {_IN_SESSIONS} ORDER BY {order}", (orjson.dumps(session_ids).decode(),))
        cursor.row_factory = sqlite3.Row
        return cursor.fetchall()

    def main_ended_at(self, session_ids: list[str]) -> dict[str, str | None]:
        """Return when each session's main transcript ended, by session id."""
        query = f"SELECT session_id, main_ended_at FROM sessions WHERE {_IN_SESSIONS}"
        return dict(self.conn.execute(query, (orjson.dumps(session_ids).decode(),)).fetchall())

    def transcript(self, session_id: str, agent_id: str) -> list[Message]:
        """Load one agent's displayable transcript (CacheDamaged when it is not as written: its session is read again)."""
        return self.keyed_transcript(session_id, agent_id)[0]

    def keyed_transcript(self, session_id: str, agent_id: str) -> tuple[list[Message], bytes]:
        """Load one agent's displayable transcript with each message's digest (MESSAGE_DIGEST_BYTES each, in order), checked as `transcript`."""
        row = self.conn.execute("SELECT body_sum, digests FROM transcripts WHERE session_id = ? AND agent_id = ?", (session_id, agent_id)).fetchone()
        if row is None:
            self.verify_sessions([session_id], ("transcripts",))  # sound only if the session has none for this agent
            return [], b""
        digests = row[1]
        body = self._stored_body(session_id, agent_id, row[0], digests) if isinstance(digests, bytes) else None
        messages = _decode_messages(body) if body is not None else None
        if messages is None or len(digests) != MESSAGE_DIGEST_BYTES * len(messages):
            raise transcript_damaged(session_id)
        return messages, digests

    def transcript_body(self, session_id: str, agent_id: str) -> StoredBody | None:
        """Return one agent's stored transcript to read in parts (None: it has none), its pieces' checksums checked against its body's."""
        row = self.conn.execute("SELECT body_sum, digests FROM transcripts WHERE session_id = ? AND agent_id = ?", (session_id, agent_id)).fetchone()
        if row is None:
            return None
        body_sum, digests = row
        rows = self.conn.execute("SELECT piece, piece_sum FROM transcript_pieces WHERE session_id = ? AND agent_id = ? ORDER BY piece",
                                 (session_id, agent_id)).fetchall()
        sums = [piece_sum for _, piece_sum in rows]
        in_order = [piece for piece, _ in rows] == list(range(len(rows))) and all(isinstance(piece_sum, str) for piece_sum in sums)
        if not in_order or not isinstance(digests, bytes) or _body_sum(session_id, agent_id, sums, digests) != body_sum:
            raise transcript_damaged(session_id)
        return StoredBody(self, session_id, agent_id, sums, digests)

    def transcript_digests(self, session_id: str) -> dict[str, str]:
        """Return the checksum of each agent's stored transcript: it changes whenever the transcript does."""
        return {agent_id: row_sum for agent_id, row_sum in self.conn.execute(
            "SELECT agent_id, body_sum FROM transcripts WHERE session_id = ? ORDER BY agent_id", (session_id,)
        )}

    def layout_sizes(self, session_id: str) -> dict[str, bytes]:
        """Return the last layout of each of a session's transcripts; one that fails its checksum is left out (measured again)."""
        found = {}
        for agent_id, sizes, sizes_sum in self.conn.execute(
            "SELECT agent_id, sizes, sizes_sum FROM layouts WHERE session_id = ? ORDER BY agent_id", (session_id,)
        ):
            if sizes_sum == _sum(session_id, agent_id, bytes(sizes)):
                found[agent_id] = bytes(sizes)
        return found

    def put_layout_sizes(self, layouts: dict[tuple[str, str], bytes | None]) -> None:
        """Keep the layouts of transcripts laid out this build (None: forget the row)."""
        rows = sorted(layouts.items())
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO layouts VALUES (?, ?, ?, ?)",
                [(sid, agent_id, sizes, _sum(sid, agent_id, sizes)) for (sid, agent_id), sizes in rows if sizes is not None],
            )
            conn.executemany("DELETE FROM layouts WHERE session_id = ? AND agent_id = ?", [key for key, sizes in rows if sizes is None])

    def svg(self, digest: str) -> bytes | None:
        """Return a cached SVG by the digest of its DOT source (None when damaged: it is drawn again)."""
        row = self.conn.execute("SELECT svg, svg_sum FROM svg_cache WHERE digest = ?", (digest,)).fetchone()
        if row is None:
            return None
        if row[1] != _sum(digest, bytes(row[0])):
            self._damaged("a stored graph", (("svg", digest),))
            return None  # put_svg replaces it
        return bytes(row[0])

    def put_svg(self, digest: str, svg: bytes) -> None:
        """Remember the SVG drawn from a DOT source."""
        self.conn.execute("INSERT OR REPLACE INTO svg_cache VALUES (?, ?, ?)", (digest, svg, _sum(digest, svg)))

    def keep_named_svgs(self, key: str) -> None:
        """Forget the SVGs whose digest no session's layouts name under the agent id `key` (render/pages.py GRAPH)."""
        # A graph's labels show costs, so an append to a session with agents draws it anew; the old
        # one stayed, one a build (1 MB a time for a session of 800 agents). A session not rendered
        # since it was named draws again, once, when its page is next rendered. By the primary key's
        # index: the table's rows hold every transcript's layout (500 sessions: 0.9 ms, not 2.8).
        self.conn.execute(
            "DELETE FROM svg_cache WHERE digest NOT IN "
            "(SELECT CAST(sizes AS TEXT) FROM layouts INDEXED BY sqlite_autoindex_layouts_1 WHERE agent_id = ?)", (key,),
        )


def _usage_rows(parsed: ParsedSession, priced: Priced) -> list[tuple[Any, ...]]:
    """Return a session's usage rows as stored (USAGE_COLUMNS), each with its price (not an insert, then an update by seq)."""
    costs = dict(priced)
    unpriced = (None,) * len(PRICE_COLUMNS)
    sid = parsed.session_id
    return [
        (sid, seq, r.agent_id, r.message_id, r.request_id, r.model, r.tokens.input, r.tokens.output, r.tokens.cache_read,
         r.tokens.cache_write_5m, r.tokens.cache_write_1h, *costs.get(seq, unpriced), r.segment, r.timestamp, r.speed, r.file, r.line,
         int(r.under_reported), r.origin_session)
        for seq, r in zip(parsed.usage_keys, parsed.usage, strict=True)
    ]


def price_columns(family: str | None, parts: tuple[Decimal, ...] | None, problem: str | None) -> PriceColumns:
    """Return a usage row's family, cost, cost by category and price problem as stored (costs as exact decimal text)."""
    return (family, *((str(sum(parts, Decimal(0))), *map(str, parts)) if parts is not None else (None,) * 6), problem)


# Where a usage row as written (USAGE_COLUMNS) has its message and request ids.
_MESSAGE_ID, _REQUEST_ID = USAGE_COLUMNS.index("message_id"), USAGE_COLUMNS.index("request_id")
# A stored usage row as `_digests` reads it (its session id, then USAGE_COLUMNS): what its price is
# a function of, and its price.
_priced_by = operator.itemgetter(*(1 + USAGE_COLUMNS.index(column) for column in PRICED_BY))
_price_of = operator.itemgetter(*(1 + USAGE_COLUMNS.index(column) for column in PRICE_COLUMNS))


class StoredBody:
    """A transcript's stored body read in parts: each piece read is checked by its checksum, each row by its message's digest.

    The pieces' checksums were checked against the body's (`Cache.transcript_body`), which also
    covers the digests: a row whose bytes have its digest is the message as stored.
    """

    def __init__(self, cache: Cache, session_id: str, agent_id: str, sums: list[str], digests: bytes) -> None:
        self.cache, self.session_id, self.agent_id, self.sums, self.digests = cache, session_id, agent_id, sums, digests
        self.pieces: dict[int, bytes] = {}

    def read(self, start: int, end: int | None = None) -> bytes:
        """Return the body's bytes from `start` to `end` (its end when None), reading only the pieces they are in."""
        first = start // BODY_PIECE
        last = len(self.sums) - 1 if end is None else max(first, (end - 1) // BODY_PIECE)
        data = b"".join(self._piece(number) for number in range(first, last + 1))
        return data[start - first * BODY_PIECE : None if end is None else end - first * BODY_PIECE]

    def row(self, index: int, start: int, end: int) -> bytes:
        """Return message `index`'s row, the body's bytes from `start` to `end`, when they have its digest."""
        row = self.read(start, end)
        if message_digest(row) != self.digests[index * MESSAGE_DIGEST_BYTES : (index + 1) * MESSAGE_DIGEST_BYTES]:
            raise transcript_damaged(self.session_id)
        return row

    def _piece(self, number: int) -> bytes:
        if number not in self.pieces:
            found = self.cache.conn.execute("SELECT bytes FROM transcript_pieces WHERE session_id = ? AND agent_id = ? AND piece = ?",
                                            (self.session_id, self.agent_id, number)).fetchone()
            if (number >= len(self.sums) or found is None or not isinstance(found[0], bytes)
                    or _sum(self.session_id, self.agent_id, number, found[0]) != self.sums[number]):
                raise transcript_damaged(self.session_id)
            self.pieces[number] = found[0]
        return self.pieces[number]


@record_class(frozen=True)
class EncodedMessages:
    """A transcript's messages as the cache stores them: its body (a JSON list of message rows), their digests, the last row's length."""

    body: bytes | bytearray
    digests: bytes  # MESSAGE_DIGEST_BYTES a message, in order
    last_len: int
    count: int


def encode_messages(messages: Sequence[Message]) -> EncodedMessages:
    """Encode a transcript's messages for the cache (a pure function: a parse worker encodes the transcripts it parsed)."""
    # Each row's JSON apart, joined as orjson writes the list (`[a,b]`), each message's digest of its own
    # bytes: grown in place, so no list of rows or joined copy is alive beside the body (a 35 MB one).
    body = bytearray(b"[")
    made: list[bytes] = []
    last_len = 0
    for index, message in enumerate(messages):
        row = orjson.dumps(message_row(message))
        body += b"," + row if index else row
        made.append(message_digest(row))
        last_len = len(row)
    body += b"]"
    return EncodedMessages(body, b"".join(made), last_len, len(messages))


def message_digest(row: bytes) -> bytes:
    """Return the digest of one stored message row's JSON: the same bytes, the same message (render/reader.py keys its HTML by it)."""
    return hashlib.blake2b(row, digest_size=MESSAGE_DIGEST_BYTES).digest()


def _decode_messages(body: bytes | bytearray) -> list[Message]:
    return [message_from_row(row) for row in orjson.loads(body)]
