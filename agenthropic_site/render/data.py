"""The JSON mirror under site/data/: stable, sorted keys; fields are only ever added."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from collections.abc import Mapping
from typing import Any

import orjson

from agenthropic_site.cost import format_usd
from agenthropic_site.model.gather import ProjectView, SiteModel
from agenthropic_site.model.insights import CacheEfficiency, ToolStats, cache_efficiency, mcp_servers, tool_totals, weekly
from agenthropic_site.model.views import AgentView, SessionView, reported_tokens
from agenthropic_site.parse.tools import mcp_server
from agenthropic_site.parse.model import Tokens


def dump(value: Any) -> bytes:
    """Serialise with sorted keys, two-space indent and a final newline."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def usd(amount: Decimal | None) -> str | None:
    """Return a cost as a decimal string, or None when it cannot be stated."""
    return None if amount is None else format_usd(amount)


def models_json(by_model: dict[str, tuple[Tokens, Decimal]], excluded: bool = False) -> dict[str, Any]:
    """Return tokens and cost per model id; an excluded session's costs are null, never 0."""
    return {model: {"tokens": tokens.as_dict(), "cost_usd": None if excluded else usd(cost)} for model, (tokens, cost) in by_model.items()}


def agent_json(agent: AgentView, excluded: bool = False) -> dict[str, Any]:
    """Return one agent's entry of the session JSON; an excluded session's costs are null, never 0, its tokens exact."""
    return {
        "agent_id": agent.agent_id,
        "parent_agent_id": agent.parent_agent_id,
        "edge_source": agent.edge_source,
        "kind": agent.kind,
        "agent_type": agent.agent_type,
        "description": agent.description,
        "status": agent.status,
        "outcome_cause": agent.outcome_cause,
        "notification_status": agent.notification_status,
        "first_seen_at": agent.first_seen_at,
        "last_seen_at": agent.last_seen_at,
        "requests": agent.requests,
        "tokens": agent.tokens.as_dict(),
        "cost_usd": None if excluded else usd(agent.cost),
        "subtree_tokens": agent.subtree_tokens.as_dict(),
        "subtree_cost_usd": None if excluded else usd(agent.subtree_cost),
        "transcript": agent.has_transcript,
        "reported": agent.reported,
    }


UNDER_REPORTED_KEYS = ("requests", "recorded_output", "estimate_low", "estimate_high")


def reported_json(session: SessionView) -> dict[str, int]:
    """Sum what spawners report of agents without a transcript: shown apart, never in tokens."""
    return {"agents": sum(1 for agent in session.agents if not agent.has_transcript), "total_tokens": reported_tokens(session)}


SHARE_PLACES = 6  # a share is a ratio of exact counts: six places say it without float noise
PROJECT_TOOLS = 20  # most used tools listed per project


def cache_json(figures: CacheEfficiency) -> dict[str, Any]:
    """Return cache efficiency: cache-read share of input, the cost without caching, 5m and 1h writes (costs null when unknown)."""
    share = figures.read_share
    return {
        "input_tokens": figures.input_tokens,
        "cache_read_tokens": figures.tokens.cache_read,
        "cache_read_share": None if share is None else round(share, SHARE_PLACES),
        "cost_usd": usd(figures.cost),
        "uncached_cost_usd": usd(figures.uncached_cost),
        "saved_usd": usd(figures.saved),
        "cache_write_5m": {"tokens": figures.tokens.cache_write_5m, "cost_usd": usd(figures.write_5m_cost)},
        "cache_write_1h": {"tokens": figures.tokens.cache_write_1h, "cost_usd": usd(figures.write_1h_cost)},
    }


def tools_json(stats: list[ToolStats]) -> list[dict[str, Any]]:
    """Return tool figures, most called first; times in milliseconds, null where no call had both timestamps."""
    return [
        {"tool": stat.name, "mcp_server": mcp_server(stat.name), "calls": stat.calls, "errors": stat.errors, "timed_calls": stat.timed,
         "median_ms": stat.median_ms, "max_ms": stat.max_ms}
        for stat in stats
    ]


def project_insights_json(project: ProjectView, tz: str) -> dict[str, Any]:
    """Return a project's cache efficiency, most used tools and MCP servers, and its weeks."""
    tools = tool_totals(project.sessions)
    return {
        "cache_efficiency": cache_json(cache_efficiency(project.sessions)),
        "tools": [{"tool": stat.name, "calls": stat.calls, "errors": stat.errors} for stat in tools[:PROJECT_TOOLS]],
        "mcp_servers": [{"server": stat.name, "calls": stat.calls, "errors": stat.errors} for stat in mcp_servers(tools)],
        "weeks": [{"start": week.start.isoformat(), "cost_usd": usd(week.cost), "sessions": week.sessions} for week in weekly(project.sessions, tz)],
    }


