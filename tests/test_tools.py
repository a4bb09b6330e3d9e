"""Tool calls are followed while messages are built: the same list as matching calls and results over the whole transcript."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.corpus import scan_corpus
from agenthropic_site.parse.messages import MessageBuilder
from agenthropic_site.parse.model import Message
from agenthropic_site.parse.tools import ToolTracker, instant_ms
from agenthropic_site.pipeline.parsing import read_and_parse
from conftest import DEMO_CORPUS
from fixtures.generate import generate_scale


def reference_tool_calls(messages: list[Message]) -> list[list[Any]]:
    """Match every call with the first result of its id anywhere in the transcript (the rule, written plainly)."""
    ms = instant_ms  # the time of a record, as the package reads it: what is tested here is the matching

    results: dict[str, tuple[bool, int | None]] = {}
    for message in messages:
        for block in message.blocks:
            if block.kind == "tool_result" and block.tool_use_id and block.tool_use_id not in results:
                results[block.tool_use_id] = (block.is_error, ms(message.timestamp))
    calls: list[list[Any]] = []
    seen: set[str] = set()
    for message in messages:
        called_at = ms(message.timestamp)
        for block in message.blocks:
            if block.kind != "tool_use" or not block.name:
                continue
            if block.tool_use_id:
                if block.tool_use_id in seen:
                    continue
                seen.add(block.tool_use_id)
            is_error, answered_at = results.get(block.tool_use_id or "", (False, None))
            elapsed = max(answered_at - called_at, 0) if answered_at is not None and called_at is not None else None
            calls.append([message.message_id, block.name, int(is_error), elapsed])
    return calls


IDS = st.sampled_from(["t1", "t2", "t3", "t4", ""])
TIMES = st.one_of(st.none(), st.just("not a time"), st.integers(0, 50).map(lambda s: f"2025-05-01T10:00:{s:02d}.000Z"))
BLOCK = st.one_of(
    st.builds(lambda i, n: {"type": "tool_use", "id": i or None, "name": n, "input": {}}, IDS, st.sampled_from(["Bash", "Read", ""])),
    st.builds(lambda i, e: {"type": "tool_result", "tool_use_id": i or None, "content": "x", "is_error": e}, IDS, st.booleans()),
    st.just({"type": "text", "text": "hi"}),
)
LINE = st.tuples(st.sampled_from(["assistant", "user"]), st.sampled_from(["m1", "m2", None]), TIMES, st.lists(BLOCK, max_size=4))


def build(lines: list[tuple[str, str | None, str | None, list[dict[str, Any]]]], builder: MessageBuilder) -> None:
    for role, message_id, at, content in lines:
        if role == "assistant":
            builder.add_assistant({"message": {"id": message_id, "content": content}}, at)
        else:
            builder.add_user({"message": {"content": content}}, at)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(LINE, max_size=12), cut=st.integers(0, 12))
def test_the_tracker_matches_calls_and_results_as_the_whole_transcript_does(lines: list[Any], cut: int) -> None:
    builder = MessageBuilder()
    build(lines[:cut], builder)
    # Carried through its state halfway, as a resumed scan carries it.
    builder.tools = ToolTracker.from_state(builder.tools.state())
    build(lines[cut:], builder)
    assert builder.tools.calls == reference_tool_calls(builder.messages)


def corpora() -> list[Path]:
    shared = os.environ.get("AGENTHROPIC_SHARED_DIR")  # set by .ci/run: the real transcripts
    return [DEMO_CORPUS, *(sorted((Path(shared) / "corpora").iterdir()) if shared else [])]


def test_every_transcript_of_the_corpora_gets_the_same_calls(tmp_path: Path) -> None:
    generated = tmp_path / "generated"
    generate_scale(generated, sessions=3, seed=11, session_kb=400)
    checked = 0
    for corpus in [*corpora(), generated]:
        scan = scan_corpus(str(corpus.resolve()), 1 << 30, 8, lambda ref: None)
        for files in scan.sessions.values():
            parsed = read_and_parse(scan.root, files, 1 << 30).parsed
            assert parsed is not None
            for agent_id, messages in parsed.transcripts.items():
                assert parsed.tool_calls[agent_id] == reference_tool_calls(messages), (files.session_id, agent_id)
                checked += len(parsed.tool_calls[agent_id])
    assert checked > 200  # the demo and the generated sessions alone make 276 calls
