"""The demo site agrees with the generator's own record of what it wrote (fixtures/expected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DEMO_EXPECTED

SESSIONS = sorted(p.stem for p in DEMO_EXPECTED.glob("*-*-*-*-*.json"))
PARENTLESS_KINDS = ("warmup", "compaction", "side_question", "prompt_suggestion")


def expected(session_id: str) -> dict:
    return json.loads((DEMO_EXPECTED / f"{session_id}.json").read_text())


def site_session(site: Path, session_id: str) -> dict:
    return json.loads((site / "data" / "sessions" / f"{session_id}.json").read_text())


def site_index(site: Path) -> dict:
    return json.loads((site / "data" / "index.json").read_text())


@pytest.mark.parametrize("session_id", SESSIONS)
def test_agents_edges_and_tokens_match(demo_site: Path, session_id: str) -> None:
    truth, got = expected(session_id), site_session(demo_site, session_id)
    if got["excluded"] is not None:
        assert truth["unknown_models"], "only sessions with an unknown model are excluded"
        assert all(model in got["excluded"]["reason"] for model in truth["unknown_models"])
    # Token counts are facts even when the cost is unknown (issue 13, contract point 4): no early return.
    agents = {agent["agent_id"]: agent for agent in got["agents"]}
    assert sorted(agents) == sorted(truth["agents"])
    for agent_id, want in truth["agents"].items():
        have = agents[agent_id]
        assert (have["kind"], have["parent_agent_id"], have["edge_source"]) == (want["kind"], want["parent"], want["edge_source"]), agent_id
        assert have["tokens"] == want["tokens"], agent_id
        assert have["requests"] == want["requests"], agent_id
        assert have["agent_type"] == want["agent_type"], agent_id
        assert have["notification_status"] == want["notification_status"], agent_id
        if want["outcome"] is not None:
            assert have["outcome_cause"] == want["outcome"], agent_id
    assert sorted((e["parent"], e["child"], e["source"]) for e in got["edges"]) == sorted(
        (e["parent"], e["child"], e["source"]) for e in truth["edges"]
    )
    assert got["unlinked_agents"] == truth["unlinked_agents"]
    assert got["tokens"] == truth["tokens"]
    assert {model: entry["tokens"] for model, entry in got["by_model"].items()} == truth["by_model"]
    assert got["collisions"] == truth["collisions"]


@pytest.mark.parametrize("session_id", SESSIONS)
def test_transcript_presence_and_reported_figures_match(demo_site: Path, session_id: str) -> None:
    """Missing/empty main transcripts, agents known only from their spawn result (issue 13, points 1-2)."""
    truth, got = expected(session_id), site_session(demo_site, session_id)
    assert got["main_transcript"] == truth["main_transcript"]
    agents = {agent["agent_id"]: agent for agent in got["agents"]}
    assert session_id in agents and agents[session_id]["kind"] == "main"
    for agent_id, want in truth["agents"].items():
        if agent_id not in agents:
            continue  # reported by test_agents_edges_and_tokens_match
        have = agents[agent_id]
        if want["kind"] != "main":  # the main agent's file is described by main_transcript
            assert have["transcript"] is want["transcript"], agent_id
        # the spawn result's own figures: shown, never counted (toolUseResult / <usage> tail, format §3.3)
        assert have["reported"] == want["reported"], agent_id
    assert got["reported_not_counted"] == truth["reported_not_counted"]


@pytest.mark.parametrize("session_id", SESSIONS)
def test_warnings_of_the_new_shapes(demo_site: Path, session_id: str) -> None:
    """Single-line warmups are warmups; a record never fails a session; under-reported output is a figure."""
    truth, got = expected(session_id), site_session(demo_site, session_id)
    codes = [w["code"] for w in got["warnings"]]
    assert "record_error" not in codes, got["warnings"]
    assert "output_under_reported" not in codes  # a session field now (issue 13, point 3)
    for agent_id, want in truth["agents"].items():
        if want["kind"] in PARENTLESS_KINDS:
            assert not any(w["code"] == "unlinked_agent" and agent_id in w["message"] for w in got["warnings"]), agent_id
    want_under, have_under = truth["output_under_reported"], got["output_under_reported"]
    assert (have_under["requests"], have_under["recorded_output"]) == (want_under["requests"], want_under["recorded_output"])
    # the estimate of the unwritten output depends on the site's heuristic: only its shape is known here
    assert 0 <= have_under["estimate_low"] <= have_under["estimate_high"]
    assert (have_under["estimate_high"] > 0) == (want_under["requests"] > 0)


def test_index_entries_and_totals_count_every_session(demo_site: Path) -> None:
    """Index tokens include excluded sessions; reported figures and under-reported output are summed apart."""
    truth = json.loads((DEMO_EXPECTED / "corpus.json").read_text())
    index = site_index(demo_site)
    entries = {s["session_id"]: s for s in index["sessions"]}
    for session_id in SESSIONS:
        assert entries[session_id]["tokens"] == expected(session_id)["tokens"], session_id
    assert index["totals"]["tokens"] == truth["tokens_total"]
    assert index["totals"]["reported_not_counted"] == truth["reported_not_counted"]
    under = index["report"]["output_under_reported"]
    want = truth["output_under_reported"]
    assert (under["requests"], under["sessions"]) == (want["requests"], want["sessions"])
    assert sorted(under["versions"]) == sorted(want["versions"])
    assert index["report"]["failed_sessions"] == []


@pytest.mark.parametrize("session_id", SESSIONS)
def test_compactions_titles_and_bad_lines_match(demo_site: Path, session_id: str) -> None:
    truth, got = expected(session_id), site_session(demo_site, session_id)
    assert got["malformed_lines"] == truth["malformed_lines"]
    assert got["project"] == truth["project"]
    if truth["main_transcript"] == "present":
        assert got["cwd"] == truth["cwd"]
    else:
        # without a main transcript the contract does not say where cwd comes from; it must not be invented
        assert got["cwd"] in (truth["cwd"], None)
    if truth["title"] is not None:
        assert got["title"] is not None and " ".join(truth["title"].split()).startswith(got["title"].rstrip("…"))
    if got["excluded"] is None:
        assert [
            (c["agent_id"], c["trigger"], c["pre_tokens"], c["post_tokens"], c["compaction_agent_id"]) for c in got["compactions"]
        ] == [(c["agent_id"], c["trigger"], c["pre_tokens"], c["post_tokens"], c["compaction_agent_id"]) for c in truth["compactions"]]
    codes = {w["code"] for w in got["warnings"]}
    assert ("pending_last_line" in codes) == truth["pending_last_line"]
    for agent in truth["agents"].values():
        for code in agent["warnings"]:
            assert code in codes


def test_every_intended_skip_is_reported(demo_site: Path) -> None:
    truth = json.loads((DEMO_EXPECTED / "corpus.json").read_text())
    report = json.loads((demo_site / "data" / "index.json").read_text())["report"]
    reported = {(skip["path"], skip["reason"]) for skip in report["skipped"]}
    for skip in truth["skipped"]:
        assert (skip["path"], skip["reason"]) in reported
    assert {s["session_id"]: s["project"] for s in json.loads((demo_site / "data" / "index.json").read_text())["sessions"]} == truth["sessions"]


@pytest.mark.parametrize("session_id", SESSIONS)
def test_costs_match_the_generators_own_pricing(demo_site: Path, session_id: str) -> None:
    truth, got = expected(session_id), site_session(demo_site, session_id)
    assert got["cost_usd"] == truth["cost_usd"]
    if truth["cost_usd"] is None:
        assert got["excluded"] is not None
        return
    for agent in got["agents"]:
        assert agent["cost_usd"] == truth["agents"][agent["agent_id"]]["cost_usd"], agent["agent_id"]
    assert {model: entry["cost_usd"] for model, entry in got["by_model"].items() if entry["tokens"] != dict.fromkeys(entry["tokens"], 0)} == {
        model: cost for model, cost in truth["cost_by_model"].items() if any(truth["by_model"].get(model, {}).values())
    }
    assert got["cost_by_category"] == truth["cost_by_category"]
    assert got["segments"] == truth["segments"]
    assert [c["cost_usd_before"] for c in got["compactions"]] == [c["cost_usd_before"] for c in truth["compactions"]]


def test_corpus_total_cost_matches(demo_site: Path) -> None:
    truth = json.loads((DEMO_EXPECTED / "corpus.json").read_text())
    index = json.loads((demo_site / "data" / "index.json").read_text())
    assert index["totals"]["cost_usd"] == truth["cost_usd_total"]
