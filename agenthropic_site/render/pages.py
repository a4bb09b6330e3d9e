"""Render pages one at a time: a session's pages, a project's, the index; render/site.py decides which and where."""

from __future__ import annotations

import functools
import hashlib
import logging
from collections import defaultdict
from collections.abc import Callable
from datetime import tzinfo
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import jinja2
import orjson
from markupsafe import Markup

from agenthropic_site import __version__, code_identity
from agenthropic_site.config import zone_of
from agenthropic_site.model.gather import SiteModel, apply_watchdog, stale_count
from agenthropic_site.places import dot_on_path
from agenthropic_site.model.views import AgentView, RequestFigures, SessionSummary, SessionView
from agenthropic_site.graph.draw import DrawEdge, DrawError, DrawNode, dot_digest, dot_source, prerender_svgs, render_svg, uncached_sources
from agenthropic_site.model.insights import ContextPoint, cache_efficiency, largest_requests, mcp_servers, most_expensive, tool_totals, weekly
from agenthropic_site.records import record_class
from agenthropic_site.render.charts import session_context_chart, step_chart, weeks_charts
from agenthropic_site.render.data import dump, session_json
from agenthropic_site.render.facts import FACTS_MIN_MESSAGES, TranscriptRead, counted_in, facts_count, pack_facts, read_by_facts, row_ends
from agenthropic_site.render.formats import duration, duration_seconds, epoch_ms, fine_usd, markdown, short_time, signed_usd, thousands, usd
from agenthropic_site.render.labels import linked_by, node_label, node_tooltip
from agenthropic_site.render.rows import agent_rows, status_badge
from agenthropic_site.render.reader import (
    OUTLINE_MAX, REF_BYTES, Layout, OutlineEntry, call_refs, fits_inline, lay_out, lay_out_whole, plain_json, ref_digest, turns_of, unpack_sizes,
)
from agenthropic_site.render.search import (
    SHARD_SPLIT_BYTES, entries_of, group_file, parts_js, result_targets, shard_groups, shard_part, shard_pieces, split_shard, tool_calls,
)
from agenthropic_site.render.source import SiteSource
from agenthropic_site.render.theme import environment, theme_digest, theme_fault
from agenthropic_site.render.transcript import TranscriptContext, TurnFigures, index_requests, index_results, skeletons_of
from agenthropic_site.render.writer import Pieces, SiteWriter

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agenthropic_site.render.redact import Redactor

log = logging.getLogger(__name__)

# Under this key (no agent id is empty) a session's memo in the layouts beside its transcripts' keeps
# its search shard's parts: [agent id, the inputs its rows came from, byte length], in shard order.
SEARCH_PARTS = ""
# Under this agent id (never one: agent ids start with a letter or digit), the digest of the DOT source of
# the session's graph as last rendered, empty without one: the cache keeps only the graphs these name.
GRAPH = "."
# Before an agent id (never one's first character), the memo of what that agent's transcript calls: the
# stored transcript's checksum, then its `call_refs` (the spawns its page may show, read without the transcript).
CALLS = "#"
# Before an agent id, the prefix memo of its transcript's layout (render/reader.py `prefix_memo`): the next
# layout takes the keys of the messages it covers from this one while what they are made of is the same.
PREFIX = "^"
# Before an agent id, the facts of its long transcript (render/facts.py `pack_facts`): the next build
# decodes only the rows after those they stand for, and the messages it renders.
FACTS = "+"
# Fewer transcripts than this in the sessions whose pages change (a page each, the main one's the
# session's) are not worth starting workers: a second or two of one core's work, against the
# workers' start and the model sent to each (docs/benchmarks.md "Render workers by pages").
PARALLEL_MIN_PAGES = 256
# Sessions a worker is sent at a time: small enough that two workers end together on a corpus of a
# hundred sessions of very different sizes, and never more than a batch of views (VIEW_BATCH).
RENDER_BATCH = 16
GRAPHVIZ_MISSING = "notice: Graphviz `dot` is not installed; agent trees are shown as nested lists"


def digest_of(*parts: bytes) -> str:
    """Digest parts, each with its length first (no two lists of parts give the same bytes)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)  # not joined to its length first: a 17 MB part would be copied
    return digest.hexdigest()


def digest_of_pieces(pieces: Pieces) -> str:
    """Return digest_of the pieces' bytes joined, without joining them."""
    digest = hashlib.sha256(sum(len(piece) for piece in pieces).to_bytes(8, "big"))
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


@record_class
class RenderStats:
    """What rendering did, for the build summary."""

    graphviz_missing: bool = False
    rendered: int = 0  # outputs produced from templates or data this build (written or not)


