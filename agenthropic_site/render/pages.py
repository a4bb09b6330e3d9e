"""Render every page of the site from the gathered model."""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from collections.abc import Callable

import jinja2
from markupsafe import Markup

from agenthropic_site import __version__, code_identity
from agenthropic_site.cache import Cache
from agenthropic_site.model.gather import SiteModel, apply_watchdog, stale_count
from agenthropic_site.parse.model import Message
from agenthropic_site.model.stored import VIEW_BATCH
from agenthropic_site.model.views import AgentView, SessionSummary, SessionView
from agenthropic_site.graph.draw import DrawEdge, DrawNode, dot_source, prerender_svgs, render_svg
from agenthropic_site.render.charts import bar_chart, step_chart
from agenthropic_site.render.data import dump, index_json, session_json
from agenthropic_site.render.markdown import render_markdown
from agenthropic_site.render.parallel import BatchResult, WorkerSetup, render_in_workers
from agenthropic_site.pipeline.pool import WorkersFailed
from agenthropic_site.render.redact import KINDS, Redactor
from agenthropic_site.render.theme import environment, static_files, theme_digest, theme_dirs
from agenthropic_site.render.writer import SiteWriter

PREVIEW_CHARS = 2_000
PROGRESS_EVERY = 250  # sessions between progress lines on long builds (silent with -q)
PARALLEL_MIN_SESSIONS = 2 * VIEW_BATCH  # fewer pages to render than this are not worth starting workers
GRAPHVIZ_MISSING = "notice: Graphviz `dot` is not installed; agent trees are shown as nested lists"


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


@dataclass
class RenderStats:
    """What rendering did, for the build summary."""

    graphviz_missing: bool = False
    rendered: int = 0  # outputs produced from templates or data this build (written or not)


def _node_label(agent: AgentView, excluded: bool) -> str:
    """Say what a graph node shows: type, status and subtree cost (tokens where no cost is known)."""
    if not agent.has_transcript:
        return f"{agent.agent_type or agent.kind}\n{agent.status} · transcript not in the corpus"
    figure = f"{agent.subtree_tokens.total:,} tokens" if excluded else usd(agent.subtree_cost)
    return f"{agent.agent_type or agent.kind}\n{agent.status} · {figure}"


def usd(amount: Decimal | None) -> str:
    """Format a cost for people: dollars and cents, or a dash when unknown."""
    if amount is None:
        return "—"
    cents = amount.quantize(Decimal("0.01"))
    if cents == 0:
        cents = abs(cents)  # never "-0.00"
    return f"−${-cents:,}" if cents < 0 else f"${cents:,}"


def signed_usd(amount: Decimal | None) -> str:
    """Format a change in cost with its sign: `+$0.04`, `−$0.12`."""
    text = usd(amount)
    return text if text.startswith(("−", "—")) else "+" + text


def thousands(value: int | None) -> str:
    """Format a count with thousands separators."""
    return "—" if value is None else f"{value:,}"


def short_time(instant: str | None) -> str:
    """Show an ISO instant as `YYYY-MM-DD HH:MM` (UTC)."""
    return "—" if not instant else f"{instant[:10]} {instant[11:16]}"


