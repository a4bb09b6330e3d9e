"""What the cache keeps beside a transcript's scan checkpoint, and how an appended transcript's stored body is spliced.

A stored transcript's body is the JSON list of its messages (`[m0,m1,...]`, orjson's compact
bytes). A scan carried on from a checkpoint gives the messages after those stored: appended
after the last one, or replacing it when its reply went on (parse/checkpoint.py `reopened`).
So the cache keeps, with each checkpoint, the body's length and where its last message starts.
"""

from __future__ import annotations


from agenthropic_site.corpus.safe_io import FileRef
from agenthropic_site.records import record_class

# A file a session's parse read whole at the size walked: its lstat then, its file_digest, and for
# a small sidecar its bytes (a parse takes them again while the file's lstat is the same), else None.
ParsedFile = tuple[FileRef, str, bytes | None]


@record_class(frozen=True)
class FilesIdentity:
    """A session's files as an ingest saw them: what tells whether they must be parsed again."""

    fingerprint: str  # paths, sizes, times and inodes (corpus/walk.py SessionFiles.fingerprint)
    shape: str  # paths and sizes only (SessionFiles.shape)
    source: str  # what was parsed: the digest of every file's bytes (pipeline/parsing.py content_digest), else the fingerprint
    read: tuple[ParsedFile, ...] = ()  # each file read whole at the size walked


@record_class(frozen=True)
class FileScanned:
    """A transcript file as a build read it: its lstat when the read matched the walk, and the bytes scanned (complete lines)."""

    rel: str
    size: int | None
    mtime_ns: int | None
    inode: int | None
    ctime_ns: int | None
    scanned: int
    scanned_digest: str


@record_class(frozen=True)
class ScanCheckpoint:
    """A stored checkpoint: the file it was read from, the stored transcript it goes with, and the scan state."""

    file: FileScanned
    agent_id: str
    body_sum: str
    body_len: int
    body_last: int  # where the body's last message starts (1 when it has none)
    state: bytes
    chunks: tuple[tuple[str, bytes], ...] = ()  # the chunks the state names (digest, bytes: parse/checkpoint.py)


@record_class(frozen=True)
class BodyShape:
    """A stored body's checksum, length and where its last message starts."""

    body_sum: str
    body_len: int
    body_last: int


def last_start(body_len: int, last_len: int, count_at_least_two: bool) -> int:
    """Return where the last message of a body starts, given the length of its own JSON (1 for an empty list)."""
    if last_len == 0:
        return 1
    return body_len - 1 - last_len - (1 if count_at_least_two else 0)


def spliced(head: bytes | bytearray | memoryview, keep: int, messages_json: bytes | bytearray) -> bytes:
    """Return a body's bytes from the piece its first `keep` bytes end in: `head`, then these messages' JSON list's items and `]`.

    `keep`: the list's `[` and the whole messages kept; `head`: those of them in that piece (the
    pieces before it stand as stored).
    """
    # Views, joined once: a body's piece is not copied into a head and then again into the result.
    inner = memoryview(messages_json)[1:-1]
    if not len(inner):
        return b"".join([head, b"]"])
    return b"".join([head, b"," if keep > 1 else b"", inner, b"]"])
