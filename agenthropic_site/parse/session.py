"""Parse one session: bytes in, ParsedSession out. Pure: no I/O, no clock."""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from agenthropic_site.ids import AGENT_ID_RE
from agenthropic_site.parse import checkpoint
from agenthropic_site.parse.fields import clip_words, text_of
from agenthropic_site.parse.lines import Record, decode_jsonl, iter_jsonl
from agenthropic_site.parse.links import AgentMeta, Evidence, choose_edges, collect_evidence, edges_of, prompt_match_evidence, read_meta, spawn_inputs
from agenthropic_site.parse.model import Agent, Compaction, ParsedSession, SessionInput, TranscriptInput, UsageRow, Warning
from agenthropic_site.parse.outcomes import apply_outcomes
from agenthropic_site.parse.reported import absent_agents
from agenthropic_site.parse.scan import TranscriptFacts, scan_records
from agenthropic_site.parse.usage import dedupe_file, dedupe_session, under_reported_summary

# Special agent files by name prefix (format §1.3): they are not dispatched by a spawn tool.
SPECIAL_PREFIXES = (("acompact-", "compaction"), ("aside_question-", "side_question"), ("aprompt_suggestion-", "prompt_suggestion"))
# Compaction and side-question files replay parent messages (format §3.4); prompt-suggestion
# calls are not known to, but they are background calls of the parent too, so they never win a
# message id from it and are not witnesses of spawns.
REPLAYING_KINDS = frozenset({"compaction", "side_question", "prompt_suggestion"})
TITLE_MAX_CHARS = 120
# The summariser's last record lands within ~0.5 s of its boundary (format §6, 5/5 in 2.1.39).
COMPACTION_PAIR_SECONDS = 5.0


