"""Defensive field access: any field may be missing, null or of another type (format §0)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

CANONICAL_INSTANT_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z")


def text_of(value: Any) -> str | None:
    """Return a string field, or None for anything else."""
    return value if isinstance(value, str) else None


def dict_of(value: Any) -> dict[str, Any]:
    """Return a dict field, or an empty dict for anything else."""
    return value if isinstance(value, dict) else {}


def list_of(value: Any) -> list[Any]:
    """Return a list field, or an empty list for anything else."""
    return value if isinstance(value, list) else []


def count_of(value: Any) -> int | None:
    """Return a non-negative integer count, or None (bools and floats are not counts)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def instant_of(value: Any) -> str | None:
    """Normalise an ISO-8601 timestamp to UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`, or None if unparseable."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    if CANONICAL_INSTANT_RE.match(value):
        # The form Claude Code writes (format §2.1): validate the calendar, keep the text.
        try:
            datetime.fromisoformat(value[:23])
        except ValueError:
            return None
        return value
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        utc = parsed.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def content_text(content: Any) -> str:
    """Join the text of a message `content` (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in list_of(content):
        if isinstance(block, dict) and block.get("type") == "text":
            text = text_of(block.get("text"))
            if text:
                parts.append(text)
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)