def duration(start: str | None, end: str | None) -> str:
    """Show the time between two ISO instants as `1h 02m` or `3m 05s`."""
    from datetime import datetime

    if not start or not end:
        return "—"
    seconds = int((datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds())
    hours, rest = divmod(max(seconds, 0), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def markdown(text: str) -> Markup:
    """Render Markdown to HTML that is safe to insert (raw HTML disabled)."""
    return Markup(render_markdown(text))


def _env(dirs: list[Path], bytecode_dir: Path | None) -> jinja2.Environment:
    env = environment(dirs, bytecode_dir)
    env.filters.update(usd=usd, signed_usd=signed_usd, thousands=thousands, short_time=short_time, markdown=markdown)
    env.globals.update(duration=duration, version=__version__, preview_chars=PREVIEW_CHARS)
    return env


class Renderer:
    """Turn the model into files through a SiteWriter, skipping outputs whose inputs did not change.

    Every output has an input digest (its data, the theme, the tool version and the few
    site-wide facts every page shows); an output whose digest equals the one the output folder's
    manifest records and whose file still exists is neither rendered nor rewritten.
    """

    def __init__(
        self, model: SiteModel, cache: Cache, writer: SiteWriter, theme: Path | None, notice: Callable[[str], None],
        load_view: Callable[[str], SessionView], redact: bool = False, jobs: int = 1, pricing: Path | None = None,
        mask_model: bool = True,
    ) -> None:
        self.model = model
        self.cache = cache
        self.writer = writer
        self.load_view = load_view
        self.jobs = jobs
        # How a render worker builds its own Renderer (render/parallel.py); the model is sent masked.
        self.worker_setup = WorkerSetup(model, cache.path.parent, writer.spawn(), theme, pricing, redact)
        # Where drawn graphs are looked up and kept (a worker keeps them for its parent to store).
        self.svg_store: tuple[Callable[[str], bytes | None], Callable[[str, bytes], None]] = (cache.svg, cache.put_svg)
        self.dirs = theme_dirs(theme)
        self.env = _env(self.dirs, cache.path.parent / "templates")
        self.notice = notice
        self.stats = RenderStats()
        self.project_of = {project.folder: project for project in model.projects}
        # What this output folder holds, from its own manifest: two folders built from one cache
        # are each judged by what they hold.
        self.previous = writer.previous
        self.digests: dict[str, str] = {}
        # A session's pages depend on its stored view and on the statuses the watchdog shows,
        # which the view and the number of agents it turns unknown decide.
        self.session_digest = {
            sid: _digest(summary.view_digest.encode(), str(stale_count(summary, model.stale_before)).encode())
            for sid, summary in model.sessions.items()
        }
        self.site_digest = _digest(
            code_identity().encode(),
            theme_digest(self.dirs),
            # Every page shows the lower-bound banner with what it names; graphs need `dot`.
            f"{model.lower_bound}|{model.unknown_spend}|"
            f"{shutil.which('dot') is not None}|redact={redact}".encode(),
        )
        # With --redact, every text the model shows is masked here, and each session's view and
        # transcripts as its pages load them; the masks in a session are counted for the report
        # and kept in the cache by the session's inputs, so a session whose pages are not
        # rendered is not read to count them.
        self.redactor = Redactor() if redact else None
        self.previous_redactions = cache.redaction_counts() if redact else {}
        self.redactions: dict[str, list[Any]] = {}  # session -> [inputs digest, {kind: masks in its view and transcripts}]
        if self.redactor is not None and mask_model:
            self.redactor.model(model)

    def _output_digest(self, rel: str, *parts: str) -> str:
        return _digest(self.site_digest.encode(), rel.encode(), *(part.encode() for part in parts))

    def fresh(self, rel: str, *parts: str) -> bool:
        """Record `rel`'s input digest; return True (and keep the file) when it is unchanged."""
        digest = self._output_digest(rel, *parts)
        self.digests[rel] = digest
        if self.previous.get(rel) == digest and self.writer.keep(rel):
            return True
        return False

    def page(self, rel: str, template: str, **context: Any) -> None:
        """Render a template to `rel` with links relative to that page."""
        root = "../" * rel.count("/")
        self.stats.rendered += 1
        html = self.env.get_template(template).render(root=root, model=self.model, **context)
        self.writer.write(rel, html.encode("utf-8"))

    def render_all(self) -> RenderStats:
        """Render static files, data, index, report, project, session and agent pages."""
        for rel, data in static_files(self.dirs).items():
            self.digests[f"static/{rel}"] = _digest(data)
            self.writer.write(f"static/{rel}", data)
        for project in self.model.projects:
            rel = f"projects/{project.key}/index.html"
            members = "|".join(self.session_digest[s.session_id] for s in project.sessions)
            if not self.fresh(rel, project.folder, project.display_name, members):
                self.page(rel, "project.html", project=project, chart=bar_chart(project.cost_by_day, "cost per day"))
        self._render_sessions()
        if self.redactor is not None:
            # The index and the report come last: they show the masks counted in every session.
            totals = Counter(self.redactor.counts)
            for _, counts in self.redactions.values():
                totals.update(counts)
            self.model.redactions = {kind: totals.get(kind, 0) for kind in sorted(KINDS)}
        every = "|".join(f"{sid}:{digest}" for sid, digest in self.session_digest.items())
        index_bytes = dump(index_json(self.model))
        site_wide = _digest(every.encode(), index_bytes)
        if not self.fresh("data/index.json", site_wide):
            self.writer.write("data/index.json", index_bytes)
        if not self.fresh("index.html", site_wide):
            search_index = [
                {"id": s.session_id, "title": s.title or "", "prompts": s.prompts} for s in self.model.recent_sessions
            ]
            self.page("index.html", "index.html", chart=bar_chart(self.model.cost_by_day, "cost per day"), search_index=search_index)
        if not self.fresh("report.html", site_wide):
            self.page("report.html", "report.html")
        return self.stats

    def redaction_record(self) -> dict[str, Any]:
        """Return the masks counted in each session's view and transcripts, for the cache (counts only)."""
        return {sid: [key, {kind: n for kind, n in sorted(counts.items()) if n}] for sid, (key, counts) in sorted(self.redactions.items())}

    def _session_masks(self, sid: str) -> Redactor | None:
        """Return a Redactor to count the masks in this session, or None when they are known."""
        if self.redactor is None:
            return None
        key = _digest(self.site_digest.encode(), self.session_digest[sid].encode())
        previous = self.previous_redactions.get(sid)
        if (
            isinstance(previous, list) and len(previous) == 2 and previous[0] == key and isinstance(previous[1], dict)
            and all(isinstance(count, int) for count in previous[1].values())
        ):
            self.redactions[sid] = previous
            return None
        masks = Redactor()
        self.redactions[sid] = [key, masks.counts]
        return masks

    def transcript(self, sid: str, agent_id: str, masks: Redactor | None) -> list[Message]:
        """Load one agent's transcript, masked with --redact (its masks counted by `masks` when given)."""
        messages = self.cache.transcript(sid, agent_id)
        if self.redactor is not None:
            (masks or Redactor()).messages(messages)
        return messages

    def _render_sessions(self) -> None:
        """Render every session's outputs a batch at a time, in worker processes when there are many."""
        ids = list(self.model.sessions)
        # A batch of whole views at a time: memory follows the batch, not the corpus.
        batches = [ids[start : start + VIEW_BATCH] for start in range(0, len(ids), VIEW_BATCH)]
        # Counted only when workers could be used: a one-process build need not look twice.
        to_render = sum(1 for summary in self.model.sessions.values() if self._page_changed(summary)) if self.jobs > 1 else 0
        if to_render >= PARALLEL_MIN_SESSIONS:
            jobs = min(self.jobs, len(batches))
            self.notice(f"rendering the pages of {to_render} sessions in {jobs} processes")
            for template in ("session.html", "agent.html"):
                self.env.get_template(template)  # compiled once, into the bytecode cache the workers read
            try:
                render_in_workers(self, self.worker_setup, batches, jobs)
                return
            except WorkersFailed as exc:
                self.notice(f"notice: {exc}; rendering in this process")
        for done, batch in enumerate(batches, start=1):
            self.render_batch(batch)
            rendered = min(done * VIEW_BATCH, len(ids))
            if len(ids) >= PROGRESS_EVERY and rendered // PROGRESS_EVERY > (rendered - len(batch)) // PROGRESS_EVERY:
                self.notice(f"rendered pages of {rendered}/{len(ids)} sessions")

    def _page_changed(self, summary: SessionSummary) -> bool:
        """Tell whether a session's page has other inputs than last build (it will be rendered)."""
        rel = f"sessions/{summary.session_id}/index.html"
        return self.previous.get(rel) != self._output_digest(rel, *self._session_inputs(summary))

    def merge(self, result: BatchResult) -> None:
        """Take a render worker's batch as if this process had rendered it."""
        self.digests.update(result.digests)
        self.writer.adopt(result.writer)
        self.stats.rendered += result.rendered
        if result.graphviz_missing and not self.stats.graphviz_missing:
            self.notice(GRAPHVIZ_MISSING)
        self.stats.graphviz_missing |= result.graphviz_missing
        self.redactions.update(result.redactions)
        for digest, svg in sorted(result.svgs.items()):
            self.cache.put_svg(digest, svg)

    def render_batch(self, batch: list[str]) -> None:
        """Render the outputs of a batch of sessions whose inputs changed, loading only their views."""
        work = []
        for sid in batch:
            summary = self.model.sessions[sid]
            inputs = self._session_inputs(summary)
            outputs = [f"data/sessions/{sid}.json", f"sessions/{sid}/index.html"]
            # An agent known only from its spawner's result has no transcript and no page.
            outputs += [f"sessions/{sid}/agents/{agent_id}.html" for agent_id in summary.agent_ids if agent_id != sid and agent_id not in summary.absent_agents]
            # Set only with --redact when this session's masks are not known yet: then its view and
            # every transcript of it are masked and counted, whether a page is rendered or not.
            masks = self._session_masks(sid)
            pending = {rel for rel in outputs if not self.fresh(rel, *inputs)}
            if pending or masks is not None:
                work.append((self._view(sid, masks), pending, masks))
        sources = [self._dot(view) for view, pending, _ in work if f"sessions/{view.session_id}/index.html" in pending]
        if any(sources):
            prerender_svgs([source for source in sources if source], *self.svg_store)
        for view, pending, masks in work:
            self.render_session(view, pending, masks)

    def _view(self, sid: str, masks: Redactor | None) -> SessionView:
        """Load a session's view with the watchdog's statuses, masked with --redact."""
        view = self.load_view(sid)
        apply_watchdog(view, self.model.stale_before)
        if self.redactor is not None:
            (masks or Redactor()).view(view)
        return view

    def render_session(self, session: SessionView, pending: set[str], masks: Redactor | None) -> None:
        """Render the pending outputs of a session; count the masks in every transcript when asked."""
        sid = session.session_id
        project = self.project_of[session.project]
        if f"data/sessions/{sid}.json" in pending:
            self.writer.write(f"data/sessions/{sid}.json", dump(session_json(session)))
        agents = session.agent_map
        spawned = {edge["tool_use_id"]: edge["child"] for edge in session.edges if edge.get("tool_use_id") and agents[edge["child"]].has_transcript}
        rel = f"sessions/{sid}/index.html"
        if rel in pending:
            self.page(
                rel,
                "session.html",
                session=session,
                project=project,
                graph=self.graph(session),
                messages=self.transcript(sid, sid, masks),
                spawned=spawned,
                agents=agents,
                cumulative=step_chart(session.spend_over_time, "cumulative cost over time"),
            )
        elif masks is not None:
            self.transcript(sid, sid, masks)
        for agent in session.agents:
            rel = f"sessions/{sid}/agents/{agent.agent_id}.html"
            if agent.agent_id == sid or not agent.has_transcript:
                continue
            if rel not in pending:
                if masks is not None:
                    self.transcript(sid, agent.agent_id, masks)
                continue
            self.page(
                rel,
                "agent.html",
                session=session,
                project=project,
                agent=agent,
                agents=agents,
                messages=self.transcript(sid, agent.agent_id, masks),
                spawned=spawned,
            )

    def _session_inputs(self, session: SessionSummary) -> tuple[str, str, str]:
        project = self.project_of[session.project]
        # The view digest covers the fingerprint, so a transcript edit changes it too.
        return (self.session_digest[session.session_id], project.key, project.display_name)

    def _dot(self, session: SessionView) -> str | None:
        """Return the DOT source of a session's agent tree, or None when there is no tree to draw."""
        if len(session.agents) < 2:
            return None
        on_path = set(session.critical_path) if len(session.critical_path) > 1 else set()
        nodes = [
            DrawNode(
                agent_id=agent.agent_id,
                label=_node_label(agent, session.excluded_reason is not None),
                status=agent.status,
                href="index.html" if agent.agent_id == session.session_id else f"agents/{agent.agent_id}.html" if agent.has_transcript else "#",
                critical=agent.agent_id in on_path,
            )
            for agent in session.agents
        ]
        path_edges = set(zip(session.critical_path, session.critical_path[1:]))
        edges = [
            DrawEdge(edge["parent"], edge["child"], edge["source"], (edge["parent"], edge["child"]) in path_edges)
            for edge in session.edges
        ]
        return dot_source(nodes, edges)

    def graph(self, session: SessionView) -> Markup | None:
        """Return the session's agent tree as inline SVG, or None without Graphviz."""
        source = self._dot(session)
        if source is None:
            return None
        svg = render_svg(source, *self.svg_store)
        if svg is None:
            if not self.stats.graphviz_missing:
                self.notice(GRAPHVIZ_MISSING)
            self.stats.graphviz_missing = True
            return None
        return Markup(svg.decode("utf-8"))
