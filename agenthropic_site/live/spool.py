"""`agenthropic hook`: append one Claude Code hook payload to the spool, fast, and never fail.

Claude Code runs this for every hook event it is configured for, so it must not block, must
not slow a session down, and must not lose or leak data: it reads one JSON payload from stdin,
keeps only the identifiers the status rules use (never prompts, messages or tool data),
and appends one line to a private, append-only spool that the next build ingests. It imports
only the standard library.
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import time
from typing import Any, BinaryIO

from agenthropic_site.places import SPOOL_FOLDER, default_cache_dir, home_folder

SPOOL_FILE = "spool.jsonl"
MAX_PAYLOAD_BYTES = 1024 * 1024
READ_SECONDS = 2.0
# The fields the status rules and the timeline use (format §7), each with the only shape it may
# have. Everything else — prompt text, last assistant message, tool inputs and responses,
# summaries, paths — is dropped before writing, and so is a kept field of any other shape: no
# spaces, slashes or markup ever reach the spool, so no sentence, path or pasted text can.
_WORD = re.compile(r"[A-Za-z][A-Za-z_]{0,63}\Z")  # enum-like names: letters and underscores, no digits
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}\Z")  # the parser's agent-id shape (parse/reported.py)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}\Z")  # agent types and tool names ("plugin:agent", "mcp__s__t")
_SESSION = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")  # the parser's (parse/scan.py)
KEPT_FIELDS: dict[str, re.Pattern[str] | type[bool]] = {
    "hook_event_name": _WORD, "session_id": _SESSION, "agent_id": _ID, "agent_type": _NAME, "source": _WORD,
    "trigger": _WORD, "reason": _WORD, "tool_name": _NAME, "tool_use_id": _ID, "notification_type": _WORD,
    "stop_hook_active": bool, "prompt_id": _ID, "permission_mode": _WORD,
}
# What a spool line holds besides the payload's fields: ours, never the payload's text.
_DELIVERY = _ID
_RECEIVED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z")
ERRORS = ("truncated", "not-json", "not-an-object")
_SPACE = re.compile(r"[ \t\n\r]*")


def spool_path(env: dict[str, str] | None = None) -> str:
    """Return the spool file of the cache folder the build uses (same defaults as `build`)."""
    env = dict(os.environ) if env is None else env
    return os.path.join(default_cache_dir(env, home_folder(env)), SPOOL_FOLDER, SPOOL_FILE)


def read_payload(stream: BinaryIO, deadline: float) -> tuple[bytes, bool]:
    """Read stdin until EOF, the size cap or the deadline; return the bytes and whether they were cut."""
    chunks: list[bytes] = []
    size = 0
    fd = stream.fileno()
    while size <= MAX_PAYLOAD_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            return b"".join(chunks), True
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[:MAX_PAYLOAD_BYTES], True


def envelope(raw: bytes, cut: bool, delivery_id: str, received_at: str) -> dict[str, Any]:
    """Build the spool record: the identifier fields of a payload, and for a bad payload its kind and size only."""
    record: dict[str, Any] = {"delivery_id": delivery_id, "received_at": received_at}
    if cut:
        # Identifiers usually come before the prompt or message that made the payload too large.
        record.update(error="truncated", raw_bytes=len(raw), payload=kept_fields(_leading_members(raw)))
        return record
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError included; nesting too deep for the parser
        record.update(error="not-json", raw_bytes=len(raw))
        return record
    if isinstance(payload, dict):
        record["payload"] = kept_fields(payload)
    else:
        record.update(error="not-an-object", raw_bytes=len(raw))
    return record


def kept_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """Return the payload's kept fields whose value has the field's shape; drop everything else."""
    kept: dict[str, Any] = {}
    for key, shape in KEPT_FIELDS.items():
        value = payload.get(key)
        if shape is bool:
            if isinstance(value, bool):
                kept[key] = value
        elif isinstance(value, str) and shape.match(value):
            kept[key] = value
    return kept


def _real_instant(text: str) -> bool:
    """Tell whether a spool time of our form names a real instant of the years a transcript's may be in.

    The hook writes it from the clock, but the spool is a file anyone can edit: a month 13, once
    stored, failed every later build, and the year 9999 would hold a status for ever.
    """
    from agenthropic_site.parse.fields import instant_of  # loaded by a build, never by the hook

    return instant_of(text) == text


def clean_record(record: Any) -> dict[str, Any] | None:
    """Return a spool record as a build may store it (ours and identifiers only), or None if it is not ours."""
    if not isinstance(record, dict):
        return None
    delivery_id, received_at = record.get("delivery_id"), record.get("received_at")
    if not (isinstance(delivery_id, str) and _DELIVERY.match(delivery_id) and isinstance(received_at, str) and _RECEIVED.match(received_at)
            and _real_instant(received_at)):
        return None
    clean: dict[str, Any] = {"delivery_id": delivery_id, "received_at": received_at}
    if isinstance(record.get("payload"), dict):
        clean["payload"] = kept_fields(record["payload"])
    if record.get("error") in ERRORS:
        clean["error"] = record["error"]
    if isinstance(record.get("raw_bytes"), int) and not isinstance(record["raw_bytes"], bool):
        clean["raw_bytes"] = record["raw_bytes"]
    return clean


def _leading_members(raw: bytes) -> dict[str, Any]:
    """Return the complete top-level members at the start of a JSON object cut short."""
    text = raw.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    members: dict[str, Any] = {}
    index = _skip_space(text, 0)
    if not text.startswith("{", index):
        return members
    index += 1
    try:
        while True:
            key, index = decoder.raw_decode(text, _skip_space(text, index))
            index = _skip_space(text, index)
            if not isinstance(key, str) or not text.startswith(":", index):
                break
            value, index = decoder.raw_decode(text, _skip_space(text, index + 1))
            if key in KEPT_FIELDS:
                members[key] = value
            index = _skip_space(text, index)
            if not text.startswith(",", index):
                break
            index += 1
    except (ValueError, RecursionError):
        pass  # the member the cut fell in, or text that is not JSON: what came before it stands
    return members


def _skip_space(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    assert match is not None  # `*` always matches
    return match.end()


def append_line(path: str, line: bytes) -> None:
    """Append one line to the spool with a single write; folders 0700, file 0600."""
    folder = os.path.dirname(path)
    os.makedirs(os.path.dirname(folder), mode=0o700, exist_ok=True)  # the cache folder itself
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def run_hook(stdin: BinaryIO | None = None, env: dict[str, str] | None = None) -> int:
    """Spool one payload; always return 0 so that Claude Code is never blocked by this hook."""
    import uuid  # here, not at the top: a build's no-change check imports this module for the spool's folder

    try:
        stream = stdin if stdin is not None else sys.stdin.buffer
        raw, cut = read_payload(stream, time.monotonic() + READ_SECONDS)
        now = time.time()
        received_at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
        record = envelope(raw, cut, uuid.uuid4().hex, received_at)
        # Every kept value is ASCII by its shape; ensure_ascii keeps the line ASCII whatever changes.
        line = json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        append_line(spool_path(env), line)
    except BaseException:  # noqa: BLE001 - a hook must never fail Claude Code
        pass
    return 0