def parse_session(source: SessionInput) -> ParsedSession:
    """Parse every transcript of a session and link them into one ParsedSession."""
    session = ParsedSession(session_id=source.session_id, project=source.project, main_state=source.main_state)
    main_id = source.session_id
    # Transcripts given with a checkpoint are scanned from it: their `data` is what follows it.
    resumed: dict[str, checkpoint.Resumed] = {}
    inputs_of: dict[str, tuple[TranscriptInput, int]] = {main_id: (source.main, 0)}  # each transcript's bytes and spawn order base
    # The main transcript is read a line at a time: its records are several times its bytes as
    # objects, and a 60 MB session's would all be alive at once (agents' files are small).
    pending: list[bool] = []
    inline_groups: list[tuple[str, list[Record]]] = []
    main = _start(source.main, main_id, "main", main_id, 0, resumed)
    main_records = split_sidechains(iter_jsonl(source.main.rel, source.main.data, main.decode_errors, pending, _lines_before(resumed, main_id)),
                                    inline_groups)
    facts = [scan_records(main, main_records)]
    if inline_groups and main_id in resumed:
        raise checkpoint.CannotResume("inline subagent turns after a checkpoint")
    if pending:
        session.pending_lines.append(source.main.rel)
    kinds = {main_id: "main"}
    files: dict[str, str | None] = {main_id: source.main.rel if source.main_state != "absent" else None}
    inline_ids = []
    for agent_id, records in inline_groups:
        facts.append(scan_records(TranscriptFacts(agent_id, source.main.rel, "inline", main_id), records))
        kinds[agent_id] = "subagent"
        files[agent_id] = source.main.rel
        inline_ids.append(agent_id)
    del inline_groups
    metas: dict[str, AgentMeta] = {}
    run_ids: dict[str, str] = {}
    lone_replies: set[str] = set()
    for transcript in sorted(source.agents, key=lambda item: item.rel):
        agent_id = transcript.agent_id or ""
        if agent_id in kinds:
            session.warnings.append(Warning("duplicate_agent_file", f"{transcript.rel} repeats agent id {agent_id}; ignored", agent_id))
            continue
        order_base = len(facts) << 32
        fact = _start(transcript, agent_id, transcript.layout, main_id, order_base, resumed)
        decoded = decode_jsonl(transcript.rel, transcript.data, _lines_before(resumed, agent_id))
        fact.decode_errors.extend(decoded.errors)
        if decoded.pending:
            session.pending_lines.append(transcript.rel)
        scan_records(fact, decoded.records, order_base)
        del decoded
        facts.append(fact)
        inputs_of[agent_id] = (transcript, order_base)
        files[agent_id] = transcript.rel
        kinds[agent_id] = _file_kind(agent_id, transcript.layout, fact)
        if fact.scanned == 1 and fact.first_type == "assistant":
            lone_replies.add(agent_id)
        meta = read_meta(transcript.meta)
        if meta is not None:
            metas[agent_id] = meta
        if transcript.run_id:
            run_ids[agent_id] = transcript.run_id
    spawn_ids = {spawn.tool_use_id for fact in facts for spawn in fact.spawns}
    if any(where.dropped & spawn_ids for where in resumed.values()):
        raise checkpoint.CannotResume("a spawn names a tool result a checkpoint left out")
    if source.checkpoint:
        session.scan_states, session.scan_chunks = _checkpoints(facts, inputs_of, resumed, spawn_ids, bool(inline_ids))
    for fact in facts:
        session.line_errors.extend(fact.decode_errors)
    for fact in facts:
        session.line_errors.extend(fact.errors)
        session.warnings.extend(fact.warnings)  # record_error: a record that raised (issue 13)
        for kind, count in fact.unknown_types.items():
            session.unknown_types[kind] = session.unknown_types.get(kind, 0) + count
    session.line_errors.sort(key=lambda error: (error.file, error.line))
    session.unknown_types = dict(sorted(session.unknown_types.items()))

    # Compaction and side-question files replay the parent's messages (format §3.4): their copies
    # of spawn calls, results and notifications are not evidence of anything new.
    witnesses = [fact for fact in facts if kinds[fact.agent_id] not in REPLAYING_KINDS]
    absent = absent_agents(witnesses, set(kinds))
    chosen = _link(witnesses, metas, run_ids, inline_ids, main_id, set(kinds) | set(absent), session.warnings)
    for agent_id in lone_replies:
        # 2.0.4x warmups may keep only the reply: one assistant line, no "Warmup" prompt, no spawner.
        if kinds[agent_id] == "subagent" and agent_id not in chosen:
            kinds[agent_id] = "warmup"
    inputs = spawn_inputs(witnesses)
    agents = {}
    for fact in facts:
        claim = chosen.get(fact.agent_id)
        spawn_input = inputs.get(claim.tool_use_id or "", {}) if claim else {}
        meta = metas.get(fact.agent_id)
        kind = kinds[fact.agent_id]
        if kind == "subagent" and isinstance(spawn_input.get("name"), str) and spawn_input["name"]:
            kind = "teammate"  # Agent spawn with a `name` (agent teams, format §4.8)
        agents[fact.agent_id] = Agent(
            agent_id=fact.agent_id,
            kind=kind,
            file=files[fact.agent_id],
            parent_agent_id=claim.parent if claim else None,
            edge_source=claim.source if claim else None,
            agent_type=(meta.agent_type if meta else None) or text_of(spawn_input.get("subagent_type")),
            description=(meta.description if meta else None) or text_of(spawn_input.get("description")),
            first_seen_at=fact.first_seen_at,
            last_seen_at=fact.last_seen_at,
            spawn_tool_use_id=claim.tool_use_id if claim else None,
        )
    for agent_id, (spawn, figures) in absent.items():
        claim = chosen.get(agent_id)
        spawn_input = inputs.get(claim.tool_use_id or "", {}) if claim else spawn.input
        agents[agent_id] = Agent(
            agent_id=agent_id,
            kind="teammate" if isinstance(spawn_input.get("name"), str) and spawn_input["name"] else "subagent",
            file=None,
            parent_agent_id=claim.parent if claim else None,
            edge_source=claim.source if claim else None,
            agent_type=text_of(spawn_input.get("subagent_type")),
            description=text_of(spawn_input.get("description")),
            first_seen_at=spawn.timestamp,
            spawn_tool_use_id=claim.tool_use_id if claim else None,
            has_transcript=False,
            reported=figures,
        )
    apply_outcomes(agents, facts, witnesses, main_id)
    session.agents = tree_order(agents, main_id)
    session.edges = edges_of(chosen)
    session.unlinked_agents = sorted(agent_id for agent_id, agent in agents.items() if agent_id != main_id and agent.parent_agent_id is None)
    for agent_id in session.unlinked_agents:
        # Without a main transcript the spawners' evidence is gone: the page says so once, no
        # warning per agent (issue 13; 2.0.x sessions whose main file is missing or empty).
        if agents[agent_id].kind in ("subagent", "workflow", "teammate") and source.main_state == "present":
            session.warnings.append(Warning("unlinked_agent", f"no evidence names the spawner of {agent_id}", agent_id))

    ranked = [(2 if kinds[fact.agent_id] in REPLAYING_KINDS else 0 if fact.agent_id == main_id else 1, dedupe_file(fact.candidates)) for fact in facts]
    session.usage, session.usage_keys, _replayed = dedupe_session(ranked)
    # Placeholder output counts fire on most 2.1.38-2.1.114 sessions: a quiet count and an
    # estimate, never a warning per session (issue 13), never mixed into exact totals.
    session.under_reported = under_reported_summary(session.usage)
    boundaries = sorted((c for fact in facts for c in fact.compactions), key=lambda c: (c.timestamp or "", c.agent_id))
    session.compactions = pair_compactions(boundaries, agents, facts)
    session.usage = assign_segments(session.usage, session.compactions, main_id)
    for rel in session.pending_lines:
        session.warnings.append(Warning("pending_last_line", f"{rel} ends in an unterminated line (still being written?)"))
    _describe(session, facts[0], facts)
    # A transcript scanned from a checkpoint with no new bytes adds nothing to what is stored.
    session.transcripts = {fact.agent_id: fact.builder.messages for fact in facts
                           if fact.agent_id not in resumed or inputs_of[fact.agent_id][0].data}
    session.tails = {agent_id: where.reopened for agent_id, where in resumed.items()}
    session.tool_calls = {fact.agent_id: fact.builder.tools.calls for fact in facts}
    return session


