"""The pieces a transcript message is made of, as HTML: text (Markdown or preformatted), thinking, images, tool results.

Every piece of transcript text is escaped here or rendered by render/markdown.py (raw HTML off);
the only URLs written are `data:` thumbnails of stored raster images. Also what a transcript's
messages need from outside themselves (`TranscriptContext`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, tzinfo
from dataclasses import field
from decimal import Decimal
from typing import Any

import orjson
from markupsafe import escape

from agenthropic_site.model.views import RequestFigures
from agenthropic_site.parse.messages import BASE64_RE, THUMBNAIL_TYPES
from agenthropic_site.parse.model import Block, Message, Tokens
from agenthropic_site.records import record_class
from agenthropic_site.render.formats import PREVIEW_CHARS
from agenthropic_site.render.markdown import render_markdown

PREVIEW_LINES = 30  # a tool output of more lines is collapsed too
GIST_CHARS = 160  # a summary line shows this much of a command, path or pattern

FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
CLOSING_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\r?\n?")


@record_class(frozen=True)
class TurnFigures:
    """What one user turn cost: its own requests plus every agent it spawned (whole subtree)."""

    number: int  # 1-based turn number within this transcript
    tokens: Tokens
    cost: Decimal | None


class Results(Mapping[str, tuple[int, Block]]):
    """Each tool call's first result in a transcript by the call's id: the result's message index, and its block, read when asked for.

    Keys and places need no message read (render/reader.py keys messages by them), so a long
    stored transcript decodes only the messages it renders (`where`: the message index and block
    number of each result; `messages`: the transcript, decoding a message when it is first asked for).
    """

    def __init__(self, where: dict[str, tuple[int, int]], messages: Sequence[Message]) -> None:
        self.where, self.messages = where, messages

    def __getitem__(self, tool_use_id: str) -> tuple[int, Block]:
        at, number = self.where[tool_use_id]
        return at, self.messages[at].blocks[number]

    def __contains__(self, tool_use_id: object) -> bool:
        return tool_use_id in self.where

    def __iter__(self) -> Iterator[str]:
        return iter(self.where)

    def __len__(self) -> int:
        return len(self.where)

    def only(self, tool_use_ids: Iterable[str]) -> Results:
        """Keep the results of these calls (those that have one)."""
        return Results({tool_use_id: self.where[tool_use_id] for tool_use_id in tool_use_ids if tool_use_id in self.where}, self.messages)


@record_class
class TranscriptContext:
    """What a transcript's messages need from outside themselves: links, figures and where results sit."""

    spawned: dict[str, str]  # tool_use_id -> agent_id of the agent that call spawned (agents with a page)
    agent_href: Callable[[str], str]  # agent id -> URL of its page, relative to the page being rendered
    agent_labels: dict[str, str]  # agent id -> its description (or type), for link text
    session_href: Callable[[str], str]  # session id -> URL of its page (for `counted_in`)
    requests: dict[str, RequestFigures]  # message_id -> figures; a message whose id is absent shows none
    turns: dict[int, TurnFigures]  # message index -> the turn that user prompt opens
    results: Mapping[str, tuple[int, Block]]  # tool_use_id -> (message index, its tool_result block); from index_results()
    # message_id -> index of the one message that shows its figures (from index_requests()); a reply
    # split by tool results into several messages of one id shows them once. Empty: every message does.
    request_at: dict[str, int] = field(default_factory=dict)
    zone: tzinfo = UTC  # times are shown in the build's --tz


# --- formatting -------------------------------------------------------------------------------


def tokens_text(tokens: Tokens) -> str:
    """Write a token count: `1,234 tokens`."""
    return f"{tokens.total:,} tokens"


def size_text(text: str) -> str:
    """Write a text's size in characters and lines."""
    lines = line_count(text)
    return f"{len(text):,} character{'' if len(text) == 1 else 's'} · {lines:,} line{'' if lines == 1 else 's'}"


def line_count(text: str) -> int:
    """Count a text's lines (a final newline ends the last one)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def escaped(value: object) -> str:
    """Escape a value for HTML text or an attribute, as markupsafe escapes it."""
    if type(value) is str:  # not Markup, which markupsafe leaves as it is: a third of its time on short texts, no Markup made
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;").replace("'", "&#39;")
    return str(escape(value))


def first_line(text: str, limit: int = GIST_CHARS) -> tuple[str, bool]:
    """Return the first line of `text`, shortened to `limit`, and whether that left anything out."""
    stripped = text.strip()
    line = stripped.split("\n", 1)[0].rstrip("\r")
    if len(line) > limit:
        return line[:limit] + "…", True
    return line, line != stripped


def pretty_json(value: Any, indent: str = "") -> str:
    """Format a JSON value indented by two spaces, strings with their real line breaks (never `\\n`)."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{_json_scalar(str(key))}: {pretty_json(item, inner)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + pretty_json(item, inner) for item in value) + "\n" + indent + "]"
    return _json_scalar(value)


