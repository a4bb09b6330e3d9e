"""A transcript's scan state after its last line, as JSON bytes: an append is scanned from there, not from byte 0.

Kept is what the session's linking, deduplication and figures read of a transcript (scan.py
`TranscriptFacts`) and what carries a scan on: the message builder's open reply and tool calls
still waiting for a result, the lines and records read. Left out: the messages (the cache holds
them), the content of usage lines (only its measured size, for the placeholder estimate), and
the tool results no spawn of the session names, of which only the ids are kept: a spawn of one
of those ids appearing later means the session must be scanned again from byte 0 (`dropped`).
A long list (usage candidates, record ids, spawns' results) is kept in chunks of CHUNK_ITEMS
items, named in the state by the digest of their bytes, and the items after the last whole chunk:
an append leaves its whole chunks as they were, so neither encoding them again nor the cache
writing them again is needed (the 60 MB session's main checkpoint: 3.77 MB a time, of which
chunks 2.9 MB). Chunk boundaries are a function of the list alone: a scan carried on from a
checkpoint and one from byte 0 name the same chunks.
Pure: no I/O. The state is JSON, never pickle: the cache that keeps it must not run code.
"""

from __future__ import annotations

import hashlib
import operator
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from agenthropic_site.parse.messages import MessageBuilder
from agenthropic_site.parse.model import Compaction, LineError, Tokens, Warning, message_from_row, message_row
from agenthropic_site.parse.scan import Notification, Spawn, ToolResult, TranscriptFacts
from agenthropic_site.parse.tools import ToolTracker
from agenthropic_site.parse.usage import Candidate, Measured, content_chars
from agenthropic_site.records import record_class

FORMAT = 2  # 2: long lists in chunks; record ids first seen first
CHUNK_ITEMS = 256  # a long list's items a chunk holds
# What the session's linking and outcomes read of a spawn's result (parse/links.py, outcomes.py, reported.py).
RESULT_KEYS = ("agentId", "runId", "status", "isAsync", "totalTokens", "totalToolUseCount", "totalDurationMs", "usage")
_SCALARS = ("first_seen_at", "last_seen_at", "git_branch", "custom_title", "ai_title", "summary_title", "first_prompt",
            "first_user_text", "first_parent_uuid", "interrupted", "scanned", "last_kind", "first_type")


class CannotResume(Exception):
    """Raise when a checkpoint cannot carry a scan on: the session is scanned from byte 0."""


@record_class(frozen=True)
class Resumed:
    """Where a resumed scan stands: lines read before the new bytes, and tool results left out of the checkpoint."""

    lines: int
    dropped: frozenset[str]
    reopened: bool  # the transcript's last stored message is open: the scan's first message replaces it


@record_class(frozen=True)
class Chunk:
    """A whole chunk of a list as a checkpoint was decoded from it: its digest, its bytes, and the items made of them."""

    digest: str
    data: bytes
    items: tuple[Any, ...]


def chunk_digest(data: bytes) -> str:
    """Name a chunk by its bytes (the cache keeps it under this name; a chunk whose bytes do not match it is not used)."""
    return hashlib.sha256(data).hexdigest()


def encode(facts: TranscriptFacts, lines: int, order_base: int, spawn_ids: set[str],
           dropped: frozenset[str] = frozenset()) -> tuple[bytes, dict[str, bytes]]:
    """Return the scan state of a transcript whose `lines` lines were all read, keeping the results of these spawns, and the chunks it names."""
    builder = facts.builder
    is_open = builder._open_id is not None and bool(builder.messages)
    kept = [result for result in facts.results if result.tool_use_id in spawn_ids]
    chunks: dict[str, bytes] = {}
    state: dict[str, Any] = {
        "format": FORMAT,
        "lines": lines,
        **{name: getattr(facts, name) for name in _SCALARS},
        "versions": sorted(facts.versions),
        "cwds": facts.cwds,
        "prompts": facts.prompts,
        "uuids": _chunked(list(facts.uuids), str, facts.settled.get("uuids", []), chunks),
        "unknown_types": dict(sorted(facts.unknown_types.items())),
        "candidates": _chunked(facts.candidates, _candidate_row, facts.settled.get("candidates", []), chunks),
        "spawns": [[s.tool_use_id, s.tool, s.input, s.timestamp, s.order - order_base] for s in facts.spawns],
        "results": _chunked(kept, _result_row, facts.settled.get("results", []), chunks),
        "dropped": sorted(dropped | {result.tool_use_id for result in facts.results if result.tool_use_id not in spawn_ids}),
        "progress_links": facts.progress_links,
        "notifications": [[n.task_id, n.tool_use_id, n.status, n.summary, n.via] for n in facts.notifications],
        "compactions": [[c.uuid, c.timestamp, c.trigger, c.pre_tokens, c.post_tokens] for c in facts.compactions],
        "errors": [[e.file, e.line, e.code, e.message] for e in facts.errors],
        "decode_errors": [[e.file, e.line, e.code, e.message] for e in facts.decode_errors],
        "warnings": [[w.code, w.message, w.agent_id] for w in facts.warnings],
        "open": message_row(builder.messages[-1]) if is_open else None,
        "open_id": builder._open_id if is_open else None,
        "left_out": builder._left_out if is_open else 0,
        "tools": builder.tools.state(),
    }
    return orjson.dumps(state), chunks


def _candidate_row(c: Candidate) -> list[Any]:
    return [c.message_id, c.request_id, c.model, list(c.tokens.as_dict().values()), c.timestamp, c.speed, c.stop_reason, c.line,
            content_chars(c.content), c.origin_session, c.version]


