"""The parser: pure bytes -> ParsedSession; dedupe, links and bad lines (format §3, §4)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.parse import SessionInput, Tokens, TranscriptInput, parse_session
from records import SID, assistant, line, usage, user

MAIN = f"p/{SID}.jsonl"


def parse(main: bytes, *agents: TranscriptInput):
    return parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, main, "main"), tuple(agents)))


def agent_file(agent_id: str, *records, meta: dict | None = None, layout: str = "subagents", run_id: str | None = None) -> TranscriptInput:
    return TranscriptInput(
        f"p/{SID}/subagents/agent-{agent_id}.jsonl", b"".join(line(r) for r in records), layout, agent_id,
        json.dumps(meta).encode() if meta is not None else None, run_id,
    )


def totals(parsed) -> dict[str, Tokens]:
    result: dict[str, Tokens] = {}
    for row in parsed.usage:
        result[row.agent_id] = result.get(row.agent_id, Tokens()) + row.tokens
    return result


def spawn(uuid: str, tool_id: str, prompt: str, tool: str = "Task", **inputs) -> dict:
    return assistant(uuid, f"msg_{uuid}", f"req_{uuid}", usage(1, 50), stop="tool_use",
                     content=[{"type": "tool_use", "id": tool_id, "name": tool, "input": {"prompt": prompt, "description": "d", **inputs}}])


def result(uuid: str, tool_id: str, text: str, structured=None, is_error: bool = False) -> dict:
    record = user(uuid, [{"type": "tool_result", "tool_use_id": tool_id, "content": [{"type": "text", "text": text}], "is_error": is_error}])
    if structured is not None:
        record["toolUseResult"] = structured
    return record


def test_multi_line_message_keeps_the_largest_output_line() -> None:
    lines = [
        assistant("a1", "msg_1", "req_1", usage(3, 2, 100, 40, 0), stop=None),
        assistant("a2", "msg_1", "req_1", usage(3, 7, 100, 40, 0), stop=None),
        assistant("a3", "msg_1", "req_1", usage(3, 420, 100, 40, 0), stop="end_turn"),
        assistant("a4", "msg_2", "req_2", usage(5, 9, 0, 0, 0, split=False)),
    ]
    parsed = parse(b"".join(line(r) for r in lines))
    assert totals(parsed)[SID] == Tokens(input=8, output=429, cache_read=100, cache_write_5m=40, cache_write_1h=0)
    assert len(parsed.usage) == 2


def test_cache_writes_split_by_ttl_and_unsplit_count_as_5m() -> None:
    parsed = parse(line(assistant("a1", "m1", "r1", usage(0, 1, 0, 30, 70))) + line(assistant("a2", "m2", "r2", usage(0, 1, 0, 25, 0, split=False))))
    assert totals(parsed)[SID] == Tokens(output=2, cache_write_5m=55, cache_write_1h=70)


def test_synthetic_progress_and_tool_result_usage_never_count() -> None:
    synthetic = assistant("s1", "8f3c61b4-0e27-4d95-a1c8-5b9e2f7d03a6", "r0", usage(0, 0), model="<synthetic>", isApiErrorMessage=True)
    progress = {"type": "progress", "uuid": "p1", "parentToolUseID": "toolu_1", "data": {"type": "agent_progress", "agentId": "a1",
                "message": {"message": {"id": "msg_x", "usage": usage(1000, 1000)}}}}
    structured = {"status": "completed", "agentId": "a1", "totalTokens": 99999, "usage": usage(500, 500)}
    main = b"".join(line(r) for r in [synthetic, spawn("t", "toolu_1", "go"), progress, result("r", "toolu_1", "done\nagentId: a1", structured)])
    parsed = parse(main, agent_file("a1", user("c1", "go"), assistant("c2", "msg_c", "req_c", usage(7, 8))))
    assert totals(parsed) == {SID: Tokens(input=1, output=50), "a1": Tokens(input=7, output=8)}


def test_compaction_replay_counts_once_for_the_original_agent() -> None:
    original = assistant("a1", "msg_orig", "req_1", usage(10, 100, 1000))
    replay = assistant("x1", "msg_orig", "req_other", usage(10, 100, 1000))
    own = assistant("x2", "msg_summary", "req_s", usage(2, 6, 160000))
    parsed = parse(line(original), agent_file("acompact-abc123", user("x0", "Your task is to create a detailed summary"), replay, own))
    assert totals(parsed) == {SID: Tokens(input=10, output=100, cache_read=1000), "acompact-abc123": Tokens(input=2, output=6, cache_read=160000)}
    kinds = {agent.agent_id: agent.kind for agent in parsed.agents}
    assert kinds["acompact-abc123"] == "compaction" and "acompact-abc123" in parsed.unlinked_agents


def test_links_prefer_the_sidecar_then_the_structured_result_then_the_text_tail() -> None:
    main = b"".join(line(r) for r in [
        spawn("s1", "toolu_a", "first"), result("r1", "toolu_a", "ok", {"status": "completed", "agentId": "aaa"}),
        spawn("s2", "toolu_b", "second"), result("r2", "toolu_b", "ok\nagentId: bbb (for resuming)"),
        spawn("s3", "toolu_c", "third", tool="Agent"),
    ])
    parsed = parse(
        main,
        agent_file("aaa", user("a", "first")),
        agent_file("bbb", user("b", "second"), spawn("b2", "toolu_n", "nested"), result("b3", "toolu_n", "agentId: nnn")),
        agent_file("ccc", user("c", "third"), meta={"agentType": "Explore", "toolUseId": "toolu_c"}),
        agent_file("nnn", user("n", "nested")),
    )
    edges = {(e.parent, e.child, e.source) for e in parsed.edges}
    assert edges == {
        (SID, "aaa", "tool_result_agent_id"),
        (SID, "bbb", "result_text_agent_id"),
        (SID, "ccc", "meta_tool_use_id"),
        ("bbb", "nnn", "result_text_agent_id"),
    }
    agents = {a.agent_id: a for a in parsed.agents}
    assert agents["ccc"].agent_type == "Explore"
    assert agents["aaa"].status == "completed"
    assert [a.agent_id for a in parsed.agents][:3] == [SID, "aaa", "bbb"]  # parent first


def test_background_agent_status_comes_from_its_notification() -> None:
    notification = ("<task-notification>\n<task-id>bg1</task-id>\n<status>failed</status>\n"
                    "<summary>Agent \"x\" failed: Agent terminated early due to an API error: boom</summary>\n</task-notification>")
    main = b"".join(line(r) for r in [
        spawn("s1", "toolu_bg", "bg", run_in_background=True),
        result("r1", "toolu_bg", "Async agent launched successfully.\nagentId: bg1", {"isAsync": True, "status": "async_launched", "agentId": "bg1"}),
        user("n1", notification),
    ])
    parsed = parse(main, agent_file("bg1", user("b", "bg")))
    agent = next(a for a in parsed.agents if a.agent_id == "bg1")
    assert (agent.status, agent.outcome_cause, agent.notification_status) == ("error", "terminated_early", "failed")


def test_inline_sidechains_become_agents() -> None:
    records = [
        user("u1", "please"), spawn("s1", "toolu_x", "inline work"),
        {**user("c1", "inline work"), "isSidechain": True},
        {**assistant("c2", "msg_side", "req_side", usage(4, 4)), "isSidechain": True, "parentUuid": "c1"},
    ]
    parsed = parse(b"".join(line(r) for r in records))
    assert {(e.parent, e.child, e.source, e.tool_use_id) for e in parsed.edges} == {(SID, "c1", "sidechain_inline", "toolu_x")}
    assert totals(parsed)["c1"] == Tokens(input=4, output=4)


def test_bad_lines_are_typed_errors_and_the_pending_tail_is_not_one() -> None:
    good = line(assistant("a1", "m1", "r1", usage(1, 1)))
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    data = good + b"{not json\n" + deep + b"[1,2]\n" + b'"\xff\xfe"\n' + b'{"type":"user","x":"\\ud800"}\n' + b'{"type":"assistant","message":{"id":"m9"'
    parsed = parse(data)
    expected = [(2, "invalid-json"), (3, "invalid-json"), (4, "not-an-object"), (5, "invalid-json"), (6, "invalid-json")]
    assert [(e.line, e.code) for e in parsed.line_errors] == expected
    assert all(e.file == MAIN for e in parsed.line_errors)
    assert parsed.pending_lines == [MAIN]
    assert totals(parsed)[SID] == Tokens(input=1, output=1)


def test_malformed_usage_is_counted_and_contributes_nothing() -> None:
    bad = assistant("a1", "m1", "r1", {"input_tokens": -5, "output_tokens": 3})
    worse = assistant("a2", "m2", "r2", {"input_tokens": "7", "output_tokens": 3})
    parsed = parse(line(bad) + line(worse))
    assert [(e.line, e.code) for e in parsed.line_errors] == [(1, "malformed-usage"), (2, "malformed-usage")]
    assert parsed.usage == []


def test_cut_then_completed_transcript_gives_the_same_answer() -> None:
    records = [user("u1", "go"), spawn("s1", "toolu_1", "sub"), result("r1", "toolu_1", "agentId: k1"), assistant("a9", "m9", "r9", usage(3, 30))]
    whole = b"".join(line(r) for r in records)
    cut = len(whole) - 17
    first = parse(whole[:cut], agent_file("k1", user("k", "sub")))
    assert first.pending_lines == [MAIN]
    final = parse(whole[:cut] + whole[cut:], agent_file("k1", user("k", "sub")))
    reference = parse(whole, agent_file("k1", user("k", "sub")))
    assert final.edges == reference.edges and final.usage == reference.usage and not final.pending_lines


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    parsed = parse(data, TranscriptInput("p/x/subagents/agent-z.jsonl", data, "subagents", "z", data[:50]))
    assert parsed.session_id == SID


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda children: st.lists(children) | st.dictionaries(st.text(), children), max_leaves=30),
       st.sampled_from(["message", "toolUseResult", "data", "content", "compactMetadata", "usage", "timestamp", "type"]))
def test_mutated_real_shapes_never_raise(value, field) -> None:
    base = [assistant("a1", "m1", "r1", usage(1, 2)), result("r1", "toolu_1", "agentId: q"),
            {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 5}},
            {"type": "progress", "data": {"type": "agent_progress"}}]
    mutated = []
    for record in base:
        copy = dict(record)
        copy[field] = value
        if isinstance(copy.get("message"), dict):
            copy["message"] = {**copy["message"], field: value}
        mutated.append(copy)
    parse(b"".join(line(r) for r in mutated))


def test_images_become_thumbnails_only_when_small_raster_and_base64() -> None:
    from agenthropic_site.parse.messages import MAX_THUMBNAIL_CHARS, image_block

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    assert image_block({"type": "base64", "media_type": "image/png", "data": png}).text == png
    assert image_block({"type": "base64", "media_type": "image/svg+xml", "data": png}).text == ""
    assert image_block({"type": "base64", "media_type": "image/png", "data": 'x" onerror="alert(1)'}).text == ""
    big = image_block({"type": "base64", "media_type": "image/png", "data": "A" * (MAX_THUMBNAIL_CHARS + 4)})
    assert big.text == "" and big.truncated_from == MAX_THUMBNAIL_CHARS + 4


KEY = "sk-ant-api03-" + "Q" * 40  # a credential shape --redact masks only whole


def test_a_title_or_search_prompt_never_keeps_part_of_a_word() -> None:
    from agenthropic_site.parse.fields import clip_words
    from agenthropic_site.parse.session import TITLE_MAX_CHARS, trim_title

    prompt = "deploy   the\nservice " * 5 + KEY + " and more words after it"
    flat = " ".join(prompt.split())
    assert flat.index(KEY) < TITLE_MAX_CHARS < flat.index(KEY) + len(KEY)  # the limit falls inside the key
    title = trim_title(prompt)
    assert title.endswith("…") and len(title) <= TITLE_MAX_CHARS and "sk-ant" not in title
    assert title[:-1] == " ".join(prompt.split()[: len(title[:-1].split())])  # whole words, whitespace collapsed
    assert trim_title("short title") == "short title"
    assert clip_words(prompt, 1_000) == (" ".join(prompt.split()), False)
    kept, cut = clip_words(KEY + " tail", 10)  # a first word longer than the limit is the one thing cut
    assert (kept, cut) == (KEY[:10], True)


def test_a_stored_block_cut_at_the_cap_leaves_a_credential_out_whole() -> None:
    from agenthropic_site.parse.messages import MAX_BLOCK_CHARS, _cut

    text = "x" * (MAX_BLOCK_CHARS - 20) + " " + KEY + " " + "y" * 100
    stored, original = _cut(text)
    assert original == len(text) and stored == "x" * (MAX_BLOCK_CHARS - 20) + " "
    unbroken = "z" * (MAX_BLOCK_CHARS + 50)  # no word start near the cap: cut where it falls
    assert _cut(unbroken) == ("z" * MAX_BLOCK_CHARS, len(unbroken))
    at_space = "w" * MAX_BLOCK_CHARS + " rest"
    assert _cut(at_space) == ("w" * MAX_BLOCK_CHARS, len(at_space))


def test_a_large_tool_input_keeps_its_structure_and_cuts_its_long_strings() -> None:
    from agenthropic_site.parse.messages import MAX_BLOCK_CHARS, blocks_of

    old, new = "old line\n" * 3_000, "new line\n" * 3_000
    edit = {"type": "tool_use", "id": "toolu_e", "name": "Edit", "input": {"file_path": "/repo/app.py", "old_string": old, "new_string": new}}
    ((block,), _) = blocks_of([edit])
    value = json.loads(block.text)  # still JSON: the page reads the path and both texts back
    assert len(block.text) <= MAX_BLOCK_CHARS and block.truncated_from == len(json.dumps(edit["input"], indent=2, sort_keys=True))
    assert value["file_path"] == "/repo/app.py"
    assert old.startswith(value["old_string"][:-1]) and value["old_string"].endswith("…")
    assert new.startswith(value["new_string"][:-1]) and value["new_string"].endswith("…")
    small = {"type": "tool_use", "id": "toolu_s", "name": "Bash", "input": {"command": "ls"}}
    ((kept,), _) = blocks_of([small])
    assert json.loads(kept.text) == {"command": "ls"} and kept.truncated_from is None
    many = {"type": "tool_use", "id": "toolu_m", "name": "X", "input": {"items": list(range(20_000))}}  # no string to shorten
    ((cut,), _) = blocks_of([many])
    assert len(cut.text) <= MAX_BLOCK_CHARS and cut.truncated_from is not None


def test_an_assistant_message_keeps_its_api_id_for_its_request_figures() -> None:
    parsed = parse(line(user("u1", "go")) + line(assistant("a1", "msg_1", "req_1", usage(1, 2))))
    messages = parsed.transcripts[SID]
    assert [(m.role, m.message_id) for m in messages] == [("user", None), ("assistant", "msg_1")]


def test_the_fuzz_harness_parses_its_inputs() -> None:
    """tests/fuzz/fuzz_parse.py (atheris, optional) must keep working: run its entry on a few inputs."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("fuzz_parse", Path(__file__).parent / "fuzz" / "fuzz_parse.py")
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    real = line(assistant("a1", "m1", "r1", usage(1, 2))) + line(user("u1", "hi"))
    for data in (b"", real, real + harness.MARKER + real + harness.MARKER + b'{"toolUseId": 1}', b"\xff\x00\x01{" * 50):
        harness.one_input(data)


