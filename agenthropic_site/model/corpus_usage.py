"""The usage windows of the cached corpus, carried from one build to the next while the corpus only grows.

Each stored view keeps the requests its session owns (the views' ownership rule and halt gate:
`stored.encode_usage`); the windows sum them (model/usage.py). A live corpus grows at its end: a
build after an append finds every session's stored requests either unchanged or the same with
requests after all the others added. It then takes the last build's windows (kept in the cache with
where its 5-hour block scan stood) and counts only the new requests. Anything else — a session
gone, a request changed, moved or priced again, an added request earlier than the last counted,
another zone, a kept state that does not read back — and every request is summed again.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from decimal import Decimal
from typing import Any

import orjson

from agenthropic_site.cache import Cache
from agenthropic_site.config import zone_of
from agenthropic_site.model.decoded import DecodedOnce
from agenthropic_site.model.usage import BlockScan, Usage, UsageRequest, Window, add_requests, parse_time
from agenthropic_site.parse.model import Tokens

STATE_FORMAT = 1
Stored = list[tuple[str, bytes]]  # (session id, its stored requests), by session id


def corpus_usage(cache: Cache, tz: str) -> Usage:
    """Return the usage windows of every cached session in the zone `tz`, from the last build's where the corpus only grew."""
    stored = list(cache.view_usage())
    kept = cache.usage_state()
    carried = carry(kept, stored, tz)
    if carried is None:
        usage, scan = Usage(tz=tz), BlockScan()
        add_requests(usage, scan, (request for session_id, data in stored for request in decode(session_id, data)))
        counts = {session_id: len(decode(session_id, data)) for session_id, data in stored}
    else:
        usage, scan, counts = carried
    state = state_of(usage, scan, stored, counts)
    if kept != state:
        cache.set_usage_state(state)
    _DECODED.keep_only(counts)  # forget the sessions gone from this corpus
    return usage


def carry(state: str | None, stored: Stored, tz: str) -> tuple[Usage, BlockScan, dict[str, int]] | None:
    """Return the last build's windows with the requests added since counted (and each session's count), or None to sum them again."""
    try:
        kept = orjson.loads(state) if state else None
        if not isinstance(kept, dict) or kept.get("format") != STATE_FORMAT or kept.get("tz") != tz:
            return None
        sessions: dict[str, list[Any]] = kept["sessions"]
        if set(sessions) - {session_id for session_id, _ in stored}:
            return None  # a session is gone
        added: list[UsageRequest] = []
        counts: dict[str, int] = {}
        for session_id, data in stored:
            count, size, whole, head = sessions.get(session_id, (0, 2, "", ""))
            if session_id in sessions and len(data) == size and _digest(data) == whole:
                counts[session_id] = int(count)
                continue
            if count and not (len(data) > size and data[size - 1 : size] == b"," and _digest(data[: size - 1]) == head):
                return None  # not the same requests with more after them
            requests = decode(session_id, data)
            counts[session_id] = len(requests)
            added += requests[count:]
        usage, scan = _usage_of(kept, tz)
        last = scan.previous
        if last is not None and any(request.at is not None and request.at < last for request in added):
            return None  # a request earlier than one counted: the blocks after it may move
        add_requests(usage, scan, added)
        return usage, scan, counts
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ArithmeticError):
        return None  # a kept state this code cannot read: sum everything again


def state_of(usage: Usage, scan: BlockScan, stored: Stored, counts: dict[str, int]) -> str:
    """Write what the next build needs to carry these windows forward."""
    return orjson.dumps({
        "format": STATE_FORMAT,
        "tz": usage.tz,
        "scan": [_instant(scan.start), _instant(scan.previous)],
        "sessions": {session_id: [counts[session_id], len(data), _digest(data), _digest(data[:-1])] for session_id, data in stored},
        "blocks": [_window_state(window) for window in usage.blocks],
        "days": [_window_state(window) for window in usage.days],
        "untimed": [usage.untimed_requests, _counts(usage.untimed_tokens)],
    }).decode()


def decode(session_id: str, data: bytes) -> list[UsageRequest]:
    """Decode one session's stored requests, once per process for the same bytes (a `--watch` builds again and again)."""
    return _DECODED(session_id, data)


def _requests(session_id: str, data: bytes) -> list[UsageRequest]:
    return [
        UsageRequest(session_id, parse_time(at), model, Tokens(*counts), None if cost is None else Decimal(cost))
        for at, model, *counts, cost in orjson.loads(data)
    ]


_DECODED = DecodedOnce(_requests)  # each session's stored requests as this process last decoded them


def _usage_of(kept: dict[str, Any], tz: str) -> tuple[Usage, BlockScan]:
    zone = zone_of(tz)
    usage = Usage(tz=tz)
    usage.blocks = [_window_of(item, zone) for item in kept["blocks"]]
    usage.days = [_window_of(item, zone) for item in kept["days"]]
    usage.untimed_requests = int(kept["untimed"][0])
    usage.untimed_tokens = Tokens(*kept["untimed"][1])
    start, previous = kept["scan"]
    return usage, BlockScan(_moment(start), _moment(previous))


def _window_state(window: Window) -> list[Any]:
    return [window.start.isoformat(), window.end.isoformat(), window.counts, str(window.cost), window.priced, window.requests,
            sorted(window.session_ids), window.model_tokens]


def _window_of(item: list[Any], zone: Any) -> Window:
    start, end, counts, cost, priced, requests, session_ids, model_tokens = item
    return Window(datetime.fromisoformat(start).astimezone(zone), datetime.fromisoformat(end).astimezone(zone), list(counts), Decimal(cost),
                  int(priced), int(requests), set(session_ids), dict(model_tokens))


def _instant(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _moment(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text is not None else None


def _counts(tokens: Tokens) -> list[int]:
    return [tokens.input, tokens.output, tokens.cache_read, tokens.cache_write_5m, tokens.cache_write_1h]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
