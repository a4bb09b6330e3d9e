"""Derive each agent's ingest status and outcome cause from spawn results and notifications (format §5)."""

from __future__ import annotations

from agenthropic_site.parse.fields import dict_of
from agenthropic_site.parse.model import Agent
from agenthropic_site.parse.scan import INTERRUPT_MARKER, Notification, ToolResult, TranscriptFacts

TERMINATED_EARLY = "terminated early due to an api error"
# Error texts of spawn results, most specific first; anything else is `unclassified`.
ERROR_CAUSES = (
    (TERMINATED_EARLY, "terminated_early"),
    (INTERRUPT_MARKER.lower(), "user_interrupt"),
    ("doesn't want to proceed", "user_interrupt"),
    ("auto-denied", "permission_failed"),
    ("permission", "permission_failed"),
    ("not found. available agents", "dispatch_unavailable"),
    ("concurren", "concurrency_limit"),
    ("too many", "concurrency_limit"),
)


def error_cause(text: str) -> str:
    """Classify the text of a failed spawn result into an outcome cause."""
    lowered = text[:2000].lower()
    for needle, cause in ERROR_CAUSES:
        if needle in lowered:
            return cause
    return "unclassified"


def apply_outcomes(agents: dict[str, Agent], facts: list[TranscriptFacts], witnesses: list[TranscriptFacts], main_id: str) -> None:
    """Set status and outcome_cause on every agent from the witnesses' results and notifications."""
    results: dict[str, ToolResult] = {}
    notes_by_task: dict[str, Notification] = {}
    notes_by_tool: dict[str, Notification] = {}
    for fact in witnesses:
        for result in fact.results:
            results[result.tool_use_id] = result
        for note in fact.notifications:
            # The same task id may notify more than once (resumed agents): the last one stands.
            if note.task_id:
                notes_by_task[note.task_id] = note
            if note.tool_use_id:
                notes_by_tool[note.tool_use_id] = note
    by_id = {fact.agent_id: fact for fact in facts}
    for agent_id, agent in agents.items():
        agent_fact = by_id.get(agent_id)  # None for an agent whose transcript is not in the corpus
        if agent_id == main_id:
            if agent_fact is not None and agent_fact.interrupted:
                agent.outcome_cause = "user_interrupt"  # recorded, never promoted to a status
            continue
        # A Workflow call spawns many agents: its result and notification describe the run, not each agent.
        own_spawn = agent.spawn_tool_use_id if agent.edge_source != "workflow_directory" else None
        own_result = results.get(own_spawn or "")
        if own_result is not None:
            _apply_result(agent, own_result)
        own_note = notes_by_task.get(agent_id) or notes_by_tool.get(own_spawn or "")
        if own_note is not None:
            _apply_notification(agent, own_note)
        if agent_fact is None:
            continue
        if agent_fact.interrupted and agent.outcome_cause is None:
            agent.outcome_cause = "user_interrupt"
        if agent_fact.ends_with_api_error and agent.status != "completed":
            # The agent's own transcript ends on a final API error (synthetic line, format §2.3).
            agent.outcome_cause = "terminated_early"
            agent.status = "error"


def _apply_result(agent: Agent, result: ToolResult) -> None:
    structured = dict_of(result.structured)
    if structured.get("status") == "async_launched" or structured.get("isAsync") is True:
        return  # a background launch proves nothing about the ending (format §4.5)
    if result.is_error:
        agent.outcome_cause = error_cause(result.text)
        if agent.outcome_cause == "terminated_early":
            agent.status = "error"
        return
    if result.text.startswith("Async agent launched"):
        return
    agent.status = "completed"


def _apply_notification(agent: Agent, note: Notification) -> None:
    agent.notification_status = note.status
    if note.status == "completed":
        agent.status = "completed"
    elif note.status == "failed":
        agent.status = "error"
        agent.outcome_cause = "terminated_early" if TERMINATED_EARLY in note.summary.lower() else "unclassified"
    elif note.status == "killed":
        agent.outcome_cause = "user_interrupt"
