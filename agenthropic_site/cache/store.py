"""The SQLite cache: one transaction per session; the corpus is the truth, the cache saves time."""

from __future__ import annotations

import os
from datetime import datetime
import sqlite3
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from agenthropic_site.cache.schema import SCHEMA, SCHEMA_VERSION
from agenthropic_site.config import stale_cutoff
from agenthropic_site.corpus import FileRef
from agenthropic_site.locks import take_lock
from agenthropic_site.parse.model import Block, Message, ParsedSession, Tokens

CACHE_FILE = "cache.sqlite3"
SESSION_COLUMNS = (
    "session_id", "project", "fingerprint", "title", "title_source", "cwd", "git_branch", "versions", "started_at", "ended_at",
    "main_ended_at", "details",
)
# A re-read replaces what the transcripts said before: for an append-only file the new parse
# shows everything the old one did, and a file rewritten shorter shows what it holds now, as a
# cold build would. Status precedence (design: status lifecycle) is applied between the parse and
# the hook events, which are replayed onto these rows after every re-read (Cache.apply_event).
AGENT_INSERT = "INSERT INTO agents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
QUARANTINE_AFTER = 3
MAX_QUARANTINE_BUILDS = 32
LOCK_FILE = "build.lock"


def _dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


# Each usage row's (seq, family, cost by category, problem): a row that cannot be priced has no
# family or cost and says why; whether that excludes its session depends on who owns the row.
Priced = list[tuple[int, str | None, tuple[Decimal, ...] | None, str | None]]


@dataclass(frozen=True)
class PricedRow:
    """A usage row as the pricing step sees it."""

    seq: int
    model: str
    tokens: Tokens
    at: str | None
    speed: str | None


