"""Gather the whole site model from the cache before anything is rendered."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson

from agenthropic_site.cache import Cache
from agenthropic_site.corpus import Skip
from agenthropic_site.cost import PriceTable
from agenthropic_site.cost.breakdown import CostedRow, WhatIf, add_categories, by_category, previous_boundary, segment_costs, what_if, window_cost
from agenthropic_site.graph import build_graph, check_graph, rollups
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens

TERMINAL_STATUSES = frozenset({"completed", "error"})
PROJECT_KEY_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$")


@dataclass
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


@dataclass
class CompactionView:
    """A compaction boundary with the spend of the segment it closes."""

    agent_id: str
    at: str | None
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    compaction_agent_id: str | None
    cost_before: Decimal | None = None  # spend of the segment this boundary closes


@dataclass
class SessionView:
    """One session, complete, as pages and JSON show it."""

    session_id: str
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

    @property
    def agent_map(self) -> dict[str, AgentView]:
        """Return agents by id."""
        return {agent.agent_id: agent for agent in self.agents}


@dataclass
class ProjectView:
    """A project folder and its sessions."""

    folder: str
    key: str
    display_name: str
    sessions: list[SessionView]
    tokens: Tokens = Tokens()
    cost: Decimal = Decimal(0)
    last_activity: str | None = None
    lower_bound: bool = False
    cost_by_day: dict[str, Decimal] = field(default_factory=dict)
    cost_by_category: dict[str, Decimal] = field(default_factory=dict)
    by_model: dict[str, tuple[Tokens, Decimal]] = field(default_factory=dict)


@dataclass
class Failure:
    """A session that could not be ingested, with a sanitized reason."""

    session_id: str
    project: str
    reason: str
    consecutive: int


@dataclass
class SiteModel:
    """Everything the renderer needs, gathered in one place."""

    projects: list[ProjectView]
    sessions: dict[str, SessionView]
    skips: list[Skip]
    failures: list[Failure]
    unlisted: list[str]
    tokens: Tokens
    cost: Decimal
    lower_bound: bool
    cost_by_day: dict[str, Decimal]
    cost_by_category: dict[str, Decimal]
    by_model: dict[str, tuple[Tokens, Decimal]]
    unpriced_models: dict[str, list[str]]
    collisions: int

    @property
    def recent_sessions(self) -> list[SessionView]:
        """Return sessions newest first (ties by id, so the order is total)."""
        return sorted(self.sessions.values(), key=lambda s: (s.started_at or "", s.session_id), reverse=True)


def project_key(folder: str) -> str:
    """Return a path-safe name for a project folder: the name itself when safe, else a hash."""
    if PROJECT_KEY_RE.match(folder):
        return folder
    return "p-" + hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def gather(cache: Cache, skips: list[Skip], unlisted: list[str], now: datetime, watchdog_minutes: int, prices: PriceTable) -> SiteModel:
    """Read every cached session, resolve cross-session ownership, roll up, and group by project."""
    sessions = _load_sessions(cache)
    owned = _ownership(cache, sessions)
    stale_before = _instant(now - timedelta(minutes=watchdog_minutes))
    _load_agents(cache, sessions, stale_before)
    rows_of = _load_usage(cache, sessions, owned)
    _load_compactions(cache, sessions)
    for session in sessions.values():
        _roll_up(session)
        if not session.excluded_reason:
            _cost_breakdowns(session, rows_of.get(session.session_id, []), prices)
    failures = [Failure(row["session_id"], row["project"], row["reason"], row["consecutive"])
                for row in cache.query("SELECT * FROM ingest_failures ORDER BY session_id")]
    unpriced: dict[str, list[str]] = defaultdict(list)
    for session in sessions.values():
        if session.excluded_reason:
            unpriced[session.excluded_reason].append(session.session_id)
    lower_bound = bool(unpriced or failures)
    projects = _projects(sessions, failures)
    priced = [s for s in sessions.values() if s.cost is not None]
    return SiteModel(
        projects=projects,
        sessions=sessions,
        skips=skips,
        failures=failures,
        unlisted=unlisted,
        tokens=sum((s.tokens for s in priced), Tokens()),
        cost=sum((s.cost for s in priced if s.cost is not None), Decimal(0)),
        lower_bound=lower_bound,
        cost_by_day=_sum_days(s.cost_by_day for s in priced),
        cost_by_category=add_categories(s.cost_by_category for s in priced),
        by_model=_sum_models(s.by_model for s in priced),
        unpriced_models={model: sorted(ids) for model, ids in sorted(unpriced.items())},
        collisions=sum(s.collisions for s in sessions.values()),
    )


def _instant(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _load_sessions(cache: Cache) -> dict[str, SessionView]:
    sessions = {}
    for row in cache.query("SELECT * FROM sessions ORDER BY session_id"):
        details = orjson.loads(row["details"])
        sessions[row["session_id"]] = SessionView(
            session_id=row["session_id"],
            project=row["project"],
            title=row["title"],
            title_source=row["title_source"],
            cwd=row["cwd"],
            git_branch=row["git_branch"],
            versions=orjson.loads(row["versions"]),
            started_at=row["started_at"],
            ended_at=row["ended_at"],
            main_ended_at=row["main_ended_at"],
            excluded_reason=row["excluded_reason"],
            warnings=[{"code": c, "message": m, "agent_id": a} for c, m, a in details["warnings"]],
            line_errors=[{"file": f, "line": n, "code": c, "message": m} for f, n, c, m in details["line_errors"]],
            unknown_types=details["unknown_types"],
            cost=None if row["excluded_reason"] else Decimal(0),
        )
    return sessions


def _ownership(cache: Cache, sessions: dict[str, SessionView]) -> dict[str, str]:
    """Map each message id seen in several sessions to the session that owns it.

    Resume and fork replays copy records verbatim (format §1.4): the owner is the session whose
    main transcript ends earliest (the original goes on less long), then the smallest id.
    """
    holders: dict[str, set[str]] = defaultdict(set)
    named: dict[str, set[str]] = defaultdict(set)
    for row in cache.query(
        "SELECT message_id, session_id, origin_session FROM token_usage WHERE message_id IN "
        "(SELECT message_id FROM token_usage WHERE message_id IS NOT NULL GROUP BY message_id HAVING COUNT(DISTINCT session_id) > 1)"
    ):
        holders[row["message_id"]].add(row["session_id"])
        if row["origin_session"]:
            named[row["message_id"]].add(row["origin_session"])
    owners = {}
    for message_id, ids in holders.items():
        # An explicit marker of the original session wins; else the earliest-ending transcript.
        marked = ids & named.get(message_id, set())
        owners[message_id] = min(marked or ids, key=lambda sid: (sessions[sid].main_ended_at or "~", sid))
    return owners


def _load_agents(cache: Cache, sessions: dict[str, SessionView], stale_before: str) -> None:
    for row in cache.query("SELECT * FROM agents ORDER BY session_id, position"):
        session = sessions[row["session_id"]]
        status = row["status"]
        last = row["last_seen_at"]
        if status not in TERMINAL_STATUSES and (last is None or last < stale_before):
            # A transcript proves activity, never an ending: stale activity is shown as unknown.
            status = "unknown"
        session.agents.append(
            AgentView(
                agent_id=row["agent_id"], parent_agent_id=row["parent_agent_id"], kind=row["kind"], edge_source=row["edge_source"],
                agent_type=row["agent_type"], description=row["description"], status=status, outcome_cause=row["outcome_cause"],
                notification_status=row["notification_status"], spawn_tool_use_id=row["spawn_tool_use_id"],
                first_seen_at=row["first_seen_at"], last_seen_at=last,
            )
        )
    for row in cache.query("SELECT * FROM orchestration_edges ORDER BY session_id, parent, child"):
        sessions[row["session_id"]].edges.append({"parent": row["parent"], "child": row["child"], "source": row["source"], "tool_use_id": row["tool_use_id"]})
    for session in sessions.values():
        agents = session.agent_map
        session.unlinked_agents = sorted(a.agent_id for a in session.agents if a.parent_agent_id is None and a.agent_id != session.session_id)
        for agent in session.agents:
            if agent.parent_agent_id in agents:
                agents[agent.parent_agent_id].children.append(agent.agent_id)
        main = agents.get(session.session_id)
        session.status = main.status if main else "unknown"


def _load_usage(cache: Cache, sessions: dict[str, SessionView], owner: dict[str, str]) -> dict[str, list[CostedRow]]:
    """Sum owned, priced rows per agent, model and day; return each session's rows for breakdowns."""
    rows_of: dict[str, list[CostedRow]] = defaultdict(list)
    for row in cache.query("SELECT * FROM token_usage ORDER BY session_id, seq"):
        session = sessions[row["session_id"]]
        message_id = row["message_id"]
        if message_id is not None and owner.get(message_id, session.session_id) != session.session_id:
            session.collisions += 1
            continue
        if session.excluded_reason:
            continue  # excluded whole: no figure of it reaches a total
        rows_of[session.session_id].append(
            CostedRow(
                agent_id=row["agent_id"], model=row["model"], family=row["family"],
                tokens=Tokens(row["input"], row["output"], row["cache_read"], row["cache_write_5m"], row["cache_write_1h"]),
                at=row["at"], speed=row["speed"],
                parts=tuple(Decimal(row[f"cost_{name}"]) for name in TOKEN_CATEGORIES),
                segment=row["segment"],
            )
        )
    for session_id, rows in rows_of.items():
        session = sessions[session_id]
        per_agent: dict[str, list[Any]] = {}
        for costed in rows:
            entry = per_agent.setdefault(costed.agent_id, [Tokens(), Decimal(0), 0])
            entry[0] = entry[0] + costed.tokens
            entry[1] += costed.cost
            entry[2] += 1
            model_tokens, model_cost = session.by_model.get(costed.model, (Tokens(), Decimal(0)))
            session.by_model[costed.model] = (model_tokens + costed.tokens, model_cost + costed.cost)
            day = (costed.at or session.started_at or "unknown")[:10]
            session.cost_by_day[day] = session.cost_by_day.get(day, Decimal(0)) + costed.cost
        session.by_model = dict(sorted(session.by_model.items()))
        session.cost_by_day = dict(sorted(session.cost_by_day.items()))
        session.cost_by_category = by_category(rows)
        for agent in session.agents:
            agent.tokens, agent.cost, agent.requests = per_agent.get(agent.agent_id, (Tokens(), Decimal(0), 0))
    return rows_of


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
    session.what_if = what_if(rows, prices, session.cost or Decimal(0))


