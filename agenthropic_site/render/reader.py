"""Lay a transcript out for reading: each message rendered once, pages cut by count and size, prompts outlined, turns figured."""

from __future__ import annotations

import dataclasses
import hashlib
import operator
from collections.abc import Mapping, Sequence
from datetime import tzinfo
from decimal import Decimal
from typing import Any

import orjson

from agenthropic_site.model.views import AgentView, RequestFigures
from agenthropic_site.parse.model import Block, Message, Tokens
from agenthropic_site.records import record_class
from agenthropic_site.render.transcript import Results, Skeleton, TranscriptContext, TurnFigures, is_prompt, render_message

# A page holds at most this many messages and this much message HTML; the page around them adds
# a few kilobytes, so no HTML file of the site exceeds PAGE_BOUND. Measured on real sessions:
# Chromium opens a 1.5 MB transcript page in well under a second, a 21 MB one in over 10 s.
MAX_PAGE_MESSAGES = 1_000
MAX_PAGE_BYTES = 1_500_000
PAGE_BOUND = 2_000_000
# A subagent's transcript shows on its own page when its stored text is below this (most are);
# a longer one is paged like a session's.
INLINE_TEXT_CHARS = 400_000
# A session page lists every prompt up to this many, else one line per transcript page (each page
# lists its own prompts): a 60 MB session's 1,000 prompts would take 300 KB of the page.
OUTLINE_MAX = 300
KEY_BYTES = 16  # of a message's key: the digest of what its HTML is made from
STORED_DIGEST_BYTES = 16  # of a stored message row's digest (cache/store.py MESSAGE_DIGEST_BYTES)
REF_BYTES = 8  # of a tool call id's digest in `call_refs`
# A transcript of at least this many messages (more than a page) keeps a prefix memo beside its layout
# (`prefix_memo`): the next build takes its messages' keys from the last layout as far as it says.
PREFIX_MIN_MESSAGES = MAX_PAGE_MESSAGES
PREFIX_MEMO_BYTES = 4 + KEY_BYTES  # how many messages it covers, and the digest of their keys' inputs
PREFIX_STEP = 256  # a memo covers a multiple of this many messages: the messages after it are keyed each build


@record_class(frozen=True)
class OutlineEntry:
    """One prompt of a transcript, where it is, and what its turn cost."""

    index: int
    page: int  # 1-based
    text: str
    timestamp: str | None
    turn: TurnFigures | None


class Links(dict[str, str]):
    """A table of links that is also the function a TranscriptContext calls; its repr is its contents."""

    def __call__(self, key: str) -> str:
        """Return the link of `key`."""
        return self[key]


def narrowed(context: TranscriptContext, skeleton: Skeleton, index: int) -> TranscriptContext:
    """Keep only what one message's HTML reads of its transcript's context: its request, its turn, its calls' results and agents.

    Messages are rendered from this, so it is everything a message's HTML depends on besides the
    message and its index: their digest says whether the HTML can have changed. Made from the
    message's skeleton: a message keyed is not read.
    """
    ids = list(dict.fromkeys(tool_use_id for _, _, tool_use_id in skeleton.ids))
    spawned = {tool_use_id: context.spawned[tool_use_id] for tool_use_id in ids if tool_use_id in context.spawned}
    message_id = skeleton.message_id or ""
    figures = context.requests.get(message_id)
    owner = figures.counted_in if figures is not None else None
    return TranscriptContext(
        spawned=spawned,
        agent_href=Links({agent_id: context.agent_href(agent_id) for agent_id in spawned.values()}),
        agent_labels={agent_id: context.agent_labels[agent_id] for agent_id in spawned.values() if agent_id in context.agent_labels},
        session_href=Links({owner: context.session_href(owner)} if owner else {}),
        requests={message_id: figures} if figures is not None else {},
        turns={index: context.turns[index]} if index in context.turns else {},
        results=_only(context.results, ids),
        request_at={message_id: context.request_at[message_id]} if message_id in context.request_at else {},
        zone=context.zone,
    )


def _only(results: Mapping[str, tuple[int, Block]], tool_use_ids: list[str]) -> Mapping[str, tuple[int, Block]]:
    """Keep the results of these calls, reading none of them."""
    if isinstance(results, Results):
        return results.only(tool_use_ids)
    return {tool_use_id: results[tool_use_id] for tool_use_id in tool_use_ids if tool_use_id in results}


