"""Render batches of sessions in worker processes (workers.py), each with a read-only view of the cache.

A cold build spends about half its time rendering session pages, one core at a time. The parent
gathers the model, renders the site-wide pages and publishes; each worker renders its share of
the batches into staged files and sends back what the parent needs: input digests, the staged
files, counts and newly drawn graphs. A page's bytes do not depend on which process rendered it,
so a build with workers equals one without.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenthropic_site.render.writer import SiteWriter
from agenthropic_site.pipeline.pool import Workers

if TYPE_CHECKING:
    from agenthropic_site.model.gather import SiteModel
    from agenthropic_site.render.pages import Renderer


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to build its own Renderer."""

    model: SiteModel
    cache_folder: Path
    writer: SiteWriter  # the build's output folder, staging folder and record of what it holds (`SiteWriter.spawn`)
    theme: Path | None
    pricing: Path | None
    redact: bool


@dataclass
class BatchResult:
    """What rendering one batch in a worker produced, for the parent to merge."""

    digests: dict[str, str]
    writer: SiteWriter  # what it produced, wrote (staged) and kept
    rendered: int
    graphviz_missing: bool
    redactions: dict[str, list[Any]]
    svgs: dict[str, bytes] = field(default_factory=dict)


def render_in_workers(parent: Renderer, setup: WorkerSetup, batches: list[list[str]], jobs: int) -> None:
    """Render `batches` in `jobs` worker processes, merging what they did into `parent` in order.

    Raises WorkersFailed when no worker starts (nothing done yet). A worker that stops early
    leaves its remaining batches to `parent`; whatever it had staged lies in the build's staging
    folder, which goes when the build ends. An error a worker raised (a full disk, a broken
    theme) is raised here once every batch is back, with every staged file merged into the
    parent's writer, so that its abort removes them.
    """
    workers = Workers("render", setup, batches, jobs)
    error: BaseException | None = None

    def here(batch: list[str]) -> tuple[str, None]:
        parent.render_batch(batch)  # a batch no worker answered: rendered in this process
        return ("here", None)

    try:
        for _, (kind, value) in workers.answers(here):
            if kind == "batch":
                parent.merge(value)
            elif kind == "error":
                error = error or value
        why = workers.stopped_early()
    finally:
        workers.close()
    if why is not None:
        parent.notice(f"notice: a render worker stopped early ({why}); this process rendered its sessions")
    if error is not None:
        raise error


def start(setup: WorkerSetup) -> Renderer:
    """Open the cache read-only and build this worker's Renderer (in a worker process)."""
    from agenthropic_site.cache import Cache
    from agenthropic_site.cost import load_price_table
    from agenthropic_site.render.pages import Renderer
    from agenthropic_site.model.stored import load_view

    reader = Cache.reader(setup.cache_folder)
    prices = load_price_table(setup.pricing)
    return Renderer(
        setup.model, reader, setup.writer, setup.theme, lambda message: None,
        load_view=lambda sid: load_view(reader, sid, prices, store=False), redact=setup.redact, mask_model=False,
    )


def run(renderer: Renderer, batch: list[str]) -> tuple[str, Any]:
    """Render one batch of sessions (in a worker process); on an error its staged files are removed."""
    from agenthropic_site.render.pages import RenderStats

    renderer.digests, renderer.stats, renderer.redactions = {}, RenderStats(), {}
    # Each batch sends back only what it produced (not the record of what the folder holds).
    renderer.writer = writer = SiteWriter(renderer.writer.out, renderer.writer.stage)
    drawn: dict[str, bytes] = {}
    cache = renderer.cache
    renderer.svg_store = (lambda digest: drawn.get(digest) or cache.svg(digest), drawn.__setitem__)
    try:
        renderer.render_batch(batch)
    except Exception as exc:  # noqa: BLE001 - the parent raises it once every batch is back
        writer.abort()
        try:
            pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an exception that cannot travel is sent as text
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        return "error", exc
    stats = renderer.stats
    return "batch", BatchResult(renderer.digests, writer, stats.rendered, stats.graphviz_missing, renderer.redactions, drawn)


def cancel(answer: tuple[str, Any]) -> None:
    """Remove the staged files of a batch nobody will publish."""
    if answer[0] == "batch":
        answer[1].writer.abort()
