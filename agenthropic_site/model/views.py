"""Compute each session's view from the cache tables, and keep it as JSON between builds."""

from __future__ import annotations

import operator
from collections import defaultdict
from dataclasses import field
from datetime import datetime
from decimal import Decimal
from typing import Any
from collections.abc import Iterable, Iterator

import orjson

from agenthropic_site.cache import Cache
from agenthropic_site.cost import PriceTable
from agenthropic_site.cost.breakdown import (
    CostedRow,
    WhatIf,
    by_category,
    family_sums,
    previous_boundary,
    segment_costs,
    spend_over_time,
    what_if,
    window_cost,
)
from agenthropic_site.model.insights import (
    CacheEfficiency,
    ContextPoint,
    ToolStats,
    cache_efficiency,
    context_size,
    hour_key,
    largest_requests,
    owned_calls,
    tool_stats,
    uncached_cost,
)
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens
from agenthropic_site.parse.tools import ToolCall
from agenthropic_site.records import record_class

TERMINAL_STATUSES = frozenset({"completed", "error"})


VIEW_BATCH = 64  # sessions whose views are computed, or held for rendering, at once (read at call time)
# And a batch of large sessions is smaller (one heavier than this alone; read at call time too).
# Computing a batch's views reads every usage row of it at once (about 2 KB each as Python rows): 36
# sessions of 15 MB in one batch took a build's process from 145 to 370 MB.
VIEW_BATCH_REQUESTS = 16_384
# A view held for rendering is about four times its stored bytes (its body and owned requests).
VIEW_BATCH_BYTES = 4 << 20

@record_class
class AgentView:
    """One agent as pages and JSON show it."""

    agent_id: str
    parent_agent_id: str | None
    kind: str
    edge_source: str | None
    agent_type: str | None
    description: str | None
    status: str
    outcome_cause: str | None
    notification_status: str | None
    spawn_tool_use_id: str | None
    first_seen_at: str | None
    last_seen_at: str | None
    tokens: Tokens = Tokens()
    cost: Decimal = Decimal(0)
    subtree_tokens: Tokens = Tokens()
    subtree_cost: Decimal = Decimal(0)
    depth: int = 0
    requests: int = 0
    children: list[str] = field(default_factory=list)
    has_transcript: bool = True
    reported: dict[str, Any] | None = None  # what the spawner's result reports of an agent without a transcript
    tools: list[ToolStats] = field(default_factory=list)  # its own calls, most called first


@record_class
class CompactionView:
    """A compaction boundary with the spend of the segment it closes."""

    agent_id: str
    at: str | None
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    compaction_agent_id: str | None
    cost_before: Decimal | None = None  # spend of the segment this boundary closes