def _places(results: Mapping[str, tuple[int, Any]]) -> Mapping[str, tuple[int, Any]]:
    """Return each result by its call's id with the index of the message it is in first, reading none of them."""
    return results.where if isinstance(results, Results) else results


def message_key(message: Message | None, index: int, narrow: TranscriptContext, stored: bytes | None = None) -> bytes:
    """Digest everything a message's HTML is made from (the message, its place, its narrowed context).

    `stored`: the digests of the stored rows the transcript's messages were read from, in order
    (cache/store.py message_digest). A row's digest stands for its message, and for the results
    its calls show, which are blocks of later messages (each the first result of its call there):
    the 60 MB session's keys serialised and hashed 34 MB (0.11 s an append), 2.9 MB with them (0.04 s).
    With them the message itself is not read (it may be None).
    """
    if stored is None:
        if message is None:
            raise ValueError("a message without a stored digest is keyed by its contents")
        return hashlib.blake2b(plain_json((message, index, narrow)), digest_size=KEY_BYTES).digest()
    results = {tool_use_id: _stored_digest(stored, at).hex() for tool_use_id, (at, _) in _places(narrow.results).items()}
    return hashlib.blake2b(_stored_digest(stored, index) + plain_json((index, _shown_besides_results(narrow), results)),
                           digest_size=KEY_BYTES).digest()


def _stored_digest(stored: bytes, index: int) -> bytes:
    return stored[index * STORED_DIGEST_BYTES : (index + 1) * STORED_DIGEST_BYTES]


# Every field of a narrowed context but its results (keyed by the digests of the messages they are in): all of
# them, so that a field added to TranscriptContext is in the key as soon as it is in the context.
_shown_besides_results = operator.attrgetter(*(f.name for f in dataclasses.fields(TranscriptContext) if f.name != "results"))


def taken_keys(skeletons: Sequence[Skeleton], context: TranscriptContext, stored: bytes | None, previous: bytes, memo: bytes,
               prefix: bytes) -> list[bytes | None]:
    """Return the keys of the messages the last `prefix_memo` covers, from the last layout, when the memo holds; else none.

    The memo names the first messages and digests what their keys are made of but their turns
    and the results shown after them (`prefix_digest`). When that digest is the same now, their
    keys are the last layout's, but for the prompts (a turn grows as its replies come) and the
    messages whose calls' results are past the memo: those are None, to be keyed again, as are
    the messages after the memo. `prefix`: this layout's own memo, which is the last one when
    nothing it covers changed. The 60 MB session's 11,362 keys took 107-136 ms a build, one by one.
    """
    if stored is None or len(memo) != PREFIX_MEMO_BYTES:
        return []
    count = int.from_bytes(memo[:4], "big")
    last: list[bytes | None] = list(unpack_layout(previous)[0][:count])
    # This layout's memo covers as many messages most builds: then it is the digest of them now.
    if count > min(len(skeletons), len(last)) or not (
        memo == prefix if prefix[:4] == memo[:4] else prefix_digest(skeletons, context, stored, count) == memo[4:]
    ):
        return []
    for index in context.turns:
        if index < count:
            last[index] = None
    late = {tool_use_id for tool_use_id, (at, _) in _places(context.results).items() if at >= count}
    if late:
        for index, skeleton in enumerate(skeletons[:count]):
            if any(tool_use_id in late for _, _, tool_use_id in skeleton.ids):
                last[index] = None
    return last


def prefix_memo(skeletons: Sequence[Skeleton], context: TranscriptContext, stored: bytes | None) -> bytes:
    """Return the memo the next layout of this transcript takes keys by (`taken_keys`): how many messages it covers, and their `prefix_digest`.

    It covers whole steps of PREFIX_STEP messages, never the last (a reply may go on), so the
    appends of a live session find the memo they would write, and digest their messages once.
    Empty for a transcript too short to keep one, or read without stored digests.
    """
    if stored is None or len(skeletons) < PREFIX_MIN_MESSAGES:
        return b""
    count = (len(skeletons) - 1) // PREFIX_STEP * PREFIX_STEP
    return count.to_bytes(4, "big") + prefix_digest(skeletons, context, stored, count)


