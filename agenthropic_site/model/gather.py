"""Gather the whole site model from the cache before anything is rendered."""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import field
from datetime import datetime
from decimal import Decimal
from typing import Any

from agenthropic_site.cache.store import QUARANTINE_AFTER
from agenthropic_site.config import DEFAULT_TZ, stale_cutoff
from agenthropic_site.corpus import Skip
from agenthropic_site.cost.breakdown import add_categories
from agenthropic_site.parse.model import Tokens
from agenthropic_site.parse.session import version_key
from agenthropic_site.model.usage import Usage
from agenthropic_site.model.views import TERMINAL_STATUSES, SessionSummary, SessionView
from agenthropic_site.records import record_class

PROJECT_KEY_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$")
HASHED_KEY_RE = re.compile(r"^p-[0-9a-f]{32}$")


@record_class
class ProjectView:
    """A project folder and its sessions."""

    folder: str
    key: str
    display_name: str
    sessions: list[SessionSummary]
    tokens: Tokens = Tokens()
    cost: Decimal = Decimal(0)
    last_activity: str | None = None
    lower_bound: bool = False
    cost_by_day: dict[str, Decimal] = field(default_factory=dict)
    cost_by_category: dict[str, Decimal] = field(default_factory=dict)
    by_model: dict[str, tuple[Tokens, Decimal]] = field(default_factory=dict)


@record_class
class Failure:
    """A session that could not be ingested, with a sanitized reason."""

    session_id: str
    project: str
    reason: str
    consecutive: int

    @property
    def quarantined(self) -> bool:
        """Tell whether the session now waits for its bytes to change before it is read again."""
        return self.consecutive >= QUARANTINE_AFTER


@record_class
class SiteModel:
    """Everything the renderer needs, gathered in one place."""

    projects: list[ProjectView]
    sessions: dict[str, SessionSummary]  # whole views are loaded a batch at a time as pages render
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
    stale_before: str  # agents with no ending and no activity since are shown as unknown
    reported_agents: int = 0  # agents without a transcript in the corpus
    reported_tokens: int = 0  # what their spawners report of them: shown apart, never counted
    under_reported: dict[str, Any] = field(default_factory=dict)  # placeholder output counts over the corpus
    unknown_spend: list[str] = field(default_factory=list)  # what the cost totals miss, each with roughly how much
    hook_events: dict[str, int] = field(default_factory=dict)
    spool_bad_lines: int = 0
    redactions: dict[str, int] | None = None  # masks made by kind with `build --redact`; None without
    usage: Usage = field(default_factory=lambda: Usage(DEFAULT_TZ))  # usage windows in the build's zone (`--tz`)

    @property
    def uncounted_files(self) -> int:
        """Count skipped transcripts whose tokens no total includes."""
        return sum(1 for skip in self.skips if skip.uncounted)

    @property
    def recent_sessions(self) -> list[SessionSummary]:
        """Return sessions newest first (ties by id, so the order is total)."""
        return sorted(self.sessions.values(), key=lambda s: (s.started_at or "", s.session_id), reverse=True)


def project_key(folder: str) -> str:
    """Return a path-safe name for a project folder, one per folder: the name itself when safe, else a hash.

    Hashed keys are `p-` + 32 hex; a safe name of that very form is hashed too, so no folder's
    name is another folder's hash. 128 bits: two names with one hash cannot be crafted.
    """
    if PROJECT_KEY_RE.match(folder) and not HASHED_KEY_RE.match(folder):
        return folder
    return "p-" + hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def gather(
    summaries: dict[str, SessionSummary], failures: list[Failure], skips: list[Skip], unlisted: list[str], now: datetime,
    watchdog_minutes: int, usage: Usage | None = None,
) -> SiteModel:
    """Assemble the site model from every session's summary (watchdog statuses, projects, totals) and the usage windows."""
    stale_before = stale_cutoff(now, watchdog_minutes)
    sessions = dict(sorted(summaries.items()))
    for session in sessions.values():
        session.status = watched_status(session.main_status, session.main_last_seen, stale_before) if session.main_status else "unknown"
    unpriced: dict[str, list[str]] = defaultdict(list)
    for session in sessions.values():
        if session.excluded_reason:
            unpriced[session.excluded_reason].append(session.session_id)
    priced = [s for s in sessions.values() if s.cost is not None]
    under = [s.under_reported for s in sessions.values() if s.under_reported.get("requests")]
    return SiteModel(
        projects=_projects(sessions, failures),
        sessions=sessions,
        skips=skips,
        failures=failures,
        unlisted=unlisted,
        # Token counts are facts even where a price is missing: every session's are in the total.
        tokens=Tokens.sum_of(s.tokens for s in sessions.values()),
        cost=sum((s.cost for s in priced if s.cost is not None), Decimal(0)),
        lower_bound=bool(unpriced or failures or any(skip.uncounted for skip in skips)),
        cost_by_day=_sum_days(s.cost_by_day for s in priced),
        cost_by_category=add_categories(s.cost_by_category for s in priced),
        by_model=_sum_models(s.by_model for s in priced),
        unpriced_models={model: sorted(ids) for model, ids in sorted(unpriced.items())},
        collisions=sum(s.collisions for s in sessions.values()),
        stale_before=stale_before,
        reported_agents=sum(len(s.absent_agents) for s in sessions.values()),
        reported_tokens=sum(s.reported_tokens for s in sessions.values()),
        under_reported={
            "requests": sum(u["requests"] for u in under),
            "sessions": len(under),
            "versions": sorted({v for u in under for v in u.get("versions", [])}, key=version_key),
        },
        unknown_spend=unknown_spend(sessions, failures, skips),
        usage=usage or Usage(DEFAULT_TZ),
    )


