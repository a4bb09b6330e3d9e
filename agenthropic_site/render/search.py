"""Full-text search data: per-session shards and a session list, as script files a static page can load from file://."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from agenthropic_site.parse.model import Message
from agenthropic_site.records import record_class
from agenthropic_site.render.transcript import Skeleton, skeletons_of

KINDS = ("prompt", "answer", "tool-input", "tool-output", "thinking")

# The payload is JSON inside a script: these characters would let text end the script element or
# the call, or end a line in older JavaScript parsers, so they are written as \u escapes. Replaced
# in the UTF-8 bytes, a C scan each (str.translate took 1.9 s on a 54 MB session's 16 MB shard).
_SCRIPT_UNSAFE = tuple((character.encode(), f"\\u{ord(character):04x}".encode()) for character in ("<", ">", "&", "\u2028", "\u2029"))


@record_class(frozen=True)
class SearchEntry:
    """One searchable piece of a transcript: where it is shown, what kind it is, and its plain text."""

    href: str  # page path from the site root, e.g. sessions/<sid>/transcript/2.html
    anchor: str  # element id on that page: m12, or m12-b0 for a block shown in its own <details>
    kind: str  # one of KINDS
    text: str


def tool_calls(skeletons: Sequence[Skeleton]) -> dict[str, tuple[int, int]]:
    """Return where each tool call of a transcript is: its message index and block number, by tool use id (a later call of an id wins)."""
    return {tool_use_id: (index, number)
            for index, skeleton in enumerate(skeletons) for number, kind, tool_use_id in skeleton.ids
            if kind == "tool_use"}


def entries_of(messages: Sequence[Message], href_of: Callable[[int], str], indices: Iterable[int] | None = None,
               calls: dict[str, tuple[int, int]] | None = None) -> list[SearchEntry]:
    """Return the searchable blocks of a transcript in order; `href_of(index)` is the page of message `index`.

    `indices` limits them to those messages (a page's, the only ones read), `calls` is `tool_calls`
    of the transcript's skeletons when the caller has it.
    """
    calls = tool_calls(skeletons_of(messages)) if calls is None else calls
    entries = []
    for index in range(len(messages)) if indices is None else indices:
        message = messages[index]
        if message.is_meta or message.role not in ("user", "assistant"):
            continue  # injected context and system lines are not what anyone said
        for number, block in enumerate(message.blocks):
            kind = _kind(message.role, block.kind)
            text = _input_text(block.text) if kind == "tool-input" else block.text
            if kind is None or not text.strip():
                continue
            at, anchor = index, f"m{index}"
            if block.kind in ("tool_use", "thinking"):
                anchor = f"m{index}-b{number}"
            elif block.kind == "tool_result" and block.tool_use_id in calls:
                # A result is shown inside its call's card, which may sit on another message (or page).
                at, call_block = calls[block.tool_use_id]
                anchor = f"m{at}-b{call_block}"
            entries.append(SearchEntry(href_of(at), anchor, kind, text))
    return entries


def result_targets(skeletons: Sequence[Skeleton], indices: Iterable[int], calls: dict[str, tuple[int, int]],
                   page_of: Mapping[int, int]) -> list[tuple[str, int, int, int]]:
    """Return where the tool results of these messages are searched: their call's message, block and page.

    Besides the messages themselves, this is all their rows read of the transcript (entries_of).
    """
    return [(tool_use_id, *calls[tool_use_id], page_of[calls[tool_use_id][0]])
            for index in indices for _, kind, tool_use_id in skeletons[index].ids
            if kind == "tool_result" and tool_use_id in calls]


def _kind(role: str, block_kind: str) -> str | None:
    """Return the search kind of a block of a user or assistant message, or None when it is not searched."""
    if block_kind == "text":
        return "prompt" if role == "user" else "answer"
    return {"tool_use": "tool-input", "tool_result": "tool-output", "thinking": "thinking"}.get(block_kind)


def _input_text(text: str) -> str:
    """Return a tool input's values one per line (its JSON escapes undone), or the text itself when it is not JSON."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text  # an input cut before it was stored
    return "\n".join(_scalars(value))


def _scalars(value: Any) -> Iterator[str]:
    """Yield the scalar values of a JSON value, depth first, in document order."""
    stack = [value]
    while stack:  # a loop, not recursion: inputs can nest deeply
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            yield item
        elif item is not None:
            yield orjson.dumps(item).decode()


def shard_js(session_id: str, entries: list[SearchEntry]) -> bytes:
    """Return the script that hands one session's entries to the search page: agenthropicSearch.shard(id, rows)."""
    return join_shard(session_id, [shard_part(entries)])


def shard_part(entries: list[SearchEntry]) -> bytes:
    """Encode one transcript's rows for a shard, each led by a comma: a part's bytes do not depend on where it stands."""
    if not entries:
        return b""
    # One array of every row, its brackets dropped: the rows with a comma between each, as encoding
    # them one by one gives, with one encoding and one scan for unsafe characters a part (they stand
    # only inside strings), not one a row.
    return b"," + _json([[entry.href, entry.anchor, entry.kind, entry.text] for entry in entries])[1:-1]


def join_shard(session_id: str, parts: Sequence[bytes | memoryview]) -> bytes:
    """Return the shard script of a session's transcripts' parts, in order (the first row's comma dropped)."""
    return b"".join(shard_pieces(session_id, parts))


def shard_pieces(session_id: str, parts: Sequence[bytes | memoryview]) -> list[bytes | memoryview]:
    """Return the shard script's bytes in pieces, as join_shard joins them: a 60 MB session's shard is 17 MB, written piece by piece."""
    pieces = list(parts)
    first = next((index for index, part in enumerate(pieces) if len(part)), None)
    if first is not None:
        pieces[first] = memoryview(pieces[first])[1:]
    return [_shard_head(session_id), *pieces, SHARD_TAIL]


def split_shard(session_id: str, data: bytes, lengths: list[int]) -> list[bytes | memoryview] | None:
    """Cut a shard join_shard wrote back into its parts, given their lengths; None when the lengths do not fit it.

    The first part with rows lost its comma in the join: it comes back with it, as bytes.
    """
    head = _shard_head(session_id)
    nonempty = any(lengths)
    if not data.startswith(head) or not data.endswith(SHARD_TAIL) or len(head) + sum(lengths) - nonempty + len(SHARD_TAIL) != len(data):
        return None
    view = memoryview(data)
    parts: list[bytes | memoryview] = []
    at, first = len(head), True
    for length in lengths:
        if length and first:
            parts.append(b"," + view[at : at + length - 1])
            at += length - 1
            first = False
        else:
            parts.append(view[at : at + length])
            at += length
    return parts


SHARD_TAIL = b"]);\n"
# A session's search rows of at least this many bytes are written in several files, listed by its
# shard (`parts_js`): an append to a 60 MB session rewrote its 18 MB shard (about 0.1 s), where now
# it writes the list and the file of the part it changed.
SHARD_SPLIT_BYTES = 2 << 20
SHARD_GROUP_PARTS = 16  # the agents' parts a file of a split shard holds, on average


def shard_groups(names: Sequence[str]) -> list[list[int]]:
    """Cut a shard's parts (by name, in order) into the files of a split shard.

    A page of the session's transcript (named `session/page`: up to a few hundred messages, a
    megabyte of rows in the 60 MB session) has a file of its own; the agents' parts, one a
    transcript, are cut where a part's name hashes so. The cuts are a function of the names alone,
    not of where a part stands or of its size: a part that changes, or a page added at the end of
    the transcript, leaves every other file as it was.
    """
    groups: list[list[int]] = []
    for index, name in enumerate(names):
        if (not groups or "/" in name or "/" in names[index - 1]
                or hashlib.blake2b(name.encode(), digest_size=4).digest()[0] % SHARD_GROUP_PARTS == 0):
            groups.append([])
        groups[-1].append(index)
    return groups


def group_file(session_id: str, first: str) -> str:
    """Name the file of a split shard whose first part is `first` (from the site root)."""
    return f"search/s/{session_id}/{hashlib.blake2b(first.encode(), digest_size=8).hexdigest()}.js"


def parts_js(session_id: str, files: list[str]) -> bytes:
    """Return the shard of a session whose rows are in several files: agenthropicSearch.parts(id, [file, ...]), each file a shard of its own."""
    return b"agenthropicSearch.parts(" + _json(session_id) + b", " + _json(files) + b");\n"


def _shard_head(session_id: str) -> bytes:
    return b"agenthropicSearch.shard(" + _json(session_id) + b", ["


def sessions_js(entries: list[dict[str, str]]) -> bytes:
    """Return the script that lists every session and its shard: agenthropicSearch.sessions([...])."""
    return b"agenthropicSearch.sessions(" + _json(entries) + b");\n"


def _json(value: Any) -> bytes:
    """Encode JSON (keys in the order given) that no text inside can end: no <, >, &, U+2028 or U+2029 left raw."""
    data = orjson.dumps(value)
    for raw, escaped in _SCRIPT_UNSAFE:
        data = data.replace(raw, escaped)
    return data
