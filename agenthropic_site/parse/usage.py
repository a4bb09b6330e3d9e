"""Token usage: read it from assistant lines and deduplicate requests (format §3)."""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import orjson

from agenthropic_site.parse.fields import count_of, dict_of, list_of, text_of
from agenthropic_site.parse.model import LineError, Tokens, UsageRow
from agenthropic_site.records import record_class

SYNTHETIC_MODEL = "<synthetic>"
# A kept line with no stop_reason and fewer output tokens than this, on a message with this much
# content, is a streaming placeholder whose final count was never written (format §3.2, 2.1.38–2.1.114).
PLACEHOLDER_MAX_OUTPUT = 20
PLACEHOLDER_MIN_CONTENT_CHARS = 400
# Characters per token, for the estimate of output a placeholder count left unrecorded.
CHARS_PER_TOKEN_LOW = 3
CHARS_PER_TOKEN_HIGH = 5


@record_class
class Candidate:
    """One assistant line's usage before deduplication."""

    agent_id: str
    message_id: str | None
    request_id: str | None
    model: str
    tokens: Tokens
    timestamp: str | None
    speed: str | None
    stop_reason: str | None
    file: str
    line: int
    content: Any  # kept by reference; measured only when the count looks like a placeholder (a Measured after a checkpoint)
    origin_session: str | None = None
    version: str | None = None


def read_tokens(usage: Any) -> Tokens | str:
    """Return the Tokens of a `message.usage` object, or a reason string when it is malformed."""
    if not isinstance(usage, dict):
        return "usage is not an object"
    values = {}
    for field in ("input_tokens", "output_tokens"):
        value = count_of(usage.get(field))
        if value is None:
            return f"{field} missing or not a non-negative integer"
        values[field] = value
    optional = {}
    for field in ("cache_read_input_tokens", "cache_creation_input_tokens"):
        raw = usage.get(field)
        value = 0 if raw is None else count_of(raw)
        if value is None:
            return f"{field} not a non-negative integer"
        optional[field] = value
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        # With a TTL breakdown (seen from 1.0.128 on), it is the truth; the total may read 0 before 2.1.152.
        five = count_of(split.get("ephemeral_5m_input_tokens", 0))
        hour = count_of(split.get("ephemeral_1h_input_tokens", 0))
        if five is None or hour is None:
            return "cache_creation breakdown not non-negative integers"
    else:
        # No breakdown recorded (1.0.24–1.0.56): every cache write counts as a 5-minute write.
        five, hour = optional["cache_creation_input_tokens"], 0
    return Tokens(
        input=values["input_tokens"],
        output=values["output_tokens"],
        cache_read=optional["cache_read_input_tokens"],
        cache_write_5m=five,
        cache_write_1h=hour,
    )


def candidate_from(
    agent_id: str, rel: str, line: int, record: dict[str, Any], timestamp: str | None, origin: str | None = None
) -> Candidate | LineError | None:
    """Read the usage of one assistant record; None when it carries nothing to count."""
    message = dict_of(record.get("message"))
    model = message.get("model")
    if model == SYNTHETIC_MODEL:
        return None  # local placeholders and API errors, always zero (format §2.3)
    if "usage" not in message:
        return None
    if not isinstance(model, str) or not model:
        return LineError(rel, line, "malformed-usage", "assistant model is not a string")
    tokens = read_tokens(message.get("usage"))
    if isinstance(tokens, str):
        return LineError(rel, line, "malformed-usage", tokens)
    return Candidate(
        agent_id=agent_id,
        message_id=text_of(message.get("id")),
        request_id=text_of(record.get("requestId")),
        model=model,
        tokens=tokens,
        timestamp=timestamp,
        speed=text_of(dict_of(message.get("usage")).get("speed")),
        stop_reason=text_of(message.get("stop_reason")),
        file=rel,
        line=line,
        content=message.get("content"),
        origin_session=origin,
        version=text_of(record.get("version")),
    )


@record_class(frozen=True)
class Measured:
    """A usage line's content already measured (a checkpoint keeps the size, not the content)."""

    chars: int


def content_chars(content: Any) -> int:
    """Measure the text, thinking and tool input a message block list carries."""
    if isinstance(content, Measured):
        return content.chars
    chars = 0
    for block in list_of(content):
        if isinstance(block, dict):
            for key in ("text", "thinking"):
                value = block.get(key)
                if isinstance(value, str):
                    chars += len(value)
            if block.get("type") == "tool_use":
                chars += len(orjson.dumps(block.get("input")))
    return chars


