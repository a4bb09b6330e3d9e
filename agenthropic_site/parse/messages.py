"""Build the displayable transcript: one Message per record, multi-line replies merged."""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any

import orjson

from agenthropic_site.parse.fields import dict_of, list_of, text_of
from agenthropic_site.parse.model import Block, Message
from agenthropic_site.parse.tools import ToolTracker
from agenthropic_site.records import record_class

# Stored text per block; the page shows a preview and the rest on demand. Longer text is cut
# here so a 50 MB tool output cannot make the cache or a page unbounded.
MAX_BLOCK_CHARS = 16_000
# Stored blocks per message; the rest are counted in one notice block. Usage, spawns and results
# are read from the records themselves (parse/scan.py), so the cap never changes a figure or a link.
MAX_BLOCKS = 1_000
# Pasted images (format §2.2) are shown inline as data: thumbnails up to this size.
MAX_THUMBNAIL_CHARS = 200_000
THUMBNAIL_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
BASE64_RE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


# A cut inside a word backs off to the word's start when it began this close to the limit.
WORD_BACKOFF_CHARS = 256
LAST_WORD_RE = re.compile(r"\s\S*\Z")


def _cut(text: str, limit: int = MAX_BLOCK_CHARS) -> tuple[str, int | None]:
    if len(text) <= limit:
        return text, None
    head = text[:limit]
    last_word = LAST_WORD_RE.search(head, max(limit - WORD_BACKOFF_CHARS, 0))
    if not text[limit].isspace() and last_word is not None:
        # Never keep part of a word: a credential at the cut is left out whole, not shown in
        # part where --redact could no longer recognise its shape.
        head = head[: last_word.start() + 1]
    return head, len(text)


def _text_block(kind: str, text: str, **extra: Any) -> Block:
    stored, original = _cut(text)
    return Block(kind=kind, text=stored, truncated_from=original, **extra)


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def _strings_capped(value: Any, cap: int) -> Any:
    """Copy a JSON value with every string longer than `cap` cut (at a word) and ended by `…`."""
    if isinstance(value, str):
        return value if len(value) <= cap else _cut(value, cap)[0] + "…"
    if isinstance(value, dict):
        return {key: _strings_capped(item, cap) for key, item in value.items()}
    if isinstance(value, list):
        return [_strings_capped(item, cap) for item in value]
    return value


def _tool_input_block(raw: dict[str, Any]) -> Block:
    """Keep a tool call's input as valid JSON: over the limit, its long strings are shortened, not the JSON text.

    The page reads the input back (the Bash command, the path, an Edit's old and new text), so a
    cut must leave the structure whole; the largest string cap that fits is found by bisection.
    """
    name, tool_use_id = text_of(raw.get("name")), text_of(raw.get("id"))
    value = raw.get("input")
    text = _json_text(value)
    if len(text) <= MAX_BLOCK_CHARS:
        return Block(kind="tool_use", text=text, name=name, tool_use_id=tool_use_id)
    low, high, best = 0, MAX_BLOCK_CHARS, None
    while low <= high:
        cap = (low + high) // 2
        shortened = _json_text(_strings_capped(value, cap))
        if len(shortened) <= MAX_BLOCK_CHARS:
            best, low = shortened, cap + 1
        else:
            high = cap - 1
    if best is None:  # too many small values to fit even with every string emptied: cut the text
        return _text_block("tool_use", text, name=name, tool_use_id=tool_use_id)
    return Block(kind="tool_use", text=best, name=name, tool_use_id=tool_use_id, truncated_from=len(text))


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in list_of(content):
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(text_of(block.get("text")) or "")
        elif isinstance(block, dict) and block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def image_block(source: dict[str, Any]) -> Block:
    """Keep a pasted image small enough to show as a thumbnail; otherwise only its type.

    Only raster types are kept (an SVG could carry script), and only base64 text, which cannot
    leave the `src` attribute it is put in.
    """
    media = text_of(source.get("media_type")) or "image"
    data = text_of(source.get("data")) or ""
    if (
        source.get("type") == "base64"
        and media in THUMBNAIL_TYPES
        and len(data) <= MAX_THUMBNAIL_CHARS
        and BASE64_RE.match(data)
    ):
        return Block(kind="image", text=data, name=media)
    return Block(kind="image", text="", name=media, truncated_from=len(data) or None)


def _block(raw: dict[str, Any]) -> Block:
    kind = raw.get("type")
    if kind == "text":
        return _text_block("text", text_of(raw.get("text")) or "")
    if kind in ("thinking", "redacted_thinking"):
        # 2.1.23x may keep only the signature: thinking text "" (format §2.3).
        return _text_block("thinking", text_of(raw.get("thinking")) or "")
    if kind == "tool_use":
        return _tool_input_block(raw)
    if kind == "tool_result":
        return _text_block(
            "tool_result",
            _result_text(raw.get("content")),
            tool_use_id=text_of(raw.get("tool_use_id")),
            is_error=raw.get("is_error") is True,
        )
    if kind == "image":
        return image_block(dict_of(raw.get("source")))
    return Block(kind="notice", text=f"[{str(kind)[:40]} block]")


