"""Agents whose transcript is not in the corpus, known only from their spawner's tool result.

Checkpoint exports of main transcripts (2.1.39-2.1.219 in the shared corpora) and corpora whose
agent files were deleted keep every Task/Agent call and its result, but not the agent's own file.
Such an agent still ran and was billed; its spawner's result reports a few figures about it
(format §4.2, §4.5). They are shown as reported by the parent and never added to counted tokens:
`totalTokens` and `usage` describe only the agent's last request (format §3.3).
"""

from __future__ import annotations

import re
from typing import Any

from agenthropic_site.ids import AGENT_ID_RE
from agenthropic_site.parse.fields import count_of, dict_of, text_of
from agenthropic_site.parse.scan import AGENT_ID_TAIL_RE, SPAWN_TOOLS, Spawn, ToolResult, TranscriptFacts
from agenthropic_site.parse.usage import read_tokens

# Result tails: `<usage>total_tokens: 76365\ntool_uses: 33\nduration_ms: 141871</usage>` (2.1.30+, format §4.2)
# and the tagged form `<usage><subagent_tokens>…</subagent_tokens>…</usage>` ([C] 2.1.2xx, format §4.5).
USAGE_BLOCK_RE = re.compile(r"<usage>(.*?)</usage>", re.S)
USAGE_FIELD_RE = re.compile(r"(total_tokens|subagent_tokens|tool_uses|duration_ms)\s*(?::\s*|>)\s*(\d{1,12})")
USAGE_FIELDS = {"total_tokens": "total_tokens", "subagent_tokens": "total_tokens", "tool_uses": "tool_uses", "duration_ms": "duration_ms"}


def absent_agents(facts: list[TranscriptFacts], known: set[str]) -> dict[str, tuple[Spawn, dict[str, Any]]]:
    """Return the agents a Task/Agent result names that have no transcript, with their spawn and reported figures."""
    spawns = {spawn.tool_use_id: spawn for fact in facts for spawn in fact.spawns if spawn.tool in SPAWN_TOOLS}
    found: dict[str, tuple[Spawn, dict[str, Any]]] = {}
    for fact in facts:
        for result in fact.results:
            spawn = spawns.get(result.tool_use_id)
            if spawn is None:
                continue
            agent_id = named_agent(result)
            if agent_id is None or agent_id in known:
                continue
            figures = reported_figures(result)
            have = found.get(agent_id)
            # A background launch reports nothing yet; a later, fuller result of the same agent wins.
            if have is None or _filled(figures) > _filled(have[1]):
                found[agent_id] = (have[0] if have else spawn, figures)
        for tool_use_id, agent_id in fact.progress_links:
            spawn = spawns.get(tool_use_id)
            if spawn is not None and agent_id not in known and agent_id not in found and AGENT_ID_RE.match(agent_id):
                found[agent_id] = (spawn, reported_figures(None))
    return dict(sorted(found.items()))


def named_agent(result: ToolResult) -> str | None:
    """Return the agent id a spawn result names: `toolUseResult.agentId`, else the text tail."""
    agent_id = text_of(dict_of(result.structured).get("agentId"))
    if agent_id and AGENT_ID_RE.match(agent_id):
        return agent_id
    match = AGENT_ID_TAIL_RE.search(result.text[-4000:])
    return match.group(1) if match else None


def reported_figures(result: ToolResult | None) -> dict[str, Any]:
    """Read what a spawn result reports of its agent: total tokens, tool uses, duration, last usage."""
    figures: dict[str, Any] = {"total_tokens": None, "tool_uses": None, "duration_ms": None, "usage": None}
    if result is None:
        return figures
    structured = dict_of(result.structured)
    figures["total_tokens"] = count_of(structured.get("totalTokens"))
    figures["tool_uses"] = count_of(structured.get("totalToolUseCount"))
    figures["duration_ms"] = count_of(structured.get("totalDurationMs"))
    usage = read_tokens(structured.get("usage")) if "usage" in structured else None
    figures["usage"] = None if usage is None or isinstance(usage, str) else usage.as_dict()
    block = USAGE_BLOCK_RE.search(result.text[-4000:])
    if block:
        for name, value in USAGE_FIELD_RE.findall(block.group(1)):
            key = USAGE_FIELDS[name]
            if figures[key] is None:
                figures[key] = count_of(int(value))
    return figures


def _filled(figures: dict[str, Any]) -> int:
    return sum(1 for value in figures.values() if value is not None)