@pytest.mark.parametrize(
    ("written", "normalised"),
    [
        ("2026-06-01T12:00:00Z", "2026-06-01T12:00:00.000Z"),
        ("2026-06-01T14:30:05.123456+02:00", "2026-06-01T12:30:05.123Z"),
        ("0999-06-01T00:00:00+05:00", "0999-05-31T19:00:00.000Z"),  # glibc's %Y would write 999
        ("0002-01-01T00:00:00", "0002-01-01T00:00:00.000Z"),
        ("9998-12-31T23:59:59.999Z", "9998-12-31T23:59:59.999Z"),
        # Outside EARLIEST_YEAR..LATEST_YEAR: a zone, a block or a week of them leaves datetime's years.
        ("0001-01-01T00:00:00", None),
        ("0002-01-01T03:00:00+05:30", None),  # 0001-12-31 in UTC
        ("9999-01-01T00:00:00.000Z", None),
    ],
)
def test_timestamps_normalise_to_the_canonical_utc_form(written: str, normalised: str | None) -> None:
    """Every timestamp comes out as UTC YYYY-MM-DDTHH:MM:SS.mmmZ with a four-digit year, so instants sort as text."""
    from agenthropic_site.parse.fields import CANONICAL_INSTANT_RE, instant_of

    assert instant_of(written) == normalised
    assert normalised is None or CANONICAL_INSTANT_RE.match(normalised)
