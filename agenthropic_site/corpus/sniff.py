"""Find which session a flat agent file belongs to from its first lines."""

from __future__ import annotations

import orjson

from agenthropic_site.corpus.safe_io import FileRef, UnreadableError, read_head

SNIFF_BYTES = 64 * 1024


def sniff_session_id(root: str, ref: FileRef) -> str | None:
    """Return the `sessionId` of the first record that names one, reading at most 64 KiB.

    Flat `agent-<8hex>.jsonl` files (2.0.28–2.1.1, format §1.3) are linked to their session
    only by the root session's `sessionId` inside every record.
    """
    try:
        head = read_head(root, ref, SNIFF_BYTES)
    except UnreadableError:
        return None
    # The piece after the last newline is a record when it decodes as a whole (a finished file
    # without a final newline, issue 13); cut at the limit or mid-write, it does not decode.
    for line in head.split(b"\n"):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            session_id = record.get("sessionId")
            if isinstance(session_id, str) and session_id:
                return session_id
    return None
