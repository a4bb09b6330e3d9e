"""Tool activity of a session: each tool call with its result's error flag and the time it took to come back."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from datetime import UTC, datetime
from typing import Any

from agenthropic_site.parse.model import Block, Message
from agenthropic_site.records import record_class

# A call as stored with the session: [message id of the reply that made it, tool name, 1 when its
# result is an error else 0, milliseconds from call to result or None without both timestamps].
ToolCall = list[str | int | None]


def instant_ms(timestamp: str | None) -> int | None:
    """Return a record's time in milliseconds since the epoch (a time without an offset read as UTC), or None."""
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    # A time without an offset is read as UTC, never as this machine's zone: the figure is stored and shown.
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() * 1000)


@record_class
class ToolTracker:
    """List one transcript's tool calls in file order as its messages are built, each matched by id with its first result.

    The call's time is its reply's (the first line of a multi-line reply); a result without a
    call in this transcript, or a call without a result, is left unmatched: no error, no time.
    Followed block by block, so a scan that resumes after an append carries it on
    (parse/checkpoint.py): a call still waiting is answered by a result in the appended lines.
    """

    calls: list[ToolCall] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # tool_use ids of the calls so far
    waiting: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # call id -> (its index in `calls`, called at)
    early: dict[str, tuple[bool, int | None]] = field(default_factory=dict)  # first result of an id no call has had yet

    def add(self, message: Message, blocks: Iterable[Block]) -> None:
        """Take blocks stored on `message` (new, or added to the last message by a later line of its reply)."""
        at: int | None = None
        timed = False  # the time is read once, for the first tool block (most blocks are text)
        for block in blocks:
            if block.kind != "tool_result" and block.kind != "tool_use":
                continue
            if not timed:
                at, timed = instant_ms(message.timestamp), True
            tool_use_id = block.tool_use_id
            if block.kind == "tool_result" and tool_use_id:
                if tool_use_id in self.waiting:
                    index, called_at = self.waiting.pop(tool_use_id)
                    self.calls[index][2:] = [int(block.is_error), _elapsed(called_at, at)]
                elif tool_use_id not in self.seen and tool_use_id not in self.early:
                    self.early[tool_use_id] = (block.is_error, at)
            elif block.kind == "tool_use" and block.name:
                if tool_use_id:
                    if tool_use_id in self.seen:
                        continue  # a re-written line of the same reply: one call
                    self.seen.add(tool_use_id)
                early = self.early.pop(tool_use_id, None) if tool_use_id else None
                is_error, answered_at = early or (False, None)
                if tool_use_id and early is None:
                    self.waiting[tool_use_id] = (len(self.calls), at)
                self.calls.append([message.message_id, block.name, int(is_error), _elapsed(at, answered_at)])

    def state(self) -> dict[str, Any]:
        """Return what a resumed scan needs, as JSON values."""
        return {"calls": self.calls, "seen": sorted(self.seen), "waiting": [[key, *value] for key, value in sorted(self.waiting.items())],
                "early": [[key, *value] for key, value in sorted(self.early.items())]}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> ToolTracker:
        """Rebuild a tracker from `state()`."""
        return cls([list(call) for call in state["calls"]], set(state["seen"]),
                   {key: (index, at) for key, index, at in state["waiting"]}, {key: (bool(error), at) for key, error, at in state["early"]})


def _elapsed(called_at: int | None, answered_at: int | None) -> int | None:
    return max(answered_at - called_at, 0) if answered_at is not None and called_at is not None else None


def session_tool_calls(calls: dict[str, list[ToolCall]], replaying: Iterable[str]) -> dict[str, list[ToolCall]]:
    """Return each agent's tool calls, leaving out agents that replay another's messages (compaction, side questions)."""
    skip = set(replaying)
    return {agent_id: found for agent_id, found in sorted(calls.items()) if agent_id not in skip and found}


def mcp_server(tool: str) -> str | None:
    """Return the MCP server of a tool named `mcp__<server>__<tool>`, else None."""
    if not tool.startswith("mcp__"):
        return None
    server, separator, _ = tool[5:].partition("__")
    return server if separator and server else None
