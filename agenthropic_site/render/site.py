"""Render the whole site: static files, project pages, every session's pages (here or in workers), the index and report."""

from __future__ import annotations

import functools
import logging
from collections import Counter
from contextlib import closing
from dataclasses import field
from pathlib import Path
from typing import Any

import orjson

from agenthropic_site.batches import batched
from agenthropic_site.console import progress_step
from agenthropic_site.model.gather import SiteModel
from agenthropic_site.model import views
from agenthropic_site.records import record_class
from agenthropic_site.render.charts import bar_chart
from agenthropic_site.render.data import dump, index_json, project_insights_json
from agenthropic_site.render.formats import short_time
from agenthropic_site.render.pages import PARALLEL_MIN_PAGES, RENDER_BATCH, Renderer, RenderStats, digest_of, site_digest
from agenthropic_site.render.parallel import BatchResult, InWorkers, WorkerSetup, merge
from agenthropic_site.render.rows import session_rows
from agenthropic_site.render.search import SHARD_SPLIT_BYTES, sessions_js
from agenthropic_site.render.source import SiteSource
from agenthropic_site.render.theme import search_script_takes_parts, static_files, theme_dirs
from agenthropic_site.render.usage import usage_json, usage_section
from agenthropic_site.render.writer import SiteWriter

log = logging.getLogger(__name__)

PROGRESS_EVERY = 250  # sessions rendered between progress lines, at least (silent with -q)
_said: set[str] = set()  # notices this process printed: a watch says each once, not at every pass


def _say_once(notice: str) -> None:
    """Print a notice, unless this process printed it already."""
    if notice not in _said:
        _said.add(notice)
        log.info(notice)


@record_class
class SiteRender:
    """What rendering produced: digests for the manifest, and what the pipeline keeps for later builds."""

    stats: RenderStats
    digests: dict[str, str]  # output path -> input digest
    svgs: dict[str, bytes] = field(default_factory=dict)  # graphs drawn this build, by DOT digest, in the order drawn
    redactions: dict[str, Any] = field(default_factory=dict)  # with --redact: the masks counted in each session (counts only)
    layouts: dict[tuple[str, str], bytes | None] = field(default_factory=dict)  # (session, agent) -> its transcript's new layout sizes (None: none)
    insights: str = ""  # each project's insights in the index JSON, by what they were made from (`project_insights`)


def render_site(
    model: SiteModel, source: SiteSource, writer: SiteWriter, theme: Path | None, redact: bool = False,
    jobs: int = 1, in_workers: InWorkers | None = None, reuse_published: bool = False,
) -> SiteRender:
    """Render every output through `writer`, the pages of many sessions in `jobs` processes when `in_workers` is given.

    `reuse_published`: the folder's pages were made by this code and these options (`Renderer`).
    """
    dirs = theme_dirs(theme)
    renderer = Renderer(model, source, writer, dirs, site_digest(model, dirs, redact), redact=redact, reuse_published=reuse_published)
    if renderer.redactor is not None:
        renderer.redactor.model(model)  # before any page, and before workers get the model
    static = static_files(dirs)
    for rel, data in static.items():
        renderer.digests[f"static/{rel}"] = digest_of(data)
        writer.write(f"static/{rel}", data)
    if not search_script_takes_parts(static):  # a theme's copy of an older site.js
        _say_once(f"notice: the theme's static/site.js has no agenthropicSearch.parts: search finds nothing in a session whose "
                  f"search rows pass {SHARD_SPLIT_BYTES >> 20} MiB (their shard lists files; docs/usage.md, Themes)")
    for project in model.projects:
        rel = f"projects/{project.key}/index.html"
        members = "|".join(renderer.session_digest[s.session_id] for s in project.sessions)
        if not renderer.fresh(rel, project.folder, project.display_name, members):
            renderer.page(rel, "project.html", project=project, chart=bar_chart(project.cost_by_day, "cost per day"))
    _render_sessions(renderer, jobs, in_workers)
    if renderer.redactor is not None:
        # The index and the report come last: they show the masks counted in every session.
        totals = Counter(renderer.redactor.counts)
        for _, counts in renderer.redactions.values():
            totals.update(counts)
        from agenthropic_site.render.redact import KINDS  # loaded by the Renderer already, with --redact only

        model.redactions = {kind: totals.get(kind, 0) for kind in sorted(KINDS)}
    every = "|".join(f"{sid}:{digest}" for sid, digest in renderer.session_digest.items())
    insights, kept_insights = project_insights(model, renderer, source.project_insights())
    index_bytes = dump(index_json(model, insights))
    usage_bytes = dump(usage_json(model.usage))
    site_wide = digest_of(every.encode(), index_bytes, usage_bytes)
    if not renderer.fresh("data/index.json", site_wide):
        writer.write("data/index.json", index_bytes)
    if not renderer.fresh("data/usage.json", digest_of(usage_bytes)):
        renderer.stats.rendered += 1
        writer.write("data/usage.json", usage_bytes)
    if not renderer.fresh("index.html", site_wide):
        search_index = [{"id": s.session_id, "title": s.title or "", "prompts": s.prompts} for s in model.recent_sessions]
        rows = session_rows(model.recent_sessions, "", functools.partial(short_time, zone=renderer.zone))
        renderer.page(
            "index.html", "index.html", chart=bar_chart(model.cost_by_day, "cost per day"), search_index=search_index, usage=usage_section(model.usage),
            session_rows=rows,
        )
    if not renderer.fresh("report.html", site_wide):
        renderer.page("report.html", "report.html")
    if not renderer.fresh("search/sessions.js", site_wide):
        # Full-text search: the sessions and their shards (each session's shard is written with its pages).
        sessions = [
            {"id": s.session_id, "title": s.title or s.session_id, "project": s.cwd or s.project, "started": s.started_at or "",
             "shard": f"search/s/{s.session_id}.js"}
            for s in model.recent_sessions
        ]
        renderer.stats.rendered += 1
        writer.write("search/sessions.js", sessions_js(sessions))
    if not renderer.fresh("search.html"):
        renderer.page("search.html", "search.html")
    return SiteRender(
        renderer.stats, renderer.digests, renderer.svgs, renderer.redaction_record() if redact else {}, renderer.layouts, kept_insights,
    )


