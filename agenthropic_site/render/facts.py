"""Read a long stored transcript by what the last build kept of it: only the rows after that, and those rendered, are decoded.

A transcript of FACTS_MIN_MESSAGES messages or more keeps the facts of its first messages beside
its layout (`pack_facts`): each one's skeleton (render/transcript.py `Skeleton`: all that the
passes over a whole transcript read) and where its row ends in the stored body (a JSON list of
rows, cache/store.py `encode_messages`). They cover whole steps of FACTS_STEP messages, never the
last (a reply may go on), so the appends of a live session find the facts they would write: they
are written again once a step further. The next build takes them while the stored digests of
their messages are the same, decodes the rows after them, and any other message only when it is
rendered (`StoredMessages`): an append to a 60 MB session decoded its main transcript's 11,359
rows, 11.7 MB, for the few hundred its last page shows.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import NamedTuple, overload

import orjson

from agenthropic_site.parse.model import Message, message_from_row, message_row
from agenthropic_site.render.source import StoredRows
from agenthropic_site.render.transcript import Skeleton, skeleton_of

FACTS_MIN_MESSAGES = 1_000  # a transcript of more than a page (render/reader.py MAX_PAGE_MESSAGES)
FACTS_STEP = 256  # the facts cover a multiple of this many messages
DIGEST_BYTES = 16  # of a stored message's digest (cache/store.py MESSAGE_DIGEST_BYTES)
_HEAD = 4 + 16  # how many messages the facts are of, the digest of their stored digests
END_BYTES = 8  # of each row's end, unsigned: any bytes are ends, and a row read between wrong ones fails its digest


class TranscriptRead(NamedTuple):
    """A transcript as read for its pages: its messages, their skeletons, their stored digests (None: masked), where their rows end."""

    messages: Sequence[Message]
    skeletons: list[Skeleton]
    stored: bytes | None
    ends: list[int] | None = None  # known when read by its facts


class StoredMessages(Sequence[Message]):
    """A stored transcript's messages, each decoded from its row when first asked for (the decoded ones given)."""

    def __init__(self, body: StoredRows, ends: list[int], decoded: dict[int, Message]) -> None:
        self.body, self.ends, self.decoded = body, ends, decoded

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return [self[at] for at in range(*index.indices(len(self.ends)))]
        if index < 0:
            index += len(self.ends)
        message = self.decoded.get(index)
        if message is None:
            if not 0 <= index < len(self.ends):
                raise IndexError(index)
            start = self.ends[index - 1] + 1 if index else 1  # after the "," or the "[" before it
            message = self.decoded[index] = message_from_row(orjson.loads(self.body.row(index, start, self.ends[index])))
        return message


def pack_facts(skeletons: list[Skeleton], ends: list[int], stored: bytes) -> bytes | None:
    """Write what the next build reads a transcript by: how many messages the facts are of, the digest of their stored digests, their row ends and skeletons.

    None when they would be of no message (a transcript of less than a step and one message).
    Their row ends need no check (a row read between wrong ones fails its digest); their
    skeletons are trusted as far as the row's checksum (cache/store.py `layout_sizes`): checking
    each one's types would cost a build more than reading them, and only facts forged with their
    checksum made again could have the render raise.
    """
    count = facts_count(len(skeletons))
    if count < 1:
        return None
    return (count.to_bytes(4, "big") + _digest(stored[: count * DIGEST_BYTES]) + struct.pack(f">{count}Q", *ends[:count])
            + orjson.dumps([list(skeleton) for skeleton in skeletons[:count]]))


def facts_count(messages: int) -> int:
    """Return how many messages the facts of a transcript of this many cover: whole steps, never the last."""
    return max(messages - 1, 0) // FACTS_STEP * FACTS_STEP


def counted_in(packed: bytes) -> int:
    """Return how many messages packed facts cover."""
    return int.from_bytes(packed[:4], "big") if len(packed) >= _HEAD else 0


def unpack_facts(packed: bytes, stored: bytes) -> tuple[list[int], list[Skeleton]] | None:
    """Return the row ends and skeletons of the first messages of a transcript, when its facts still stand for them (stored as they were); else None."""
    count = counted_in(packed)
    if count < 1 or count * DIGEST_BYTES > len(stored) or _digest(stored[: count * DIGEST_BYTES]) != packed[4:_HEAD]:
        return None
    rows_at = _HEAD + count * END_BYTES
    try:
        ends = list(struct.unpack(f">{count}Q", packed[_HEAD:rows_at]))
        skeletons = [Skeleton(*row) for row in orjson.loads(packed[rows_at:])]
    except (struct.error, orjson.JSONDecodeError, TypeError, ValueError):
        return None  # facts this code did not write: the transcript is read whole
    return (ends, skeletons) if len(skeletons) == count else None


def read_by_facts(body: StoredRows, packed: bytes) -> TranscriptRead | None:
    """Read a stored transcript by its facts (`pack_facts`): the rows after those they stand for decoded, the rest when asked for.

    None when they stand for none of its messages, or its rows are not where they say.
    """
    found = unpack_facts(packed, body.digests)
    if found is None:
        return None
    ends, skeletons = found
    tail = body.read(ends[-1])  # "," and the rows after, then "]"
    if tail == b"]":
        rows = []
    elif tail[:1] == b",":
        try:
            rows = orjson.loads(b"[" + tail[1:])
        except orjson.JSONDecodeError:
            return None
    else:
        return None
    if len(ends) + len(rows) != len(body.digests) // DIGEST_BYTES:
        return None
    kept_end = at = ends[-1]
    decoded: dict[int, Message] = {}
    for index, row in enumerate(rows, start=len(ends)):
        message = decoded[index] = message_from_row(row)
        skeletons.append(skeleton_of(message))
        at += 1 + len(orjson.dumps(row))  # rows are stored as orjson writes them (cache/store.py encode_messages)
        ends.append(at)
    if at + 1 != kept_end + len(tail):
        return None  # not where the body ends: its rows are not as this code writes them
    return TranscriptRead(StoredMessages(body, ends, decoded), skeletons, body.digests, ends)


def row_ends(messages: Sequence[Message], body: StoredRows) -> list[int] | None:
    """Return where each message's row ends in its stored body, when the rows are as this code writes them (where the body ends checked); else None.

    A row misplaced all the same is found when it is read: its bytes do not have its digest (StoredRows.row).
    """
    ends, at = [], 0
    for message in messages:
        at += 1 + len(orjson.dumps(message_row(message)))
        ends.append(at)
    return ends if ends and body.read(at) == b"]" else None


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()
