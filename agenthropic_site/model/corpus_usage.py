"""The usage windows of the cached corpus, carried from one build to the next while the corpus only grows.

Each stored view keeps the requests its session owns (the views' ownership rule and halt gate:
`stored.encode_usage`); the windows sum them (model/usage.py). A live corpus grows at its end: a
build after an append finds every session's stored requests either unchanged or the same with
requests after all the others added. It then takes the last build's windows (kept in the cache with
where its 5-hour block scan stood and each session's checksum) and reads only the sessions whose
checksum changed, decoding and counting only their new requests. Anything else — a session gone, a request changed,
moved or priced again, an added request earlier than the last counted, another zone, a kept state
that does not read back — and every request is read and summed again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

import orjson

from agenthropic_site.cache import Cache
from agenthropic_site.config import zone_of
from agenthropic_site.model.decoded import DecodedOnce
from agenthropic_site.model.usage import BlockScan, Usage, UsageRequest, Window, add_requests, parse_time
from agenthropic_site.parse.model import Tokens

STATE_FORMAT = 2
Sums = list[tuple[str, str]]  # (session id, the checksum of its stored requests), by session id
# Given session ids, yield each one's (session id, stored requests, their checksum), by session id.
ReadRequests = Callable[[list[str]], Iterable[tuple[str, bytes, str]]]
# What the state keeps of a session: [its request count, its bytes' length, their checksum, the digest of all but the last byte].
Entry = list[Any]


def corpus_usage(cache: Cache, tz: str) -> Usage:
    """Return the usage windows of every cached session in the zone `tz`, from the last build's where the corpus only grew."""
    sums = cache.view_usage_sums()
    kept = cache.usage_state()
    carried = carry(kept, sums, cache.view_usage, tz)
    usage, scan, entries = carried if carried is not None else sum_all(sums, cache.view_usage, tz)
    state = state_of(usage, scan, entries)
    if kept != state:
        cache.set_usage_state(state)
    _DECODED.keep_only(entries)  # forget the sessions gone from this corpus
    return usage


def sum_all(sums: Sums, read: ReadRequests, tz: str) -> tuple[Usage, BlockScan, dict[str, Entry]]:
    """Read and sum every session's requests; return the windows, the block scan and each session's entry."""
    usage, scan = Usage(tz=tz), BlockScan()
    entries: dict[str, Entry] = {}

    def requests() -> Iterable[UsageRequest]:
        for session_id, data, checksum in read([session_id for session_id, _ in sums]):
            decoded = decode(session_id, data, checksum)
            entries[session_id] = _entry(len(decoded), data, checksum)
            yield from decoded

    add_requests(usage, scan, requests())
    return usage, scan, entries


def carry(state: str | None, sums: Sums, read: ReadRequests, tz: str) -> tuple[Usage, BlockScan, dict[str, Entry]] | None:
    """Return the last build's windows with the requests added since counted (and each session's entry), or None to sum them again.

    Only the sessions whose checksum changed are read.
    """
    try:
        kept = orjson.loads(state) if state else None
        if not isinstance(kept, dict) or kept.get("format") != STATE_FORMAT or kept.get("tz") != tz:
            return None
        sessions: dict[str, Entry] = kept["sessions"]
        if set(sessions) - {session_id for session_id, _ in sums}:
            return None  # a session is gone
        entries: dict[str, Entry] = {}
        changed = []
        for session_id, checksum in sums:
            entry = sessions.get(session_id)
            if entry is not None and entry[2] == checksum:
                entries[session_id] = entry
            else:
                changed.append(session_id)
        added: list[UsageRequest] = []
        for session_id, data, checksum in read(changed):
            count, size, _, head = sessions.get(session_id, (0, 2, "", ""))
            if count and not (len(data) > size and data[size - 1 : size] == b"," and _digest(memoryview(data)[: size - 1]) == head):
                return None  # not the same requests with more after them
            # The bytes before the comma are those counted (their digest): only the requests after it
            # are decoded, as an array of their own (the 60 MB session's 9,486: 26 ms for all of them).
            requests = _requests(session_id, b"[" + data[size:]) if count else decode(session_id, data, checksum)
            entries[session_id] = _entry(count + len(requests), data, checksum)
            added += requests
        if len(entries) != len(sums):
            return None  # a session's requests did not read back
        usage, scan = _usage_of(kept, tz)
        last = scan.previous
        if last is not None and any(request.at is not None and request.at < last for request in added):
            return None  # a request earlier than one counted: the blocks after it may move
        add_requests(usage, scan, added)
        return usage, scan, dict(sorted(entries.items()))
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError, ArithmeticError):
        return None  # a kept state this code cannot read: sum everything again


def state_of(usage: Usage, scan: BlockScan, entries: dict[str, Entry]) -> str:
    """Write what the next build needs to carry these windows forward."""
    return orjson.dumps({
        "format": STATE_FORMAT,
        "tz": usage.tz,
        "scan": [_instant(scan.start), _instant(scan.previous)],
        "sessions": entries,
        "blocks": [_window_state(window) for window in usage.blocks],
        "days": [_window_state(window) for window in usage.days],
        "untimed": [usage.untimed_requests, _counts(usage.untimed_tokens)],
    }).decode()


def _entry(count: int, data: bytes, checksum: str) -> Entry:
    return [count, len(data), checksum, _digest(memoryview(data)[:-1])]


def decode(session_id: str, data: bytes, checksum: str | None = None) -> list[UsageRequest]:
    """Decode one session's stored requests, once per process for the same bytes (a `--watch` builds again and again; `checksum`: theirs, verified)."""
    return _DECODED(session_id, data, checksum)


def _requests(session_id: str, data: bytes) -> list[UsageRequest]:
    return [
        UsageRequest(session_id, parse_time(at), model, Tokens(*counts), None if cost is None else Decimal(cost))
        for at, model, *counts, cost, _ in orjson.loads(data)  # the last: the agent's id (stored.encode_usage)
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


def _digest(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()  # a memoryview of the stored bytes: hashed without a copy
