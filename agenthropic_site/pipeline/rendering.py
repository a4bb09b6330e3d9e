"""The render stage seen from the pipeline: render/ gets a read-only view of the cache, and its products are stored here.

render/ never touches the cache: this module gives it a `CacheSource` (views, transcripts, drawn
graphs, the last build's redaction counts), stores the graphs it drew, and is the render task of
worker processes, each of which opens the cache read-only for its own source.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from agenthropic_site.cache import Cache
from agenthropic_site.cache.store import StoredBody
from agenthropic_site.config import BuildConfig
from agenthropic_site.cost import PriceTable
from agenthropic_site.model.gather import SiteModel
from agenthropic_site.model.stored import ComputedAlone, load_view
from agenthropic_site.model.views import AgentRequests, SessionView, request_figures
from agenthropic_site.parse.model import Message
from agenthropic_site.pipeline import stamp
from agenthropic_site.pipeline.parsing import WORKER_PRELOAD
from agenthropic_site.pipeline.pool import Task, map_in_order
from agenthropic_site.render.markdown import rendered_aside
from agenthropic_site.render.pages import GRAPH, Renderer
from agenthropic_site.render.parallel import BatchResult, WorkerSetup, render_batch, worker_renderer
from agenthropic_site.render.site import SiteRender, render_site
from agenthropic_site.render.writer import SiteWriter


class CacheSource:
    """The cache as render/ sees it: read-only (a view the cache damaged is derived again, and kept only by the build)."""

    def __init__(self, cache: Cache, prices: PriceTable, keep_views: bool, alone: ComputedAlone | None = None) -> None:
        self.cache = cache
        self.prices = prices
        self.keep_views = keep_views  # False in a worker, which reads the cache only
        self.alone = ComputedAlone() if alone is None else alone  # what this build's views already made (refresh_views)
        self.bytecode_folder: Path | None = cache.path.parent / "templates"

    def view(self, session_id: str) -> SessionView:
        """Return a session's stored view (the one this build computed, when it computed it alone)."""
        known = self.alone.views.pop(session_id, None)
        return known if known is not None else load_view(self.cache, session_id, self.prices, store=self.keep_views)

    def transcript(self, session_id: str, agent_id: str) -> tuple[list[Message], bytes]:
        """Return one agent's displayable transcript, with its messages' stored digests."""
        return self.cache.keyed_transcript(session_id, agent_id)

    def transcript_body(self, session_id: str, agent_id: str) -> StoredBody | None:
        """Return one agent's stored transcript to read in parts."""
        return self.cache.transcript_body(session_id, agent_id)

    def transcript_digests(self, session_id: str) -> dict[str, str]:
        """Return a digest of each agent's stored transcript."""
        return self.cache.transcript_digests(session_id)

    def layout_sizes(self, session_id: str) -> dict[str, bytes]:
        """Return the last layout of each of a session's transcripts."""
        return self.cache.layout_sizes(session_id)

    def view_sizes(self) -> dict[str, int]:
        """Return the stored bytes of each session's view."""
        return self.cache.view_sizes()

    def requests(self, session_id: str, shared: bool = True) -> AgentRequests:
        """Return each agent's requests by message id, with their exact figures (not `shared`: the session counts no copy elsewhere)."""
        known = self.alone.figures.pop(session_id, None)
        return known if known is not None else request_figures(self.cache, session_id, shared)

    def svg(self, digest: str) -> bytes | None:
        """Return a graph an earlier build drew."""
        return self.cache.svg(digest)

    def redaction_counts(self) -> dict[str, Any]:
        """Return the masks the last --redact build counted in each session."""
        return self.cache.redaction_counts()

    def project_insights(self) -> str | None:
        """Return the projects' insights the last build kept."""
        return self.cache.project_insights()


def render_from_cache(
    model: SiteModel, cache: Cache, writer: SiteWriter, config: BuildConfig, prices: PriceTable,
    alone: ComputedAlone | None = None, reuse_published: bool = False,
) -> SiteRender:
    """Render the site from the cache (in --jobs processes when many pages changed) and keep the graphs drawn.

    `alone`: the views and request figures of sessions whose views this build computed alone (refresh_views).
    `reuse_published`: the output folder holds what this cache last built there with this code and these options.
    """
    source = CacheSource(cache, prices, keep_views=True, alone=alone)
    # Workers price with this table, never with the price file read again: it may have changed since.
    in_workers = functools.partial(_in_workers, cache.path.parent, prices)
    with rendered_aside(stamp.kept_markdown()):
        rendered = render_site(model, source, writer, config.theme, redact=config.redact, jobs=config.jobs, in_workers=in_workers,
                               reuse_published=reuse_published)
    for digest, svg in rendered.svgs.items():
        cache.put_svg(digest, svg)
    cache.put_layout_sizes(rendered.layouts)
    cache.set_project_insights(rendered.insights)
    if rendered.svgs:  # the graphs kept grow only when one is drawn
        cache.keep_named_svgs(GRAPH)
    return rendered


def _in_workers(
    cache_folder: Path, prices: PriceTable, setup: WorkerSetup, batches: list[list[str]], jobs: int,
    do_here: Callable[[list[str]], BatchResult | None], notice: Callable[[str], None],
) -> Generator[tuple[list[str], BatchResult | None], None, None]:
    return map_in_order(RENDER_TASK, (setup, cache_folder, prices), batches, jobs, do_here, notice)


# The render task of worker processes (pipeline/pool.py).
def start(setup: tuple[WorkerSetup, Path, PriceTable]) -> Renderer:
    """Open the cache read-only and build this worker's Renderer with the build's prices (in a worker process)."""
    render_setup, cache_folder, prices = setup
    return worker_renderer(render_setup, CacheSource(Cache.reader(cache_folder), prices, keep_views=False))


def run(renderer: Renderer, batch: list[str]) -> BatchResult | None:
    """Render one batch of sessions (in a worker process)."""
    return render_batch(renderer, batch)


RENDER_TASK: Task[Renderer, list[str], BatchResult | None] = Task(start, run, WORKER_PRELOAD)
