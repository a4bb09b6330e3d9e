"""Keep session views and their summaries in the cache: encode, decode, store, refresh, load.

A view is computed once per change of its session (views.compute_views) and kept as JSON; the
site is rendered from the summaries of every session and the whole views of a batch at a time.
A view's owned requests (its context points) are kept once, beside its body (`encode_usage`),
where the usage windows read them too: they were half of every body's bytes, kept twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation

import orjson

from agenthropic_site.batches import batched
from agenthropic_site.cache import Cache, codec
from agenthropic_site.cost import PriceTable
from agenthropic_site.model import views
from agenthropic_site.model.decoded import DecodedOnce
from agenthropic_site.model.insights import ContextPoint, context_size
from agenthropic_site.model.views import AgentRequests, SessionSummary, SessionView, compute_views, summarize
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens


def encode_view(view: SessionView) -> bytes:
    """Serialise a view for the cache (dataclasses as objects, Decimals as strings), but its requests: `encode_usage` keeps them."""
    return codec.encode(dataclasses.replace(view, context=[]))


def decode_view(body: bytes, usage: bytes) -> SessionView:
    """Rebuild a SessionView from encode_view's bytes and encode_usage's."""
    view = codec.decode(SessionView, body)
    view.context = context_points(usage)
    return view


def encode_summary(summary: SessionSummary) -> bytes:
    """Serialise a summary for the cache."""
    return codec.encode(summary)


def decode_summary(body: bytes) -> SessionSummary:
    """Rebuild a SessionSummary from encode_summary's bytes."""
    return codec.decode(SessionSummary, body)


# The summaries this process decoded last, by session: a watch, or any process that builds again,
# decodes only the summaries that changed (500 sessions: 83 -> 35 ms a pass).
_decoded = DecodedOnce(lambda sid, body: decode_summary(body))


# A request's token counts in TOKEN_CATEGORIES' order, in one call (the 60 MB session's 9,462
# requests: 9.4 ms with a getattr for each count, 8.3 ms so).
_token_counts = operator.attrgetter(*TOKEN_CATEGORIES)


def encode_usage(view: SessionView) -> bytes:
    """Serialise the requests a view owns, its context points: [time, model, tokens by category..., cost or null, agent id]."""
    return orjson.dumps([
        [point.at, point.model, *_token_counts(point.tokens), None if point.cost is None else str(point.cost), point.agent_id]
        for point in view.context
    ])


def context_points(usage: bytes) -> list[ContextPoint]:
    """Rebuild a view's context points from encode_usage's bytes (CodecError when they are not such)."""
    points = []
    try:
        for at, model, fresh, output, read, written_5m, written_1h, cost, agent_id in orjson.loads(usage):
            counts = (fresh, output, read, written_5m, written_1h)
            if not (all(type(count) is int for count in counts) and isinstance(model, str) and isinstance(agent_id, str)
                    and (at is None or isinstance(at, str)) and (cost is None or isinstance(cost, str))):
                raise TypeError("a value of the wrong kind")
            tokens = Tokens(*counts)
            points.append(ContextPoint(at, agent_id, model, context_size(tokens), None if cost is None else Decimal(cost), tokens))
    except (ValueError, TypeError, InvalidOperation) as exc:
        raise codec.CodecError(f"stored requests that do not decode ({type(exc).__name__})") from None
    return points


# What decoding bytes that are not a view (or a view of an older shape) raises; a TypeError of the
# codec is a class it cannot store, a bug to surface rather than a view to derive again.
DAMAGED = codec.CodecError


# A view as the cache keeps it: the view, its summary, whether it is excluded, its owned requests.
ViewRow = tuple[bytes, bytes, bool, bytes]
# Given the batches of sessions whose views are computed, and how one batch is computed here,
# yield each batch with its encoded views, in the batches' order (pipeline/viewing.py: in workers).
ViewsInWorkers = Callable[[list[list[str]], Callable[[list[str]], dict[str, ViewRow]]], Iterator[tuple[list[str], dict[str, ViewRow]]]]
VIEW_WORKERS_MIN_BATCHES = 4  # fewer batches of views than this are computed in the build's own process


def _encoded(view: SessionView) -> tuple[SessionSummary, ViewRow]:
    body, usage = encode_view(view), encode_usage(view)
    digest = hashlib.sha256(body)
    digest.update(usage)  # a request's time or agent is shown, and may change alone
    summary = summarize(view, digest.hexdigest())
    return summary, (body, encode_summary(summary), view.excluded_reason is not None, usage)