@record_class
class SessionView:
    """One session, complete, as pages and JSON show it."""

    session_id: str
    source: str  # what its transcripts were parsed from (the digest of their bytes): any change to them renders its pages
    project: str
    title: str | None
    title_source: str | None
    cwd: str | None
    git_branch: str | None
    versions: list[str]
    started_at: str | None
    ended_at: str | None
    main_ended_at: str | None
    excluded_reason: str | None
    warnings: list[dict[str, Any]]
    line_errors: list[dict[str, Any]]
    unknown_types: dict[str, int]
    status: str = "unknown"
    main_state: str = "present"  # present | empty | absent: the main transcript (issue 13)
    under_reported: dict[str, Any] = field(default_factory=dict)  # placeholder output counts and their estimate
    copies_counted_in: dict[str, int] = field(default_factory=dict)  # requests this session copies, by owner
    tokens: Tokens = Tokens()
    cost: Decimal | None = None
    agents: list[AgentView] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    unlinked_agents: list[str] = field(default_factory=list)
    compactions: list[CompactionView] = field(default_factory=list)
    by_model: dict[str, tuple[Tokens, Decimal]] = field(default_factory=dict)
    cost_by_day: dict[str, Decimal] = field(default_factory=dict)
    cost_by_category: dict[str, Decimal] = field(default_factory=dict)
    segments: list[Decimal] = field(default_factory=list)
    what_if: list[WhatIf] = field(default_factory=list)
    collisions: int = 0
    graph_problems: list[str] = field(default_factory=list)
    critical_path: list[str] = field(default_factory=list)  # longest chain of agent durations from main
    prompts: list[str] = field(default_factory=list)  # the first few prompts, for the site's search
    # (instant, cumulative cost), the cost as its decimal string (computed views too, so that one
    # renders as its decoded copy): only the session page's chart reads it, so 120 Decimals per
    # session are not built for every build.
    spend_over_time: list[tuple[str, Decimal | str]] = field(default_factory=list)
    context: list[ContextPoint] = field(default_factory=list)  # every owned request's context size, in time order
    uncached_cost: Decimal | None = None  # the cost with every cache read and write priced as plain input
    tools: list[ToolStats] = field(default_factory=list)  # every agent's calls together, most called first

    @property
    def agent_map(self) -> dict[str, AgentView]:
        """Return agents by id."""
        return {agent.agent_id: agent for agent in self.agents}

    def largest(self, agent_id: str | None = None) -> list[ContextPoint]:
        """Return the requests with the largest context, of one agent when given."""
        return largest_requests(point for point in self.context if agent_id is None or point.agent_id == agent_id)

    @property
    def cache(self) -> CacheEfficiency:
        """Return the session's cache figures."""
        return cache_efficiency([self])


@record_class
class SessionSummary:
    """What the index, the project pages and the totals show of a session.

    Small on purpose: every session's summary is held while the site renders, where whole views
    are loaded a batch at a time, so memory follows the largest batch, not the corpus.
    """

    session_id: str
    project: str
    title: str | None
    cwd: str | None
    started_at: str | None
    ended_at: str | None
    excluded_reason: str | None
    main_status: str | None  # the main agent's status before the watchdog; None without one
    main_last_seen: str | None
    # last_seen_at of every agent with no observed ending, sorted ("" when never seen): the
    # watchdog turns a prefix of them unknown, so its count says which statuses it changed.
    open_last_seen: list[str]
    agent_ids: list[str]
    compactions: int
    failed_agents: int
    tokens: Tokens
    cost: Decimal | None
    by_model: dict[str, tuple[Tokens, Decimal]]
    cost_by_day: dict[str, Decimal]
    cost_by_category: dict[str, Decimal]
    collisions: int
    prompts: list[str]
    view_digest: str  # of the stored view's bytes: a session's pages change only when it does
    main_state: str = "present"
    absent_agents: list[str] = field(default_factory=list)  # agents without a transcript: no page of their own
    reported_tokens: int = 0  # what those results report (last request only): never counted
    under_reported: dict[str, Any] = field(default_factory=dict)
    uncached_cost: Decimal | None = None  # the cost with every cache read and write priced as plain input
    cost_by_hour: dict[str, Decimal] = field(default_factory=dict)  # by UTC hour (`YYYY-MM-DDTHH`): weeks in any zone
    tool_calls: dict[str, list[int]] = field(default_factory=dict)  # tool -> [calls, errors]
    status: str = "unknown"  # after the watchdog (gather)


