"""The demo site agrees with the generator's own record of what it wrote (fixtures/expected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DEMO_EXPECTED

SESSIONS = sorted(p.stem for p in DEMO_EXPECTED.glob("*-*-*-*-*.json"))


def expected(session_id: str) -> dict:
    return json.loads((DEMO_EXPECTED / f"{session_id}.json").read_text())


def site_session(site: Path, session_id: str) -> dict:
    return json.loads((site / "data" / "sessions" / f"{session_id}.json").read_text())


@pytest.mark.parametrize("session_id", SESSIONS)
def test_agents_edges_and_tokens_match(demo_site: Path, session_id: str) -> None:
    truth, got = expected(session_id), site_session(demo_site, session_id)
    if got["excluded"] is not None:
        assert truth["unknown_models"], "only sessions with an unknown model are excluded"
        assert all(model in got["excluded"]["reason"] for model in truth["unknown_models"])
        return
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
def test_compactions_titles_and_bad_lines_match(demo_site: Path, session_id: str) -> None:
    truth, got = expected(session_id), site_session(demo_site, session_id)
    assert got["malformed_lines"] == truth["malformed_lines"]
    assert got["project"] == truth["project"] and got["cwd"] == truth["cwd"]
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