def view_rows(views: dict[str, SessionView]) -> dict[str, ViewRow]:
    """Encode computed views as the cache keeps them."""
    return {sid: _encoded(view)[1] for sid, view in views.items()}


def store_views(cache: Cache, views: dict[str, SessionView]) -> dict[str, SessionSummary]:
    """Keep computed views and their summaries in the cache; return the summaries."""
    encoded = {sid: _encoded(view) for sid, view in views.items()}
    cache.put_views({sid: row for sid, (_, row) in encoded.items()})
    return {sid: summary for sid, (summary, _) in encoded.items()}


class ComputedAlone:
    """What a build computed of each session whose view it computed alone (an append): its render takes these, not copies read again."""

    def __init__(self) -> None:
        self.figures: dict[str, AgentRequests] = {}  # each agent's request figures, by session (views.compute_views)
        self.views: dict[str, SessionView] = {}  # the view itself, by session


def refresh_views(
    cache: Cache, dirty: set[str], prices: PriceTable, in_workers: ViewsInWorkers | None = None, alone: ComputedAlone | None = None,
) -> dict[str, SessionSummary]:
    """Recompute the views of changed sessions (many batches of them in `in_workers`), then return every session's summary.

    `alone` gets the view of a session computed alone (the only one changed), and its request figures.
    """
    todo = sorted((dirty & set(cache.session_ids())) | set(cache.sessions_without_view()))
    # In batches, so memory follows the batch, not the corpus nor its largest sessions.
    counts = cache.request_counts(todo) if len(todo) > 1 else {}
    batches = batched(todo, views.VIEW_BATCH, lambda sid: counts.get(sid, 0), views.VIEW_BATCH_REQUESTS)
    for batch in batches:
        cache.verify_for_views(batch)  # the rows a view is computed from are as they were written
    if in_workers is not None and len(batches) >= VIEW_WORKERS_MIN_BATCHES:
        # A worker reads only rows checked here; the views come back encoded and are stored in the batches' order.
        for _, rows in in_workers(batches, lambda batch: view_rows(compute_views(cache, batch, prices))):
            cache.put_views(rows)
    else:
        # Kept for the render only when one session changed: a large session in a batch of its own
        # is not, or every such view would be alive at once until the render took it.
        alone = alone if len(todo) == 1 else None
        for batch in batches:
            made = compute_views(cache, batch, prices, None if alone is None else alone.figures)
            store_views(cache, made)
            if alone is not None:
                # A computed view is exactly what its stored bytes decode to (sorted keys, costs of the
                # chart as strings; tests hold every corpus to it): the render takes it as it is, not
                # decoded again (the 60 MB session's view: about 65 ms an append).
                alone.views.update(made)
            del made  # one batch of views alive at a time: not this one while the next is computed
    summaries = {}
    damaged = []
    for sid, body, checksum in cache.view_summaries():  # one at a time: never every summary's bytes at once
        summary = None
        if body is not None:  # None: it failed its checksum
            try:
                summary = _decoded(sid, body, checksum)
            except DAMAGED:
                pass
        if summary is None:
            damaged.append(sid)
        else:
            summaries[sid] = summary
    _decoded.keep_only(summaries)
    known = set(cache.session_ids()) if damaged else set()
    for sid in damaged:
        if sid not in known:
            # Its session id is what was damaged (the session's own view was computed above).
            cache.forget_damaged((("view", sid),))
            continue
        # A summary the cache damaged (it failed its checksum): derive it again from the tables.
        cache.verify_for_views([sid])
        summaries[sid] = store_views(cache, compute_views(cache, [sid], prices))[sid]
    return dict(sorted(summaries.items()))


def load_view(cache: Cache, session_id: str, prices: PriceTable, store: bool = True) -> SessionView:
    """Return one session's stored view (ingest statuses), computing it again if the cache damaged it.

    A render worker reads the cache only (`store=False`): the cache raises the damage it finds to
    the build, and a view computed again here is not kept.
    """
    stored = cache.view_body(session_id)  # None when absent or damaged (the cache notes the damage)
    if stored is not None:
        try:
            return decode_view(*stored)
        except DAMAGED:
            pass  # sound bytes this code cannot read: derived again like damaged ones
    cache.verify_for_views([session_id])
    view = compute_views(cache, [session_id], prices)[session_id]
    if store:
        store_views(cache, {session_id: view})
    return decode_view(encode_view(view), encode_usage(view))
