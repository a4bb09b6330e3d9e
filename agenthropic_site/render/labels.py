"""Say who an agent is in plain words: what it was asked to do, what it is, how it was linked to its parent."""

from __future__ import annotations

from datetime import UTC, tzinfo

from agenthropic_site.model.views import AgentView
from agenthropic_site.render.formats import short_time, usd

LABEL_CHARS = 40  # a graph node's description line: longer ones end in "…"
TOOLTIP_CHARS = 1_000  # a description is prompt-sized at most; a hover text need not carry more

# How each kind of evidence (parse/model.py EDGE_SOURCES) ties an agent to the agent that spawned it.
PROVENANCE: dict[str, str] = {
    "meta_tool_use_id": "its metadata file names the call that spawned it",
    "tool_result_agent_id": "the spawning call's result names it",
    "result_text_agent_id": "the spawning call's result text ends with its id",
    "agent_progress": "a progress record of the spawning call names it",
    "task_notification": "a task notification names it and the agent it reports to",
    "queue_operation": "a queued task notification names it and the agent it reports to",
    "workflow_directory": "it ran in the folder of a workflow its parent started",
    "sidechain_inline": "it is written inside the main transcript and its first prompt is that of one spawning call",
    "prompt_match": "guessed: its first prompt is the prompt of exactly one spawning call",
}


def is_main(agent: AgentView) -> bool:
    """Tell whether an agent is its session's main agent."""
    return agent.kind == "main"


def agent_type(agent: AgentView) -> str:
    """Name what an agent is: its subagent type, else its kind; the main agent is the main session."""
    return "main session" if is_main(agent) else agent.agent_type or agent.kind


def linked_by(agent: AgentView) -> str:
    """Say in plain words how an agent was tied to its parent (the agent page's and the agents table's wording)."""
    if is_main(agent):
        return "no parent: it is the session's main agent"
    if agent.edge_source is None:
        return "not linked: nothing in the transcripts names the call that spawned it"
    return PROVENANCE.get(agent.edge_source, agent.edge_source)


def status_words(status: str, last_active: str | None, zone: tzinfo = UTC) -> str:
    """Say a status; for `unknown` (no hook event says otherwise) say when the agent was last active instead."""
    if status != "unknown":
        return status
    return f"last active {short_time(last_active, zone)}" if last_active else "status unknown"


def shorten(text: str | None, limit: int) -> str:
    """Return the first non-blank line of a text, spaces collapsed, cut at a word to at most `limit` characters with "…"."""
    line = next((" ".join(part.split()) for part in (text or "").splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    # Cut at the last word boundary unless that throws away more than half the room.
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def node_label(agent: AgentView, excluded: bool, zone: tzinfo = UTC) -> str:
    """Say what a graph node shows: its description, its type, then status and subtree cost (tokens where no cost is known)."""
    if not agent.has_transcript:
        figure = "transcript not in the corpus"
    else:
        figure = f"{agent.subtree_tokens.total:,} tokens" if excluded else usd(agent.subtree_cost)
    lines = [shorten(agent.description, LABEL_CHARS), agent_type(agent), f"{status_words(agent.status, agent.last_seen_at, zone)} · {figure}"]
    return "\n".join(line for line in lines if line)


def node_tooltip(agent: AgentView) -> str:
    """Say what hovering a graph node shows: the whole description, type and kind, and how it was linked to its parent."""
    description = " ".join((agent.description or "").split())
    if len(description) > TOOLTIP_CHARS:
        description = description[: TOOLTIP_CHARS - 1] + "…"
    lines = [
        description,
        f"type: {agent_type(agent)} · kind: {agent.kind}",
        f"linked: {linked_by(agent)}",
        "" if agent.has_transcript else "its transcript is not in the corpus",
    ]
    return "\n".join(line for line in lines if line)