class CacheBusyError(Exception):
    """Another build holds the cache and this one chose not to wait (watch mode)."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def delete_cache_files(folder: Path) -> None:
    """Delete the cache database and its WAL files (never the lock, which a waiting build holds open)."""
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{folder / CACHE_FILE}{suffix}")
        except FileNotFoundError:
            pass


class Cache:
    """A connection to the cache file with the operations the build needs."""

    def __init__(self, folder: Path, on_wait: Callable[[str], None] = lambda message: None, wait: bool = True) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = folder / CACHE_FILE
        self.rebuilt_reason: str | None = None
        self._lock: int | None = self._acquire(folder / LOCK_FILE, on_wait, wait)
        self.conn = self._open()

    @classmethod
    def reader(cls, folder: Path) -> Cache:
        """Open the cache of a running build for reading only (a render worker of that build)."""
        cache = cls.__new__(cls)
        cache.path = folder / CACHE_FILE
        cache.rebuilt_reason = None
        cache._lock = None  # the build that started this worker holds it
        cache.conn = sqlite3.connect(cache.path, timeout=30, isolation_level=None)
        cache.conn.execute("PRAGMA query_only=ON")
        return cache

    @staticmethod
    def _acquire(path: Path, on_wait: Callable[[str], None], wait: bool) -> int:
        """Hold the cache for one build at a time; a second build waits and says so (or gives up)."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            take_lock(fd, True, on_wait, f"another build is using the cache in {path.parent}; waiting for it to finish", wait)
        except BlockingIOError:
            os.close(fd)
            raise CacheBusyError(f"another build is using the cache in {path.parent}") from None
        return fd

    def _open(self) -> sqlite3.Connection:
        reason = None
        if self.path.exists():
            try:
                conn = self._connect()
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                if row is not None and row[0] == str(SCHEMA_VERSION):
                    # Deeper damage shows up as DatabaseError during the build, which then starts
                    # again on a fresh cache (build.run_build); a full check here would read it all.
                    return conn
                conn.close()
                reason = "cache of another version"
            except sqlite3.DatabaseError:
                reason = "cache file is corrupt"
            self._delete_files()
        self.rebuilt_reason = reason
        conn = self._connect()
        with conn:
            conn.executescript(SCHEMA)
            conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        os.chmod(self.path, 0o600)
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

    def invalidate_unless(self, inputs_digest: str) -> bool:
        """Forget every checkpoint when the tool version changed; return whether it did."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'inputs_digest'").fetchone()
        if row is not None and row[0] == inputs_digest:
            return False
        with self.conn:
            self.conn.execute("DELETE FROM ingest_checkpoints")
            self.conn.execute("DELETE FROM views")  # views are derived by the code too
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('inputs_digest', ?)", (inputs_digest,))
        return row is not None

    def flat_owner(self, ref: FileRef) -> tuple[bool, str | None]:
        """Return (known, session id) for a flat agent file as lstat saw it."""
        row = self.conn.execute(
            "SELECT session_id FROM flat_owners WHERE rel = ? AND size = ? AND mtime_ns = ? AND inode = ?",
            (ref.rel, ref.size, ref.mtime_ns, ref.inode),
        ).fetchone()
        return (row is not None, row[0] if row else None)

    def put_flat_owner(self, ref: FileRef, session_id: str | None) -> None:
        """Remember which session a flat agent file names, keyed by its lstat signature."""
        self.conn.execute("INSERT OR REPLACE INTO flat_owners VALUES (?,?,?,?,?)", (ref.rel, ref.size, ref.mtime_ns, ref.inode, session_id))

    # -- ingest -------------------------------------------------------------------------------

    def checkpoints(self) -> dict[str, str]:
        """Return the fingerprint of every session projected successfully."""
        return dict(self.conn.execute("SELECT session_id, fingerprint FROM ingest_checkpoints"))

    def write_session(self, parsed: ParsedSession, fingerprint: str, priced: Priced) -> None:
        """Replace everything cached for one session, priced, in a single transaction (all or nothing)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._delete_rows(parsed.session_id, keep=("sessions",))
            details = {
                "warnings": [[w.code, w.message, w.agent_id] for w in parsed.warnings],
                "line_errors": [[e.file, e.line, e.code, e.message] for e in parsed.line_errors],
                "unknown_types": parsed.unknown_types,
                "pending_lines": parsed.pending_lines,
                "prompts": parsed.prompts,
                "main_state": parsed.main_state,
                "under_reported": parsed.under_reported,
            }
            conn.execute(
                "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET "
                + ", ".join(f"{column} = excluded.{column}" for column in SESSION_COLUMNS[1:]),
                (
                    parsed.session_id, parsed.project, fingerprint, parsed.title, parsed.title_source, parsed.cwd,
                    parsed.git_branch, _dumps(parsed.versions), parsed.started_at, parsed.ended_at, parsed.main_ended_at,
                    _dumps(details),
                ),
            )
            self._insert_detail(parsed)
            self._apply_prices(parsed.session_id, priced)
            conn.execute("INSERT INTO ingest_checkpoints VALUES (?, ?)", (parsed.session_id, fingerprint))
            conn.execute("DELETE FROM ingest_failures WHERE session_id = ?", (parsed.session_id,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _insert_detail(self, parsed: ParsedSession) -> None:
        conn, sid = self.conn, parsed.session_id
        conn.executemany(
            AGENT_INSERT,
            [
                (sid, a.agent_id, position, a.parent_agent_id, a.kind, a.edge_source, a.agent_type, a.description, a.file,
                 a.status, a.outcome_cause, a.notification_status, a.spawn_tool_use_id, a.first_seen_at, a.last_seen_at,
                 int(a.has_transcript), None if a.reported is None else _dumps(a.reported))
                for position, a in enumerate(parsed.agents)
            ],
        )
        conn.executemany(
            "INSERT INTO orchestration_edges(session_id, parent, child, source, tool_use_id) VALUES (?,?,?,?,?)",
            [(sid, e.parent, e.child, e.source, e.tool_use_id) for e in parsed.edges],
        )
        conn.executemany(
            "INSERT INTO token_usage(session_id, seq, agent_id, message_id, request_id, model, input, output, cache_read, "
            "cache_write_5m, cache_write_1h, segment, at, speed, file, line, under_reported, origin_session) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (sid, seq, r.agent_id, r.message_id, r.request_id, r.model, r.tokens.input, r.tokens.output, r.tokens.cache_read,
                 r.tokens.cache_write_5m, r.tokens.cache_write_1h, r.segment, r.timestamp, r.speed, r.file, r.line,
                 int(r.under_reported), r.origin_session)
                for seq, r in enumerate(parsed.usage)
            ],
        )
        conn.executemany(
            "INSERT INTO compactions VALUES (?,?,?,?,?,?,?,?,?)",
            [
                (sid, seq, c.agent_id, c.uuid, c.timestamp, c.trigger, c.pre_tokens, c.post_tokens, c.compaction_agent_id)
                for seq, c in enumerate(parsed.compactions)
            ],
        )
        conn.executemany(
            "INSERT INTO transcripts VALUES (?,?,?)",
            [(sid, agent_id, _encode_messages(messages)) for agent_id, messages in sorted(parsed.transcripts.items())],
        )

    def _delete_rows(self, session_id: str, keep: tuple[str, ...] = ()) -> None:
        for table in ("views", "transcripts", "compactions", "token_usage", "orchestration_edges", "agents", "sessions", "ingest_checkpoints"):
            if table in keep:
                continue
            if table == "agents":
                # Children reference parents: clear the links before the rows.
                self.conn.execute("UPDATE agents SET parent_agent_id = NULL WHERE session_id = ?", (session_id,))
            self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    def usage_rows(self, session_id: str) -> list[PricedRow]:
        """Return a session's usage rows for pricing."""
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
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._apply_prices(session_id, priced)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _apply_prices(self, session_id: str, priced: Priced) -> None:
        """Write row costs inside the caller's transaction."""
        self.conn.executemany(
            "UPDATE token_usage SET family = ?, cost = ?, cost_input = ?, cost_output = ?, cost_cache_read = ?, "
            "cost_cache_write_5m = ?, cost_cache_write_1h = ?, price_problem = ? WHERE session_id = ? AND seq = ?",
            [
                (family, *((str(sum(parts, Decimal(0))), *map(str, parts)) if parts is not None else (None,) * 6), problem, session_id, seq)
                for seq, family, parts, problem in priced
            ],
        )

    def neighbours(self, session_ids: list[str]) -> set[str]:
        """Return other sessions that share a request with these (ownership may move between them)."""
        return {row[2] for row in self.shared_requests(session_ids)} - set(session_ids)

    def shared_requests(self, session_ids: list[str]) -> list[tuple[str | None, str | None, str, str | None]]:
        """Return (message_id, request_id, session_id, origin_session) of the usage rows linked to these sessions.

        Rows are linked when they share a message id or a request id, transitively: a copy of a
        session may keep the requestId and replace the message id (issue 13), a resume keeps both.
        """
        if not session_ids:
            return []
        rows = set(
            self.conn.execute(
                "SELECT message_id, request_id, session_id, origin_session FROM token_usage "
                "WHERE session_id IN (SELECT value FROM json_each(?)) AND (message_id IS NOT NULL OR request_id IS NOT NULL)",
                (orjson.dumps(sorted(session_ids)).decode(),),
            )
        )
        message_ids: set[str] = set()
        request_ids: set[str] = set()
        while True:
            new_messages = {row[0] for row in rows if row[0] is not None} - message_ids
            new_requests = {row[1] for row in rows if row[1] is not None} - request_ids
            if not new_messages and not new_requests:
                return sorted(rows, key=lambda row: (row[2], row[0] or "", row[1] or "", row[3] or ""))
            message_ids |= new_messages
            request_ids |= new_requests
            rows |= set(
                self.conn.execute(
                    "SELECT message_id, request_id, session_id, origin_session FROM token_usage "
                    "WHERE message_id IN (SELECT value FROM json_each(?)) OR request_id IN (SELECT value FROM json_each(?))",
                    (orjson.dumps(sorted(new_messages)).decode(), orjson.dumps(sorted(new_requests)).decode()),
                )
            )

    def put_views(self, rows: dict[str, tuple[bytes, bytes, bool]]) -> None:
        """Store computed session views with their summaries and whether the session is excluded."""
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO views VALUES (?, ?, ?, ?)",
                [(sid, body, summary, int(excluded)) for sid, (body, summary, excluded) in sorted(rows.items())],
            )

    def view_summaries(self) -> Iterator[tuple[str, bytes]]:
        """Yield every stored session summary by session id (not the views: those are read one by one)."""
        for sid, summary in self.conn.execute("SELECT session_id, summary FROM views ORDER BY session_id"):
            yield sid, bytes(summary)

    def view_body(self, session_id: str) -> bytes | None:
        """Return one session's stored view."""
        row = self.conn.execute("SELECT body FROM views WHERE session_id = ?", (session_id,)).fetchone()
        return None if row is None else bytes(row[0])

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

    def output_digests(self) -> dict[str, str]:
        """Return the input digest each output file was last written from."""
        return dict(self.conn.execute("SELECT path, digest FROM outputs"))

    def set_output_digests(self, digests: dict[str, str], previous: dict[str, str]) -> None:
        """Make the record of output digests this build's, writing only what changed."""
        with self.conn:
            self.conn.executemany("DELETE FROM outputs WHERE path = ?", [(path,) for path in sorted(set(previous) - set(digests))])
            self.conn.executemany(
                "INSERT OR REPLACE INTO outputs VALUES (?, ?)",
                sorted((path, digest) for path, digest in digests.items() if previous.get(path) != digest),
            )

    def site_signature(self) -> str | None:
        """Return the signature of the last build that rendered the site."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'site_signature'").fetchone()
        return row[0] if row else None

    def set_site_signature(self, signature: str) -> None:
        """Remember the signature of the build that just rendered the site."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('site_signature', ?)", (signature,))

    def redaction_counts(self) -> dict[str, Any]:
        """Return the last `--redact` build's masks in each session's transcripts: {session: [inputs digest, {kind: n}]}."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'redaction_counts'").fetchone()
        try:
            counts = orjson.loads(row[0]) if row else {}
        except orjson.JSONDecodeError:
            return {}
        return counts if isinstance(counts, dict) else {}

    def set_redaction_counts(self, counts: dict[str, Any]) -> None:
        """Remember the masks counted in each session's transcripts (counts only, never the text)."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('redaction_counts', ?)", (_dumps(counts),))

    def stale_agents(self, now: datetime, watchdog_minutes: int) -> list[tuple[str, str]]:
        """Return the agents the watchdog shows as unknown at this clock (pages change when this does)."""
        stale_before = stale_cutoff(now, watchdog_minutes)
        return list(self.conn.execute(
            "SELECT session_id, agent_id FROM agents WHERE status NOT IN ('completed', 'error') "
            "AND (last_seen_at IS NULL OR last_seen_at < ?) ORDER BY session_id, agent_id",
            (stale_before,),
        ))

    def render_interrupted(self) -> bool:
        """Tell whether the last rendering stopped before it finished."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'rendering'").fetchone()
        return row is not None and row[0] == "1"

    def set_render_interrupted(self, rendering: bool) -> None:
        """Mark rendering as started (True) or finished (False)."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('rendering', ?)", ("1" if rendering else "0",))

    def excluded_count(self) -> int:
        """Count the sessions left out of the totals for want of a price."""
        return self.conn.execute("SELECT COUNT(*) FROM views WHERE excluded").fetchone()[0]

    # -- hook events ----------------------------------------------------------------------------

    def spool_offset(self) -> int:
        """Return how many bytes of the spool were ingested."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'spool_offset'").fetchone()
        return int(row[0]) if row else 0

    def add_events(self, rows: list[tuple[str, str, str, str | None]], offset: int, bad_lines: int) -> int:
        """Store spool lines (key, received_at, line, session) and the new offset in one transaction."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
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
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('spool_offset', ?)", (str(offset),))
            previous = conn.execute("SELECT value FROM meta WHERE key = 'spool_bad_lines'").fetchone()
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('spool_bad_lines', ?)",
                         (str((int(previous[0]) if previous else 0) + bad_lines),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return added

    def spool_bad_lines(self) -> int:
        """Count the spool lines that could not be read (cut short by a crash, or not hook records)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'spool_bad_lines'").fetchone()
        return int(row[0]) if row else 0

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
        with self.conn:
            if event == "SubagentStop" and agent_id and agent_id != session_id:
                # An observed ending; an agent id that is the session id is refused (main never "completes").
                cursor = self.conn.execute(
                    "UPDATE agents SET status = 'completed' WHERE session_id = ? AND agent_id = ? "
                    "AND status NOT IN ('completed', 'error')",
                    (session_id, agent_id),
                )
            elif event in ("Stop", "UserPromptSubmit"):
                # Inferred states: the main agent waits after a turn and works after a prompt, but only
                # when this event is later than all activity seen so far (the anchor strictly advances).
                cursor = self.conn.execute(
                    "UPDATE agents SET status = ?, last_seen_at = ? WHERE session_id = ? AND agent_id = ? "
                    "AND status NOT IN ('completed', 'error') AND (last_seen_at IS NULL OR last_seen_at < ?)",
                    ("waiting" if event == "Stop" else "working", at, session_id, session_id, at),
                )
            else:
                return 0
            return cursor.rowcount

    def session_ids(self) -> list[str]:
        """Return every cached session id."""
        return [row[0] for row in self.conn.execute("SELECT session_id FROM sessions ORDER BY session_id")]

    def prices_digest(self) -> str | None:
        """Return the digest of the price table every cached session was priced with."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'prices_digest'").fetchone()
        return row[0] if row else None

    def set_prices_digest(self, digest: str) -> None:
        """Record that every cached session is priced with this table; failures get a fresh budget."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('prices_digest', ?)", (digest,))
            self.conn.execute("UPDATE ingest_failures SET consecutive = 0")

    def build_number(self) -> int:
        """Count this build (the quarantine schedule is measured in builds, not time)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'builds'").fetchone()
        number = int(row[0]) + 1 if row else 1
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('builds', ?)", (str(number),))
        return number

    def record_failure(self, session_id: str, project: str, fingerprint: str, reason: str, build: int = 0) -> int:
        """Record a failed ingest, dropping the session's stale rows; return consecutive failures.

        After QUARANTINE_AFTER failures in a row the session waits 1, 2, 4 … 32 builds (and a
        change of its bytes) before it is read again.
        """
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._delete_rows(session_id)
            row = conn.execute("SELECT consecutive FROM ingest_failures WHERE session_id = ?", (session_id,)).fetchone()
            consecutive = (row[0] if row else 0) + 1
            wait = min(2 ** (consecutive - QUARANTINE_AFTER), MAX_QUARANTINE_BUILDS) if consecutive >= QUARANTINE_AFTER else 0
            conn.execute(
                "INSERT OR REPLACE INTO ingest_failures VALUES (?,?,?,?,?,?)",
                (session_id, project, fingerprint, reason, consecutive, build + wait),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return consecutive

    def missing_sessions(self, present: set[str], keep_projects: set[str]) -> list[str]:
        """Return cached sessions no longer in the corpus, except those of folders that could not be listed."""
        gone = []
        rows = self.conn.execute("SELECT session_id, project FROM sessions UNION SELECT session_id, project FROM ingest_failures")
        for session_id, project in sorted(rows.fetchall()):
            if session_id not in present and project not in keep_projects:
                gone.append(session_id)
        return gone

    def forget(self, gone: list[str]) -> None:
        """Delete everything cached for these sessions."""
        for session_id in gone:
            self.conn.execute("BEGIN IMMEDIATE")
            self._delete_rows(session_id)
            self.conn.execute("DELETE FROM ingest_failures WHERE session_id = ?", (session_id,))
            self.conn.execute("COMMIT")

    # -- reading back -------------------------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[sqlite3.Row]:
        """Run a read query returning rows addressable by column name."""
        cursor = self.conn.execute(sql, params)
        cursor.row_factory = sqlite3.Row
        return iter(cursor.fetchall())

    def transcript(self, session_id: str, agent_id: str) -> list[Message]:
        """Load one agent's displayable transcript."""
        row = self.conn.execute(
            "SELECT body FROM transcripts WHERE session_id = ? AND agent_id = ?", (session_id, agent_id)
        ).fetchone()
        return _decode_messages(row[0]) if row else []

    def svg(self, digest: str) -> bytes | None:
        """Return a cached SVG by the digest of its DOT source."""
        row = self.conn.execute("SELECT svg FROM svg_cache WHERE digest = ?", (digest,)).fetchone()
        return bytes(row[0]) if row else None

    def put_svg(self, digest: str, svg: bytes) -> None:
        """Remember the SVG drawn from a DOT source."""
        self.conn.execute("INSERT OR REPLACE INTO svg_cache VALUES (?, ?)", (digest, svg))


def _encode_messages(messages: list[Message]) -> bytes:
    return orjson.dumps(
        [
            [m.role, m.uuid, m.timestamp, m.model, m.is_meta, m.subtype,
             [[b.kind, b.text, b.name, b.tool_use_id, b.is_error, b.truncated_from] for b in m.blocks]]
            for m in messages
        ]
    )


def _decode_messages(body: bytes) -> list[Message]:
    return [
        Message(role=role, uuid=uuid, timestamp=at, model=model, is_meta=is_meta, subtype=subtype,
                blocks=tuple(Block(kind=b[0], text=b[1], name=b[2], tool_use_id=b[3], is_error=b[4], truncated_from=b[5]) for b in blocks))
        for role, uuid, at, model, is_meta, subtype, blocks in orjson.loads(body)
    ]