def dedupe_file(candidates: Iterable[Candidate]) -> list[UsageRow]:
    """Keep one line per request: the largest output_tokens, ties to the last line.

    A request is its requestId, else its message.id (format §3.2). Keying by requestId first
    also joins copies whose message.id was replaced by each record's uuid (issue 13); lines of
    one message.id under two requestIds stay two requests, as (message.id, requestId) keeps them.
    """
    kept: dict[tuple[str, str] | int, Candidate] = {}
    lines: dict[tuple[str, str] | int, list[Candidate]] = {}
    for position, candidate in enumerate(candidates):
        # Records with neither id cannot be grouped: each is its own request (format §3.2).
        # Keyed by position, not line: two records glued on one line share it (issue 13).
        key: tuple[str, str] | int = (
            ("request", candidate.request_id) if candidate.request_id is not None
            else ("message", candidate.message_id) if candidate.message_id is not None
            else position
        )
        previous = kept.get(key)
        if previous is None or candidate.tokens.output >= previous.tokens.output:
            kept[key] = candidate
        lines.setdefault(key, []).append(candidate)
    return [_row(candidate, lines[key]) for key, candidate in kept.items()]


def _row(candidate: Candidate, siblings: list[Candidate]) -> UsageRow:
    chars = 0
    if candidate.stop_reason is None and candidate.tokens.output < PLACEHOLDER_MAX_OUTPUT:
        chars = sum(content_chars(line.content) for line in siblings)
    under = chars >= PLACEHOLDER_MIN_CONTENT_CHARS
    return UsageRow(
        agent_id=candidate.agent_id,
        message_id=candidate.message_id,
        request_id=candidate.request_id,
        model=candidate.model,
        tokens=candidate.tokens,
        timestamp=candidate.timestamp,
        speed=candidate.speed,
        file=candidate.file,
        line=candidate.line,
        under_reported=under,
        origin_session=candidate.origin_session,
        version=candidate.version if candidate.version and len(candidate.version) <= 40 else None,
        content_chars=chars if under else 0,
    )


def dedupe_session(rows_by_file: list[tuple[int, list[UsageRow]]]) -> tuple[list[UsageRow], list[int], int]:
    """Count each message.id once across a session's files, preferring the lowest-rank file.

    Compaction and side-question files replay parent messages with the same message.id and a
    new requestId (format §3.4); rank 0 is the main transcript, 1 ordinary agents, 2 replayers.
    Returns the kept rows in file order, each row's key and how many replayed copies were dropped.
    A row's key is its file's place in the list and its own place among that file's requests
    (`usage_key`): in file order too, and left as it was by a line appended to any file.
    """
    owner: dict[str, tuple[int, int]] = {}
    for position, (rank, rows) in enumerate(rows_by_file):
        for row in rows:
            if row.message_id is None:
                continue
            best = owner.get(row.message_id)
            if best is None or (rank, position) < best:
                owner[row.message_id] = (rank, position)
    kept: list[UsageRow] = []
    keys: list[int] = []
    dropped = 0
    for position, (rank, rows) in enumerate(rows_by_file):
        for index, row in enumerate(rows):
            if row.message_id is not None and owner[row.message_id] != (rank, position):
                dropped += 1
                continue
            kept.append(row)
            keys.append(usage_key(position, index))
    return kept, keys, dropped


def usage_key(file_position: int, index: int) -> int:
    """Return the key of a file's `index`-th request: ordered by file, then by request, as one integer (SQLite's 64 bits hold it)."""
    return file_position << 32 | index


def under_reported_summary(rows: list[UsageRow]) -> dict[str, Any]:
    """Count requests whose output ends on a placeholder, with a rough range of what went unrecorded.

    The range is an estimate from the length of what the request wrote (about 3 to 5 characters
    a token for English prose and code); thinking that was not written (empty in 2.1.23x) is
    not in it. It is shown as an estimate and never added to token totals.
    """
    under = [row for row in rows if row.under_reported]
    recorded = sum(row.tokens.output for row in under)
    chars = sum(row.content_chars for row in under)
    return {
        "requests": len(under),
        "recorded_output": recorded,
        "estimate_low": max(chars // CHARS_PER_TOKEN_HIGH - recorded, 0),
        "estimate_high": max(chars // CHARS_PER_TOKEN_LOW - recorded, 0),
        "versions": sorted({row.version for row in under if row.version}),
    }