def session_json(session: SessionView) -> dict[str, Any]:
    """Return the whole `data/sessions/<id>.json` document."""
    excluded = session.excluded_reason is not None
    return {
        "session_id": session.session_id,
        "project": session.project,
        "title": session.title,
        "title_source": session.title_source,
        "cwd": session.cwd,
        "git_branch": session.git_branch,
        "versions": session.versions,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "status": session.status,
        "excluded": {"reason": session.excluded_reason} if excluded else None,
        "main_transcript": session.main_state,
        "tokens": session.tokens.as_dict(),
        "cost_usd": usd(session.cost),
        "by_model": models_json(session.by_model, excluded),
        "reported_not_counted": reported_json(session),
        "output_under_reported": {key: session.under_reported.get(key, 0) for key in UNDER_REPORTED_KEYS},
        "copies_counted_in": session.copies_counted_in,
        "agents": [agent_json(agent, excluded) for agent in session.agents],
        "edges": [{"parent": e["parent"], "child": e["child"], "source": e["source"]} for e in session.edges],
        "unlinked_agents": session.unlinked_agents,
        "critical_path": session.critical_path,
        "compactions": [
            {
                "agent_id": c.agent_id,
                "at": c.at,
                "trigger": c.trigger,
                "pre_tokens": c.pre_tokens,
                "post_tokens": c.post_tokens,
                "compaction_agent_id": c.compaction_agent_id,
                "cost_usd_before": usd(c.cost_before),
            }
            for c in session.compactions
        ],
        "cost_by_category": None if excluded else {name: usd(cost) for name, cost in session.cost_by_category.items()},
        "segments": None if excluded else [usd(cost) for cost in session.segments],
        "what_if": [
            {"family": w.source, "priced_as": w.target, "cost_usd": usd(w.cost), "delta_usd": usd(w.delta)} for w in session.what_if
        ],
        "collisions": session.collisions,
        "context": [
            {"at": point.at, "agent_id": point.agent_id, "model": point.model, "context_tokens": point.context, "long_context": point.long_context,
             "cost_usd": usd(point.cost)}
            for point in session.context
        ],
        "cache_efficiency": cache_json(session.cache),
        "tools": {"all": tools_json(session.tools), "by_agent": {agent.agent_id: tools_json(agent.tools) for agent in session.agents if agent.tools}},
        "malformed_lines": len(session.line_errors),
        "unknown_record_types": session.unknown_types,
        "warnings": [{"code": w["code"], "message": w["message"]} for w in session.warnings]
        + [{"code": "graph_check", "message": problem} for problem in session.graph_problems],
    }


def index_json(model: SiteModel, insights: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Return `data/index.json`: projects, session summaries, totals and the build report.

    `insights`: each project's `project_insights_json`, by project key, where already made.
    """
    return {
        "projects": [
            {
                "project": project.folder,
                "key": project.key,
                "display_name": project.display_name,
                "sessions": len(project.sessions),
                "tokens": project.tokens.as_dict(),
                "cost_usd": usd(project.cost),
                "cost_lower_bound": project.lower_bound,
                "last_activity": project.last_activity,
                "cost_by_category": {name: usd(cost) for name, cost in project.cost_by_category.items()},
                "by_model": models_json(project.by_model),
                "cost_by_day": {day: usd(cost) for day, cost in project.cost_by_day.items()},
                **(insights[project.key] if insights is not None and project.key in insights else project_insights_json(project, model.usage.tz)),
            }
            for project in model.projects
        ],
        "sessions": [
            {
                "session_id": session.session_id,
                "project": session.project,
                "title": session.title,
                "status": session.status,
                "started_at": session.started_at,
                "tokens": session.tokens.as_dict(),
                "cost_usd": usd(session.cost),
                "excluded": {"reason": session.excluded_reason} if session.excluded_reason else None,
            }
            for session in model.sessions.values()
        ],
        "totals": {
            "tokens": model.tokens.as_dict(),
            "cost_usd": usd(model.cost),
            "cost_lower_bound": model.lower_bound,
            "cost_unknown": model.unknown_spend,
            "cost_by_category": {name: usd(cost) for name, cost in model.cost_by_category.items()},
            "by_model": models_json(model.by_model),
            "reported_not_counted": {"agents": model.reported_agents, "total_tokens": model.reported_tokens},
            "cache_efficiency": cache_json(cache_efficiency(model.sessions.values())),
        },
        "cost_by_day": {day: usd(cost) for day, cost in model.cost_by_day.items()},
        "report": report_json(model),
    }


def report_json(model: SiteModel) -> dict[str, Any]:
    """Return the build report: skips by reason, failures, unpriced models, collisions."""
    return {
        "skip_counts": dict(sorted(Counter(skip.reason for skip in model.skips).items())),
        "skipped": [{"path": skip.path, "reason": skip.reason, "detail": skip.detail, "bytes": skip.size} for skip in model.skips],
        "failed_sessions": [
            {"session_id": f.session_id, "project": f.project, "reason": f.reason, "consecutive_failures": f.consecutive,
             "quarantined": f.quarantined}
            for f in model.failures
        ],
        "unpriced_models": model.unpriced_models,
        "collisions": model.collisions,
        "unlisted_projects": model.unlisted,
        "uncounted_transcripts": model.uncounted_files,
        "output_under_reported": model.under_reported,
        "hook_events": model.hook_events,
        "hook_spool_bad_lines": model.spool_bad_lines,
        "redactions": model.redactions,
        "sessions": len(model.sessions),
    }