def unknown_spend(sessions: dict[str, SessionSummary], failures: list[Failure], skips: list[Skip]) -> list[str]:
    """Name what the cost totals leave out, each with roughly how much (issue 13: the lower-bound banner)."""
    missing = []
    unpriced = [s for s in sessions.values() if s.excluded_reason]
    if unpriced:
        tokens = sum(s.tokens.total for s in unpriced)
        reasons = sorted({s.excluded_reason or "" for s in unpriced})
        missing.append(f"the cost of {len(unpriced)} session(s) with requests that have no price ({tokens:,} tokens: {'; '.join(reasons)})")
    if failures:
        missing.append(f"{len(failures)} session(s) that could not be read")
    unread = [skip for skip in skips if skip.uncounted]
    if unread:
        sizes = [skip.size for skip in unread if skip.size is not None]
        size = f", {_bytes(sum(sizes))}" if len(sizes) == len(unread) else f", at least {_bytes(sum(sizes))}" if sizes else ""
        missing.append(f"{len(unread)} transcript file(s) or folder(s) that could not be read{size}")
    return missing


def _bytes(count: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def watched_status(status: str, last_seen_at: str | None, stale_before: str) -> str:
    """Show an agent without an observed ending and no recent activity as unknown (design: status lifecycle)."""
    if status not in TERMINAL_STATUSES and (last_seen_at is None or last_seen_at < stale_before):
        # A transcript proves activity, never an ending: stale activity is shown as unknown.
        return "unknown"
    return status


def apply_watchdog(session: SessionView, stale_before: str) -> None:
    """Apply the watchdog to every agent of a whole view, and the main agent's status to the session."""
    for agent in session.agents:
        agent.status = watched_status(agent.status, agent.last_seen_at, stale_before)
    main = session.agent_map.get(session.session_id)
    session.status = main.status if main else "unknown"


def stale_count(session: SessionSummary, stale_before: str) -> int:
    """Count the agents the watchdog shows as unknown: with the view, this fixes every status shown."""
    return bisect_left(session.open_last_seen, stale_before)


def _sum_days(day_maps: Any) -> dict[str, Decimal]:
    total: dict[str, Decimal] = {}
    for days in day_maps:
        for day, cost in days.items():
            total[day] = total.get(day, Decimal(0)) + cost
    return dict(sorted(total.items()))


def _sum_models(model_maps: Any) -> dict[str, tuple[Tokens, Decimal]]:
    # Each model's figures gathered first and added up once: one Tokens per model, not per session.
    each: dict[str, tuple[list[Tokens], list[Decimal]]] = {}
    for models in model_maps:
        for model, (tokens, cost) in models.items():
            figures = each.get(model)
            if figures is None:
                figures = each[model] = ([], [])
            figures[0].append(tokens)
            figures[1].append(cost)
    return {model: (Tokens.sum_of(tokens), sum(costs, Decimal(0))) for model, (tokens, costs) in sorted(each.items())}


def _projects(sessions: dict[str, SessionSummary], failures: list[Failure]) -> list[ProjectView]:
    grouped: dict[str, list[SessionSummary]] = defaultdict(list)
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
                tokens=Tokens.sum_of(s.tokens for s in members),
                cost=sum((s.cost for s in priced if s.cost is not None), Decimal(0)),
                last_activity=max(ends) if ends else None,
                lower_bound=len(priced) < len(members) or folder in failed_projects,
                cost_by_day=_sum_days(s.cost_by_day for s in priced),
                cost_by_category=add_categories(s.cost_by_category for s in priced),
                by_model=_sum_models(s.by_model for s in priced),
            )
        )
    return projects
