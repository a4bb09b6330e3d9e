"""One odd record never loses a session; evidence sorts totally whatever is missing (issue 13)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenthropic_site.pipeline.build import run_build
from agenthropic_site.parse import SessionInput, TranscriptInput, parse_session
from agenthropic_site.parse import scan
from agenthropic_site.parse.lines import decode_jsonl
from agenthropic_site.parse.links import RANK, Evidence, choose_edges, collect_evidence, read_meta
from agenthropic_site.parse.model import EDGE_SOURCES, Warning
from agenthropic_site.parse.scan import TranscriptFacts, scan_records
from records import SID, assistant, line, usage, user, write
from conftest import DEMO_CORPUS, fuzz_harness
from test_incremental import config

PROJECT = "-home-u-app"
MAIN = f"{PROJECT}/{SID}.jsonl"
AGENTS = ("k1", "k2", "k3")


def agent_input(agent_id: str, data: bytes, meta: bytes | None = None) -> TranscriptInput:
    return TranscriptInput(f"{PROJECT}/{SID}/subagents/agent-{agent_id}.jsonl", data, "subagents", agent_id, meta)


def parse(main: bytes, *agents: TranscriptInput):
    return parse_session(SessionInput(SID, PROJECT, TranscriptInput(MAIN, main, "main"), tuple(agents)))


def notification(*, task_id: str | None, tool_use_id: str | None, status: str | None, summary: str = "s") -> str:
    tags = [("task-id", task_id), ("tool-use-id", tool_use_id), ("status", status), ("summary", summary)]
    return "<task-notification>\n" + "".join(f"<{tag}>{value}</{tag}>\n" for tag, value in tags if value is not None) + "</task-notification>"


def background_spawn(tool_use_id: str) -> dict:
    return assistant("s1", "msg_s1", "req_s1", usage(1, 5), stop="tool_use",
                     content=[{"type": "tool_use", "id": tool_use_id, "name": "Agent",
                               "input": {"prompt": "watch it", "description": "watcher", "run_in_background": True}}])


# -- the regression: a Monitor notification without <tool-use-id> --------------------------------


def test_a_monitor_notification_without_tool_use_id_and_its_completion_link_the_agent() -> None:
    # 2.1.2xx: a Monitor task notifies while running with no <tool-use-id>; its completion names
    # the spawn. Both are task_notification claims on k1 by the main agent, one id None, one a str:
    # sorting them raised TypeError and failed the whole session.
    main = (
        line(user("u1", "start"))
        + line(background_spawn("toolu_9"))
        + line(user("n1", notification(task_id="k1", tool_use_id=None, status=None, summary="Monitor: still watching"), ts="2026-01-01T10:00:05.000Z"))
        + line(user("n2", notification(task_id="k1", tool_use_id="toolu_9", status="completed"), ts="2026-01-01T10:00:09.000Z"))
    )
    parsed = parse(main, agent_input("k1", line(user("k", "watch it", isSidechain=True, agentId="k1"))))
    assert [(edge.parent, edge.child, edge.source, edge.tool_use_id) for edge in parsed.edges] == [(SID, "k1", "task_notification", "toolu_9")]
    agent = next(agent for agent in parsed.agents if agent.agent_id == "k1")
    assert (agent.description, agent.status, agent.spawn_tool_use_id) == ("watcher", "completed", "toolu_9")
    assert parsed.unlinked_agents == [] and not [w for w in parsed.warnings if w.code == "record_error"]


def test_a_claim_naming_its_spawn_sorts_before_the_same_claim_without_one() -> None:
    bare = Evidence(RANK["task_notification"], "k1", SID, None)
    named = Evidence(RANK["task_notification"], "k1", SID, "toolu_9")
    for order in ([bare, named], [named, bare]):
        assert sorted(order, key=Evidence.key) == [named, bare]
        assert choose_edges(order, {SID, "k1"}, SID, [])["k1"] == named


# -- a record that raises is a warning, not a failed session -------------------------------------


def _raise_on_marker(error: type[BaseException]):
    original = scan._system

    def system(facts, record, timestamp):
        if record.data.get("marker"):
            raise error("boom at /home/someone/secret")
        original(facts, record, timestamp)

    return system


def test_a_record_that_raises_becomes_a_record_error_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_system", _raise_on_marker(ValueError))
    main = line(user("u1", "hi")) + line({"type": "system", "marker": True, "uuid": "x"}) + line(assistant("a1", "m1", "r1", usage(3, 4)))
    parsed = parse(main)
    errors = [w for w in parsed.warnings if w.code == "record_error"]
    assert errors == [Warning("record_error", f"{MAIN}:2: reading this record raised ValueError; the rest of it was skipped", SID)]
    assert "/home/someone" not in errors[0].message
    assert [(row.line, row.tokens.input) for row in parsed.usage] == [(3, 3)]  # the records after it are read


def test_keyboard_interrupt_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_system", _raise_on_marker(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        parse(line({"type": "system", "marker": True}))


def test_a_record_error_reaches_the_session_page_and_the_session_is_built(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(scan, "_system", _raise_on_marker(RuntimeError))
    corpus = tmp_path / "corpus"
    write(corpus / PROJECT / f"{SID}.jsonl", user("u1", "hi"), {"type": "system", "marker": True}, assistant("a1", "m1", "r1", usage(3, 4)))
    result = run_build(config(corpus, tmp_path / "site", tmp_path / "cache"))
    assert result.parsed == 1
    doc = json.loads((tmp_path / "site" / "data" / "sessions" / f"{SID}.json").read_bytes())
    assert doc["tokens"]["input"] == 3
    assert [w["code"] for w in doc["warnings"]] == ["record_error"] and "RuntimeError" in doc["warnings"][0]["message"]


# -- properties: any mix of missing and mistyped fields ------------------------------------------

# Every strategy is built once, here: a strategy made inside a composite (`st.just(x) | junk`) is a
# new object at each draw, validated again each time, which cost more than half of these tests'
# time. A value drawn in the same example is drawn through a placeholder instead (SLOT), with the
# same weight among the alternatives as `st.just(value)` had.

# Few names, so that claims collide: the same child and parent with and without a tool_use id.
agent_ids = st.sampled_from(AGENTS)
tool_ids = st.sampled_from(["toolu_1", "toolu_2"])
odd_ids = st.sampled_from([SID, "", " ", "k1 ", "<b>", "toolu_1</tool-use-id>"])
ids = agent_ids | tool_ids | odd_ids
junk = st.none() | st.booleans() | st.integers(-3, 3) | st.lists(ids, max_size=2) | st.dictionaries(st.sampled_from(["agentId", "id", "x"]), ids, max_size=2)
value = ids | junk


class Slot:
    """Stands for a value drawn earlier in the same example (see fill)."""

    def __repr__(self) -> str:
        return "SLOT"


SLOT, SLOT_2 = Slot(), Slot()
slot_or_junk = st.just(SLOT) | junk  # st.just(x) | junk
slot_twice_or_junk = st.just(SLOT) | st.just(SLOT) | junk  # st.just(x) | st.just(x) | junk
slot_or_slot_2_or_junk = st.just(SLOT) | st.just(SLOT_2) | junk  # st.just(x) | st.just(y) | junk


def fill(drawn: object, first: object, second: object = None) -> object:
    """Put the values the placeholders stand for in place of the placeholders."""
    return first if drawn is SLOT else second if drawn is SLOT_2 else drawn


# Mostly a known agent, with or without a spawn id: the pair that once raised TypeError.
notified_task_ids = agent_ids | agent_ids | agent_ids | st.none() | odd_ids
notified_tool_ids = st.none() | st.none() | tool_ids | tool_ids | odd_ids
notified_statuses = st.none() | st.sampled_from(["completed", "failed", "killed", "running"]) | odd_ids
notified_summaries = st.sampled_from(["s", "terminated early due to an API error"])


@st.composite
def notification_text(draw) -> str:
    return notification(task_id=draw(notified_task_ids), tool_use_id=draw(notified_tool_ids), status=draw(notified_statuses),
                        summary=draw(notified_summaries))


notification_texts = notification_text()
spawn_names = st.sampled_from(["Task", "Agent", "Workflow"]) | junk
spawn_inputs = st.fixed_dictionaries({"prompt": value, "description": value, "name": value}) | junk


@st.composite
def spawn_record(draw) -> dict:
    block = {"type": "tool_use", "id": draw(value), "name": draw(spawn_names), "input": draw(spawn_inputs)}
    return assistant("s", draw(value), draw(value), usage(1, 1), content=fill(draw(slot_or_junk), [block]))


result_texts = st.sampled_from(["done", "agentId: k1 (for resuming)", "agentId: k2", "subagents/workflows/run1/"]) | junk
result_errors = st.booleans() | junk
structured_results = st.fixed_dictionaries({"agentId": value, "status": st.sampled_from(["async_launched", "completed"]) | junk, "runId": value,
                                            "totalTokens": junk, "usage": junk}) | junk


@st.composite
def result_record(draw) -> dict:
    block = {"type": "tool_result", "tool_use_id": draw(value), "content": draw(result_texts), "is_error": draw(result_errors)}
    record = user("r", fill(draw(slot_or_junk), [block]))
    record["toolUseResult"] = draw(structured_results)
    return record


queue_operations = st.just("enqueue") | st.just("dequeue") | junk


@st.composite
def notice_record(draw) -> dict:
    text = draw(notification_texts)
    if draw(st.booleans()):
        return user("n", fill(draw(slot_or_slot_2_or_junk), text, [{"type": "text", "text": text}]))
    return {"type": "queue-operation", "operation": draw(queue_operations), "content": fill(draw(slot_twice_or_junk), text)}


progress_data = st.fixed_dictionaries({"type": st.just("agent_progress") | junk, "agentId": value}) | junk


@st.composite
def progress_record(draw) -> dict:
    return {"type": "progress", "parentToolUseID": draw(value), "data": draw(progress_data)}


# Spawns stay where they are when a test reorders records: a repeated spawn id is resolved by
# file order on purpose. Results, notifications and progress records are claims in any order.
spawn_records = st.lists(spawn_record(), max_size=4)
claim_records = st.lists(notice_record() | notice_record() | result_record() | progress_record(), min_size=2, max_size=8)
agent_id_sets = st.lists(agent_ids, min_size=1, unique=True)
first_prompts = st.sampled_from(["watch it", "sub"])
sidecar = st.fixed_dictionaries({"agentType": value, "description": value, "toolUseId": value})
metas = st.none() | st.builds(lambda m: json.dumps(m).encode(), sidecar) | st.binary(max_size=8)
monitor_pairs = st.lists(st.tuples(agent_ids, tool_ids | odd_ids), max_size=2)
monitor_statuses = st.none() | st.just("completed")


@st.composite
def sessions(draw) -> tuple[list[dict], list[dict], dict[str, tuple[list[dict], list[dict], bytes | None]]]:
    """A main file's head (first prompt, spawns) and claims, and agent files (head, claims, meta)."""
    agents = {}
    for agent_id in draw(agent_id_sets):
        # The first prompt is fixed text: an agent's first user text (prompt match) depends on order by design.
        head = [user("h", draw(first_prompts), isSidechain=True, agentId=agent_id), *draw(spawn_records)]
        meta = draw(metas)
        agents[agent_id] = (head, draw(claim_records), meta)
    main_claims = draw(claim_records)
    # Monitor pairs (2.1.2xx): the same task notifies without <tool-use-id>, then with one.
    for task_id, tool_use_id in draw(monitor_pairs):
        where = draw(st.sampled_from(("main", *agents)))
        claims = main_claims if where == "main" else agents[where][1]
        for spawn_id in (None, tool_use_id):
            claims.append(user("m", notification(task_id=task_id, tool_use_id=spawn_id, status=draw(monitor_statuses))))
    return [user("u0", "start"), *draw(spawn_records)], main_claims, agents