def _start(transcript: TranscriptInput, agent_id: str, layout: str, main_id: str, order_base: int,
           resumed: dict[str, checkpoint.Resumed]) -> TranscriptFacts:
    """Return the facts a transcript's scan starts from: its checkpoint's, or none."""
    if transcript.resume is None:
        return TranscriptFacts(agent_id, transcript.rel, layout, main_id)
    facts, resumed[agent_id] = checkpoint.decode(transcript.resume, dict(transcript.resume_chunks), agent_id, transcript.rel, layout, main_id,
                                                 order_base)
    return facts


def _lines_before(resumed: dict[str, checkpoint.Resumed], agent_id: str) -> int:
    where = resumed.get(agent_id)
    return where.lines if where is not None else 0


def _checkpoints(facts: list[TranscriptFacts], inputs_of: dict[str, tuple[TranscriptInput, int]], resumed: dict[str, checkpoint.Resumed],
                 spawn_ids: set[str], inline: bool) -> tuple[dict[str, bytes], dict[str, dict[str, bytes]]]:
    """Return the scan state of each transcript whose bytes end on a complete line (the main one unless it holds inline turns), and the chunks each names."""
    states, chunks = {}, {}
    for fact in facts:
        if fact.agent_id not in inputs_of or (fact.layout == "main" and inline):
            continue
        transcript, order_base = inputs_of[fact.agent_id]
        if transcript.data and not transcript.data.endswith(b"\n"):
            continue  # a last line still being written, or a file that ends without a newline: read from its start next time
        where = resumed.get(fact.agent_id)
        if where is not None and not transcript.data and transcript.resume is not None:
            states[fact.agent_id] = transcript.resume  # nothing new: the same state
            named = dict(transcript.resume_chunks)
        else:
            lines = (where.lines if where else 0) + transcript.data.count(b"\n")
            states[fact.agent_id], named = checkpoint.encode(fact, lines, order_base, spawn_ids, where.dropped if where else frozenset())
        if named:
            chunks[fact.agent_id] = named
    return states, chunks