def blocks_of(content: Any, room: int = MAX_BLOCKS) -> tuple[list[Block], int]:
    """Turn a message `content` (string or block list) into at most `room` display blocks; count the rest."""
    if isinstance(content, str):
        if not content:
            return [], 0
        return ([_text_block("text", content)], 0) if room > 0 else ([], 1)
    blocks: list[Block] = []
    left_out = 0
    for raw in list_of(content):
        if not isinstance(raw, dict):
            continue
        if len(blocks) < room:
            blocks.append(_block(raw))
        else:
            left_out += 1  # counted, never built: a line of a million tiny blocks stays small
    return blocks, left_out


def _left_out_notice(count: int) -> Block:
    return Block(kind="notice", text=f"[{count:,} more content blocks not stored]")


@record_class
class MessageBuilder:
    """Collect Messages in file order for one agent."""

    messages: list[Message] = field(default_factory=list)
    tools: ToolTracker = field(default_factory=ToolTracker)  # the tool calls of the messages, followed as they are built
    _open_id: str | None = None
    _left_out: int = 0  # blocks of the open assistant message beyond MAX_BLOCKS

    def add_assistant(self, data: dict[str, Any], timestamp: str | None) -> None:
        """Add an assistant line, merging it into the previous one when message.id matches."""
        message = dict_of(data.get("message"))
        message_id = text_of(message.get("id"))
        if message_id is not None and message_id == self._open_id and self.messages:
            self._extend(self.messages[-1], message.get("content"))
            return
        self._open_id = message_id
        blocks, self._left_out = blocks_of(message.get("content"))
        if self._left_out:
            blocks.append(_left_out_notice(self._left_out))
        built = Message(role="assistant", uuid=text_of(data.get("uuid")), timestamp=timestamp, blocks=tuple(blocks), model=text_of(message.get("model")),
                        message_id=message_id)
        self.messages.append(built)
        self.tools.add(built, built.blocks)

    def _extend(self, last: Message, content: Any) -> None:
        """Add a later line's blocks to the open message: MAX_BLOCKS in all, then one notice counting the rest."""
        stored = len(last.blocks) - (1 if self._left_out else 0)
        blocks, left_out = blocks_of(content, MAX_BLOCKS - stored)
        if blocks:
            last.blocks += tuple(blocks)  # only while there is room: at most MAX_BLOCKS blocks copied per line
            self.tools.add(last, blocks)
        if left_out:
            had_notice = self._left_out > 0
            self._left_out += left_out
            notice = _left_out_notice(self._left_out)
            if had_notice:
                last.blocks[-1].text = notice.text  # in place: a line past the cap copies nothing
            else:
                last.blocks += (notice,)

    def add_user(self, data: dict[str, Any], timestamp: str | None) -> None:
        """Add a user line: a prompt, a tool result, or injected meta text."""
        self._open_id = None
        message = dict_of(data.get("message"))
        blocks, left_out = blocks_of(message.get("content"))
        if left_out:
            blocks.append(_left_out_notice(left_out))
        built = Message(
            role="user",
            uuid=text_of(data.get("uuid")),
            timestamp=timestamp,
            blocks=tuple(blocks),
            is_meta=data.get("isMeta") is True or data.get("isCompactSummary") is True,
        )
        self.messages.append(built)
        self.tools.add(built, built.blocks)

    def add_notification(self, data: dict[str, Any], timestamp: str | None, text: str) -> None:
        """Add a background-task notification delivered as a user line."""
        self._open_id = None
        self.messages.append(
            Message(role="notification", uuid=text_of(data.get("uuid")), timestamp=timestamp, blocks=(_text_block("text", text),))
        )

    def add_system(self, data: dict[str, Any], timestamp: str | None) -> None:
        """Add a system line worth showing (boundaries, errors); skip routine ones."""
        self._open_id = None
        subtype = text_of(data.get("subtype"))
        if subtype in ("turn_duration", "stop_hook_summary", "local_command") or (subtype is None and data.get("level") == "info"):
            return
        text = text_of(data.get("content")) or subtype or "system"
        self.messages.append(
            Message(role="system", uuid=text_of(data.get("uuid")), timestamp=timestamp, blocks=(_text_block("text", text),), subtype=subtype)
        )

    def add_summary(self, data: dict[str, Any]) -> None:
        """Add a legacy `summary` record (≤ 2.0.x titles, format §2.7)."""
        self._open_id = None
        text = text_of(data.get("summary")) or ""
        self.messages.append(Message(role="summary", uuid=None, timestamp=None, blocks=(_text_block("text", text),)))
