"""Render every page of the site from the gathered model."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import jinja2
from markupsafe import Markup

from agenthropic_site import __version__
from agenthropic_site.cache import Cache
from agenthropic_site.gather import SessionView, SiteModel
from agenthropic_site.graph.draw import DrawEdge, DrawNode, dot_source, render_svg
from agenthropic_site.render.charts import bar_chart
from agenthropic_site.render.data import dump, index_json, session_json
from agenthropic_site.render.markdown import render_markdown
from agenthropic_site.render.theme import environment, static_files, theme_dirs
from agenthropic_site.render.writer import SiteWriter

PREVIEW_CHARS = 2_000


@dataclass
class RenderStats:
    """What rendering did, for the build summary."""

    graphviz_missing: bool = False


def usd(amount: Decimal | None) -> str:
    """Format a cost for people: dollars and cents, or a dash when unknown."""
    if amount is None:
        return "—"
    cents = amount.quantize(Decimal("0.01"))
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


def _env(dirs: list[Path]) -> jinja2.Environment:
    env = environment(dirs)
    env.filters.update(usd=usd, signed_usd=signed_usd, thousands=thousands, short_time=short_time, markdown=markdown)
    env.globals.update(duration=duration, version=__version__, preview_chars=PREVIEW_CHARS)
    return env


class Renderer:
    """Turn the model into files through a SiteWriter."""

    def __init__(self, model: SiteModel, cache: Cache, writer: SiteWriter, theme: Path | None, notice: Callable[[str], None]) -> None:
        self.model = model
        self.cache = cache
        self.writer = writer
        self.dirs = theme_dirs(theme)
        self.env = _env(self.dirs)
        self.notice = notice
        self.stats = RenderStats()
        self.project_of = {project.folder: project for project in model.projects}

    def page(self, rel: str, template: str, **context: Any) -> None:
        """Render a template to `rel` with links relative to that page."""
        root = "../" * rel.count("/")
        html = self.env.get_template(template).render(root=root, model=self.model, **context)
        self.writer.write(rel, html.encode("utf-8"))

    def render_all(self) -> RenderStats:
        """Render static files, data, index, report, project, session and agent pages."""
        for rel, data in static_files(self.dirs).items():
            self.writer.write(f"static/{rel}", data)
        self.writer.write("data/index.json", dump(index_json(self.model)))
        self.page("index.html", "index.html", chart=bar_chart(self.model.cost_by_day, "cost per day"))
        self.page("report.html", "report.html")
        for project in self.model.projects:
            self.page(f"projects/{project.key}/index.html", "project.html", project=project, chart=bar_chart(project.cost_by_day, "cost per day"))
        for session in self.model.sessions.values():
            self.render_session(session)
        return self.stats

    def render_session(self, session: SessionView) -> None:
        """Render a session's page, its agents' pages and its JSON."""
        sid = session.session_id
        self.writer.write(f"data/sessions/{sid}.json", dump(session_json(session)))
        project = self.project_of[session.project]
        spawned = {edge["tool_use_id"]: edge["child"] for edge in session.edges if edge.get("tool_use_id")}
        agents = session.agent_map
        main_messages = self.cache.transcript(sid, sid)
        self.page(
            f"sessions/{sid}/index.html",
            "session.html",
            session=session,
            project=project,
            graph=self.graph(session),
            messages=main_messages,
            spawned=spawned,
            agents=agents,
            cumulative=_cumulative(session),
        )
        for agent in session.agents:
            if agent.agent_id == sid:
                continue
            self.page(
                f"sessions/{sid}/agents/{agent.agent_id}.html",
                "agent.html",
                session=session,
                project=project,
                agent=agent,
                agents=agents,
                messages=self.cache.transcript(sid, agent.agent_id),
                spawned=spawned,
            )

    def graph(self, session: SessionView) -> Markup | None:
        """Return the session's agent tree as inline SVG, or None without Graphviz."""
        if session.excluded_reason or len(session.agents) < 2:
            return None
        nodes = [
            DrawNode(
                agent_id=agent.agent_id,
                label=f"{agent.agent_type or agent.kind}\n{agent.status} · {usd(agent.subtree_cost)}",
                status=agent.status,
                href="index.html" if agent.agent_id == session.session_id else f"agents/{agent.agent_id}.html",
            )
            for agent in session.agents
        ]
        edges = [DrawEdge(edge["parent"], edge["child"], edge["source"]) for edge in session.edges]
        svg = render_svg(dot_source(nodes, edges), self.cache.svg, self.cache.put_svg)
        if svg is None:
            if not self.stats.graphviz_missing:
                self.notice("notice: Graphviz `dot` is not installed; agent trees are shown as nested lists")
            self.stats.graphviz_missing = True
            return None
        return Markup(svg.decode("utf-8"))


def _cumulative(session: SessionView) -> Markup:
    running = Decimal(0)
    points = {}
    for day, cost in session.cost_by_day.items():
        running += cost
        points[day] = running
    return bar_chart(points, "cumulative cost") if len(points) > 1 else Markup("")

