"""What render/ reads besides the model: a small read-only loader the pipeline builds from the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from agenthropic_site.model.views import RequestFigures, SessionView
from agenthropic_site.parse.model import Message


class StoredRows(Protocol):
    """A stored transcript read in parts: its body (a JSON list of message rows) and each message's digest."""

    digests: bytes  # 16 bytes a message, in order

    def read(self, start: int, end: int | None = None) -> bytes:
        """Return the body's bytes from `start` to `end` (its end when None)."""
        ...

    def row(self, index: int, start: int, end: int) -> bytes:
        """Return message `index`'s row, the body's bytes from `start` to `end`; raise when they are not the message as stored."""
        ...


class SiteSource(Protocol):
    """Load what pages show beyond the model; nothing here writes.

    What rendering produces for later builds (graphs drawn, masks counted) goes back to the
    pipeline as return values, and the pipeline keeps it.
    """

    @property
    def bytecode_folder(self) -> Path | None:
        """Return where compiled templates are kept between builds and shared with render workers (None: not kept)."""
        ...

    def view(self, session_id: str) -> SessionView:
        """Return a session's whole view, as stored (statuses before the watchdog)."""
        ...

    def transcript(self, session_id: str, agent_id: str) -> tuple[list[Message], bytes]:
        """Return one agent's displayable transcript, with the digest of each message as stored (16 bytes each, in order)."""
        ...

    def transcript_body(self, session_id: str, agent_id: str) -> StoredRows | None:
        """Return one agent's stored transcript to read in parts, or None when it has none."""
        ...

    def transcript_digests(self, session_id: str) -> dict[str, str]:
        """Return a digest of each agent's stored transcript, which changes whenever the transcript does."""
        ...

    def layout_sizes(self, session_id: str) -> dict[str, bytes]:
        """Return, by agent, the message keys and HTML sizes of the last layout of its transcript (reader.pack_sizes)."""
        ...

    def requests(self, session_id: str, shared: bool = True) -> dict[str, dict[str, RequestFigures]]:
        """Return each agent's deduplicated requests by message id, for the figures shown on messages.

        Not `shared`: the session's view counts none of its requests in another session, so none is looked up as a copy.
        """
        ...

    def view_sizes(self) -> dict[str, int]:
        """Return the stored bytes of each session's view: what loading it for its pages costs, as a weight for batching."""
        ...

    def svg(self, digest: str) -> bytes | None:
        """Return the SVG drawn by an earlier build from the DOT source with this digest, or None."""
        ...

    def project_insights(self) -> str | None:
        """Return the projects' insights the last build kept (render/site.py `project_insights`), or None."""
        ...

    def redaction_counts(self) -> dict[str, Any]:
        """Return the masks the last `--redact` build counted in each session: {session: [inputs digest, {kind: n}]}."""
        ...
