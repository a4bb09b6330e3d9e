"""Defensive field access: any field may be missing, null or of another type (format §0)."""

from __future__ import annotations

import re
from datetime import datetime, UTC
from typing import Any

CANONICAL_INSTANT_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z")
# The years an instant may fall in: shown in any zone, or as the 5-hour block, day, week or month
# it opens, it stays within datetime's years 1 to 9999 (a transcript dated 9999-12-31T23:55Z made
# every build fail: its block ended in the year 10000).
EARLIEST_YEAR, LATEST_YEAR = 2, 9998
# What str.split() with no argument separates: runs of characters that are not whitespace.
WORD_RE = re.compile(r"\S+")


def text_of(value: Any) -> str | None:
    """Return a string field, or None for anything else."""
    return value if isinstance(value, str) else None


def dict_of(value: Any) -> dict[str, Any]:
    """Return a dict field, or an empty dict for anything else."""
    return value if isinstance(value, dict) else {}


def list_of(value: Any) -> list[Any]:
    """Return a list field, or an empty list for anything else."""
    return value if isinstance(value, list) else []


# No request has a billion tokens (1,000 times the largest context window). A larger count is
# not a count: orjson reads integers up to 2^64 - 1 exactly, which SQLite's signed 64-bit
# INTEGER cannot store and whose sums orjson cannot write back (tests/test_adversarial.py).
MAX_COUNT = 10**9


def count_of(value: Any) -> int | None:
    """Return a non-negative integer count up to MAX_COUNT, or None (bools and floats are not counts)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


def instant_of(value: Any) -> str | None:
    """Normalise an ISO-8601 timestamp to UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`, or None if unparseable or outside EARLIEST_YEAR..LATEST_YEAR."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    if CANONICAL_INSTANT_RE.match(value):
        # The form Claude Code writes (format §2.1): validate the calendar, keep the text.
        try:
            datetime.fromisoformat(value[:23])
        except ValueError:
            return None
        return value if EARLIEST_YEAR <= int(value[:4]) <= LATEST_YEAR else None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        utc = parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    if not EARLIEST_YEAR <= utc.year <= LATEST_YEAR:
        return None
    # Not strftime: glibc writes years before 1000 with fewer than four digits, which would sort
    # before every real day and break the canonical form the rest of the code relies on.
    return f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}.{utc.microsecond // 1000:03d}Z"


def clip_words(text: str, limit: int) -> tuple[str, bool]:
    """Collapse whitespace and keep the whole words that fit in `limit` characters; say if any were left out.

    A word is never split, so a credential in the text is kept whole (and `--redact` can
    recognise it) or left out, unless the first word alone is longer than `limit`. Only the
    words kept are ever split out of the text: a 50 MB prompt costs no more than a short one.
    """
    words: list[str] = []
    size = -1
    for match in WORD_RE.finditer(text):
        word = match.group()
        if size + 1 + len(word) > limit:
            return (" ".join(words) if words else word[:limit]), True
        words.append(word)
        size += len(word) + 1
    return " ".join(words), False


def collapsed(text: str, limit: int) -> str:
    """Return the text's whole words, whitespace collapsed, that fit in `limit` characters."""
    return clip_words(text, limit)[0]


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