def prefix_digest(skeletons: Sequence[Skeleton], context: TranscriptContext, stored: bytes, count: int) -> bytes:
    """Digest what the keys of the first `count` messages are made of, but their turns and the results after them (`taken_keys`).

    Their stored rows; and of their context, all a narrowed one holds of them but those two: the
    figures, owners' links and first places of their requests, the agents their calls spawned,
    their links and labels, where the results of their calls are among them, the zone.
    """
    head = skeletons[:count]
    request_ids = list(dict.fromkeys(skeleton.message_id or "" for skeleton in head))
    call_ids = list(dict.fromkeys(tool_use_id for skeleton in head for _, _, tool_use_id in skeleton.ids))
    requests = {message_id: context.requests[message_id] for message_id in request_ids if message_id in context.requests}
    owners = list(dict.fromkeys(figures.counted_in for figures in requests.values() if figures.counted_in))
    spawned = {tool_use_id: context.spawned[tool_use_id] for tool_use_id in call_ids if tool_use_id in context.spawned}
    places = _places(context.results)
    results = {tool_use_id: places[tool_use_id][0] for tool_use_id in call_ids if tool_use_id in places and places[tool_use_id][0] < count}
    parts = {
        "spawned": spawned,
        "agent_href": {agent_id: context.agent_href(agent_id) for agent_id in spawned.values()},
        "agent_labels": {agent_id: context.agent_labels[agent_id] for agent_id in spawned.values() if agent_id in context.agent_labels},
        "session_href": {owner: context.session_href(owner) for owner in owners},
        "requests": requests,
        "request_at": {message_id: context.request_at[message_id] for message_id in request_ids if message_id in context.request_at},
        "zone": context.zone,
        "results": results,
    }
    return hashlib.blake2b(stored[: count * STORED_DIGEST_BYTES] + plain_json((count, parts)), digest_size=KEY_BYTES).digest()


# Every field of TranscriptContext is in a prefix digest but `turns`, whose messages are keyed again (`taken_keys`):
# a field added to the context must be added to prefix_digest too, else the package does not import.
if {f.name for f in dataclasses.fields(TranscriptContext)} != {"spawned", "agent_href", "agent_labels", "session_href", "requests", "request_at", "zone",
                                                                "results", "turns"}:
    raise ImportError("render/reader.py: prefix_digest does not digest every field of TranscriptContext")


def plain_json(value: object) -> bytes:
    """Write what a page is made from as JSON, to digest it: dataclasses field by field, amounts and zones by their repr."""
    # orjson writes dataclasses field by field, twice as fast as repr(); a link function that is
    # not a Links table cannot be written, and raises.
    return orjson.dumps(value, default=_plain, option=orjson.OPT_NON_STR_KEYS)


def _plain(value: object) -> object:
    """Write what orjson cannot: amounts, the display zone, results (as the dict they stand for)."""
    if isinstance(value, (Decimal, tzinfo)):
        return repr(value)
    if isinstance(value, Results):
        return dict(value.items())
    raise TypeError(f"a message key cannot hold {type(value).__name__}")


def call_refs(messages: Sequence[Message]) -> bytes:
    """Return what a page may show of the agents a transcript's calls spawned: the digests of its calls' ids, those a turn counts first.

    A call links to its agent (named by its label); one after the first prompt is in a turn,
    which counts the agent's subtree too (`turns_of`). Four bytes say how many digests are in
    turns, then each group follows, sorted.
    """
    first = next((index for index, message in enumerate(messages) if is_prompt(message)), len(messages))
    before, after = (
        {block.tool_use_id for message in part for block in message.blocks if block.kind == "tool_use" and block.tool_use_id}
        for part in (messages[:first], messages[first:])
    )
    counted = sorted(map(ref_digest, after))
    return len(counted).to_bytes(4, "big") + b"".join(counted) + b"".join(sorted(map(ref_digest, before - after)))


def ref_digest(tool_use_id: str) -> bytes:
    """Digest a tool call id for `call_refs` (two ids with one digest only make a page look at one more agent)."""
    return hashlib.blake2b(tool_use_id.encode("utf-8", "surrogatepass"), digest_size=REF_BYTES).digest()


def pack_sizes(keys: list[bytes], sizes: list[int]) -> bytes:
    """Write each message's key and HTML size, for the next build's layout of the same transcript."""
    return b"".join(key + size.to_bytes(4, "big") for key, size in zip(keys, sizes))


def unpack_sizes(packed: bytes) -> dict[bytes, int]:
    """Read what pack_sizes wrote: message key -> HTML size in bytes."""
    return dict(zip(*unpack_layout(packed)))


