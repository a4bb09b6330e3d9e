"""Spend in shapes real corpora have: no main transcript, agents without a transcript, copies, placeholders (issue 13)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import build, tree_bytes
from records import OTHER_SID, SID, assistant, usage, user, write

PROJECT = "-home-u-app"


def load(out: Path, sid: str | None = None) -> dict:
    path = out / "data" / ("index.json" if sid is None else f"sessions/{sid}.json")
    return json.loads(path.read_text())


def sidechain(record: dict, agent_id: str, **extra) -> dict:
    return {**record, "isSidechain": True, "agentId": agent_id, **extra}


def test_a_zero_byte_main_with_warmups_is_a_session_with_their_spend(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / PROJECT / f"{SID}.jsonl")  # 0 bytes (17 such mains in the real 1.0.x-2.0.x samples)
    # A classic 2.0.x warmup: "Warmup" prompt and its reply.
    write(corpus / PROJECT / "agent-0a0a0a0a.jsonl", sidechain(user("w1", "Warmup"), "0a0a0a0a"),
          sidechain(assistant("w2", "msg_w", "req_w", usage(1000, 50)), "0a0a0a0a"))
    # A single-line warmup (2.0.42-2.0.44): only the reply, no prompt, no spawner.
    write(corpus / PROJECT / "agent-1b1b1b1b.jsonl", sidechain(assistant("w3", "msg_x", "req_x", usage(2000, 30)), "1b1b1b1b"))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    data = load(tmp_path / "out", SID)
    assert data["main_transcript"] == "empty"
    assert {a["agent_id"]: a["kind"] for a in data["agents"]} == {SID: "main", "0a0a0a0a": "warmup", "1b1b1b1b": "warmup"}
    assert data["tokens"]["input"] == 3000 and data["tokens"]["output"] == 80
    assert data["warnings"] == []  # warmups have no spawner: nothing to act on
    index = load(tmp_path / "out")
    assert index["totals"]["tokens"]["input"] == 3000 and index["totals"]["cost_lower_bound"] is False
    assert index["report"]["skipped"] == [] and index["totals"]["cost_unknown"] == []
    page = (tmp_path / "out" / "sessions" / SID / "index.html").read_text()
    assert "main transcript of this session is empty" in page
    # Its transcript page holds no message: the session page says so instead of linking it as one to read.
    assert 'href="transcript/1.html"' not in page and "empty (0 bytes): what it did is in its agents' transcripts, on their pages (Agents" in page
    transcript = (tmp_path / "out" / "sessions" / SID / "transcript" / "1.html").read_text()
    assert "main transcript of this session is empty (0 bytes): what it did is in its agents' transcripts" in transcript
    assert "lower bound" not in (tmp_path / "out" / "index.html").read_text()


def test_sessions_without_a_main_file_are_built_from_flat_and_nested_agent_files(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / PROJECT / "agent-2c2c2c2c.jsonl", sidechain(user("f1", "look around", session=OTHER_SID), "2c2c2c2c"),
          sidechain(assistant("f2", "msg_f", "req_f", usage(10, 20), session=OTHER_SID), "2c2c2c2c"))
    write(corpus / PROJECT / SID / "subagents" / "agent-a123456.jsonl", sidechain(user("s1", "do it"), "a123456"),
          sidechain(assistant("s2", "msg_s", "req_s", usage(30, 40)), "a123456"))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    index = load(tmp_path / "out")
    assert sorted(s["session_id"] for s in index["sessions"]) == sorted([SID, OTHER_SID])
    assert index["totals"]["tokens"]["input"] == 40 and index["totals"]["tokens"]["output"] == 60
    for sid, agent_id in ((SID, "a123456"), (OTHER_SID, "2c2c2c2c")):
        data = load(tmp_path / "out", sid)
        assert data["main_transcript"] == "absent"
        assert data["unlinked_agents"] == [agent_id] and data["warnings"] == []
        assert [a["kind"] for a in data["agents"]] == ["main", "subagent"]
        page = (tmp_path / "out" / "sessions" / sid / "index.html").read_text()
        assert "no main transcript in the corpus" in page
        assert 'href="transcript/1.html"' not in page and "in the corpus: what it did is in its agents' transcripts, on their pages (Agents" in page
        transcript = (tmp_path / "out" / "sessions" / sid / "transcript" / "1.html").read_text()
        assert "This session has no main transcript in the corpus: what it did is in its agents' transcripts" in transcript
        assert (tmp_path / "out" / "sessions" / sid / "agents" / f"{agent_id}.html").is_file()


def test_a_main_file_that_appears_later_equals_a_cold_build(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / PROJECT / SID / "subagents" / "agent-a123456.jsonl", sidechain(user("s1", "do it"), "a123456"),
          sidechain(assistant("s2", "msg_s", "req_s", usage(30, 40)), "a123456"))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    write(corpus / PROJECT / f"{SID}.jsonl", user("u1", "hello"), assistant("a1", "msg_1", "req_1", usage(1, 2)))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    assert build(corpus, tmp_path / "cold", tmp_path / "cold-cache") == 0
    assert tree_bytes(tmp_path / "out") == tree_bytes(tmp_path / "cold")
    assert load(tmp_path / "out", SID)["main_transcript"] == "present"


def spawn_pair(tool_use_id: str, agent_id: str, *, figures: bool = True, name: str | None = None) -> tuple[dict, dict]:
    spawn_input = {"description": "Survey the code", "prompt": "look", "subagent_type": "Explore", **({"name": name} if name else {})}
    call = assistant("c1", "msg_c", "req_c", usage(5, 6), content=[{"type": "tool_use", "id": tool_use_id, "name": "Agent", "input": spawn_input}])
    tail = (f"agentId: {agent_id} (use SendMessage with to: '{agent_id}' to continue this agent)\n"
            "<usage>total_tokens: 4321\ntool_uses: 7\nduration_ms: 9000</usage>")
    structured = {"status": "completed", "agentId": agent_id, "totalTokens": 4321, "totalToolUseCount": 7, "totalDurationMs": 9000,
                  "usage": {"input_tokens": 3, "output_tokens": 300, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 18}}
    result = user("r1", [{"type": "tool_result", "tool_use_id": tool_use_id, "content": [{"type": "text", "text": "Done."}, {"type": "text", "text": tail}]}],
                  ts="2026-01-01T10:05:00.000Z", **({"toolUseResult": structured} if figures else {}))
    return call, result


def test_a_spawned_agent_without_a_transcript_is_a_node_with_reported_figures(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    call, result = spawn_pair("toolu_01Absent", "a0123456789abcdef")
    write(corpus / PROJECT / f"{SID}.jsonl", user("u1", "hello"), call, result)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    data = load(tmp_path / "out", SID)
    absent = [a for a in data["agents"] if not a["transcript"]]
    assert [a["agent_id"] for a in absent] == ["a0123456789abcdef"]
    agent = absent[0]
    assert (agent["parent_agent_id"], agent["edge_source"], agent["kind"], agent["status"]) == (SID, "tool_result_agent_id", "subagent", "completed")
    assert agent["reported"] == {"total_tokens": 4321, "tool_uses": 7, "duration_ms": 9000,
                                 "usage": {"input": 3, "output": 300, "cache_read": 4000, "cache_write_5m": 18, "cache_write_1h": 0}}
    # Reported, never counted: the session's tokens are its own request only.
    assert agent["tokens"] == {"input": 0, "output": 0, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0}
    assert data["tokens"]["input"] == 5 and data["reported_not_counted"] == {"agents": 1, "total_tokens": 4321}
    index = load(tmp_path / "out")
    assert index["totals"]["reported_not_counted"] == {"agents": 1, "total_tokens": 4321}
    assert index["totals"]["tokens"]["input"] == 5
    page = (tmp_path / "out" / "sessions" / SID / "index.html").read_text()
    assert "transcript not in the corpus" in page and "4,321 reported by the parent, not counted" in page
    # No page of its own (its id comes from inside a transcript), and no link to one.
    assert not (tmp_path / "out" / "sessions" / SID / "agents").exists()
    assert "agents/a0123456789abcdef.html" not in page
    assert "Reported, not counted" in (tmp_path / "out" / "index.html").read_text()


def test_reported_figures_come_from_the_text_tail_when_there_is_no_structured_result(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    call, result = spawn_pair("toolu_01Tail", "a7654321", figures=False, name="alice")
    write(corpus / PROJECT / f"{SID}.jsonl", user("u1", "hello"), call, result)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    agent = next(a for a in load(tmp_path / "out", SID)["agents"] if a["agent_id"] == "a7654321")
    assert (agent["kind"], agent["edge_source"]) == ("teammate", "result_text_agent_id")
    assert agent["reported"] == {"total_tokens": 4321, "tool_uses": 7, "duration_ms": 9000, "usage": None}


def test_copies_that_keep_the_request_id_count_once_in_the_original(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    original = [user("u1", "hello", ts="2026-01-01T10:00:00.000Z"),
                assistant("a1", "msg_1", "req_1", usage(100, 10), ts="2026-01-01T10:00:01.000Z"),
                assistant("a2", "msg_2", "req_2", usage(200, 20), ts="2026-01-01T10:00:02.000Z")]
    # A copy in a real dump: same requestId and timestamps, new uuids, new sessionId, message.id = uuid.
    copied = []
    for index, record in enumerate(original):
        record = json.loads(json.dumps(record))
        record["uuid"] = f"copy-{index}"
        record["sessionId"] = OTHER_SID
        if record["type"] == "assistant":
            record["message"]["id"] = record["uuid"]
        copied.append(record)
    copied.append(assistant("a3", "msg_3", "req_3", usage(7, 1), ts="2026-01-02T09:00:00.000Z", session=OTHER_SID))
    write(corpus / PROJECT / f"{SID}.jsonl", *original)
    write(corpus / PROJECT / f"{OTHER_SID}.jsonl", *copied)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    first, copy = load(tmp_path / "out", SID), load(tmp_path / "out", OTHER_SID)
    assert first["tokens"]["input"] == 300 and first["collisions"] == 0
    assert copy["tokens"]["input"] == 7 and copy["collisions"] == 2 and copy["copies_counted_in"] == {SID: 2}
    assert load(tmp_path / "out")["totals"]["tokens"]["input"] == 307
    page = (tmp_path / "out" / "sessions" / OTHER_SID / "index.html").read_text()
    assert re.search(r"2 request\(s\) here are copies of requests counted in session <a [^>]*><code>" + SID, page)


def test_placeholder_output_counts_are_a_quiet_count_with_an_estimate(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    text = "word " * 300  # 1,500 characters written under a placeholder output count of 3
    write(corpus / PROJECT / f"{SID}.jsonl", user("u1", "hello"),
          assistant("a1", "msg_1", "req_1", usage(10, 3), stop=None, content=[{"type": "text", "text": text}]))
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    data = load(tmp_path / "out", SID)
    assert [w["code"] for w in data["warnings"]] == []
    assert data["output_under_reported"] == {"requests": 1, "recorded_output": 3, "estimate_low": 300 - 3, "estimate_high": 500 - 3}
    assert data["tokens"]["output"] == 3  # the estimate never reaches a count
    index = load(tmp_path / "out")
    assert index["report"]["output_under_reported"] == {"requests": 1, "sessions": 1, "versions": ["2.1.39"]}
    report = (tmp_path / "out" / "report.html").read_text()
    assert "1 request(s) in 1 session(s) end on a streaming placeholder output count" in report and "2.1.39" in report


def test_a_copy_alone_counts_each_request_once_though_its_lines_have_new_message_ids(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    # One response written as two lines (a placeholder, then the final count), in a copy whose
    # message ids were replaced by each record's uuid: one requestId, one request (issue 13).
    lines = [assistant("c1", "c1", "req_1", usage(100, 2), stop=None, content=[{"type": "thinking", "thinking": "hm"}]),
             assistant("c2", "c2", "req_1", usage(100, 40), content=[{"type": "text", "text": "done"}])]
    write(corpus / PROJECT / f"{SID}.jsonl", user("u1", "hello"), *lines)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    data = load(tmp_path / "out", SID)
    assert (data["tokens"]["input"], data["tokens"]["output"]) == (100, 40)
    assert data["agents"][0]["requests"] == 1
