"""Render a transcript's messages to HTML fragments: one function per block kind, tool calls by what they did.

The pieces are in render/fragments.py (text, thinking, images, results) and render/calls.py (tool
calls); this module puts a message together: its head (role, model, time, its request's figures or
its turn's), its blocks, and which results are shown inside their calls' cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from agenthropic_site.parse.model import Block, Message
from agenthropic_site.render.calls import tool_call
from agenthropic_site.render.formats import fine_usd, short_time
from agenthropic_site.render.fragments import (
    Results,
    TranscriptContext,
    TurnFigures,
    escaped,
    image_html,
    long_text,
    result_html,
    thinking_html,
    tokens_text,
)

__all__ = ["Results", "Skeleton", "TranscriptContext", "TurnFigures", "fine_usd", "index_requests", "index_results", "is_prompt", "render_message",
           "skeleton_of", "skeletons_of"]


OUTLINE_CHARS = 160  # of a prompt's text in the outlines


class Skeleton(NamedTuple):
    """What the passes over a whole transcript read of one message (turns, outline, requests, results, search links, keys).

    A long stored transcript keeps its messages' skeletons beside its layout (render/facts.py
    `pack_facts`), so that a build after an append decodes only the messages it renders.
    """

    message_id: str | None
    timestamp: str | None
    prompt: str | None  # the start of its text on one line, when it is a prompt (`is_prompt`); else None
    ids: list[list[Any]]  # [block number, block kind, tool use id] of each of its blocks with a tool use id, in order


def skeleton_of(message: Message) -> Skeleton:
    """Return what the passes over a whole transcript read of a message."""
    ids = [[number, block.kind, block.tool_use_id] for number, block in enumerate(message.blocks) if block.tool_use_id]
    return Skeleton(message.message_id, message.timestamp, _prompt_text(message) if is_prompt(message) else None, ids)


def skeletons_of(messages: Sequence[Message]) -> list[Skeleton]:
    """Return the skeleton of each message of a transcript (`skeleton_of`)."""
    return [skeleton_of(message) for message in messages]


def _prompt_text(message: Message) -> str:
    """Return the start of a prompt's text, on one line."""
    text = " ".join(block.text for block in message.blocks if block.kind == "text")
    text = " ".join(text.split())
    return text if len(text) <= OUTLINE_CHARS else text[: OUTLINE_CHARS - 1] + "…"


def index_results(skeletons: Sequence[Skeleton], messages: Sequence[Message]) -> Results:
    """Map each tool call's id to its first result in this transcript (calls without a result, results without a call: left out)."""
    calls = {tool_use_id for skeleton in skeletons for _, kind, tool_use_id in skeleton.ids if kind == "tool_use"}
    where: dict[str, tuple[int, int]] = {}
    for index, skeleton in enumerate(skeletons):
        for number, kind, tool_use_id in skeleton.ids:
            if kind == "tool_result" and tool_use_id in calls and tool_use_id not in where:
                where[tool_use_id] = (index, number)
    return Results(where, messages)


def index_requests(skeletons: Sequence[Skeleton]) -> dict[str, int]:
    """Map each API message id to the index of the first message carrying it, the one that shows its figures."""
    first: dict[str, int] = {}
    for index, skeleton in enumerate(skeletons):
        if skeleton.message_id is not None and skeleton.message_id not in first:
            first[skeleton.message_id] = index
    return first


def _paired(block: Block, index: int, context: TranscriptContext) -> bool:
    """Tell whether a result block is shown inside its call's card."""
    found = context.results.get(block.tool_use_id or "")
    return found is not None and found[0] == index and (found[1] is block or found[1] == block)


# --- messages -------------------------------------------------------------------------------------


# User text Claude Code writes itself: the marker of an interrupt (format §2, seen in 2.1.17 and
# 2.1.25) and a local slash command's output. Neither opens a turn; a slash command the person typed does.
NOT_TYPED = ("[Request interrupted by user", "<local-command-stdout>")


def is_prompt(message: Message) -> bool:
    """Tell whether a message is one the person typed: a user message with text, not injected, not only tool results."""
    if message.role != "user" or message.is_meta:
        return False
    texts = [block.text for block in message.blocks if block.kind == "text"]
    return bool(texts) and not texts[0].lstrip().startswith(NOT_TYPED)


def _request(message: Message, index: int, context: TranscriptContext) -> str:
    if message.message_id is None or message.message_id not in context.requests:
        return ""
    if context.request_at.get(message.message_id, index) != index:
        return ""
    figures = context.requests[message.message_id]
    if figures.counted_in is not None:
        owner = figures.counted_in
        link = f'<a href="{escaped(context.session_href(owner))}">session {escaped(owner[:8])}</a>'
        return f'<span class="figures copy">{tokens_text(figures.tokens)} · copy, counted in {link}</span>'
    cost = f" · {fine_usd(figures.cost)}" if figures.cost is not None else ""
    return f'<span class="figures">{tokens_text(figures.tokens)}{cost}</span>'


def _turn(index: int, context: TranscriptContext) -> str:
    turn = context.turns.get(index)
    if turn is None:
        return ""
    cost = f" · {fine_usd(turn.cost)}" if turn.cost is not None else ""
    return f'<span class="turn">turn {turn.number:,} · {tokens_text(turn.tokens)}{cost} incl. subagents</span>'


def _head(message: Message, index: int, prompt: bool, context: TranscriptContext) -> str:
    role = "You" if prompt else message.role + (f" · {message.subtype}" if message.subtype else "")
    model = f'<span class="model">{escaped(message.model)}</span>' if message.model else ""
    figures = _turn(index, context) if prompt else _request(message, index, context)
    when = escaped(short_time(message.timestamp, context.zone))
    return f'<div class="msg-head"><span class="role">{escaped(role)}</span>{model}{figures}<time>{when}</time></div>'


def render_message(message: Message, index: int, context: TranscriptContext) -> str:
    """Render one message as an `<li>`, or "" when all it holds is shown elsewhere (results inside their calls)."""
    prompt = is_prompt(message)
    markdown_on = message.role in ("assistant", "user") and not message.is_meta
    has = {"prompt"} if prompt else set()
    parts: list[str] = []
    for position, block in enumerate(message.blocks):
        kind = block.kind
        if kind == "text":
            parts.append(long_text(block.text, block.truncated_from, markdown_on))
        elif kind == "tool_use":
            html, error = tool_call(block, index, position, context)
            parts.append(html)
            has.update(("tool", "error") if error else ("tool",))
        elif kind == "tool_result":
            if _paired(block, index, context):
                continue
            parts.append(result_html(block, standalone=True))
            has.update(("tool", "error") if block.is_error else ("tool",))
        elif kind == "thinking":
            parts.append(thinking_html(block, f"m{index}-b{position}"))
            has.add("thinking")
        elif kind == "image":
            parts.append(image_html(block))
        else:
            parts.append(f'<p class="note">{escaped(block.text)}</p>')
    if not parts and any(block.kind == "tool_result" for block in message.blocks):
        return ""
    classes = "msg " + message.role + (" prompt" if prompt else "") + (" meta" if message.is_meta else "")
    return (
        f'<li class="{escaped(classes)}" id="m{index}" data-has="{" ".join(sorted(has))}">'
        f"{_head(message, index, prompt, context)}{''.join(parts)}</li>\n"
    )
