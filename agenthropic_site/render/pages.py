"""Render pages one at a time: a session's pages, a project's, the index; render/site.py decides which and where."""

from __future__ import annotations

import logging
import hashlib
import shutil
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from agenthropic_site import __version__, code_identity
from agenthropic_site.model.gather import SiteModel, apply_watchdog, stale_count
from agenthropic_site.parse.model import Message
from agenthropic_site.model.views import AgentView, SessionSummary, SessionView
from agenthropic_site.graph.draw import DrawEdge, DrawNode, dot_source, prerender_svgs, render_svg
from agenthropic_site.render.charts import step_chart
from agenthropic_site.render.data import dump, session_json
from agenthropic_site.render.markdown import render_markdown
from agenthropic_site.render.redact import Redactor
from agenthropic_site.render.source import SiteSource
from agenthropic_site.render.theme import environment, theme_digest
from agenthropic_site.render.writer import SiteWriter

log = logging.getLogger(__name__)

PREVIEW_CHARS = 2_000
PARALLEL_MIN_SESSIONS = 128  # fewer pages to render than this (two batches of views) are not worth starting workers
GRAPHVIZ_MISSING = "notice: Graphviz `dot` is not installed; agent trees are shown as nested lists"


def digest_of(*parts: bytes) -> str:
    """Digest parts, each with its length first (no two lists of parts give the same bytes)."""
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


def site_digest(model: SiteModel, dirs: list[Path], redact: bool) -> str:
    """Digest what every page shows besides its own data: the code, the theme, the banner, `dot`, --redact."""
    return digest_of(
        code_identity().encode(),
        theme_digest(dirs),
        # Every page shows the lower-bound banner with what it names; graphs need `dot`.
        f"{model.lower_bound}|{model.unknown_spend}|"
        f"{shutil.which('dot') is not None}|redact={redact}".encode(),
    )


class Renderer:
    """Turn the model into files through a SiteWriter, skipping outputs whose inputs did not change.

    Every output has an input digest (its data, the theme, the tool version and the few
    site-wide facts every page shows); an output whose digest equals the one the output folder's
    manifest records and whose file still exists is neither rendered nor rewritten. Graphs drawn
    here are kept in `svgs` and counted masks in `redactions`, for the pipeline to store.
    """

    def __init__(
        self, model: SiteModel, source: SiteSource, writer: SiteWriter, dirs: list[Path], digest: str,
        redact: bool = False,
    ) -> None:
        self.model = model
        self.source = source
        self.writer = writer
        self.dirs = dirs
        self.env = _env(dirs, source.bytecode_folder)
        self.stats = RenderStats()
        self.project_of = {project.folder: project for project in model.projects}
        # What this output folder holds, from its own manifest: two folders built from one cache
        # are each judged by what they hold.
        self.previous = writer.previous
        self.digests: dict[str, str] = {}
        self.svgs: dict[str, bytes] = {}  # graphs drawn this build, in the order drawn
        # A session's pages depend on its stored view and on the statuses the watchdog shows,
        # which the view and the number of agents it turns unknown decide.
        self.session_digest = {
            sid: digest_of(summary.view_digest.encode(), str(stale_count(summary, model.stale_before)).encode())
            for sid, summary in model.sessions.items()
        }
        self.site_digest = digest
        # With --redact, each session's view and transcripts are masked as its pages load them
        # (render/site.py masks the model's own texts); the masks in a session are counted for
        # the report and kept by the pipeline by the session's inputs, so a session whose pages
        # are not rendered is not read to count them.
        self.redactor = Redactor() if redact else None
        self.previous_redactions = source.redaction_counts() if redact else {}
        self.redactions: dict[str, list[Any]] = {}  # session -> [inputs digest, {kind: masks in its view and transcripts}]

    def _output_digest(self, rel: str, *parts: str) -> str:
        return digest_of(self.site_digest.encode(), rel.encode(), *(part.encode() for part in parts))

    def fresh(self, rel: str, *parts: str) -> bool:
        """Record `rel`'s input digest; return True (and keep the file) when it is unchanged."""
        digest = self._output_digest(rel, *parts)
        self.digests[rel] = digest
        previous = self.previous.get(rel)
        if previous == digest and self.writer.keep(rel):
            return True
        log.debug(f"render: {rel}: " + ("new" if previous is None else "its inputs changed" if previous != digest else "missing from the folder"))
        return False

    def page(self, rel: str, template: str, **context: Any) -> None:
        """Render a template to `rel` with links relative to that page."""
        root = "../" * rel.count("/")
        self.stats.rendered += 1
        html = self.env.get_template(template).render(root=root, model=self.model, **context)
        self.writer.write(rel, html.encode("utf-8"))

    def _svg(self, digest: str) -> bytes | None:
        return self.svgs.get(digest) or self.source.svg(digest)

    def redaction_record(self) -> dict[str, Any]:
        """Return the masks counted in each session's view and transcripts, for the pipeline to keep (counts only)."""
        return {sid: [key, {kind: n for kind, n in sorted(counts.items()) if n}] for sid, (key, counts) in sorted(self.redactions.items())}

    def _session_masks(self, sid: str) -> Redactor | None:
        """Return a Redactor to count the masks in this session, or None when they are known."""
        if self.redactor is None:
            return None
        key = digest_of(self.site_digest.encode(), self.session_digest[sid].encode())
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
        messages = self.source.transcript(sid, agent_id)
        if self.redactor is not None:
            (masks or Redactor()).messages(messages)
        return messages

    def page_changed(self, summary: SessionSummary) -> bool:
        """Tell whether a session's page has other inputs than last build (it will be rendered)."""
        rel = f"sessions/{summary.session_id}/index.html"
        return self.previous.get(rel) != self._output_digest(rel, *self._session_inputs(summary))

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
            prerender_svgs([source for source in sources if source], self._svg, self.svgs.__setitem__)
        for view, pending, masks in work:
            self.render_session(view, pending, masks)

    def _view(self, sid: str, masks: Redactor | None) -> SessionView:
        """Load a session's view with the watchdog's statuses, masked with --redact."""
        view = self.source.view(sid)
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
        svg = render_svg(source, self._svg, self.svgs.__setitem__)
        if svg is None:
            if not self.stats.graphviz_missing:
                log.info(GRAPHVIZ_MISSING)
            self.stats.graphviz_missing = True
            return None
        return Markup(svg.decode("utf-8"))
