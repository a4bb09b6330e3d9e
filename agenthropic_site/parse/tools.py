"""Tool activity of a session: each tool call with its result's error flag and the time it took to come back."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from agenthropic_site.parse.model import Message

# A call as stored with the session: [message id of the reply that made it, tool name, 1 when its
# result is an error else 0, milliseconds from call to result or None without both timestamps].
ToolCall = list[str | int | None]


def _instant_ms(timestamp: str | None) -> int | None:
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    # A time without an offset is read as UTC, never as this machine's zone: the figure is stored and shown.
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() * 1000)


def tool_calls(messages: list[Message]) -> list[ToolCall]:
    """List one transcript's tool calls in file order, each matched by id with its first result.

    The call's time is its reply's (the first line of a multi-line reply); a result without a
    call in this transcript, or a call without a result, is left unmatched: no error, no time.
    """
    results: dict[str, tuple[bool, int | None]] = {}
    for message in messages:
        for block in message.blocks:
            if block.kind == "tool_result" and block.tool_use_id and block.tool_use_id not in results:
                results[block.tool_use_id] = (block.is_error, _instant_ms(message.timestamp))
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for message in messages:
        called_at = _instant_ms(message.timestamp)
        for block in message.blocks:
            if block.kind != "tool_use" or not block.name:
                continue
            if block.tool_use_id:
                if block.tool_use_id in seen:
                    continue  # a re-written line of the same reply: one call
                seen.add(block.tool_use_id)
            is_error, answered_at = results.get(block.tool_use_id or "", (False, None))
            elapsed = max(answered_at - called_at, 0) if answered_at is not None and called_at is not None else None
            calls.append([message.message_id, block.name, int(is_error), elapsed])
    return calls


def session_tool_calls(transcripts: dict[str, list[Message]], replaying: Iterable[str]) -> dict[str, list[ToolCall]]:
    """Return each agent's tool calls, leaving out agents that replay another's messages (compaction, side questions)."""
    skip = set(replaying)
    found = {agent_id: tool_calls(messages) for agent_id, messages in sorted(transcripts.items()) if agent_id not in skip}
    return {agent_id: calls for agent_id, calls in found.items() if calls}


def mcp_server(tool: str) -> str | None:
    """Return the MCP server of a tool named `mcp__<server>__<tool>`, else None."""
    if not tool.startswith("mcp__"):
        return None
    server, separator, _ = tool[5:].partition("__")
    return server if separator and server else None
