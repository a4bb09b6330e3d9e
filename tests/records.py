"""Hand-built transcript records for unit tests (shapes from the format notes, minimal)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "11111111-2222-4333-8444-555555555555"
OTHER_SID = "99999999-8888-4777-8666-555555555555"


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def user(uuid: str, text: Any, *, parent: str | None = None, ts: str = "2026-01-01T10:00:00.000Z", **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": extra.pop("session", SID), "timestamp": ts,
            "cwd": "/home/u/app", "version": "2.1.39", "message": {"role": "user", "content": text}, **extra}


def assistant(uuid: str, mid: str, rid: str, usage: dict[str, Any], *, content: list[Any] | None = None, model: str = "claude-sonnet-4-5-20250929",
              stop: str | None = "end_turn", ts: str = "2026-01-01T10:00:01.000Z", **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "uuid": uuid, "parentUuid": None, "sessionId": extra.pop("session", SID), "timestamp": ts, "requestId": rid,
            "version": "2.1.39", "cwd": "/home/u/app",
            "message": {"id": mid, "model": model, "role": "assistant", "type": "message", "stop_reason": stop,
                        "content": content if content is not None else [{"type": "text", "text": "ok"}], "usage": usage}, **extra}


def usage(inp: int = 0, out: int = 0, read: int = 0, w5: int = 0, w1: int = 0, split: bool = True) -> dict[str, Any]:
    value: dict[str, Any] = {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read, "cache_creation_input_tokens": w5 + w1}
    if split:
        value["cache_creation"] = {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}
    return value


def write(path: Path, *records: dict[str, Any] | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(r if isinstance(r, bytes) else line(r) for r in records))
    return path