def summarize(view: SessionView, view_digest: str) -> SessionSummary:
    """Return the summary of a computed view (ingest statuses, no watchdog)."""
    main = view.agent_map.get(view.session_id)
    return SessionSummary(
        session_id=view.session_id, project=view.project, title=view.title, cwd=view.cwd, started_at=view.started_at,
        ended_at=view.ended_at, excluded_reason=view.excluded_reason,
        main_status=main.status if main else None, main_last_seen=main.last_seen_at if main else None,
        open_last_seen=sorted(a.last_seen_at or "" for a in view.agents if a.status not in TERMINAL_STATUSES),
        agent_ids=[agent.agent_id for agent in view.agents], compactions=len(view.compactions),
        failed_agents=sum(1 for agent in view.agents if agent.status == "error"),
        tokens=view.tokens, cost=view.cost, by_model=view.by_model, cost_by_day=view.cost_by_day,
        cost_by_category=view.cost_by_category, collisions=view.collisions, prompts=view.prompts, view_digest=view_digest,
        main_state=view.main_state, absent_agents=[a.agent_id for a in view.agents if not a.has_transcript],
        reported_tokens=reported_tokens(view),
        under_reported=view.under_reported,
        uncached_cost=view.uncached_cost,
        cost_by_hour=cost_by_hour(view),
        tool_calls={stat.name: [stat.calls, stat.errors] for stat in sorted(view.tools, key=lambda stat: stat.name)},
    )


def cost_by_hour(view: SessionView) -> dict[str, Decimal]:
    """Sum a session's known cost by the UTC hour of each request (requests without a time are in no week)."""
    hours: dict[str, Decimal] = {}
    for point in view.context:
        key = hour_key(point.at) if point.at and point.cost is not None else None
        if key is not None and point.cost is not None:
            hours[key] = hours.get(key, Decimal(0)) + point.cost
    return dict(sorted(hours.items()))


def reported_tokens(view: SessionView) -> int:
    """Sum the total tokens spawners report for agents without a transcript (never counted)."""
    return sum((agent.reported or {}).get("total_tokens") or 0 for agent in view.agents if not agent.has_transcript)


def compute_views(
    cache: Cache, session_ids: Iterable[str], prices: PriceTable, figures: dict[str, AgentRequests] | None = None,
) -> dict[str, SessionView]:
    """Build the views of some sessions from the cache tables (ingest statuses, no watchdog).

    With `figures`, the view of one session alone adds its `request_figures` there, from the rows it read.
    """
    wanted = sorted(session_ids)
    ids = wanted
    calls_of: dict[str, dict[str, list[ToolCall]]] = {}
    sessions = _load_sessions(cache, ids, calls_of)
    owned = _ownership(cache, wanted)
    _load_agents(cache, sessions, ids)
    copied: dict[str, set[str]] = defaultdict(set)
    usage_rows = cache.usage_table(ids)
    if figures is not None and len(wanted) == 1:
        # A session's pages show its requests: the render of a session changed alone (an append)
        # takes them from here, not from the same rows and owners read again (a 60 MB session: 0.1 s),
        # each row unpacked once for both (its Tokens made once).
        values = list(_usage_values(*usage_rows))
        rows_of = _load_usage(sessions, owned, values, copied)
        figures[wanted[0]] = figures_of(values, owned, wanted[0])
    else:
        rows_of = _load_usage(sessions, owned, _usage_values(*usage_rows), copied)
    _load_compactions(cache, sessions, ids)
    for session in sessions.values():
        _roll_up(session)
        _tool_figures(session, calls_of.get(session.session_id, {}), copied[session.session_id])
        if not session.excluded_reason:
            _cost_breakdowns(session, rows_of.get(session.session_id, []), prices)
    return sessions


def _tool_figures(session: SessionView, calls_of: dict[str, list[ToolCall]], copied: set[str]) -> None:
    """Sum each agent's tool calls and the session's, leaving out calls of replies another session counts."""
    agents = session.agent_map
    every: list[ToolCall] = []
    for agent_id, calls in sorted(calls_of.items()):
        own = owned_calls(calls, copied)
        every += own
        if agent_id in agents:
            agents[agent_id].tools = tool_stats(own)
    session.tools = tool_stats(every)


