"""Split JSONL bytes into records; every bad line becomes a typed LineError."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from agenthropic_site.parse.model import LineError
from agenthropic_site.records import record_class

# An append that lands right after an unterminated complete line glues two records into one
# line (`{...}{...}`). Each `}{` is a possible seam; past this many tries the line stays an
# error, so a corrupt line full of `}{` (LaTeX, code) costs a bounded number of decodes.
MAX_SEAM_TRIES = 64


@record_class(frozen=True)
class Record:
    """One decoded JSON object and its 1-based line number."""

    line: int
    data: dict[str, Any]


@record_class(frozen=True)
class DecodedFile:
    """A transcript's usable records, its bad lines, and whether its last line is pending."""

    records: list[Record]
    errors: list[LineError]
    pending: bool


def decode_jsonl(rel: str, data: bytes, lines_before: int = 0) -> DecodedFile:
    """Decode JSONL, splitting on b"\\n" only (str.splitlines would also break on U+2028)."""
    errors: list[LineError] = []
    pending: list[bool] = []
    records = list(iter_jsonl(rel, data, errors, pending, lines_before))
    return DecodedFile(records, errors, bool(pending))


def iter_jsonl(rel: str, data: bytes, errors: list[LineError], pending: list[bool], lines_before: int = 0) -> Iterator[Record]:
    """Yield the records of JSONL bytes one line at a time (a large transcript's records are never all alive at once).

    Bad lines are appended to `errors`; `pending` gets one True when the last line is pending.
    Lines are numbered from `lines_before` + 1 (the bytes follow that many lines already read).
    """
    start, index, size = 0, lines_before, len(data)
    while start < size:
        end = data.find(b"\n", start)
        last = end < 0
        raw = data[start:] if last else data[start:end]
        index += 1
        start = size if last else end + 1
        if not raw.strip():
            continue
        values = decode_line(raw)
        if isinstance(values, str):
            # Issue 13 replaces the old "unterminated last line is pending" rule: finished,
            # exported, archived, checkpointed and copied transcripts often end without a final
            # newline, so only a last piece that does not decode is pending (Claude Code may be
            # writing it, format §9.2); it is not an error and is read again when the file grows.
            if last:
                pending.append(True)
            else:
                errors.append(LineError(rel, index, "invalid-json", _short(values)))
            continue
        for value in values:
            if isinstance(value, dict):
                yield Record(index, value)
            else:
                errors.append(LineError(rel, index, "not-an-object", f"a JSON {type(value).__name__}, not an object"))


def decode_line(raw: bytes) -> list[Any] | str:
    """Return the JSON values of one line (two or more when records were glued), or why it is invalid."""
    try:
        # orjson rejects invalid UTF-8, lone surrogates, NaN and nesting past 1024 levels; the
        # stdlib json module would accept lone surrogates.
        return [orjson.loads(raw)]
    except orjson.JSONDecodeError as exc:
        return split_glued(raw) or str(exc)


def split_glued(raw: bytes) -> list[dict[str, Any]] | None:
    """Read a line of JSON objects written back to back (`{...}{...}`), or None when it is not one."""
    objects: list[dict[str, Any]] = []
    start = 0
    seam = raw.find(b"}{")
    for _ in range(MAX_SEAM_TRIES):
        if seam < 0:
            break
        try:
            value = orjson.loads(raw[start : seam + 1])
        except orjson.JSONDecodeError:
            seam = raw.find(b"}{", seam + 1)  # a `}{` inside a string, or a bad piece
            continue
        # A piece that decodes and ends in "}" is an object; no shorter or longer piece from
        # the same start could also decode, so the first seam that works is the only one.
        objects.append(value)
        start = seam + 1
        seam = raw.find(b"}{", start)
    if not objects:
        return None
    try:
        value = orjson.loads(raw[start:])
    except orjson.JSONDecodeError:
        return None
    return objects + [value] if isinstance(value, dict) else None


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