def project_insights(model: SiteModel, renderer: Renderer, kept: str | None) -> tuple[dict[str, dict[str, Any]], str]:
    """Return each project's insights for the index JSON, and what to keep of them for the next build.

    A project's insights (cache efficiency, tools, MCP servers, weeks) are a function of its
    sessions' summaries and of what every page depends on: the last build's are taken for a
    project whose sessions have the same digests, on the same site digest (code, theme, --tz,
    --redact...). An append to one session computes its project's alone (all 40 of 500 sessions: 10 ms).
    """
    try:
        last = orjson.loads(kept) if kept else None
    except orjson.JSONDecodeError:
        last = None
    known = last["projects"] if isinstance(last, dict) and last.get("site") == renderer.site_digest and isinstance(last.get("projects"), dict) else {}
    insights, keep = {}, {}
    for project in model.projects:
        members = digest_of(*(renderer.session_digest[session.session_id].encode() for session in project.sessions))
        entry = known.get(project.key)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == members and isinstance(entry[1], dict):
            insights[project.key] = entry[1]
        else:
            insights[project.key] = project_insights_json(project, model.usage.tz)
        keep[project.key] = [members, insights[project.key]]
    return insights, orjson.dumps({"site": renderer.site_digest, "projects": keep}).decode()


def _render_sessions(renderer: Renderer, jobs: int, in_workers: InWorkers | None) -> None:
    """Render every session's outputs a batch at a time, in worker processes when there are many."""
    model = renderer.model
    ids = list(model.sessions)
    # Counted only when workers could be used: a one-process build need not look twice.
    changed = [summary for summary in model.sessions.values() if renderer.page_changed(summary)] if jobs > 1 and in_workers else []
    # A batch of whole views at a time: memory follows the batch, not the corpus. Workers take
    # smaller ones, and only for many pages in more than one batch (a session's pages are one process's).
    size = min(views.VIEW_BATCH, RENDER_BATCH)
    if len(ids) <= size or sum(len(summary.agent_ids) for summary in changed) < PARALLEL_MIN_PAGES:
        in_workers, size = None, views.VIEW_BATCH
    # Large sessions' views in smaller batches (a session whose view is not loaded weighs as if it were).
    sizes = renderer.source.view_sizes() if len(ids) > 1 else {}
    batches = batched(ids, size, lambda sid: sizes.get(sid, 0), views.VIEW_BATCH_BYTES)
    # Progress counts the sessions whose pages were rendered, about ten lines in all: an append to
    # one of 5,000 sessions looks at every session's inputs but renders one, and says nothing.
    step, rendered, looked = progress_step(len(ids), PROGRESS_EVERY), 0, 0

    def tell(done: int, batch: list[str]) -> None:
        nonlocal rendered, looked
        rendered, looked = rendered + done, looked + len(batch)
        if rendered // step > (rendered - done) // step:
            log.info(f"rendered the pages of {rendered} sessions ({looked}/{len(ids)} looked at)")

    if in_workers is not None:
        jobs = min(jobs, len(batches))
        log.info(f"rendering the pages of {len(changed)} sessions in {jobs} processes")
        for template in ("session.html", "agent.html"):
            renderer.env.get_template(template)  # compiled once, into the bytecode cache the workers read
        setup = WorkerSetup(model, renderer.writer.spawn(), renderer.dirs, renderer.site_digest, renderer.redactor is not None)

        def here(batch: list[str]) -> BatchResult | None:
            tell(renderer.render_batch(batch), batch)  # a batch no worker answered: rendered in this process
            return None

        def fell_back(why: str) -> None:
            log.info(f"notice: {why}; this process rendered the remaining sessions")

        with closing(in_workers(setup, batches, jobs, here, fell_back)) as answers:
            for batch, result in answers:
                if result is not None:
                    merge(renderer, result)
                    tell(result.sessions, batch)
        return
    for batch in batches:
        tell(renderer.render_batch(batch), batch)