def _load_compactions(cache: Cache, sessions: dict[str, SessionView]) -> None:
    for row in cache.query("SELECT * FROM compactions ORDER BY session_id, seq"):
        sessions[row["session_id"]].compactions.append(
            CompactionView(row["agent_id"], row["at"], row["trigger"], row["pre_tokens"], row["post_tokens"], row["compaction_agent_id"])
        )


def _roll_up(session: SessionView) -> None:
    if session.excluded_reason:
        return
    # Session totals come from the agents themselves, so a graph problem can never zero them.
    session.tokens = sum((a.tokens for a in session.agents), Tokens())
    session.cost = sum((a.cost for a in session.agents), Decimal(0))
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


def _sum_days(day_maps: Any) -> dict[str, Decimal]:
    total: dict[str, Decimal] = {}
    for days in day_maps:
        for day, cost in days.items():
            total[day] = total.get(day, Decimal(0)) + cost
    return dict(sorted(total.items()))


def _sum_models(model_maps: Any) -> dict[str, tuple[Tokens, Decimal]]:
    total: dict[str, tuple[Tokens, Decimal]] = {}
    for models in model_maps:
        for model, (tokens, cost) in models.items():
            have_tokens, have_cost = total.get(model, (Tokens(), Decimal(0)))
            total[model] = (have_tokens + tokens, have_cost + cost)
    return dict(sorted(total.items()))