def _load_sessions(cache: Cache, ids: list[str], calls_of: dict[str, dict[str, list[ToolCall]]]) -> dict[str, SessionView]:
    sessions = {}
    for row in cache.session_rows("sessions", ids):
        details = orjson.loads(row["details"])
        calls_of[row["session_id"]] = details.get("tools", {})
        sessions[row["session_id"]] = SessionView(
            session_id=row["session_id"],
            source=row["source"],
            project=row["project"],
            title=row["title"],
            title_source=row["title_source"],
            cwd=row["cwd"],
            git_branch=row["git_branch"],
            versions=orjson.loads(row["versions"]),
            started_at=row["started_at"],
            ended_at=row["ended_at"],
            main_ended_at=row["main_ended_at"],
            excluded_reason=None,  # set by _load_usage when a request the session owns has no price
            # Keys in the order the stored view has them (the codec sorts keys), as every dict of a
            # view: the render of a session changed alone takes its view as computed (stored.ComputedAlone).
            warnings=[{"agent_id": a, "code": c, "message": m} for c, m, a in details["warnings"]],
            line_errors=[{"code": c, "file": f, "line": n, "message": m} for f, n, c, m in details["line_errors"]],
            unknown_types=details["unknown_types"],
            prompts=details.get("prompts", []),
            main_state=details.get("main_state", "present"),
            under_reported=details.get("under_reported", {}),
            cost=Decimal(0),
        )
    return sessions


def _ownership(cache: Cache, session_ids: list[str]) -> dict[str, str]:
    """Map each request key ("m:" message id, "r:" request id) seen in several sessions to its owner.

    Resume and fork replays copy records verbatim (format §1.4); copies in real dumps keep the
    requestId but replace message.id by the record's uuid (issue 13): rows sharing either id
    are one request. The owner is a session a copy names as the original, else the session
    whose main transcript ends earliest (the original goes on less long), then the smallest id.
    """
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    rows = cache.shared_requests(session_ids)
    for message_id, request_id, _, _ in rows:
        keys = request_keys(message_id, request_id)
        for key in keys[1:]:
            parent[find(key)] = find(keys[0])
    holders: dict[str, set[str]] = defaultdict(set)
    named: dict[str, set[str]] = defaultdict(set)
    for message_id, request_id, session_id, origin in rows:
        group = find(request_keys(message_id, request_id)[0])
        holders[group].add(session_id)
        if origin:
            named[group].add(origin)
    shared = {group: members for group, members in holders.items() if len(members) > 1}
    involved = sorted(set().union(*shared.values())) if shared else []
    ended = cache.main_ended_at(involved)
    owner_of_group = {}
    for group, members in shared.items():
        # An explicit marker of the original session wins; else the earliest-ending transcript.
        marked = members & named.get(group, set())
        owner_of_group[group] = min(marked or members, key=lambda sid: (ended.get(sid) or "~", sid))
    return {key: owner_of_group[find(key)] for key in parent if find(key) in owner_of_group}


def request_keys(message_id: str | None, request_id: str | None) -> list[str]:
    """Name a usage row's request by each id it has: "m:" message id, "r:" request id."""
    return [key for key in ("m:" + message_id if message_id else "", "r:" + request_id if request_id else "") if key]


def _load_agents(cache: Cache, sessions: dict[str, SessionView], ids: list[str]) -> None:
    for row in cache.session_rows("agents", ids):
        session = sessions[row["session_id"]]
        session.agents.append(
            AgentView(
                agent_id=row["agent_id"], parent_agent_id=row["parent_agent_id"], kind=row["kind"], edge_source=row["edge_source"],
                agent_type=row["agent_type"], description=row["description"], status=row["status"], outcome_cause=row["outcome_cause"],
                notification_status=row["notification_status"], spawn_tool_use_id=row["spawn_tool_use_id"],
                first_seen_at=row["first_seen_at"], last_seen_at=row["last_seen_at"], has_transcript=bool(row["has_transcript"]),
                reported=None if row["reported"] is None else orjson.loads(row["reported"]),
            )
        )
    for row in cache.session_rows("orchestration_edges", ids):
        # Keys sorted, as the stored view has them (see _load_sessions).
        sessions[row["session_id"]].edges.append({"child": row["child"], "parent": row["parent"], "source": row["source"], "tool_use_id": row["tool_use_id"]})
    for session in sessions.values():
        agents = session.agent_map
        session.unlinked_agents = sorted(a.agent_id for a in session.agents if a.parent_agent_id is None and a.agent_id != session.session_id)
        for agent in session.agents:
            if agent.parent_agent_id in agents:
                agents[agent.parent_agent_id].children.append(agent.agent_id)


