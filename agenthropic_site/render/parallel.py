"""Render batches of sessions in worker processes: what a worker gets, what it does, what it sends back.

A cold build spends about half its time rendering session pages, one core at a time. The parent
gathers the model, renders the site-wide pages and publishes; each worker renders batches into
staged files and sends back what the parent needs: input digests, the staged files, counts and
newly drawn graphs. A page's bytes do not depend on which process rendered it, so a build with
workers equals one without. Which process renders what is decided by render/site.py; the pipeline
starts the processes and gives each worker its read-only source.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

from agenthropic_site.model.gather import SiteModel
from agenthropic_site.records import record_class
from agenthropic_site.render.pages import GRAPHVIZ_MISSING, Renderer, RenderStats
from agenthropic_site.render.source import SiteSource
from agenthropic_site.render.writer import SiteWriter

log = logging.getLogger(__name__)


@record_class(frozen=True)
class WorkerSetup:
    """What a worker needs, besides its source, to render as the parent would."""

    model: SiteModel  # masked already with --redact
    writer: SiteWriter  # the build's output folder, staging folder and record of what it holds (`SiteWriter.spawn`)
    dirs: list[Path]  # theme folders
    site_digest: str  # the parent's: every process digests the same inputs
    redact: bool


@record_class
class BatchResult:
    """What rendering one batch in a worker produced, for the parent to merge."""

    digests: dict[str, str]
    writer: SiteWriter  # what it produced, wrote (staged) and kept
    rendered: int
    sessions: int  # whose pages were rendered, for the progress lines
    graphviz_missing: bool
    redactions: dict[str, list[Any]]
    svgs: dict[str, bytes] = field(default_factory=dict)
    layouts: dict[tuple[str, str], bytes | None] = field(default_factory=dict)


class InWorkers(Protocol):
    """Render batches in worker processes, as the pipeline provides it: answers in the batches' order.

    `do_here(batch)` renders a batch the workers cannot (its answer is None); `notice(why)` says once why.
    """

    def __call__(
        self, setup: WorkerSetup, batches: list[list[str]], jobs: int, do_here: Callable[[list[str]], BatchResult | None],
        notice: Callable[[str], None],
    ) -> Generator[tuple[list[str], BatchResult | None], None, None]: ...


def worker_renderer(setup: WorkerSetup, source: SiteSource) -> Renderer:
    """Build a worker's Renderer (in a worker process)."""
    return Renderer(setup.model, source, setup.writer, setup.dirs, setup.site_digest, redact=setup.redact)


def render_batch(renderer: Renderer, batch: list[str]) -> BatchResult:
    """Render one batch of sessions (in a worker process); on an error its staged files are removed and the error raised."""
    renderer.digests, renderer.stats, renderer.redactions, renderer.svgs, renderer.layouts = {}, RenderStats(), {}, {}, {}
    # Each batch sends back only what it produced (not the record of what the folder holds).
    # (The Renderer judges what is fresh by its own record, taken from the setup's writer.)
    renderer.writer = writer = SiteWriter(renderer.writer.out, renderer.writer.stage)
    try:
        sessions = renderer.render_batch(batch)
    except BaseException:
        writer.abort()
        raise
    writer.close_folders()
    stats = renderer.stats
    return BatchResult(renderer.digests, writer, stats.rendered, sessions, stats.graphviz_missing, renderer.redactions, renderer.svgs, renderer.layouts)


def merge(parent: Renderer, result: BatchResult) -> None:
    """Take a worker's batch as if this process had rendered it."""
    parent.digests.update(result.digests)
    parent.writer.adopt(result.writer)
    parent.stats.rendered += result.rendered
    if result.graphviz_missing and not parent.stats.graphviz_missing:
        log.info(GRAPHVIZ_MISSING)
    parent.stats.graphviz_missing |= result.graphviz_missing
    parent.redactions.update(result.redactions)
    for digest, svg in result.svgs.items():  # in the order drawn, as this process would have
        parent.svgs.setdefault(digest, svg)
    parent.layouts.update(result.layouts)