def site_environment(dirs: list[Path], bytecode_dir: Path | None, zone: tzinfo) -> jinja2.Environment:
    """Return the site's Jinja environment: the theme's templates with the site's filters and globals."""
    env = environment(dirs, bytecode_dir)
    env.filters.update(usd=usd, signed_usd=signed_usd, fine_usd=fine_usd, thousands=thousands, markdown=markdown, linked_by=linked_by,
                       short_time=functools.partial(short_time, zone=zone), epoch_ms=epoch_ms)
    env.globals.update(duration=duration, duration_seconds=duration_seconds, version=__version__, outline_max=OUTLINE_MAX, status_badge_html=status_badge)
    # What the insight sections compute from the model while a page renders (model/insights.py).
    env.globals.update(session_context_chart=session_context_chart, weeks_charts=weeks_charts, weekly=weekly, most_expensive=most_expensive,
                       cache_efficiency=cache_efficiency, tool_totals=tool_totals, mcp_servers=mcp_servers, largest_requests=largest_requests)
    return env


def site_digest(model: SiteModel, dirs: list[Path], redact: bool) -> str:
    """Digest what every page shows besides its own data: the code, the theme, the banner, `dot`, --redact, --tz."""
    return digest_of(
        code_identity().encode(),
        theme_digest(dirs),
        # Every page shows the lower-bound banner with what it names; graphs need `dot`.
        f"{model.lower_bound}|{model.unknown_spend}|"
        f"{dot_on_path()}|redact={redact}|tz={model.usage.tz}".encode(),
    )


def _redactor() -> Redactor:
    """Return a new Redactor (its module is imported here, by builds with --redact only)."""
    from agenthropic_site.render.redact import Redactor

    return Redactor()