def _json_scalar(value: Any) -> str:
    if isinstance(value, str) and "\n" in value:
        return '"' + "\n".join(orjson.dumps(part).decode()[1:-1] for part in value.split("\n")) + '"'
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


# --- text ---------------------------------------------------------------------------------------


def _split_plain(text: str, limit: int) -> tuple[str, str]:
    cut = text.rfind("\n", 0, limit + 1)
    cut = cut + 1 if cut >= limit // 2 else limit
    return text[:cut], text[cut:]


def _split_markdown(text: str, limit: int) -> tuple[str, str]:
    """Split Markdown near `limit`: at a blank line when one is near, else at a line break, closing and reopening an open code fence."""
    offset, fence, opener = 0, "", ""
    blank_at, line_at, line_fence, line_opener = 0, 0, "", ""
    for line in text.splitlines(keepends=True):
        end = offset + len(line)
        if end > limit:
            break
        if not fence:
            match = FENCE_RE.match(line)
            if match:
                fence, opener = match.group(1), line
        else:
            match = CLOSING_FENCE_RE.fullmatch(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
        if not fence and not line.strip():
            blank_at = end
        line_at, line_fence, line_opener = end, fence, opener
        offset = end
    if blank_at >= limit // 2:
        return text[:blank_at], text[blank_at:]
    if line_at >= limit // 2:
        head, tail = text[:line_at], text[line_at:]
        if line_fence:
            head += line_fence + "\n"
            tail = line_opener + tail
        return head, tail
    cut = text.rfind(" ", 0, limit + 1)
    cut = cut + 1 if cut >= limit // 2 else limit
    return text[:cut], text[cut:]


def _text_html(text: str, markdown_on: bool) -> str:
    return f'<div class="md">{render_markdown(text)}</div>' if markdown_on else f"<pre>{escaped(text)}</pre>"


def stored_cut_note(text: str, truncated_from: int | None) -> str:
    if not truncated_from:
        return ""
    return f'<p class="note">Stored output cut at {len(text):,} of {truncated_from:,} characters.</p>'


def long_text(text: str, truncated_from: int | None, markdown_on: bool) -> str:
    """Render text whole, or a preview and the rest in a collapsed `<details>` (each part printed once)."""
    if len(text) <= PREVIEW_CHARS:
        body = _text_html(text, markdown_on)
    else:
        head, tail = (_split_markdown if markdown_on else _split_plain)(text, PREVIEW_CHARS)
        body = (
            f'{_text_html(head, markdown_on)}<details class="long more-text"><summary>show the remaining {len(tail):,} characters</summary>'
            f"{_text_html(tail, markdown_on)}</details>"
        )
    return body + stored_cut_note(text, truncated_from)


def thinking_html(block: Block, anchor: str) -> str:
    if not block.text:
        return f'<details class="thinking" id="{anchor}"><summary>Thinking (not recorded)</summary></details>'
    return (
        f'<details class="thinking" id="{anchor}"><summary>Thinking · {len(block.text):,} characters</summary><pre>{escaped(block.text)}</pre>'
        f"{stored_cut_note(block.text, block.truncated_from)}</details>"
    )


def image_html(block: Block) -> str:
    # Only base64 text of a raster type is put in a data: URL; the parser keeps nothing else, and
    # this check keeps a cache written by older code to the same rule.
    if block.text and block.name in THUMBNAIL_TYPES and BASE64_RE.match(block.text):
        return f'<img class="thumb" src="data:{escaped(block.name)};base64,{escaped(block.text)}" alt="pasted image ({escaped(block.name)})">'
    size = f", {block.truncated_from:,} characters: too large to show" if block.truncated_from else ""
    return f'<p class="image">[image: {escaped(block.name)}{size}]</p>'


# --- results --------------------------------------------------------------------------------------


def result_html(block: Block, standalone: bool = False) -> str:
    """Render a tool result: its label and size, the output whole or collapsed once when long."""
    label = "Error" if block.is_error else "Output"
    classes = "result" + (" error" if block.is_error else "") + (" standalone" if standalone else "")
    text = block.text
    note = stored_cut_note(text, block.truncated_from)
    if not text:
        return f'<div class="{classes}"><p class="result-head"><span class="label">{label}</span> · empty</p>{note}</div>'
    head = f'<span class="label">{label}</span> · <span class="size">{size_text(text)}</span>'
    if len(text) > PREVIEW_CHARS or line_count(text) > PREVIEW_LINES:
        return f'<div class="{classes}"><details class="output"><summary>{head}</summary><pre>{escaped(text)}</pre></details>{note}</div>'
    return f'<div class="{classes}"><p class="result-head">{head}</p><pre>{escaped(text)}</pre>{note}</div>'