def _result_row(r: ToolResult) -> list[Any]:
    return [r.tool_use_id, r.is_error, r.text, _slim(r.structured)]


def _chunked(items: list[Any], row: Callable[[Any], Any], settled: list[Chunk], chunks: dict[str, bytes]) -> Any:
    """Encode a list: as it is when short, else its whole chunks (added to `chunks`) by digest and the items after them.

    A chunk the scan was carried on from whose items the list still holds, the very objects, is
    taken as it was: its bytes are a function of them (`row` reads nothing else).
    """
    if len(items) < CHUNK_ITEMS:
        return [row(item) for item in items]
    whole = len(items) - len(items) % CHUNK_ITEMS
    names = []
    for number, start in enumerate(range(0, whole, CHUNK_ITEMS)):
        part = items[start : start + CHUNK_ITEMS]
        known = settled[number] if number < len(settled) else None
        if known is not None and all(map(operator.is_, part, known.items)):
            digest, data = known.digest, known.data
        else:
            data = orjson.dumps([row(item) for item in part])
            digest = chunk_digest(data)
        chunks[digest] = data
        names.append(digest)
    return {"chunks": names, "tail": [row(item) for item in items[whole:]]}


def _slim(structured: Any) -> dict[str, Any] | None:
    return {key: structured[key] for key in RESULT_KEYS if key in structured} if isinstance(structured, dict) else None


def decode(state: bytes, chunks: Mapping[str, bytes], agent_id: str, rel: str, layout: str, session_id: str,
           order_base: int) -> tuple[TranscriptFacts, Resumed]:
    """Rebuild the facts of a checkpoint (`chunks`: the chunks it names, by digest) for a scan to carry on; CannotResume when it is not one this code wrote."""
    try:
        raw = orjson.loads(state)
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise CannotResume("a checkpoint of another format")
        return _facts(raw, chunks, agent_id, rel, layout, session_id, order_base)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise CannotResume(f"a checkpoint that does not decode ({type(exc).__name__})") from None


def _unchunked(value: Any, chunks: Mapping[str, bytes], make: Callable[[Any], Any], settled: list[Chunk]) -> list[Any]:
    """Decode a list `_chunked` wrote, keeping its whole chunks in `settled`."""
    if isinstance(value, list):
        return [make(item) for item in value]
    items: list[Any] = []
    for digest in value["chunks"]:
        data = chunks[digest]
        if chunk_digest(data) != digest:
            raise CannotResume("a checkpoint chunk that is not as written")
        made = tuple(make(item) for item in orjson.loads(data))
        if len(made) != CHUNK_ITEMS:
            raise CannotResume("a checkpoint chunk of another size")
        settled.append(Chunk(digest, data, made))
        items.extend(made)
    items.extend(make(item) for item in value["tail"])
    return items


def _facts(raw: dict[str, Any], chunks: Mapping[str, bytes], agent_id: str, rel: str, layout: str, session_id: str,
           order_base: int) -> tuple[TranscriptFacts, Resumed]:
    facts = TranscriptFacts(agent_id, rel, layout, session_id)
    for name in _SCALARS:
        setattr(facts, name, raw[name])
    facts.versions = set(raw["versions"])
    facts.cwds = list(raw["cwds"])
    facts.prompts = list(raw["prompts"])
    settled: dict[str, list[Chunk]] = {"uuids": [], "candidates": [], "results": []}
    facts.settled = settled
    facts.uuids = dict.fromkeys(_unchunked(raw["uuids"], chunks, str, settled["uuids"]))
    facts.unknown_types = Counter(raw["unknown_types"])

    def candidate(row: list[Any]) -> Candidate:
        message_id, request_id, model, tokens, timestamp, speed, stop_reason, line, chars, origin, version = row
        return Candidate(agent_id, message_id, request_id, model, Tokens(*tokens), timestamp, speed, stop_reason, rel, line, Measured(chars), origin,
                         version)

    def result(row: list[Any]) -> ToolResult:
        tool_use_id, is_error, text, structured = row
        return ToolResult(tool_use_id, agent_id, is_error, text, structured)

    facts.candidates = _unchunked(raw["candidates"], chunks, candidate, settled["candidates"])
    facts.spawns = [Spawn(tool_use_id, tool, agent_id, spawn_input, timestamp, order_base + order)
                    for tool_use_id, tool, spawn_input, timestamp, order in raw["spawns"]]
    facts.results = _unchunked(raw["results"], chunks, result, settled["results"])
    facts.progress_links = [(tool_use_id, child) for tool_use_id, child in raw["progress_links"]]
    facts.notifications = [Notification(task_id, tool_use_id, status, summary, agent_id, via)
                           for task_id, tool_use_id, status, summary, via in raw["notifications"]]
    facts.compactions = [Compaction(agent_id, uuid, at, trigger, pre, post) for uuid, at, trigger, pre, post in raw["compactions"]]
    facts.errors = [LineError(*error) for error in raw["errors"]]
    facts.decode_errors = [LineError(*error) for error in raw["decode_errors"]]
    facts.warnings = [Warning(*warning) for warning in raw["warnings"]]
    facts.ends_with_api_error = facts.last_kind == "api-error"
    open_message = raw["open"]
    facts.builder = MessageBuilder(messages=[message_from_row(open_message)] if open_message is not None else [],
                                   tools=ToolTracker.from_state(raw["tools"]))
    facts.builder._open_id, facts.builder._left_out = raw["open_id"], raw["left_out"]
    return facts, Resumed(raw["lines"], frozenset(raw["dropped"]), open_message is not None)