@record_class
class SessionLookups:
    """What every page of one session looks up, made once per session: a session of 1,000 agents has 1,000 agent pages."""

    agents: dict[str, AgentView]
    spawned: dict[str, str]  # tool use id -> the agent (with a transcript) that call spawned
    labels: dict[str, str]  # agent id -> its description, else type, else id
    context_of: dict[str, list[ContextPoint]]  # agent id -> its requests' context sizes, in time order

    @classmethod
    def of(cls, session: SessionView) -> SessionLookups:
        """Index one session's view."""
        agents = session.agent_map
        context_of: dict[str, list[ContextPoint]] = defaultdict(list)
        for point in session.context:
            context_of[point.agent_id].append(point)
        return cls(
            agents=agents,
            spawned={edge["tool_use_id"]: edge["child"] for edge in session.edges if edge.get("tool_use_id") and agents[edge["child"]].has_transcript},
            labels={agent.agent_id: agent.description or agent.agent_type or agent.agent_id for agent in session.agents},
            context_of=dict(context_of),
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
        redact: bool = False, reuse_published: bool = False,
    ) -> None:
        self.model = model
        self.source = source
        self.writer = writer
        self.dirs = dirs
        self.zone = zone_of(model.usage.tz)  # every time a page shows is in the build's --tz
        self.env = site_environment(dirs, source.bytecode_folder, self.zone)
        self.stats = RenderStats()
        self.project_of = {project.folder: project for project in model.projects}
        # What this output folder holds, from its own manifest: two folders built from one cache
        # are each judged by what they hold.
        self.previous = writer.previous
        self.digests: dict[str, str] = {}
        self.svgs: dict[str, bytes] = {}  # graphs drawn this build, in the order drawn
        self._drawing: Future[None] | None = None  # the batch's graphs, drawn beside the pages (render_batch)
        # (session, agent) -> its transcript's message keys and sizes, or another memo of it, when they changed (None: forget it)
        self.layouts: dict[tuple[str, str], bytes | None] = {}
        # A session's pages depend on its stored view and on the statuses the watchdog shows,
        # which the view and the number of agents it turns unknown decide.
        self.session_digest = {
            sid: digest_of(summary.view_digest.encode(), str(stale_count(summary, model.stale_before)).encode())
            for sid, summary in model.sessions.items()
        }
        self.site_digest = digest
        # Message keys leave out the code: a folder another version (or other options) built keeps
        # no message to take from (reader.Layout.reuse); nor does --redact.
        self.reuse_published = reuse_published and not redact
        # With --redact, each session's view and transcripts are masked as its pages load them
        # (render/site.py masks the model's own texts); the masks in a session are counted for
        # the report and kept by the pipeline by the session's inputs, so a session whose pages
        # are not rendered is not read to count them.
        # The masks' patterns are compiled on import (6 ms): only a build with --redact loads them.
        self.redactor = _redactor() if redact else None
        self.previous_redactions = source.redaction_counts() if redact else {}
        self.redactions: dict[str, list[Any]] = {}  # session -> [inputs digest, {kind: masks in its view and transcripts}]
        # Each session's files from the last build besides its JSON and page (transcript and agent
        # pages, its search shard): kept as they are while the session's inputs do not change.
        self.previous_of_session: dict[str, list[str]] = defaultdict(list)
        for rel in sorted(self.previous):
            parts = rel.split("/")
            if parts[0] == "sessions" and len(parts) > 2 and rel != f"sessions/{parts[1]}/index.html":
                self.previous_of_session[parts[1]].append(rel)
            elif parts[0] == "search" and len(parts) == 3 and parts[1] == "s" and parts[2].endswith(".js"):
                self.previous_of_session[parts[2][:-3]].append(rel)
            elif parts[0] == "search" and len(parts) == 4 and parts[1] == "s":  # a file of a split shard (render/search.py group_file)
                self.previous_of_session[parts[2]].append(rel)

    def _output_digest(self, rel: str, *parts: str) -> str:
        return digest_of(self.site_digest.encode(), rel.encode(), *(part.encode() for part in parts))

    def fresh(self, rel: str, *parts: str) -> bool:
        """Record `rel`'s input digest; return True (and keep the file) when it is unchanged."""
        return self._same_inputs(rel, *parts) and self._keep(rel)

    def _same_inputs(self, rel: str, *parts: str) -> bool:
        """Record `rel`'s input digest; return whether the last build made it from the same inputs (it may be gone since)."""
        digest = self._output_digest(rel, *parts)
        self.digests[rel] = digest
        previous = self.previous.get(rel)
        if previous != digest:
            log.debug(f"render: {rel}: " + ("new" if previous is None else "its inputs changed"))
        return previous == digest

    def page(self, rel: str, template: str, **context: Any) -> None:
        """Render a template to `rel` with links relative to that page."""
        self.stats.rendered += 1
        self.writer.write(rel, self.html(rel, template, **context))

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
        masks = _redactor()
        self.redactions[sid] = [key, masks.counts]
        return masks

    def transcript(self, sid: str, agent_id: str, masks: Redactor | None) -> TranscriptRead:
        """Load one agent's transcript, masked with --redact (its masks counted by `masks` when given), with its messages' stored digests.

        The digests stand for the messages as stored, so there are none for masked messages: those are keyed by their contents.
        """
        messages, digests = self.source.transcript(sid, agent_id)
        if self.redactor is None:
            return TranscriptRead(messages, skeletons_of(messages), digests)
        (masks or _redactor()).messages(messages)
        return TranscriptRead(messages, skeletons_of(messages), None)

    def _main_transcript(self, sid: str, masks: Redactor | None, facts: bytes | None) -> TranscriptRead:
        """Load a session's main transcript by the facts its last build kept (render/facts.py), else whole; keep its facts for the next build."""
        read = None
        if self.redactor is None and facts:
            body = self.source.transcript_body(sid, sid)
            read = read_by_facts(body, facts) if body is not None else None
        if read is None:
            read = self.transcript(sid, sid, masks)
        packed = None
        if read.stored is not None and len(read.skeletons) >= FACTS_MIN_MESSAGES:
            if read.ends is not None and facts and counted_in(facts) == facts_count(len(read.skeletons)):
                return read  # read by the facts it would keep: an append within the step after them
            ends = read.ends
            if ends is None:
                body = self.source.transcript_body(sid, sid)
                ends = row_ends(read.messages, body) if body is not None else None
            packed = pack_facts(read.skeletons, ends, read.stored) if ends is not None else None
        if packed != (facts or None):
            self.layouts[(sid, FACTS + sid)] = packed  # None: the row goes (a masked or short transcript keeps none, as a cold build)
        return read

    def page_changed(self, summary: SessionSummary) -> bool:
        """Tell whether a session's page has other inputs than last build (it will be rendered)."""
        rel = f"sessions/{summary.session_id}/index.html"
        return self.previous.get(rel) != self._output_digest(rel, *self._session_inputs(summary))

    def render_batch(self, batch: list[str]) -> int:
        """Render the outputs of a batch of sessions whose inputs changed, loading only their views; return how many.

        A session's JSON and page are judged by their inputs; the pages of its transcripts are
        judged by their own bytes, so a session whose inputs did not change keeps every file it
        had (the manifest lists them), and one that did rewrites only the pages that differ.
        """
        kept: dict[str, list[str]] = {}  # the sessions whose inputs did not change, with their files from the last build
        for sid in batch:
            inputs = self._session_inputs(self.model.sessions[sid])
            judged = [f"data/sessions/{sid}.json", f"sessions/{sid}/index.html"]
            if all([self._same_inputs(rel, *inputs) for rel in judged]):
                kept[sid] = judged + self.previous_of_session.get(sid, [])
        # Their files are looked for in one pass over their folders; a session missing any is
        # rendered, and keeps none of them here (its render counts each once).
        gone = set(self._missing([rel for rels in kept.values() for rel in rels]))
        work = []
        for sid in batch:
            # Set only with --redact when this session's masks are not known yet: then its view and
            # every transcript of it are masked and counted, whether a page is rendered or not.
            masks = self._session_masks(sid)
            changed = sid not in kept or any(rel in gone for rel in kept[sid])
            if not changed:
                self._kept(kept[sid])
            if changed or masks is not None:
                work.append((self._view(sid, masks), changed, masks))
        # Each graph's DOT source is made once (an 800-agent session's takes 0.1 s) and drawn with the batch's.
        sources = {view.session_id: self._dot(view) for view, dirty, _ in work if dirty}
        todo = uncached_sources([source for source in sources.values() if source], self._svg)
        if not todo:
            self._render_work(work, sources)
            return len(sources)
        from concurrent.futures import ThreadPoolExecutor  # loaded only by a build that draws a graph

        with ThreadPoolExecutor(max_workers=1) as drawer:
            # `dot` draws in a process of its own while this one lays the sessions out; a page
            # waits for it when it shows its graph (0.26 s of an append to an 800-agent session).
            drawing = self._drawing = drawer.submit(prerender_svgs, todo, self.svgs.__setitem__)
            try:
                self._render_work(work, sources)
            finally:
                self._drawing = None
            drawing.result()  # what drawing them raised, when no page waited for them
        return len(sources)

    def _render_work(self, work: list[tuple[SessionView, bool, Redactor | None]], sources: dict[str, str | None]) -> None:
        """Render the sessions of a batch whose pages changed; count the masks of the others (--redact)."""
        for view, dirty, masks in work:
            if dirty:
                self.render_session(view, masks, sources[view.session_id])
            elif masks is not None:
                for agent in view.agents:
                    if agent.has_transcript:
                        self.transcript(view.session_id, agent.agent_id, masks)

    def _drawn(self) -> None:
        """Wait for the batch's graphs to be drawn, when they are being drawn (raising what drawing them raised)."""
        if self._drawing is not None:
            self._drawing.result()

    def _keep(self, rel: str) -> bool:
        """Keep a file from the last build whose inputs did not change; False when it is gone."""
        if self._missing([rel]):
            return False
        self._kept([rel])
        return True

    def _missing(self, rels: list[str]) -> list[str]:
        """Return the files of the last build that are gone from the folder, or were changed there since it published them."""
        gone = self.writer.missing(rels)
        for rel in gone:
            log.debug(f"render: {rel}: missing from the folder, or changed there since it was published")
        return gone

    def _kept(self, rels: list[str]) -> None:
        """Keep files of the last build just found in the folder: their digests stand."""
        self.writer.kept(rels)
        for rel in rels:
            self.digests[rel] = self.previous[rel]

    def put(self, rel: str, data: bytes | Pieces) -> None:
        """Write an output judged by its own bytes (whole or in pieces): a file the last build wrote with these bytes is kept."""
        digest = digest_of(data) if isinstance(data, bytes) else digest_of_pieces(data)
        self.digests[rel] = digest
        self.stats.rendered += 1
        if self.previous.get(rel) == digest and self.writer.keep(rel):
            return
        log.debug(f"render: {rel}: " + ("new" if rel not in self.previous else "its content changed"))
        self.writer.write(rel, data)

    def _view(self, sid: str, masks: Redactor | None) -> SessionView:
        """Load a session's view with the watchdog's statuses, masked with --redact."""
        view = self.source.view(sid)
        apply_watchdog(view, self.model.stale_before)
        if self.redactor is not None:
            (masks or _redactor()).view(view)
        return view

    def _context(self, lookups: SessionLookups, requests: dict[str, RequestFigures], to_session: str, turns: dict[int, TurnFigures],
                 read: TranscriptRead, agent_href: Callable[[str], str]) -> TranscriptContext:
        """Say how one transcript's messages link, from pages in a folder `to_session` below the session's folder."""
        return TranscriptContext(
            spawned=lookups.spawned,
            agent_href=agent_href,
            agent_labels=lookups.labels,
            session_href=lambda other: f"{to_session}../{other}/index.html",
            requests=requests,
            turns=turns,
            results=index_results(read.skeletons, read.messages),
            request_at=index_requests(read.skeletons),
            zone=self.zone,
        )

    def render_session(self, session: SessionView, masks: Redactor | None, dot: str | None) -> None:
        """Render a session's JSON, page, transcript pages, agent pages and search shard (`dot`: its graph's DOT source)."""
        sid = session.session_id
        project = self.project_of[session.project]
        # The JSON and the page are judged by the session's inputs (render_batch recorded their digests).
        self.writer.write(f"data/sessions/{sid}.json", dump(session_json(session)))
        lookups = SessionLookups.of(session)
        agents = lookups.agents
        requests = self.source.requests(sid, session.collisions > 0)  # a view without collisions owns every request it holds
        known = self.source.layout_sizes(sid)
        main = self._main_transcript(sid, masks, known.get(FACTS + sid))
        own = requests.get(sid, {})
        turns = turns_of(main.skeletons, own, lookups.spawned, agents, session.excluded_reason is not None)
        context = self._context(lookups, own, "../", turns, main, lambda agent_id: f"../agents/{agent_id}.html")
        layout = self._lay_out(sid, sid, main, context, known)
        self._transcript_pages(f"sessions/{sid}/transcript", layout, session, project, None)
        last_parts = _LastShard(self, sid, known.get(SEARCH_PARTS))
        parts = _paged_parts(sid, layout, lambda page: f"sessions/{sid}/transcript/{page}.html", last_parts)
        # The chart's marks link to the turns the outline lists: every prompt, or the first of each page when there are many.
        first_of_page: dict[int, OutlineEntry] = {}
        for entry in layout.outline:
            first_of_page.setdefault(entry.page, entry)
        marked = layout.outline if len(layout.outline) <= OUTLINE_MAX else list(first_of_page.values())
        chart_marks = [(entry.timestamp, f"transcript/{entry.page}.html#m{entry.index}", f"turn {entry.turn.number}: {entry.text}")
                       for entry in marked if entry.timestamp and entry.turn is not None]
        self.page(
            f"sessions/{sid}/index.html",
            "session.html",
            session=session,
            project=project,
            graph=self.graph(session, dot),
            outline=layout.outline,
            pages=len(layout.pages),
            agents=agents,
            agent_rows=agent_rows(session),
            cumulative=step_chart(session.spend_over_time, "cumulative cost over time", chart_marks),
        )
        # What every agent page shows of the session besides agents: an append to the main transcript
        # changes none of it, so the pages of agents it did not touch are kept unread.
        shown = digest_of(repr((project.key, project.display_name, session.session_id, session.title, session.excluded_reason)).encode())
        # Of the other agents, a page shows its parent's name, its children and the agents its calls
        # spawned (their links, and their subtrees' spend in its turns), found by the digests of its
        # calls' ids kept from its last read (CALLS): a new agent renders the pages that show it, not
        # all 800 pages of its session. Of the compactions, its own agent's times.
        spawns = {ref_digest(tool_use_id): tool_use_id for tool_use_id in lookups.spawned}
        compacted: dict[str, list[str | None]] = defaultdict(list)
        for compaction in session.compactions:
            compacted[compaction.agent_id].append(compaction.at)
        stored = self.source.transcript_digests(sid)
        paged = {rel.split("/")[3] for rel in self.previous_of_session.get(sid, ()) if rel.startswith(f"sessions/{sid}/agents/") and rel.count("/") == 4}
        for agent in session.agents:
            if agent.agent_id != sid and agent.has_transcript:
                aid, checksum = agent.agent_id, stored.get(agent.agent_id, "")
                own = requests.get(aid, {})
                read, calls = None, _calls_held(known.get(CALLS + aid), checksum)
                if calls is None:
                    read = self.transcript(sid, aid, masks)
                    calls = call_refs(read.messages)
                    self.layouts[(sid, CALLS + aid)] = checksum.encode() + calls
                shows = (compacted.get(aid, []), _spawned_by(calls, spawns, lookups))
                digest = self._output_digest(f"sessions/{sid}/agents/{aid}.html", shown, checksum, self._agent_inputs(lookups, agent, own, shows))
                part = self._agent_pages(session, lookups, project, agent, own, masks, digest, known, aid not in paged, last_parts, read)
                parts.append((aid, digest, part))
        lengths = [part.length if isinstance(part, _Kept) else len(part) for _, _, part in parts]
        self._put_shard(sid, parts, lengths, last_parts)
        memo = orjson.dumps([[agent_id, key, length] for (agent_id, key, _), length in zip(parts, lengths)])
        if memo != known.get(SEARCH_PARTS):
            self.layouts[(sid, SEARCH_PARTS)] = memo
        graph = (dot_digest(dot) if dot else "").encode()
        if graph != known.get(GRAPH):
            self.layouts[(sid, GRAPH)] = graph

    def _put_shard(self, sid: str, parts: list[ShardPart], lengths: list[int], last: _LastShard) -> None:
        """Write a session's search rows: one shard, or past SHARD_SPLIT_BYTES files of a few parts each (one whose parts are the last build's stays)."""
        if sum(lengths) < SHARD_SPLIT_BYTES:
            self.put(f"search/s/{sid}.js", shard_pieces(sid, [last.resolve(*part) for part in parts]))
            return
        files = []
        for group in shard_groups([name for name, _, _ in parts]):
            rel = group_file(sid, parts[group[0]][0])
            files.append(rel)
            if last.holds(rel, [(parts[index][0], parts[index][1], lengths[index]) for index in group]) and rel in self.previous and self._keep(rel):
                continue  # made of the same parts as last build: neither read nor written
            self.put(rel, shard_pieces(sid, [last.resolve(*parts[index]) for index in group]))
        self.put(f"search/s/{sid}.js", parts_js(sid, files))

    @staticmethod
    def _agent_inputs(lookups: SessionLookups, agent: AgentView, requests: dict[str, RequestFigures], shows: tuple[Any, ...]) -> str:
        """Say what an agent's page shows of agents: its view, its parent's name, its children's views, its requests and context, `shows`."""
        children = [lookups.agents[child] for child in agent.children if child in lookups.agents]
        parent = lookups.agents.get(agent.parent_agent_id or "")
        # As JSON, not repr(): half the time (798 agents: 22 ms against 46 ms an append to their session).
        return hashlib.sha256(plain_json((
            agent, parent.description if parent else None, children, sorted(requests.items()), lookups.context_of.get(agent.agent_id, []), shows,
        ))).hexdigest()

    def _agent_pages(
        self, session: SessionView, lookups: SessionLookups, project: Any, agent: AgentView, requests: dict[str, RequestFigures],
        masks: Redactor | None, digest: str, known: dict[str, bytes], was_inline: bool, last_shard: _LastShard,
        read: TranscriptRead | None = None,
    ) -> bytes | memoryview | _Kept:
        """Write an agent's page, with its transcript on it when short, else paged beside it; return its part of the search shard.

        The page is judged by its inputs' digest (the session's, the agent's, its stored transcript's):
        an agent shown inline whose inputs did not change keeps its page and its part of the last
        shard without reading its transcript (unless --redact has its masks to count). `read`: the
        transcript, when it was read already (read once: --redact counts its masks as it reads).
        """
        sid, aid = session.session_id, agent.agent_id
        rel = f"sessions/{sid}/agents/{aid}.html"
        if was_inline and self.previous.get(rel) == digest and self._keep(rel):
            def remake() -> bytes:
                return shard_part(entries_of((read or self.transcript(sid, aid, masks)).messages, lambda index: rel))

            kept = last_shard.kept(aid, digest, remake) if masks is None else None
            return kept if kept is not None else remake()
        log.debug(f"render: {rel}: " + ("new" if rel not in self.previous else "its inputs changed"))
        read = read or self.transcript(sid, aid, masks)
        messages = read.messages
        turns = turns_of(read.skeletons, requests, lookups.spawned, lookups.agents, session.excluded_reason is not None)
        if fits_inline(messages):
            inline_context = self._context(lookups, requests, "../", turns, read, lambda other: f"{other}.html")
            # A transcript shown whole on its agent's page renders every message for it, so it is laid out without keys
            # and keeps no layout (a cold build of the 500 generated sessions: 2,431 such): none that the next build
            # could measure by. One paged last build is keyed, to be measured by its kept sizes if it is paged again.
            inline = (self._lay_out(sid, aid, read, inline_context, known, keep=False) if aid in known
                      else lay_out_whole(messages, read.skeletons, inline_context))
            if len(inline.pages) == 1:
                for name in (aid, PREFIX + aid):
                    if name in known:
                        self.layouts[(sid, name)] = None
                self._agent_page(rel, digest, session, lookups, project, agent, inline, paged=False)
                return shard_part(entries_of(messages, lambda index: rel))
        layout = self._lay_out(sid, aid, read, self._context(lookups, requests, "../../", turns, read, lambda other: f"../{other}.html"), known)
        self._transcript_pages(f"sessions/{sid}/agents/{aid}", layout, session, project, agent)
        self._agent_page(rel, digest, session, lookups, project, agent, layout, paged=True)
        return shard_part(entries_of(messages, lambda index: f"sessions/{sid}/agents/{aid}/{layout.page_of(index)}.html"))

    def _agent_page(self, rel: str, digest: str, session: SessionView, lookups: SessionLookups, project: Any, agent: AgentView, layout: Layout,
                    paged: bool) -> None:
        self.digests[rel] = digest
        self.stats.rendered += 1
        self.writer.write(rel, self.html(
            rel, "agent.html", session=session, project=project, agent=agent, agents=lookups.agents, outline=layout.outline,
            own_context=lookups.context_of.get(agent.agent_id, []),
            pages=len(layout.pages) if paged else 0, body=None if paged else Markup(layout.body(1)),
            shard=f"../../../search/s/{session.session_id}.js",
        ))

    def _transcript_pages(self, folder: str, layout: Layout, session: SessionView, project: Any, agent: AgentView | None) -> None:
        """Write each page of a paged transcript whose inputs changed: its messages, where it stands, the way back.

        A page is judged by its messages' keys and the little it shows besides them (given to the
        template as all it may read), so an append renders the last page and no other.
        """
        count = len(layout.pages)
        heading = {
            "session": SimpleNamespace(session_id=session.session_id, title=session.title, main_state=session.main_state),
            "project": SimpleNamespace(key=project.key, display_name=project.display_name),
            "agent": SimpleNamespace(agent_id=agent.agent_id, description=agent.description) if agent else None,
        }
        for number in range(1, count + 1):
            rel = f"{folder}/{number}.html"
            page = {
                **heading, "number": number, "count": count, "outline": [entry for entry in layout.outline if entry.page == number],
                "shard": "../" * (rel.count("/") - 1) + f"search/s/{session.session_id}.js",
            }
            # As JSON, not repr(): the 60 MB session's 1,000 outline entries took 13 ms an append in records' repr.
            shown = plain_json([[key, vars(value) if isinstance(value, SimpleNamespace) else value] for key, value in sorted(page.items())])
            if not self.fresh(rel, shown.decode(), layout.page_key(number).hex()):
                published = self.writer.read_previous(rel) if layout.previous and self.reuse_published else None
                if published is not None:
                    layout.reuse(number, published)
                self.page(rel, "transcript.html", body=Markup(layout.body(number)), **page)

    def _lay_out(self, sid: str, agent_id: str, read: TranscriptRead, context: TranscriptContext, known: dict[str, bytes], keep: bool = True) -> Layout:
        """Lay out a transcript as read, measuring only messages the last layout did not; keep its sizes if `keep`."""
        layout = lay_out(read.messages, read.skeletons, context, unpack_sizes(known.get(agent_id, b"")), read.stored, known.get(agent_id, b""),
                         known.get(PREFIX + agent_id, b""))
        if not keep:
            return layout
        packed = layout.packed()
        if packed != known.get(agent_id):
            self.layouts[(sid, agent_id)] = packed
        if layout.prefix != known.get(PREFIX + agent_id, b""):
            # None when it keeps none now (laid out masked, with --redact): the row goes, as a cold build would have none.
            self.layouts[(sid, PREFIX + agent_id)] = layout.prefix or None
        return layout

    def html(self, rel: str, template: str, **context: Any) -> bytes:
        """Render a template for `rel` with links relative to that page."""
        root = "../" * rel.count("/")
        try:
            return self.env.get_template(template).render(root=root, model=self.model, **context).encode("utf-8")
        except Exception as exc:
            fault = theme_fault(exc, self.dirs)
            if fault is None:
                raise
            raise fault from None

    def _session_inputs(self, session: SessionSummary) -> tuple[str, str, str]:
        project = self.project_of[session.project]
        # The view digest covers its source (the digest of the transcripts' bytes), so a transcript edit changes it too.
        return (self.session_digest[session.session_id], project.key, project.display_name)

    def _dot(self, session: SessionView) -> str | None:
        """Return the DOT source of a session's agent tree, or None when there is no tree to draw."""
        if len(session.agents) < 2:
            return None
        on_path = set(session.critical_path) if len(session.critical_path) > 1 else set()
        nodes = [
            DrawNode(
                agent_id=agent.agent_id,
                label=node_label(agent, session.excluded_reason is not None, self.zone),
                tooltip=node_tooltip(agent),
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

    def graph(self, session: SessionView, source: str | None) -> Markup | None:
        """Return the session's agent tree (`source`: its DOT source) as inline SVG, or None without Graphviz."""
        if source is None:
            return None
        self._drawn()
        try:
            svg = render_svg(source, self._svg, self.svgs.__setitem__)
        except DrawError as exc:
            log.info(f"notice: Graphviz could not draw the agent tree of session {session.session_id} ({exc}); it is shown as a nested list")
            return None
        if svg is None:
            if not self.stats.graphviz_missing:
                log.info(GRAPHVIZ_MISSING)
            self.stats.graphviz_missing = True
            return None
        return Markup(svg.decode("utf-8"))



def _calls_held(memo: bytes | None, checksum: str) -> bytes | None:
    """Return the `call_refs` an agent's CALLS memo holds for its transcript as stored now (`checksum`), else None (it is read)."""
    head = checksum.encode()
    if memo is None or not memo.startswith(head) or len(memo) < len(head) + 4 or (len(memo) - len(head) - 4) % REF_BYTES:
        return None
    return memo[len(head):]


def _spawned_by(calls: bytes, spawns: dict[bytes, str], lookups: SessionLookups) -> list[tuple[str, str, str, Any]]:
    """Say what a page shows of the agents its transcript's calls (`call_refs`) spawned: each call's id, agent and label, and a turn's count of its subtree.

    `spawns`: the session's spawn calls by digest.
    """
    counted = int.from_bytes(calls[:4], "big")
    found = []
    for number, at in enumerate(range(4, len(calls), REF_BYTES)):
        tool_use_id = spawns.get(calls[at : at + REF_BYTES])
        if tool_use_id is not None:
            agent = lookups.agents[lookups.spawned[tool_use_id]]
            subtree = (agent.subtree_tokens, agent.subtree_cost) if number < counted else None
            found.append((tool_use_id, agent.agent_id, lookups.labels[agent.agent_id], subtree))
    return found


def _paged_parts(owner: str, layout: Layout, href_of_page: Callable[[int], str], last: _LastShard) -> list[ShardPart]:
    """Return a paged transcript's rows of the search shard, one part per page: a page made of the same inputs as last build keeps its part.

    An append to a 60 MB session changes its last page or two; its 17 MB of rows were made again
    each time (70-100 ms). A page's part is named `owner/page` (agent ids have no "/").
    """
    messages, skeletons = layout.messages, layout.skeletons
    calls = tool_calls(skeletons)
    page_of = {index: number for number, page in enumerate(layout.pages, start=1) for index in page}
    parts: list[ShardPart] = []
    for number, page in enumerate(layout.pages, start=1):
        # The page's messages (their keys: content, place, context), its link, and where its results point.
        made_of = plain_json([href_of_page(number), result_targets(skeletons, page, calls, page_of)])
        key = hashlib.blake2b(layout.page_key(number) + made_of, digest_size=16).hexdigest()
        name = f"{owner}/{number}"

        def made(page: list[int] = page) -> bytes:
            return shard_part(entries_of(messages, lambda index: href_of_page(page_of[index]), page, calls))

        kept = last.kept(name, key, made) if len(layout.pages) > 1 else None  # one page: an append changed it
        parts.append((name, key, kept if kept is not None else made()))
    return parts


@record_class(frozen=True)
class _Kept:
    """A part of a session's search rows made of the inputs of the last build's: taken from its file only when the file is written again."""

    length: int
    remake: Callable[[], bytes]  # makes it again, when the last build's file does not hold it as written


# A part of a session's search rows: its name (an agent id, or transcript/page), the inputs it was made from, its bytes or _Kept.
ShardPart = tuple[str, str, "bytes | memoryview | _Kept"]


class _LastShard:
    """The last build's search rows of a session, by part (its memo): a file of them is read only when a part it holds is asked for."""

    def __init__(self, renderer: Renderer, session_id: str, memo: bytes | None) -> None:
        self.renderer, self.session_id = renderer, session_id
        try:
            rows = [(str(name), str(key), int(length)) for name, key, length in orjson.loads(memo or b"[]")]
        except (orjson.JSONDecodeError, TypeError, ValueError):
            rows = []  # a memo this code did not write: every part is made again
        if any(length < 0 for _, _, length in rows):
            rows = []
        self.known = {name: (key, length) for name, key, length in rows}
        # Which file held each part: the shard, or a file of it when it was split (as _put_shard wrote them).
        if sum(length for _, _, length in rows) < SHARD_SPLIT_BYTES:
            self.files = {f"search/s/{session_id}.js": rows}
        else:
            self.files = {group_file(session_id, rows[group[0]][0]): [rows[index] for index in group] for group in shard_groups([row[0] for row in rows])}
        self.file_of = {name: rel for rel, held in self.files.items() for name, _, _ in held}
        self.read: dict[str, dict[str, tuple[str, bytes | memoryview]]] = {}

    def kept(self, name: str, key: str, remake: Callable[[], bytes]) -> _Kept | None:
        """Return an agent's or a page's part as kept when the last build made it from the same inputs, else None."""
        found = self.known.get(name)
        return _Kept(found[1], remake) if found is not None and found[0] == key else None

    def holds(self, rel: str, rows: list[tuple[str, str, int]]) -> bool:
        """Tell whether the last build wrote this file of a split shard with these parts (name, inputs, length)."""
        return self.files.get(rel) == rows

    def resolve(self, name: str, key: str, part: bytes | memoryview | _Kept) -> bytes | memoryview:
        """Return a part's bytes: a kept one from the last build's file that held it, or made again when that file is not as published."""
        if not isinstance(part, _Kept):
            return part
        rel = self.file_of.get(name)
        if rel is None:
            return part.remake()
        if rel not in self.read:
            self.read[rel] = self._read(rel)
        found = self.read[rel].get(name)
        return found[1] if found is not None and found[0] == key else part.remake()

    def _read(self, rel: str) -> dict[str, tuple[str, bytes | memoryview]]:
        rows = self.files[rel]
        data = self.renderer.writer.read_previous(rel)
        # The file must be the one the memo describes: the bytes the last build published.
        if data is None or digest_of_pieces([data]) != self.renderer.previous.get(rel):
            return {}
        cut = split_shard(self.session_id, data, [length for _, _, length in rows])
        if cut is None:
            return {}
        return {name: (key, part) for (name, key, _), part in zip(rows, cut)}
