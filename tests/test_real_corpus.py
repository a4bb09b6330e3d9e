"""The real transcripts in the shared corpora (path from AGENTHROPIC_SHARED_DIR, set by .ci/run).

Every folder of $AGENTHROPIC_SHARED_DIR/corpora is a corpus; each is built once for this module.
What the build should contain is worked out here from the files (stdlib only, format §1.3).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import build, differences, plain_copy
from test_token_truth import UUID_RE, first_session_id, named_sessions, shared_corpus_names

AGENT_KINDS = ("subagent", "warmup", "compaction", "side_question", "prompt_suggestion", "workflow", "teammate")
# Past the build's default file cap (config.DEFAULT_MAX_FILE_BYTES) a file is skipped as oversize.
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass
class Built:
    corpus: Path
    site: Path
    code: int
    index: dict

    def session(self, sid: str) -> dict:
        return json.loads((self.site / "data" / "sessions" / f"{sid}.json").read_text())


@pytest.fixture(scope="module", params=shared_corpus_names())
def real(request: pytest.FixtureRequest, shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Each shared corpus, built once for this module."""
    base = tmp_path_factory.mktemp(f"real-{request.param}")
    corpus = plain_copy(shared_dir / "corpora" / request.param, base / "corpus")
    code = build(corpus, base / "site", base / "cache")
    return Built(corpus, base / "site", code, json.loads((base / "site" / "data" / "index.json").read_text()))


def main_state(corpus: Path, project: str, sid: str) -> str:
    main = corpus / project / f"{sid}.jsonl"
    if not main.is_file():
        return "absent"
    return "empty" if main.stat().st_size == 0 else "present"


def test_every_named_session_is_built(real: Built) -> None:
    """A session id named by a main file (0 bytes too), a session folder or a flat agent file is a session."""
    named = named_sessions(real.corpus)
    built = {s["session_id"]: s["project"] for s in real.index["sessions"]}
    assert named, "no session found in the corpus"
    missing = sorted({sid for _, sid in named} - set(built))
    assert not missing, f"{len(missing)} named session(s) not built: {missing[:5]}"
    # Nothing else: every session of the build is named by some file of its project folder.
    assert {(project, sid) for sid, project in built.items()} <= named
    folders = defaultdict(set)
    for project, sid in named:
        folders[sid].add(project)
    for sid, project in sorted(built.items()):
        if len(folders[sid]) == 1:  # in several folders the build keeps one (duplicate-session)
            assert folders[sid] == {project}, sid
        data = real.session(sid)
        assert data["main_transcript"] == main_state(real.corpus, project, sid), sid
        main = [a for a in data["agents"] if a["agent_id"] == sid]
        assert len(main) == 1 and main[0]["kind"] == "main", sid


def test_real_corpus_builds_and_accounts_for_every_file(real: Built) -> None:
    """No failed session; every file is a session, an agent page or a reported skip; every agent is linked or listed."""
    assert real.code == 0
    assert real.index["report"]["failed_sessions"] == []
    sessions = {s["session_id"] for s in real.index["sessions"]}
    skipped = {s["path"] for s in real.index["report"]["skipped"]}

    def has_page(sid: str | None, agent_id: str) -> bool:
        return sid in sessions and (real.site / "sessions" / sid / "agents" / f"{agent_id}.html").is_file()

    accounted = 0
    for path in sorted(real.corpus.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(real.corpus).as_posix()
        parts = rel.split("/")
        accounted += 1
        if rel in skipped:
            continue
        assert len(parts) > 1, f"{rel}: a file at the corpus root must be a reported skip"
        name = parts[-1]
        if len(parts) == 2 and name.endswith(".jsonl") and UUID_RE.match(name[: -len(".jsonl")]):
            assert name[: -len(".jsonl")] in sessions, f"{rel}: main transcript of no session"
            continue
        if name.startswith("agent-") and name.endswith((".jsonl", ".meta.json")):
            agent_id = name[len("agent-") :].removesuffix(".jsonl").removesuffix(".meta.json")
            # The session is the folder's (<project>/<sid>/subagents/...), or named inside a flat file.
            if len(parts) == 2:
                owner = first_session_id(path) if name.endswith(".jsonl") else None
            else:
                owner = parts[1]
            assert has_page(owner, agent_id), f"{rel} is neither a session, an agent page nor a reported skip"
            continue
        raise AssertionError(f"{rel} is neither a session, an agent page nor a reported skip")
    assert accounted > len(sessions) > 0
    for sid in sorted(sessions):
        data = real.session(sid)
        linked = {a["agent_id"] for a in data["agents"] if a["parent_agent_id"] is not None}
        for agent in data["agents"]:
            if agent["agent_id"] != data["session_id"]:
                assert agent["agent_id"] in linked or agent["agent_id"] in data["unlinked_agents"]
                assert agent["kind"] in AGENT_KINDS


def test_totals_are_exact_when_every_file_is_read(real: Built) -> None:
    """Flat agent files of sessions with an empty or absent main transcript are counted now."""
    unreadable = [p for p in real.corpus.rglob("*") if p.is_file() and (p.stat().st_size > MAX_FILE_BYTES or not os.access(p, os.R_OK))]
    if unreadable or real.index["report"]["unpriced_models"]:
        pytest.skip("a file is past the size cap or a model has no price: the totals are a lower bound")
    assert real.index["report"]["uncounted_transcripts"] == 0
    assert real.index["totals"]["cost_lower_bound"] is False


def test_every_computed_view_is_exactly_its_decoded_copy(real: Built) -> None:
    """The render of a session changed alone takes its computed view (model/stored.py ComputedAlone): real shapes must round-trip exactly."""
    from agenthropic_site.cache import Cache
    from agenthropic_site.cost import load_price_table
    from agenthropic_site.model.stored import decode_view, encode_usage, encode_view
    from agenthropic_site.model.views import compute_views

    cache = Cache.reader(real.site.parent / "cache")
    try:
        ids = sorted(cache.session_ids())
        assert ids
        for start in range(0, len(ids), 16):
            for sid, view in compute_views(cache, ids[start : start + 16], load_price_table()).items():
                assert differences(view, decode_view(encode_view(view), encode_usage(view))) == [], sid
    finally:
        cache.close()