def unpack_layout(packed: bytes) -> tuple[list[bytes], list[int]]:
    """Read what pack_sizes wrote, in the messages' order: their keys, and their HTML sizes in bytes."""
    step = KEY_BYTES + 4
    ends = range(0, len(packed) - step + 1, step)
    return [packed[at : at + KEY_BYTES] for at in ends], [int.from_bytes(packed[at + KEY_BYTES : at + step], "big") for at in ends]


@record_class
class Layout:
    """One agent's transcript laid out: each message's key and HTML size, the pages, the outline; HTML rendered when asked for."""

    messages: Sequence[Message]  # a stored transcript's decodes a message when it is first asked for
    skeletons: Sequence[Skeleton]  # of the messages, in order
    context: TranscriptContext  # the transcript's; each message is rendered from its narrowed part
    keys: list[bytes]  # none when laid out whole (`lay_out_whole`): a page that shows every message keeps no layout
    sizes: list[int]  # bytes of each message's HTML (0: it shows nothing)
    pages: list[list[int]]  # message indices on each page, in order; a transcript always has one page
    outline: list[OutlineEntry]
    fragments: dict[int, str]  # the messages rendered so far (or taken from the last build's page: `reuse`)
    previous: bytes = b""  # the last build's layout of this transcript (pack_sizes), to take its pages' messages from
    prefix: bytes = b""  # its prefix_memo, for the next build (empty: it keeps none)

    def page_of(self, index: int) -> int:
        """Return the 1-based page a message index is on."""
        for number, page in enumerate(self.pages, start=1):
            if page and index <= page[-1]:
                return number
        return len(self.pages)

    def fragment(self, index: int) -> str:
        """Return one message's HTML, rendering it if this layout has not yet."""
        if index not in self.fragments:
            self.fragments[index] = _fitting(self.messages[index], index, narrowed(self.context, self.skeletons[index], index))
        return self.fragments[index]

    def body(self, page: int) -> str:
        """Return the message HTML of a 1-based page, once: its messages' HTML is let go (a page is written once)."""
        html = "".join(self.fragment(index) for index in self.pages[page - 1])
        for index in self.pages[page - 1]:
            del self.fragments[index]
        return html

    def reuse(self, page: int, published: bytes) -> int:
        """Take the HTML of a 1-based page's messages from that page as the last build published it; return how many were taken.

        A message whose key is the one it had then renders to the same bytes, and pages are cut
        from the first message on, so an append renders only its new messages (and the last one
        when its reply went on): 800 messages of the 60 MB session's last page took 35 ms a build.
        The page's messages are found in `published` by the last layout's sizes, each where a
        message's own opening tag says it starts; anything else and none is taken.
        """
        keys, sizes = unpack_layout(self.previous)
        pages = paginate(sizes) if sizes else []
        if page > len(pages) or page > len(self.pages):
            return 0
        shown = [index for index in pages[page - 1] if sizes[index]]
        # Pages are runs of messages from the same first one: a message is where it was, and kept when its key is.
        on_page = set(self.pages[page - 1])
        same = {index for index in pages[page - 1] if index in on_page and keys[index] == self.keys[index] and sizes[index] == self.sizes[index]}
        if not same or not shown or pages[page - 1][0] != self.pages[page - 1][0]:
            return 0
        # Message text is escaped, so only a message's own tag holds ` id="m<index>" data-has="`.
        start = published.rfind(b'<li class="', 0, max(published.find(b' id="m%d" data-has="' % shown[0]), 0))
        if start < 0:
            return 0
        pieces, at = {}, start
        for index in pages[page - 1]:
            piece = published[at : at + sizes[index]]
            head = piece.find(b">")
            if len(piece) != sizes[index] or (piece and (not piece.startswith(b'<li class="') or piece.find(b' id="m%d" data-has="' % index, 0, head) < 0)):
                return 0
            pieces[index] = piece
            at += sizes[index]
        try:
            taken = {index: pieces[index].decode("utf-8") for index in same if index not in self.fragments}
        except UnicodeDecodeError:
            return 0
        self.fragments.update(taken)
        return len(taken)

    def page_key(self, page: int) -> bytes:
        """Return the keys of a 1-based page's messages, in order: the page's messages can differ only when these do."""
        return b"".join(self.keys[index] for index in self.pages[page - 1])

    def packed(self) -> bytes:
        """Return each message's key and size, for the next build (see lay_out's `known`)."""
        return pack_sizes(self.keys, self.sizes)


def fits_inline(messages: Sequence[Message]) -> bool:
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