def _file_kind(agent_id: str, layout: str, fact: TranscriptFacts) -> str:
    for prefix, kind in SPECIAL_PREFIXES:
        if agent_id.startswith(prefix):
            return kind
    if layout == "workflow":
        return "workflow"
    # Warmup agents: 1–2 line flat files whose prompt is "Warmup", spawned at session start (2.0.x, format §1.3).
    if layout == "flat" and (fact.first_user_text or "").strip() == "Warmup":
        return "warmup"
    return "subagent"


def _link(
    facts: list[TranscriptFacts],
    metas: dict[str, AgentMeta],
    run_ids: dict[str, str],
    inline_ids: list[str],
    main_id: str,
    agent_ids: set[str],
    warnings: list[Warning],
) -> dict[str, Evidence]:
    evidence = collect_evidence(facts, metas, run_ids, inline_ids, main_id)
    chosen = choose_edges(evidence, agent_ids, main_id, warnings)
    unlinked = agent_ids - set(chosen) - {main_id}
    if unlinked:
        used = {claim.tool_use_id for claim in chosen.values() if claim.tool_use_id}
        extra = prompt_match_evidence(facts, unlinked, used)
        if extra:
            chosen = choose_edges(evidence + extra, agent_ids, main_id, [])
    return chosen


def split_sidechains(records: Iterable[Record], groups_out: list[tuple[str, list[Record]]]) -> Iterator[Record]:
    """Yield the main chain's records; gather inline subagent turns (`isSidechain: true` in the main file, ≤ 2.0.27) by chain.

    The chains are in `groups_out` once every record was yielded.
    """
    groups: dict[str, list[Record]] = {}
    owner_of_uuid: dict[str, str] = {}
    current: str | None = None
    for record in records:
        data = record.data
        if data.get("isSidechain") is not True:
            yield record
            continue
        uuid = text_of(data.get("uuid"))
        parent = text_of(data.get("parentUuid"))
        group = owner_of_uuid.get(parent or "")
        if group is None and (parent is None or current is None):
            group = uuid if uuid and AGENT_ID_RE.match(uuid) and uuid not in groups else f"sidechain-{record.line}"
            groups[group] = []
        elif group is None:
            group = current
        assert group is not None
        current = group
        groups[group].append(record)
        if uuid:
            owner_of_uuid[uuid] = group
    groups_out.extend(groups.items())


def tree_order(agents: dict[str, Agent], main_id: str) -> list[Agent]:
    """Order agents parent first: the main tree depth-first, then unlinked subtrees."""
    children: dict[str | None, list[Agent]] = {}
    for agent in agents.values():
        children.setdefault(agent.parent_agent_id, []).append(agent)
    for siblings in children.values():
        siblings.sort(key=lambda agent: (agent.first_seen_at or "", agent.agent_id))
    roots = [agents[main_id], *(agent for agent in children.get(None, []) if agent.agent_id != main_id)]
    ordered: list[Agent] = []
    # A stack, not recursion: a spawn chain thousands deep is a valid session.
    stack = list(reversed(roots))
    while stack:
        agent = stack.pop()
        ordered.append(agent)
        stack.extend(reversed(children.get(agent.agent_id, [])))
    return ordered


