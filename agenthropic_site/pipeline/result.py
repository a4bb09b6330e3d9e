"""What a build did: the counts behind its summary line and exit code."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from agenthropic_site.errors import build_exit_code
from agenthropic_site.records import record_class

if TYPE_CHECKING:  # the no-change check (pipeline/stamp.py) makes a BuildResult before the corpus modules load
    from agenthropic_site.corpus import Skip


@record_class(frozen=True)
class NoChange:
    """What the next build would say if nothing changed, and over which build clocks that holds."""

    sessions: int
    reused: int
    failed: int
    excluded: int
    skips: int
    stale_after: str | None  # the latest activity the watchdog already shows as stale (clock cut-offs must stay above it)
    fresh_until: str | None  # the earliest activity it does not yet (cut-offs must stay at or below it)


@record_class
class BuildResult:
    """What a build did: counts for the summary line and the exit code."""

    sessions: int = 0
    parsed: int = 0
    reused: int = 0
    dirty: set[str] = field(default_factory=set)  # sessions whose view must be computed again
    quarantined: int = 0
    hook_events: int = 0
    failed: int = 0
    excluded: int = 0
    removed_sessions: int = 0
    transcripts_opened: int = 0
    pages_rendered: int = 0
    pages_written: int = 0
    pages_unchanged: int = 0
    files_removed: int = 0
    skips: int = 0
    read_skips: list[Skip] = field(default_factory=list)
    repriced: int = 0
    cache_repairs: list[str] = field(default_factory=list)  # damaged rows of the cache derived again (repair_line)
    no_change: NoChange | None = None  # what the next build would say if nothing changed; None when it would read a session again

    @property
    def exit_code(self) -> int:
        """Return 1 when anything was left out (failed or unpriced sessions), else 0."""
        return build_exit_code(self.failed, self.excluded)