def _projects(sessions: dict[str, SessionView], failures: list[Failure]) -> list[ProjectView]:
    grouped: dict[str, list[SessionView]] = defaultdict(list)
    for session in sessions.values():
        grouped[session.project].append(session)
    failed_projects = {failure.project for failure in failures}
    projects = []
    for folder in sorted(set(grouped) | failed_projects):
        members = sorted(grouped.get(folder, []), key=lambda s: (s.started_at or "", s.session_id), reverse=True)
        cwds = [s.cwd for s in sorted(members, key=lambda s: (s.started_at or "", s.session_id)) if s.cwd]
        priced = [s for s in members if s.cost is not None]
        ends = [s.ended_at for s in members if s.ended_at]
        projects.append(
            ProjectView(
                folder=folder,
                key=project_key(folder),
                # The folder name is a lossy slug of the path (format §1.2): show the records' cwd.
                display_name=cwds[-1] if cwds else folder,
                sessions=members,
                tokens=sum((s.tokens for s in priced), Tokens()),
                cost=sum((s.cost for s in priced if s.cost is not None), Decimal(0)),
                last_activity=max(ends) if ends else None,
                lower_bound=len(priced) < len(members) or folder in failed_projects,
                cost_by_day=_sum_days(s.cost_by_day for s in priced),
                cost_by_category=add_categories(s.cost_by_category for s in priced),
                by_model=_sum_models(s.by_model for s in priced),
            )
        )
    return projects