def lay_out(messages: Sequence[Message], skeletons: Sequence[Skeleton], context: TranscriptContext, known: Mapping[bytes, int] | None = None,
            stored: bytes | None = None, previous: bytes = b"", memo: bytes = b"") -> Layout:
    """Cut a transcript into pages and outline its prompts, rendering only the messages whose size `known` does not give.

    `known` maps message keys to HTML sizes from an earlier build: a message with the same key
    renders to the same bytes, so after an append only the new messages and those whose context
    changed (a result arrived, a turn grew) are rendered to be measured. `stored`: the digests of
    the stored rows the messages were read from, STORED_DIGEST_BYTES each, in order (`message_key`).
    `previous` and `memo`: the last build's layout of this transcript (pack_sizes) and its `prefix_memo` (`taken_keys`).
    With `stored`, a message is read only to be rendered: the rest is keyed from its skeleton.
    """
    layout = Layout(messages, skeletons, context, [], [], [], [], {}, previous)
    known = known or {}
    layout.prefix = prefix_memo(skeletons, context, stored)
    taken = taken_keys(skeletons, context, stored, previous, memo, layout.prefix)
    for index, skeleton in enumerate(skeletons):
        # A message measured here is rendered from the context its key was made of; one rendered
        # later (its size known) is narrowed again then: a narrowed context per message, kept,
        # would be 15 MB for a 60 MB session.
        key = taken[index] if index < len(taken) else None
        narrow = None
        if key is None:
            narrow = narrowed(context, skeleton, index)
            key = message_key(messages[index] if stored is None else None, index, narrow, stored)
        layout.keys.append(key)
        size = known.get(key)
        if size is None:
            layout.fragments[index] = _fitting(messages[index], index, narrow or narrowed(context, skeleton, index))
            size = len(layout.fragments[index].encode("utf-8"))
        layout.sizes.append(size)
    return _paged(layout)


def lay_out_whole(messages: Sequence[Message], skeletons: Sequence[Skeleton], context: TranscriptContext) -> Layout:
    """Lay out a transcript by rendering every message, keying none: for a page that shows all of them (its layout has no keys to keep)."""
    layout = Layout(messages, skeletons, context, [], [], [], [], {})
    for index, message in enumerate(messages):
        layout.fragments[index] = _fitting(message, index, narrowed(context, skeletons[index], index))
        layout.sizes.append(len(layout.fragments[index].encode("utf-8")))
    return _paged(layout)


def _paged(layout: Layout) -> Layout:
    """Cut a layout whose sizes are measured into pages, and outline its prompts."""
    layout.pages = paginate(layout.sizes)
    page_of = {index: number for number, page in enumerate(layout.pages, start=1) for index in page}
    layout.outline = [
        OutlineEntry(index, page_of[index], skeleton.prompt, skeleton.timestamp, layout.context.turns.get(index))
        for index, skeleton in enumerate(layout.skeletons)
        if skeleton.prompt is not None and layout.sizes[index]
    ]
    return layout


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


def turns_of(
    skeletons: Sequence[Skeleton], requests: Mapping[str, RequestFigures], spawned: Mapping[str, str], agents: Mapping[str, AgentView], excluded: bool,
) -> dict[int, TurnFigures]:
    """Figure each user turn: its own requests (copies counted elsewhere left out) and the whole subtree of every agent it spawned."""
    turns: dict[int, TurnFigures] = {}
    counted: set[str] = set()  # a request written as lines around a tool result shows as two messages: count it once
    opened: int | None = None
    parts: list[Tokens] = []  # the open turn's token counts, added up once it closes (Tokens.sum_of)
    cost = Decimal(0)

    def close() -> None:
        if opened is not None:
            turns[opened] = TurnFigures(len(turns) + 1, Tokens.sum_of(parts), None if excluded else cost)

    for index, skeleton in enumerate(skeletons):
        if skeleton.prompt is not None:
            close()
            opened, parts, cost = index, [], Decimal(0)
        if opened is None:
            continue
        message_id = skeleton.message_id
        figures = requests.get(message_id) if message_id and message_id not in counted else None
        if message_id:
            counted.add(message_id)
        if figures is not None and figures.counted_in is None:
            parts.append(figures.tokens)
            cost += figures.cost or Decimal(0)
        for _, kind, tool_use_id in skeleton.ids:
            child = agents.get(spawned.get(tool_use_id, ""))
            if kind == "tool_use" and child is not None:
                parts.append(child.subtree_tokens)
                cost += child.subtree_cost
    close()
    return turns
