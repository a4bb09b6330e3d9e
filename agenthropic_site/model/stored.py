"""Keep session views and their summaries in the cache: encode, decode, store, refresh, load.

A view is computed once per change of its session (views.compute_views) and kept as JSON; the
site is rendered from the summaries of every session and the whole views of a batch at a time.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

import orjson

from agenthropic_site.cache import Cache
from agenthropic_site.cost import PriceTable
from agenthropic_site.cost.breakdown import WhatIf
from agenthropic_site.parse.model import Tokens
from agenthropic_site.model.views import AgentView, CompactionView, SessionSummary, SessionView, compute_views, summarize

VIEW_BATCH = 64  # sessions whose views are computed, or held for rendering, at once


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} in a view")


def encode_view(view: SessionView) -> bytes:
    """Serialise a view for the cache (dataclasses as objects, Decimals as strings)."""
    return orjson.dumps(view, default=_default, option=orjson.OPT_SORT_KEYS)


def _tokens(raw: dict[str, int]) -> Tokens:
    return Tokens.from_dict(raw)


def _money(raw: str | None) -> Decimal | None:
    return None if raw is None else Decimal(raw)


def decode_view(body: bytes) -> SessionView:
    """Rebuild a SessionView from encode_view's bytes."""
    raw = orjson.loads(body)
    agents = [
        AgentView(
            **{key: raw_agent[key] for key in (
                "agent_id", "parent_agent_id", "kind", "edge_source", "agent_type", "description", "status", "outcome_cause",
                "notification_status", "spawn_tool_use_id", "first_seen_at", "last_seen_at", "depth", "requests", "children",
                "has_transcript", "reported")},
            tokens=_tokens(raw_agent["tokens"]),
            cost=Decimal(raw_agent["cost"]),
            subtree_tokens=_tokens(raw_agent["subtree_tokens"]),
            subtree_cost=Decimal(raw_agent["subtree_cost"]),
        )
        for raw_agent in raw["agents"]
    ]
    compactions = [CompactionView(**{**c, "cost_before": _money(c["cost_before"])}) for c in raw["compactions"]]
    plain = {key: raw[key] for key in (
        "session_id", "fingerprint", "project", "title", "title_source", "cwd", "git_branch", "versions", "started_at", "ended_at",
        "main_ended_at", "excluded_reason", "warnings", "line_errors", "unknown_types", "status", "edges", "unlinked_agents",
        "collisions", "graph_problems", "critical_path", "prompts", "main_state", "under_reported", "copies_counted_in")}
    return SessionView(
        **plain,
        tokens=_tokens(raw["tokens"]),
        cost=_money(raw["cost"]),
        agents=agents,
        compactions=compactions,
        by_model={model: (_tokens(tokens), Decimal(cost)) for model, (tokens, cost) in raw["by_model"].items()},
        cost_by_day={day: Decimal(cost) for day, cost in raw["cost_by_day"].items()},
        cost_by_category={name: Decimal(cost) for name, cost in raw["cost_by_category"].items()},
        segments=[Decimal(cost) for cost in raw["segments"]],
        what_if=[WhatIf(w["source"], w["target"], Decimal(w["cost"]), Decimal(w["delta"])) for w in raw["what_if"]],
        spend_over_time=[(at, cost) for at, cost in raw["spend_over_time"]],
    )


def encode_summary(summary: SessionSummary) -> bytes:
    """Serialise a summary for the cache."""
    return orjson.dumps(summary, default=_default, option=orjson.OPT_SORT_KEYS)


def decode_summary(body: bytes) -> SessionSummary:
    """Rebuild a SessionSummary from encode_summary's bytes."""
    raw = orjson.loads(body)
    return SessionSummary(
        **{key: raw[key] for key in (
            "session_id", "project", "title", "cwd", "started_at", "ended_at", "excluded_reason", "main_status", "main_last_seen",
            "open_last_seen", "agent_ids", "compactions", "failed_agents", "collisions", "prompts", "view_digest", "main_state",
            "absent_agents", "reported_tokens", "under_reported")},
        tokens=_tokens(raw["tokens"]),
        cost=_money(raw["cost"]),
        by_model={model: (_tokens(tokens), Decimal(cost)) for model, (tokens, cost) in raw["by_model"].items()},
        cost_by_day={day: Decimal(cost) for day, cost in raw["cost_by_day"].items()},
        cost_by_category={name: Decimal(cost) for name, cost in raw["cost_by_category"].items()},
    )


DAMAGED = (ValueError, KeyError, TypeError, ArithmeticError)  # what decoding bytes that are not a view raises


def store_views(cache: Cache, views: dict[str, SessionView]) -> dict[str, SessionSummary]:
    """Keep computed views and their summaries in the cache; return the summaries."""
    rows = {}
    summaries = {}
    for sid, view in views.items():
        body = encode_view(view)
        summaries[sid] = summarize(view, hashlib.sha256(body).hexdigest())
        rows[sid] = (body, encode_summary(summaries[sid]), view.excluded_reason is not None)
    cache.put_views(rows)
    return summaries


def refresh_views(cache: Cache, dirty: set[str], prices: PriceTable) -> dict[str, SessionSummary]:
    """Recompute the views of changed sessions, then return every session's summary."""
    todo = sorted((dirty & set(cache.session_ids())) | set(cache.sessions_without_view()))
    for start in range(0, len(todo), VIEW_BATCH):
        # In batches, so memory follows the batch, not the corpus.
        batch = todo[start : start + VIEW_BATCH]
        cache.verify_for_views(batch)  # the rows a view is computed from are as they were written
        store_views(cache, compute_views(cache, batch, prices))
    summaries = {}
    damaged = []
    for sid, body in cache.view_summaries():  # one at a time: never every summary's bytes at once
        summary = None
        if body is not None:  # None: it failed its checksum
            try:
                summary = decode_summary(body)
            except DAMAGED:
                pass
        if summary is None:
            damaged.append(sid)
        else:
            summaries[sid] = summary
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
    body = cache.view_body(session_id)  # None when absent or damaged (the cache notes the damage)
    if body is not None:
        try:
            return decode_view(body)
        except DAMAGED:
            pass  # sound bytes this code cannot read: derived again like damaged ones
    cache.verify_for_views([session_id])
    view = compute_views(cache, [session_id], prices)[session_id]
    if store:
        store_views(cache, {session_id: view})
    return decode_view(encode_view(view))