def _load_usage(
    sessions: dict[str, SessionView], owner: dict[str, str], values: Iterable[tuple[Any, ...]], copied: dict[str, set[str]],
) -> dict[str, list[CostedRow]]:
    """Sum owned rows (`_usage_values`) per agent, model and day; return each session's priced rows for breakdowns.

    The message ids of the copies another session counts are added to `copied`.

    The halt gate: a session that owns a request without a price has an unknown cost, never $0;
    its token counts are facts and stay (issue 13). A replayed copy of such a request, owned by
    another session, does not touch the session that merely replays it.
    """
    rows_of: dict[str, list[CostedRow]] = defaultdict(list)
    problems: dict[str, set[str]] = defaultdict(set)
    counted: dict[str, list[tuple[str, str, Tokens, Decimal, str | None]]] = defaultdict(list)
    decimals = _Decimals()  # costs are stored as text; the same few values recur (every "0")
    for (session_id, message_id, request_id, agent_id, model, family, at, speed, segment, problem, whole,
         tokens, cost_input, cost_output, cost_read, cost_5m, cost_1h) in values:
        session = sessions[session_id]
        holder = _owner_of(owner, message_id, request_id, session_id)
        if holder != session_id:
            session.collisions += 1
            session.copies_counted_in[holder] = session.copies_counted_in.get(holder, 0) + 1
            if message_id is not None:
                copied[session_id].add(message_id)
            continue
        if problem is not None:
            problems[session_id].add(problem)
            counted[session_id].append((agent_id, model, tokens, Decimal(0), at))
            continue
        parts = (decimals[cost_input], decimals[cost_output], decimals[cost_read], decimals[cost_5m], decimals[cost_1h])
        costed = CostedRow(agent_id, model, family, tokens, at, speed, parts, segment, decimals[whole])
        rows_of[session_id].append(costed)
        counted[session_id].append((agent_id, model, tokens, costed.cost, at))
    for session_id, found in problems.items():
        sessions[session_id].excluded_reason = "; ".join(sorted(found))
        rows_of.pop(session_id, None)  # no cost figure of an excluded session reaches a total
    for session_id, entries in counted.items():
        session = sessions[session_id]
        excluded = session.excluded_reason is not None
        # Summed as token lists (a Tokens per addition costs more than the sums): [input, output, cache_read, 5m, 1h, cost, requests].
        per_agent: dict[str, list[Any]] = {}
        per_model: dict[str, list[Any]] = {}
        for agent_id, model, tokens, cost, at in entries:
            session.context.append(ContextPoint(at, agent_id, model, context_size(tokens), None if excluded else cost, tokens))
            for sums, key in ((per_agent, agent_id), (per_model, model)):
                entry = sums.get(key)
                if entry is None:
                    entry = sums[key] = [0, 0, 0, 0, 0, Decimal(0), 0]
                entry[0] += tokens.input
                entry[1] += tokens.output
                entry[2] += tokens.cache_read
                entry[3] += tokens.cache_write_5m
                entry[4] += tokens.cache_write_1h
                entry[5] += cost
                entry[6] += 1
            if not excluded:
                day = (at or session.started_at or "unknown")[:10]
                session.cost_by_day[day] = session.cost_by_day.get(day, Decimal(0)) + cost
        session.by_model = {model: (Tokens(*entry[:5]), entry[5]) for model, entry in sorted(per_model.items())}
        session.cost_by_day = dict(sorted(session.cost_by_day.items()))
        # Time order (untimed requests first), ties in the rows' own order: the chart and data read it so.
        session.context.sort(key=lambda point: point.at or "")
        session.cost_by_category = {} if excluded else _by_name(by_category(rows_of.get(session_id, [])))
        for agent in session.agents:
            entry = per_agent.get(agent.agent_id)
            agent.tokens, agent.cost, agent.requests = (Tokens(*entry[:5]), entry[5], entry[6]) if entry else (Tokens(), Decimal(0), 0)
    for session in sessions.values():
        session.copies_counted_in = dict(sorted(session.copies_counted_in.items()))
        if session.excluded_reason is None and session.session_id not in counted:
            session.cost_by_category = _by_name(by_category([]))  # every category, at zero: nothing was billed
    return rows_of


