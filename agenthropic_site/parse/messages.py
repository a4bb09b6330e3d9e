"""Build the displayable transcript: one Message per record, multi-line replies merged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from agenthropic_site.parse.fields import dict_of, list_of, text_of
from agenthropic_site.parse.model import Block, Message

# Stored text per block; the page shows a preview and the rest on demand. Longer text is cut
# here so a 50 MB tool output cannot make the cache or a page unbounded.
MAX_BLOCK_CHARS = 16_000
# Pasted images (format §2.2) are shown inline as data: thumbnails up to this size.
MAX_THUMBNAIL_CHARS = 200_000
THUMBNAIL_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
BASE64_RE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


# A cut inside a word backs off to the word's start when it began this close to the limit.
WORD_BACKOFF_CHARS = 256
LAST_WORD_RE = re.compile(r"\s\S*\Z")


def _cut(text: str) -> tuple[str, int | None]:
    if len(text) <= MAX_BLOCK_CHARS:
        return text, None
    head = text[:MAX_BLOCK_CHARS]
    last_word = LAST_WORD_RE.search(head, MAX_BLOCK_CHARS - WORD_BACKOFF_CHARS)
    if not text[MAX_BLOCK_CHARS].isspace() and last_word is not None:
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


def blocks_of(content: Any) -> list[Block]:
    """Turn a message `content` (string or block list) into display blocks."""
    if isinstance(content, str):
        return [_text_block("text", content)] if content else []
    blocks = []
    for raw in list_of(content):
        if not isinstance(raw, dict):
            continue
        kind = raw.get("type")
        if kind == "text":
            blocks.append(_text_block("text", text_of(raw.get("text")) or ""))
        elif kind in ("thinking", "redacted_thinking"):
            # 2.1.23x may keep only the signature: thinking text "" (format §2.3).
            blocks.append(_text_block("thinking", text_of(raw.get("thinking")) or ""))
        elif kind == "tool_use":
            blocks.append(
                _text_block("tool_use", _json_text(raw.get("input")), name=text_of(raw.get("name")), tool_use_id=text_of(raw.get("id")))
            )
        elif kind == "tool_result":
            blocks.append(
                _text_block(
                    "tool_result",
                    _result_text(raw.get("content")),
                    tool_use_id=text_of(raw.get("tool_use_id")),
                    is_error=raw.get("is_error") is True,
                )
            )
        elif kind == "image":
            blocks.append(image_block(dict_of(raw.get("source"))))
        else:
            blocks.append(Block(kind="notice", text=f"[{str(kind)[:40]} block]"))
    return blocks


@dataclass
class MessageBuilder:
    """Collect Messages in file order for one agent."""

    messages: list[Message] = field(default_factory=list)
    _open_id: str | None = None

    def add_assistant(self, data: dict[str, Any], timestamp: str | None) -> None:
        """Add an assistant line, merging it into the previous one when message.id matches."""
        message = dict_of(data.get("message"))
        message_id = text_of(message.get("id"))
        blocks = blocks_of(message.get("content"))
        if message_id is not None and message_id == self._open_id and self.messages:
            last = self.messages[-1]
            self.messages[-1] = replace(last, blocks=last.blocks + tuple(blocks))
            return
        self._open_id = message_id
        self.messages.append(
            Message(role="assistant", uuid=text_of(data.get("uuid")), timestamp=timestamp, blocks=tuple(blocks), model=text_of(message.get("model")))
        )

    def add_user(self, data: dict[str, Any], timestamp: str | None) -> None:
        """Add a user line: a prompt, a tool result, or injected meta text."""
        self._open_id = None
        message = dict_of(data.get("message"))
        self.messages.append(
            Message(
                role="user",
                uuid=text_of(data.get("uuid")),
                timestamp=timestamp,
                blocks=tuple(blocks_of(message.get("content"))),
                is_meta=data.get("isMeta") is True or data.get("isCompactSummary") is True,
            )
        )

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
