"""Ingest the hook spool into the cache and let hook events move agent statuses (and nothing else).

Hooks never create, delete or re-parent an agent, and never touch tokens (design invariant 4):
they only UPDATE the status of agents the parser created, under the status precedence rules.
"""

from __future__ import annotations

import hashlib
import os

import orjson

from agenthropic_site.cache import Cache
from agenthropic_site.live.spool import SPOOL_FILE, clean_record
from agenthropic_site.places import SPOOL_FOLDER
from agenthropic_site.records import record_class

MAX_SPOOL_LINE = 1024 * 1024
MAX_GLUED_TRIES = 64  # objects opened in a bad line that are tried as the start of a glued record


@record_class
class SpoolResult:
    """What one pass over the spool found."""

    added: int = 0
    duplicates: int = 0
    bad_lines: int = 0
    sessions: set[str] | None = None


def spool_file(cache_folder: str | os.PathLike[str]) -> str:
    """Return the spool path inside a cache folder."""
    return os.path.join(os.fspath(cache_folder), SPOOL_FOLDER, SPOOL_FILE)


def idempotency_key(record: dict) -> str:
    """Hash the canonical envelope without its receive time (the delivery id makes each firing unique)."""
    canonical = {key: value for key, value in record.items() if key != "received_at"}
    return hashlib.sha256(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS)).hexdigest()


def ingest_spool(cache: Cache, cache_folder: str | os.PathLike[str]) -> SpoolResult:
    """Append the spool's new complete lines to events_raw; re-reading the same lines adds nothing."""
    result = SpoolResult(sessions=set())
    path = spool_file(cache_folder)
    try:
        size = os.path.getsize(path)
    except OSError:
        return result
    offset = cache.spool_offset()
    if size < offset:
        offset = 0  # the spool was replaced: read it all again; idempotency keys drop repeats
    if size == offset:
        return result
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(size - offset)
    end = data.rfind(b"\n") + 1  # an unterminated tail is a hook still writing: next time
    rows = []
    for line in data[:end].split(b"\n")[:-1]:
        record = _record(line)
        clean = clean_record(record)
        if record is None or clean is None:
            result.bad_lines += 1  # a line cut short by a crash, or not ours
            record = _glued_tail(line)
            clean = clean_record(record)
            if record is None or clean is None:
                continue
        # Store the line as the hook would write it today: identifiers only, even from a spool
        # an older hook filled with raw excerpts. The key stays that of the line as read, so a
        # spool read again adds nothing.
        body = orjson.dumps(clean, option=orjson.OPT_SORT_KEYS).decode()
        rows.append((idempotency_key(record), clean["received_at"], body, clean.get("payload", {}).get("session_id")))
    added = cache.add_events(rows, offset + end, result.bad_lines)
    result.added = added
    result.duplicates = len(rows) - added
    result.sessions = {row[3] for row in rows if row[3]}
    return result


def _glued_tail(line: bytes) -> dict | None:
    """Return the whole record a hook appended right after a line cut short, when the line ends in one.

    A write cut short (a full disk writes part of a line and fails) leaves no newline, so the next
    hook's line is glued to it: without this, that next event was lost with the cut one.
    """
    start = line.find(b'{"', 1)
    for _ in range(MAX_GLUED_TRIES):  # a bound: each try parses the rest of the line
        if start == -1:
            break
        record = _record(line[start:])
        if record is not None and clean_record(record) is not None:
            return record
        start = line.find(b'{"', start + 1)
    return None


def _record(line: bytes) -> dict | None:
    if not line.strip() or len(line) > MAX_SPOOL_LINE:
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def apply_hook_statuses(cache: Cache, session_ids: set[str]) -> int:
    """Replay the stored events of these sessions onto their agents; return rows changed."""
    changed = 0
    for session_id, agent_id, event, at in cache.events_for(sorted(session_ids)):
        changed += cache.apply_event(session_id, _agent_id(agent_id), event, at)
    return changed


def _agent_id(value: str | None) -> str | None:
    # Documentation examples write "agent-abc123"; real payloads carry the bare id (format §7).
    if value and value.startswith("agent-"):
        return value[len("agent-"):]
    return value