def _build_inputs(main_head: list[dict], main_tail: list[dict], agents: dict) -> tuple[bytes, list[TranscriptInput]]:
    files = [agent_input(agent_id, b"".join(line(r) for r in head + tail), meta) for agent_id, (head, tail, meta) in agents.items()]
    return b"".join(line(r) for r in main_head + main_tail), files


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(), st.randoms(use_true_random=False))
def test_any_evidence_parses_links_and_sorts_the_same_in_any_order(session, rng: random.Random) -> None:
    """Two properties of each drawn session: drawing one takes most of the time, so they share their examples."""
    _parses_and_links_the_same_in_any_order(session, rng)
    _collected_evidence_sorts_totally_and_chooses_the_same_edges_in_any_order(session, rng)


def _parses_and_links_the_same_in_any_order(session, rng: random.Random) -> None:
    main_head, main_tail, agents = session
    main, files = _build_inputs(main_head, main_tail, agents)
    parsed = parse(main, *files)
    assert not [w for w in parsed.warnings if w.code == "record_error"], parsed.warnings
    # Evidence records in another order, agent files listed in another order: the same links.
    shuffled_tail = rng.sample(main_tail, len(main_tail))
    other_agents = {agent_id: (head, rng.sample(tail, len(tail)), meta) for agent_id, (head, tail, meta) in agents.items()}
    main2, files2 = _build_inputs(main_head, shuffled_tail, other_agents)
    again = parse(main2, *rng.sample(files2, len(files2)))
    assert again.edges == parsed.edges and again.unlinked_agents == parsed.unlinked_agents
    def links(session):
        return [(a.agent_id, a.parent_agent_id, a.spawn_tool_use_id) for a in session.agents]

    assert links(again) == links(parsed)


