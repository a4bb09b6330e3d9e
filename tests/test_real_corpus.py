"""The real transcripts in the shared corpora (path from AGENTHROPIC_SHARED_DIR, set by .ci/run)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import build


def test_real_corpus_builds_and_accounts_for_every_file(shared_dir: Path, tmp_path: Path) -> None:
    corpus = shared_dir / "corpora" / "claude-code-log-real"
    assert build(corpus, tmp_path / "site", tmp_path / "cache") == 0
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    sessions = {s["session_id"] for s in index["sessions"]}
    skipped = {s["path"] for s in index["report"]["skipped"]}
    assert index["report"]["failed_sessions"] == []
    # 36 flat agent files of sessions whose main transcript is empty or gone carry usage: honest
    # totals say they are a lower bound.
    assert index["report"]["uncounted_transcripts"] > 0 and index["totals"]["cost_lower_bound"] is True
    accounted = 0
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.name == "LICENSE" or path.name.endswith(".meta.json"):
            continue
        rel = path.relative_to(corpus).as_posix()
        accounted += 1
        if rel in skipped:
            continue
        if path.parent.parent == corpus and path.stem in sessions:
            continue
        agent_id = path.name[len("agent-"):-len(".jsonl")]
        owners = [sid for sid in sessions if (tmp_path / "site" / "sessions" / sid / "agents" / f"{agent_id}.html").is_file()]
        assert owners, f"{rel} is neither a session, an agent page nor a reported skip"
    assert accounted > 90
    for sid in sessions:
        data = json.loads((tmp_path / "site" / "data" / "sessions" / f"{sid}.json").read_text())
        linked = {a["agent_id"] for a in data["agents"] if a["parent_agent_id"] is not None}
        for agent in data["agents"]:
            if agent["agent_id"] != sid:
                assert agent["agent_id"] in linked or agent["agent_id"] in data["unlinked_agents"]
                assert agent["kind"] in ("subagent", "warmup", "compaction", "side_question", "prompt_suggestion", "workflow", "teammate")
