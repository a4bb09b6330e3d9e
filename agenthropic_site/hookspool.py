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
import select
import sys
import time
import uuid
from typing import Any, BinaryIO

SPOOL_FOLDER = "hooks"
SPOOL_FILE = "spool.jsonl"
MAX_PAYLOAD_BYTES = 1024 * 1024
MAX_RAW_CHARS = 2048
READ_SECONDS = 2.0
# The fields the status rules and the timeline use (format §7). Everything else — prompt text,
# last assistant message, tool inputs and responses, summaries — is dropped before writing.
KEPT_FIELDS = (
    "hook_event_name", "session_id", "agent_id", "agent_type", "source", "trigger", "reason",
    "tool_name", "tool_use_id", "notification_type", "stop_hook_active", "prompt_id", "permission_mode",
)


def spool_path(env: dict[str, str] | None = None) -> str:
    """Return the spool file of the cache folder the build uses (same defaults as `build`)."""
    env = dict(os.environ) if env is None else env
    cache = env.get("AGENTHROPIC_CACHE_DIR", "").strip()
    if not cache:
        xdg = env.get("XDG_CACHE_HOME", "").strip()
        cache = os.path.join(xdg, "agenthropic") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "agenthropic")
    return os.path.join(os.path.expanduser(cache), SPOOL_FOLDER, SPOOL_FILE)


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
    """Build the spool record: the kept fields of a JSON object, or a marked raw excerpt."""
    record: dict[str, Any] = {"delivery_id": delivery_id, "received_at": received_at}
    try:
        payload = None if cut else json.loads(raw)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        record["payload"] = {key: payload[key] for key in KEPT_FIELDS if _keepable(payload.get(key))}
    else:
        record["error"] = "truncated" if cut else ("not-an-object" if payload is not None else "not-json")
        record["raw"] = raw[:MAX_RAW_CHARS].decode("utf-8", "replace")
        record["raw_bytes"] = len(raw)
    return record


def _keepable(value: Any) -> bool:
    """Keep short identifiers only: no huge strings, no lone surrogates, no nested data."""
    if isinstance(value, bool) or (isinstance(value, int) and abs(value) < 2**53):
        return True
    if isinstance(value, str) and len(value) <= 512:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return False


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
    try:
        stream = stdin if stdin is not None else sys.stdin.buffer
        raw, cut = read_payload(stream, time.monotonic() + READ_SECONDS)
        now = time.time()
        received_at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
        record = envelope(raw, cut, uuid.uuid4().hex, received_at)
        # ensure_ascii keeps the line valid UTF-8 whatever the payload held (lone surrogates too).
        line = json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        append_line(spool_path(env), line)
    except BaseException:  # noqa: BLE001 - a hook must never fail Claude Code
        pass
    return 0