def _by_name(costs: dict[str, Decimal]) -> dict[str, Decimal]:
    """Order a session's costs by category name, as its stored view has them (the codec sorts keys)."""
    return dict(sorted(costs.items()))


def _cost_breakdowns(session: SessionView, rows: list[CostedRow], prices: PriceTable) -> None:
    """Segments at the main agent's boundaries, each boundary's closing spend, and what-ifs."""
    main = [c for c in session.compactions if c.agent_id == session.session_id and c.at]
    session.segments = segment_costs(rows, len(main))
    for index, compaction in enumerate(main):
        compaction.cost_before = session.segments[index]
    times_of: dict[str, list[str]] = defaultdict(list)
    for compaction in session.compactions:
        if compaction.agent_id != session.session_id and compaction.at:
            times_of[compaction.agent_id].append(compaction.at)
    for compaction in session.compactions:
        if compaction.agent_id != session.session_id and compaction.at:
            start = previous_boundary(sorted(times_of[compaction.agent_id]), compaction.at)
            compaction.cost_before = window_cost(rows, compaction.agent_id, start, compaction.at, compaction.compaction_agent_id)
    families = family_sums(rows)  # summed once for both
    session.what_if = what_if(families, prices, session.cost or Decimal(0))
    session.uncached_cost = uncached_cost(families, prices)
    session.spend_over_time = [(at, str(cost)) for at, cost in spend_over_time(rows)]  # as the stored view keeps them


@record_class(frozen=True)
class RequestFigures:
    """One deduplicated API request's figures, shown once on the message it belongs to."""

    tokens: Tokens
    cost: Decimal | None  # None: the session's cost is unknown (a model without a price)
    counted_in: str | None = None  # another session's id: this request is a replayed copy, counted there


AgentRequests = dict[str, dict[str, RequestFigures]]  # agent id -> message id -> the figures of its request


def request_figures(cache: Cache, session_id: str, shared: bool = True) -> AgentRequests:
    """Return each agent's requests by message id, with the owner of each replayed copy (the view's own rule).

    Not `shared`: the session's view counts none of its requests in another session (no collision),
    so each request is its own and no owner is looked for (500 sessions: 1 % of a cold build).
    """
    owner = _ownership(cache, [session_id]) if shared else {}
    return figures_of(list(_usage_values(*cache.usage_table([session_id]))), owner, session_id)


def figures_of(values: list[tuple[Any, ...]], owner: dict[str, str], session_id: str) -> AgentRequests:
    """Return `request_figures` of one session from its usage rows (`_usage_values`) and the owners of its shared requests (`_ownership`)."""
    # The halt gate, as in _load_usage: one owned request without a price makes every cost here unknown.
    excluded = any(
        problem is not None and _owner_of(owner, message_id, request_id, session_id) == session_id
        for _, message_id, request_id, _, _, _, _, _, _, problem, *_ in values
    )
    figures: dict[str, dict[str, RequestFigures]] = defaultdict(dict)
    decimals = _Decimals()
    for (_, message_id, request_id, agent_id, _, _, _, _, _, _, whole, tokens, *_) in values:
        if message_id is None:
            continue  # an id-less request cannot be matched to a displayed message
        holder = _owner_of(owner, message_id, request_id, session_id)
        cost = None
        if not excluded and whole is not None:
            cost = decimals[whole]
        figures[agent_id][message_id] = RequestFigures(tokens, cost, None if holder == session_id else holder)
    return dict(figures)


