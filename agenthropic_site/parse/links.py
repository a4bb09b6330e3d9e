"""Link agents to their spawners from every kind of evidence, best evidence first (format §4.4)."""

from __future__ import annotations

from typing import Any

import orjson

from agenthropic_site.parse.fields import dict_of, text_of
from agenthropic_site.parse.model import EDGE_SOURCES, Edge, Warning
from agenthropic_site.parse.scan import AGENT_ID_TAIL_RE, RUN_DIR_RE, SPAWN_TOOLS, WORKFLOW_TOOL, Spawn, TranscriptFacts
from agenthropic_site.records import record_class

RANK = {source: rank for rank, source in enumerate(EDGE_SOURCES)}


@record_class(frozen=True)
class Evidence:
    """One claim that `parent` spawned `child`."""

    rank: int
    child: str
    parent: str
    tool_use_id: str | None

    @property
    def source(self) -> str:
        """Return the evidence's provenance name."""
        return EDGE_SOURCES[self.rank]

    def key(self) -> tuple[int, str, str, bool, str]:
        """Return a total sort key, best claim first."""
        # Not field order: a 2.1.2xx Monitor notification has no <tool-use-id>, and comparing its
        # None with another claim's id raised TypeError and failed the session (issue 13). A claim
        # that names its spawn call sorts before one that does not, as it says more.
        return (self.rank, self.child, self.parent, self.tool_use_id is None, self.tool_use_id or "")


@record_class(frozen=True)
class AgentMeta:
    """The parts of an `agent-<id>.meta.json` sidecar the linker uses (from 2.1.114; `toolUseId` from 2.1.2xx, format §1.3)."""

    agent_type: str | None
    description: str | None
    tool_use_id: str | None


