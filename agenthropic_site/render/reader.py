"""Lay a transcript out for reading: each message rendered once, pages cut by count and size, prompts outlined, turns figured."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from agenthropic_site.model.views import AgentView, RequestFigures
from agenthropic_site.parse.model import Block, Message, Tokens
from agenthropic_site.render.transcript import TranscriptContext, TurnFigures, is_prompt, render_message

# A page holds at most this many messages and this much message HTML; the page around them adds
# a few kilobytes, so no HTML file of the site exceeds PAGE_BOUND. Measured on real sessions:
# Chromium opens a 1.5 MB transcript page in well under a second, a 21 MB one in over 10 s.
MAX_PAGE_MESSAGES = 1_000
MAX_PAGE_BYTES = 1_500_000
PAGE_BOUND = 2_000_000
# A subagent's transcript shows on its own page when its stored text is below this (most are);
# a longer one is paged like a session's.
INLINE_TEXT_CHARS = 400_000
OUTLINE_CHARS = 160
# A session page lists every prompt up to this many, else one line per transcript page (each page
# lists its own prompts): a 60 MB session's 1,000 prompts would take 300 KB of the page.
OUTLINE_MAX = 300


@dataclass(frozen=True)
class OutlineEntry:
    """One prompt of a transcript, where it is, and what its turn cost."""

    index: int
    page: int  # 1-based
    text: str
    timestamp: str | None
    turn: TurnFigures | None


@dataclass
class Layout:
    """One agent's transcript laid out: every message's HTML, the pages, the outline."""

    fragments: list[str]
    pages: list[list[int]]  # message indices on each page, in order; a transcript always has one page
    outline: list[OutlineEntry]

    def page_of(self, index: int) -> int:
        """Return the 1-based page a message index is on."""
        for number, page in enumerate(self.pages, start=1):
            if page and index <= page[-1]:
                return number
        return len(self.pages)

    def body(self, page: int) -> str:
        """Return the message HTML of a 1-based page."""
        return "".join(self.fragments[index] for index in self.pages[page - 1])


def fits_inline(messages: list[Message]) -> bool:
    """Tell whether a transcript is short enough to show on its agent's own page."""
    if len(messages) > MAX_PAGE_MESSAGES:
        return False
    chars = 0
    for message in messages:
        for block in message.blocks:
            chars += len(block.text)
        if chars > INLINE_TEXT_CHARS:
            return False
    return True


def lay_out(messages: list[Message], context: TranscriptContext) -> Layout:
    """Render every message once and cut the transcript into pages; outline its prompts."""
    fragments = [_fitting(message, index, context) for index, message in enumerate(messages)]
    pages = paginate([len(fragment.encode("utf-8")) if fragment else 0 for fragment in fragments])
    page_of = {index: number for number, page in enumerate(pages, start=1) for index in page}
    outline = [
        OutlineEntry(index, page_of[index], _prompt_text(message), message.timestamp, context.turns.get(index))
        for index, message in enumerate(messages)
        if is_prompt(message) and fragments[index]
    ]
    return Layout(fragments, pages, outline)


def paginate(sizes: list[int]) -> list[list[int]]:
    """Cut message indices into pages, greedily from the first: an append can change only the last page.

    A message that shows nothing (size 0) stays on the page it falls on, so page boundaries are a
    function of the messages before them.
    """
    pages: list[list[int]] = [[]]
    count = size = 0
    for index, bytes_ in enumerate(sizes):
        if bytes_ and count and (count + 1 > MAX_PAGE_MESSAGES or size + bytes_ > MAX_PAGE_BYTES):
            pages.append([])
            count = size = 0
        pages[-1].append(index)
        if bytes_:
            count += 1
            size += bytes_
    return pages


def _fitting(message: Message, index: int, context: TranscriptContext) -> str:
    """Render a message; one too large for a page shows as many of its blocks as fit and says how many are left out."""
    html = render_message(message, index, context)
    if len(html) <= MAX_PAGE_BYTES // 2 or len(html.encode("utf-8")) <= MAX_PAGE_BYTES:
        return html
    low, high = 0, len(message.blocks) - 1
    best = _with_first_blocks(message, 0, index, context)
    while low <= high:
        keep = (low + high) // 2
        candidate = _with_first_blocks(message, keep, index, context)
        if len(candidate.encode("utf-8")) <= MAX_PAGE_BYTES:
            best, low = candidate, keep + 1
        else:
            high = keep - 1
    return best


def _with_first_blocks(message: Message, keep: int, index: int, context: TranscriptContext) -> str:
    left_out = len(message.blocks) - keep
    notice = Block(kind="notice", text=f"[{left_out:,} more blocks of this message are not shown: together they are too large for one page]")
    return render_message(dataclasses.replace(message, blocks=(*message.blocks[:keep], notice)), index, context)


def _prompt_text(message: Message) -> str:
    """Return the start of a prompt's text, on one line."""
    text = " ".join(block.text for block in message.blocks if block.kind == "text")
    text = " ".join(text.split())
    return text if len(text) <= OUTLINE_CHARS else text[: OUTLINE_CHARS - 1] + "…"


def turns_of(
    messages: list[Message], requests: Mapping[str, RequestFigures], spawned: Mapping[str, str], agents: Mapping[str, AgentView], excluded: bool,
) -> dict[int, TurnFigures]:
    """Figure each user turn: its own requests (copies counted elsewhere left out) and the whole subtree of every agent it spawned."""
    turns: dict[int, TurnFigures] = {}
    counted: set[str] = set()  # a request written as lines around a tool result shows as two messages: count it once
    opened: int | None = None
    tokens, cost = Tokens(), Decimal(0)

    def close() -> None:
        if opened is not None:
            turns[opened] = TurnFigures(len(turns) + 1, tokens, None if excluded else cost)

    for index, message in enumerate(messages):
        if is_prompt(message):
            close()
            opened, tokens, cost = index, Tokens(), Decimal(0)
        if opened is None:
            continue
        figures = requests.get(message.message_id) if message.message_id and message.message_id not in counted else None
        if message.message_id:
            counted.add(message.message_id)
        if figures is not None and figures.counted_in is None:
            tokens = tokens + figures.tokens
            cost += figures.cost or Decimal(0)
        for block in message.blocks:
            child = agents.get(spawned.get(block.tool_use_id or "", ""))
            if block.kind == "tool_use" and child is not None:
                tokens = tokens + child.subtree_tokens
                cost += child.subtree_cost
    close()
    return turns