class _Decimals(dict[str, Decimal]):
    """Decimals by their stored text, each made once (a session's rows repeat a few amounts)."""

    def __missing__(self, text: str) -> Decimal:
        value = self[text] = Decimal(text)
        return value


# The columns of a usage row views read, in this order (then its Tokens and costs by category).
_USAGE_COLUMNS = ("session_id", "message_id", "request_id", "agent_id", "model", "family", "at", "speed", "segment", "price_problem", "cost")


def _usage_values(names: tuple[str, ...], rows: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Yield each stored usage row's _USAGE_COLUMNS, its Tokens and its costs by category, read by position (`names`: the rows' columns)."""
    if not rows:
        return
    position = {name: index for index, name in enumerate(names)}
    columns = operator.itemgetter(*(position[name] for name in _USAGE_COLUMNS))
    counts = operator.itemgetter(*(position[name] for name in TOKEN_CATEGORIES))
    costs = operator.itemgetter(*(position[f"cost_{name}"] for name in TOKEN_CATEGORIES))
    for row in rows:
        yield (*columns(row), Tokens(*counts(row)), *costs(row))


def _owner_of(owner: dict[str, str], message_id: str | None, request_id: str | None, session_id: str) -> str:
    """Return the session that counts a usage row: its owner when the request is shared, else its own session."""
    if not owner:  # most sessions share no request (the 60 MB session's request figures: 54-86 -> 46-48 ms)
        return session_id
    return next((owner[key] for key in request_keys(message_id, request_id) if key in owner), session_id)


def _load_compactions(cache: Cache, sessions: dict[str, SessionView], ids: list[str]) -> None:
    for row in cache.session_rows("compactions", ids):
        sessions[row["session_id"]].compactions.append(
            CompactionView(row["agent_id"], row["at"], row["trigger"], row["pre_tokens"], row["post_tokens"], row["compaction_agent_id"])
        )


def _roll_up(session: SessionView) -> None:
    from agenthropic_site.graph.dag import build_graph, check_graph, critical_path, rollups

    # Session totals come from the agents themselves, so a graph problem can never zero them.
    session.tokens = Tokens.sum_of(a.tokens for a in session.agents)
    session.cost = None if session.excluded_reason else sum((a.cost for a in session.agents), Decimal(0))
    graph = build_graph((a.agent_id for a in session.agents), ((e["parent"], e["child"]) for e in session.edges))
    session.graph_problems = check_graph(graph, session.session_id, session.unlinked_agents)
    if session.graph_problems:
        for agent in session.agents:  # subtrees are undefined: show each agent's own figures
            agent.subtree_tokens, agent.subtree_cost = agent.tokens, agent.cost
        return
    sums = rollups(graph, {a.agent_id: (a.tokens, a.cost) for a in session.agents}, [session.session_id, *session.unlinked_agents])
    for agent in session.agents:
        rollup = sums[agent.agent_id]
        agent.subtree_tokens, agent.subtree_cost, agent.depth = rollup.subtree_tokens, rollup.subtree_cost, rollup.depth
    # An agent without a transcript has no times of its own: its spawner reports its duration.
    durations = {a.agent_id: _milliseconds(a.first_seen_at, a.last_seen_at) or ((a.reported or {}).get("duration_ms") or 0) for a in session.agents}
    session.critical_path = critical_path(graph, session.session_id, durations)


def _milliseconds(start: str | None, end: str | None) -> int:
    """Return the time between two transcript instants, 0 when either is missing."""
    if not start or not end:
        return 0
    delta = datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))
    return max(int(delta.total_seconds() * 1000), 0)