def read_meta(raw: bytes | None) -> AgentMeta | None:
    """Decode a sidecar; None when absent or not a JSON object."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    return AgentMeta(text_of(value.get("agentType")), text_of(value.get("description")), text_of(value.get("toolUseId")))


def collect_evidence(
    facts: list[TranscriptFacts],
    metas: dict[str, AgentMeta],
    run_ids: dict[str, str],
    inline_ids: list[str],
    main_id: str,
) -> list[Evidence]:
    """Gather every parent claim the transcripts make, in no particular order."""
    spawns = {spawn.tool_use_id: spawn for fact in facts for spawn in fact.spawns}
    evidence: list[Evidence] = []

    def add(source: str, child: str | None, parent: str | None, tool_use_id: str | None) -> None:
        # Every field is a str or None here, whatever the record held, so claims stay comparable.
        if child and parent and isinstance(child, str) and isinstance(parent, str):
            evidence.append(Evidence(RANK[source], child, parent, tool_use_id if isinstance(tool_use_id, str) else None))

    def spawner(tool_use_id: str | None, fallback: str) -> str:
        spawn = spawns.get(tool_use_id or "")
        return spawn.owner if spawn is not None else fallback

    for agent_id, meta in metas.items():
        spawn = spawns.get(meta.tool_use_id or "")
        if spawn is not None:
            add("meta_tool_use_id", agent_id, spawn.owner, spawn.tool_use_id)
    for fact in facts:
        for result in fact.results:
            spawn = spawns.get(result.tool_use_id)
            if spawn is None:
                continue
            structured = dict_of(result.structured)
            if spawn.tool in SPAWN_TOOLS:
                add("tool_result_agent_id", text_of(structured.get("agentId")), spawn.owner, spawn.tool_use_id)
                match = AGENT_ID_TAIL_RE.search(result.text[-4000:])
                if match:
                    add("result_text_agent_id", match.group(1), spawn.owner, spawn.tool_use_id)
            elif spawn.tool == WORKFLOW_TOOL:
                run_id = text_of(structured.get("runId"))
                if run_id is None:
                    match = RUN_DIR_RE.search(result.text)
                    run_id = match.group(1) if match else None
                for agent_id, agent_run in run_ids.items():
                    if agent_run == run_id:
                        add("workflow_directory", agent_id, spawn.owner, spawn.tool_use_id)
        for tool_use_id, agent_id in fact.progress_links:
            add("agent_progress", agent_id, spawner(tool_use_id, fact.agent_id), tool_use_id)
        for note in fact.notifications:
            source = "task_notification" if note.via == "user" else "queue_operation"
            add(source, note.task_id, spawner(note.tool_use_id, fact.agent_id), note.tool_use_id)
    for agent_id in inline_ids:
        # Subagent turns inline in the main file (≤ 2.0.27, format §1.3): the main agent spawned them.
        add("sidechain_inline", agent_id, main_id, _prompt_spawn(spawns, facts, agent_id))
    return evidence


def _prompt_spawn(spawns: dict[str, Spawn], facts: list[TranscriptFacts], agent_id: str) -> str | None:
    prompt = next((fact.first_user_text for fact in facts if fact.agent_id == agent_id), None)
    for spawn in sorted(spawns.values(), key=lambda item: item.order):
        if prompt and spawn.tool in SPAWN_TOOLS and spawn.input.get("prompt") == prompt:
            return spawn.tool_use_id
    return None


def prompt_match_evidence(facts: list[TranscriptFacts], unlinked: set[str], used_spawns: set[str]) -> list[Evidence]:
    """Last resort: a child's first prompt equals exactly one unused spawn's `input.prompt`."""
    candidates: dict[str, list[Spawn]] = {}
    for fact in facts:
        for spawn in fact.spawns:
            prompt = spawn.input.get("prompt")
            if spawn.tool in SPAWN_TOOLS and spawn.tool_use_id not in used_spawns and isinstance(prompt, str) and prompt:
                candidates.setdefault(prompt, []).append(spawn)
    evidence = []
    for fact in facts:
        if fact.agent_id not in unlinked or not fact.first_user_text:
            continue
        matches = candidates.get(fact.first_user_text, [])
        if len(matches) == 1:
            evidence.append(Evidence(RANK["prompt_match"], fact.agent_id, matches[0].owner, matches[0].tool_use_id))
    return evidence


def choose_edges(evidence: list[Evidence], agents: set[str], main_id: str, warnings: list[Warning]) -> dict[str, Evidence]:
    """Pick at most one parent per agent: best rank first, never the main agent, never a cycle."""
    chosen: dict[str, Evidence] = {}
    above: dict[str, str] = {}  # a linked agent -> an agent higher up its chain (its parent, or nearer the top)
    for claim in sorted(set(evidence), key=Evidence.key):
        child, parent = claim.child, claim.parent
        if child == main_id or child not in agents or parent not in agents or child in chosen:
            continue
        # The child has no parent yet, so it tops its own chain: the link closes a cycle exactly
        # when the parent's chain leads up to the child (or is the child).
        if _top(parent, above) == child:
            warnings.append(Warning("spawn_cycle", f"ignored {claim.source} link {parent} -> {child}: it would close a cycle", child))
            continue
        chosen[child] = claim
        above[child] = parent
    return chosen


def _top(node: str, above: dict[str, str]) -> str:
    """Return the agent at the top of `node`'s chain, pointing every agent passed straight at it.

    Shortening the chains as they are walked (a union-find's path compression) keeps a hostile
    spawn chain thousands deep linear to link, where walking each parent's whole chain was quadratic.
    """
    passed = []
    while node in above:
        passed.append(node)
        node = above[node]
    for agent in passed:
        above[agent] = node
    return node


def edges_of(chosen: dict[str, Evidence]) -> list[Edge]:
    """Return the chosen links as sorted Edges."""
    # One claim per child, so (parent, child) is unique and the key never reaches a None.
    return sorted((Edge(claim.parent, child, claim.source, claim.tool_use_id) for child, claim in chosen.items()), key=lambda edge: (edge.parent, edge.child))


def spawn_inputs(facts: list[TranscriptFacts]) -> dict[str, dict[str, Any]]:
    """Map spawn tool_use ids to their `input` objects."""
    return {spawn.tool_use_id: spawn.input for fact in facts for spawn in fact.spawns}