def pair_compactions(boundaries: list[Compaction], agents: dict[str, Agent], facts: list[TranscriptFacts]) -> list[Compaction]:
    """Attach each compaction agent file to the boundary it produced, by time and chain."""
    def seconds(instant: str | None) -> float | None:
        return datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp() if instant else None

    uuids_of = {fact.agent_id: fact.uuids for fact in facts}
    first_parent = {fact.agent_id: fact.first_parent_uuid for fact in facts}
    paired: dict[int, str] = {}
    summarisers = sorted((agent for agent in agents.values() if agent.kind == "compaction"), key=lambda a: (a.last_seen_at or "", a.agent_id))
    for agent in summarisers:
        end = seconds(agent.last_seen_at)
        best: tuple[int, float, int] | None = None
        for index, boundary in enumerate(boundaries):
            at = seconds(boundary.timestamp)
            if index in paired or end is None or at is None or abs(at - end) > COMPACTION_PAIR_SECONDS:
                continue
            # The summariser's first record points into the compacted agent's chain (format §6).
            same_chain = 0 if first_parent.get(agent.agent_id) in uuids_of.get(boundary.agent_id, set()) else 1
            key = (same_chain, abs(at - end), index)
            if best is None or key < best:
                best = key
        if best is not None:
            paired[best[2]] = agent.agent_id
    return [
        Compaction(b.agent_id, b.uuid, b.timestamp, b.trigger, b.pre_tokens, b.post_tokens, paired.get(index))
        for index, b in enumerate(boundaries)
    ]


def assign_segments(usage: list[UsageRow], compactions: list[Compaction], main_id: str) -> list[UsageRow]:
    """Number each request by the session segment it falls in, between the main agent's boundaries.

    A summariser's own request belongs to the segment its boundary closes (format §6).
    """
    main = [c for c in compactions if c.agent_id == main_id and c.timestamp]
    times = [c.timestamp or "" for c in main]
    closes = {c.compaction_agent_id: index for index, c in enumerate(main) if c.compaction_agent_id}
    rows = []
    for row in usage:
        if row.agent_id in closes:
            segment = closes[row.agent_id]
        else:
            segment = bisect.bisect_right(times, row.timestamp) if row.timestamp else 0
        rows.append(row.in_segment(segment) if segment != row.segment else row)
    return rows


def _describe(session: ParsedSession, main: TranscriptFacts, facts: list[TranscriptFacts]) -> None:
    """Fill title, cwd, branch, versions and the time span."""
    for source, title in (
        ("custom-title", main.custom_title),
        ("ai-title", main.ai_title),
        ("summary", main.summary_title),
        ("first-prompt", main.first_prompt),
    ):
        if title and title.strip():
            session.title = trim_title(title)
            session.title_source = source
            break
    # Without a main transcript, the agents' records say where the session ran (issue 13).
    cwds = main.cwds or next((fact.cwds for fact in facts if fact.cwds), [])
    if cwds:
        # The most common cwd of the first records: cwd changes inside worktrees (format §1.2).
        session.cwd = Counter(cwds).most_common(1)[0][0]
    session.git_branch = main.git_branch
    session.prompts = list(main.prompts)
    versions = set().union(*(fact.versions for fact in facts))
    session.versions = sorted(versions, key=version_key)
    seen = [fact.first_seen_at for fact in facts if fact.first_seen_at] + [fact.last_seen_at for fact in facts if fact.last_seen_at]
    session.started_at = min(seen) if seen else None
    session.ended_at = max(seen) if seen else None
    session.main_ended_at = main.last_seen_at


def trim_title(text: str) -> str:
    """Collapse whitespace and keep the whole words that fit in TITLE_MAX_CHARS, with an ellipsis when cut."""
    flat, cut = clip_words(text, TITLE_MAX_CHARS)
    return clip_words(text, TITLE_MAX_CHARS - 1)[0] + "…" if cut else flat


def version_key(version: str) -> tuple[Any, ...]:
    """Order version strings numerically part by part (2.1.9 before 2.1.10)."""
    return tuple((0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part) for part in re.split(r"[.\-+]", version))