def _collected_evidence_sorts_totally_and_chooses_the_same_edges_in_any_order(session, rng: random.Random) -> None:
    main_head, main_tail, agents = session
    main, files = _build_inputs(main_head, main_tail, agents)
    facts = [scan_records(TranscriptFacts(SID, MAIN, "main", SID), decode_jsonl(MAIN, main).records)]
    metas = {}
    for file in files:
        facts.append(scan_records(TranscriptFacts(file.agent_id, file.rel, "subagents", SID), decode_jsonl(file.rel, file.data).records))
        meta = read_meta(file.meta)
        if meta is not None:
            metas[file.agent_id] = meta
    evidence = collect_evidence(facts, metas, {}, [], SID)
    keys = [claim.key() for claim in set(evidence)]
    assert len(set(keys)) == len(keys)  # the key tells every distinct claim apart
    assert all(isinstance(c.child, str) and isinstance(c.parent, str) and (c.tool_use_id is None or isinstance(c.tool_use_id, str)) for c in evidence)
    agent_ids = {SID, *agents}
    warnings: list[Warning] = []
    chosen = choose_edges(evidence, agent_ids, SID, warnings)
    for _ in range(3):
        other: list[Warning] = []
        assert choose_edges(rng.sample(evidence, len(evidence)), agent_ids, SID, other) == chosen and other == warnings


