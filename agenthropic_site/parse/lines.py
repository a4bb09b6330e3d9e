"""Split JSONL bytes into records; every bad line becomes a typed LineError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from agenthropic_site.parse.model import LineError


@dataclass(frozen=True)
class Record:
    """One decoded JSON object and its 1-based line number."""

    line: int
    data: dict[str, Any]


@dataclass(frozen=True)
class DecodedFile:
    """A transcript's usable records, its bad lines, and whether its last line is pending."""

    records: list[Record]
    errors: list[LineError]
    pending: bool


def decode_jsonl(rel: str, data: bytes) -> DecodedFile:
    """Decode JSONL, splitting on b"\\n" only (str.splitlines would also break on U+2028)."""
    pieces = data.split(b"\n")
    # The piece after the last newline is unterminated: Claude Code may be writing it right now,
    # so it is pending, not malformed (format §9.2).
    tail = pieces.pop()
    pending = bool(tail.strip())
    records: list[Record] = []
    errors: list[LineError] = []
    for index, raw in enumerate(pieces, start=1):
        if not raw.strip():
            continue
        try:
            # orjson rejects invalid UTF-8, lone surrogates and nesting past 1024 levels.
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            errors.append(LineError(rel, index, "invalid-json", _short(str(exc))))
            continue
        if not isinstance(value, dict):
            errors.append(LineError(rel, index, "not-an-object", f"a JSON {type(value).__name__}, not an object"))
            continue
        records.append(Record(index, value))
    return DecodedFile(records, errors, pending)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