claims = st.builds(Evidence, st.integers(0, len(EDGE_SOURCES) - 1), st.sampled_from([*AGENTS, SID]), st.sampled_from([*AGENTS, SID]),
                   st.none() | st.sampled_from(["toolu_1", "toolu_2", ""]))


@settings(max_examples=300, deadline=None)
@given(st.lists(claims, max_size=24), st.randoms(use_true_random=False))
def test_choose_edges_is_a_function_of_the_set_of_claims(evidence: list[Evidence], rng: random.Random) -> None:
    warnings: list[Warning] = []
    chosen = choose_edges(evidence, {SID, *AGENTS}, SID, warnings)
    other: list[Warning] = []
    assert choose_edges(rng.sample(evidence, len(evidence)) * 2, {SID, *AGENTS}, SID, other) == chosen and other == warnings
    assert SID not in chosen


MANY = tuple(f"k{index}" for index in range(1, 9))
many_claims = st.builds(Evidence, st.integers(0, len(EDGE_SOURCES) - 1), st.sampled_from([*MANY, SID]), st.sampled_from([*MANY, SID]),
                        st.none() | st.sampled_from(["toolu_1", ""]))


def chosen_by_walking(evidence: list[Evidence], agents: set[str], main_id: str) -> tuple[dict[str, Evidence], list[str]]:
    """The rule spelled out: take claims best first, refusing one whose parent's chain of parents reaches its child."""
    chosen: dict[str, Evidence] = {}
    refused = []
    for claim in sorted(set(evidence), key=Evidence.key):
        if claim.child == main_id or claim.child not in agents or claim.parent not in agents or claim.child in chosen:
            continue
        chain = [claim.parent]
        while chain[-1] in chosen:
            chain.append(chosen[chain[-1]].parent)
        if claim.child in chain:
            refused.append(claim.child)
        else:
            chosen[claim.child] = claim
    return chosen, refused


@settings(max_examples=300, deadline=None)
@given(st.lists(many_claims, max_size=60))
def test_choose_edges_refuses_exactly_the_claims_that_close_a_cycle(evidence: list[Evidence]) -> None:
    # Eight agents and up to sixty claims: chains long enough for the shortened walks to matter.
    warnings: list[Warning] = []
    chosen = choose_edges(evidence, {SID, *MANY}, SID, warnings)
    expected, refused = chosen_by_walking(evidence, {SID, *MANY}, SID)
    assert chosen == expected
    assert [(w.code, w.agent_id) for w in warnings] == [("spawn_cycle", child) for child in refused]


def test_odd_envelope_values_never_fail_the_session() -> None:
    # Values read after the scan (versions, cwd, titles) are ordered or compared too: a version
    # whose "digits" are not ASCII once raised ValueError in the session's description.
    odd = [
        user("u1", "hi", version="2.1.²", cwd=["not", "a", "path"], gitBranch=7),
        assistant("a1", "m1", "r1", usage(3, 4), version="2.1.10"),
        assistant("a2", "m2", "r2", usage(5, 6), version=None, timestamp=12),
        {"type": "custom-title", "customTitle": {"a": 1}},
    ]
    session = parse(b"".join(line(record) for record in odd))
    assert session.versions == ["2.1.10", "2.1.²"]
    assert sum(row.tokens.output for row in session.usage) == 10


def test_the_hostile_values_harness_spoils_records_and_builds_them(tmp_path: Path) -> None:
    """tests/fuzz/hostile_values.py on the demo corpus, two trials: each build ends as a build may (exit 0 or 1)."""
    harness = fuzz_harness("hostile_values")
    records = b"".join(json.dumps({"type": "assistant", "message": {"usage": {"input_tokens": n}}}).encode() + b"\n" for n in range(100))
    spoiled = harness.spoil(records, random.Random(1))
    assert spoiled != records and spoiled.count(b"\n") == records.count(b"\n")  # values changed, not records added or lost
    mains = harness.main_transcripts([DEMO_CORPUS])
    assert len(mains) >= harness.SESSIONS_A_TRIAL
    rng = random.Random(3)
    for _ in range(2):
        assert harness.one_trial(mains, rng, tmp_path / "trial") is None
        assert (tmp_path / "trial" / "site" / "index.html").is_file()
