"""A long transcript's message keys are taken from its last layout as far as its prefix memo holds, and are always the keys made one by one."""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from agenthropic_site.parse.model import Block, Message
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.render import pages, reader
from agenthropic_site.render.reader import Links
from agenthropic_site.render.transcript import Skeleton, TranscriptContext, TurnFigures, skeleton_of, skeletons_of
from fixtures.generate import generate_scale
from test_incremental import assert_equals_cold_build, config

Captured = tuple[list[Message], TranscriptContext, bytes]
CHANGES = ["nothing", "a turn grew", "a request is counted elsewhere", "a request's figures", "a request shown on another message", "an owner's link",
           "an agent's label", "an agent's link", "a call no longer spawns", "a result moves late", "a result arrives late", "a result is gone",
           "a stored message changed", "another zone"]


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Captured:
    """The longest transcript a build of a generated session lays out, with its context (links as tables) and stored digests."""
    tmp = tmp_path_factory.mktemp("prefix")
    generate_scale(tmp / "corpus", sessions=1, seed=3, session_kb=1500)  # spawns, results, turns
    seen: list[Captured] = []
    real = pages.lay_out

    def capturing(messages: list[Message], skeletons: list[Skeleton], context: TranscriptContext, *rest: Any) -> reader.Layout:
        if rest[1] is not None:
            seen.append((list(messages), _tabled(messages, context), rest[1]))
        return real(messages, skeletons, context, *rest)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pages, "lay_out", capturing)
        run_build(config(tmp / "corpus", tmp / "site", tmp / "cache"))
    messages, context, stored = max(seen, key=lambda item: len(item[0]))
    assert len(messages) > 150 and context.spawned and context.turns and context.results
    return messages, context, stored


def _tabled(messages: list[Message], context: TranscriptContext) -> TranscriptContext:
    """Replace a context's link functions by tables of the links its messages can ask for (so it can be changed and compared)."""
    owners = {figures.counted_in for figures in context.requests.values() if figures.counted_in} | {"elsewhere"}
    return dataclasses.replace(context, agent_href=Links({agent: context.agent_href(agent) for agent in context.spawned.values()}),
                               session_href=Links({owner: context.session_href(owner) for owner in owners}))


def _keys_one_by_one(messages: list[Message], context: TranscriptContext, stored: bytes) -> list[bytes]:
    return [reader.message_key(message, index, reader.narrowed(context, skeleton_of(message), index), stored) for index, message in enumerate(messages)]


def _lay_out(messages: list[Message], context: TranscriptContext, *rest: Any) -> reader.Layout:
    return reader.lay_out(messages, skeletons_of(messages), context, *rest)


def _keyed(messages: list[Message], context: TranscriptContext, stored: bytes, last: reader.Layout,
           monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], int]:
    """Lay a transcript out from the last layout and its memo, as a build does; return its keys and how many were made one by one."""
    made = [0]

    def counting(*args: Any) -> bytes:
        made[0] += 1
        return real_key(*args)

    monkeypatch.setattr(reader, "message_key", counting)
    try:
        layout = _lay_out(messages, context, reader.unpack_sizes(last.packed()), stored, last.packed(), last.prefix)
    finally:
        monkeypatch.setattr(reader, "message_key", real_key)
    return layout.keys, made[0]


def _small_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "PREFIX_MIN_MESSAGES", 20)
    monkeypatch.setattr(reader, "PREFIX_STEP", 8)


def test_an_append_keys_only_the_prompts_and_the_messages_after_the_memo(transcript: Captured, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_memos(monkeypatch)
    messages, context, stored = transcript
    shorter = len(messages) - 5
    before = dataclasses.replace(context, results={key: value for key, value in context.results.items() if value[0] < shorter},
                                 turns={index: turn for index, turn in context.turns.items() if index < shorter})
    last = _lay_out(messages[:shorter], before, None, stored[: shorter * reader.STORED_DIGEST_BYTES])
    covered = int.from_bytes(last.prefix[:4], "big")
    assert covered > 0 and covered % reader.PREFIX_STEP == 0 and covered < shorter
    keys, made = _keyed(messages, context, stored, last, monkeypatch)
    assert keys == _keys_one_by_one(messages, context, stored)
    late = {call for call, (at, _) in context.results.items() if at >= covered}
    again = {index for index in context.turns if index < covered}
    again |= {index for index, message in enumerate(messages[:covered]) if any(block.tool_use_id in late for block in message.blocks)}
    assert made == len(again) + len(messages) - covered < len(messages) // 2


def _changes(messages: list[Message], context: TranscriptContext, stored: bytes) -> dict[str, tuple[TranscriptContext, bytes]]:
    """Each way what a message's key is made of can change in a transcript's first messages, as (context, stored digests).

    "a result moves late": a call's result, shown early, is now after the memo; "a result arrives
    late" is that state after one without the result (`_before`).
    """
    prompt = min(context.turns)
    request = _early_request(messages, context)
    call = min(context.spawned, key=lambda call: context.results.get(call, (len(messages), None))[0])
    agent = context.spawned[call]
    result_call, (_, result_block) = _first_result(context)
    figures = context.requests[request]
    return {
        "nothing": (context, stored),
        "a turn grew": (dataclasses.replace(context, turns={**context.turns, prompt: TurnFigures(1, context.turns[prompt].tokens, Decimal("99"))}), stored),
        "a request is counted elsewhere": (_counted_elsewhere(messages, context), stored),
        "a request's figures": (dataclasses.replace(context, requests={**context.requests, request: dataclasses.replace(figures, cost=Decimal("7"))}), stored),
        "a request shown on another message": (dataclasses.replace(context, request_at={**context.request_at, request: len(messages) - 1}), stored),
        "an owner's link": (dataclasses.replace(_counted_elsewhere(messages, context), session_href=Links({**context.session_href, "elsewhere": "moved.html"})),
                            stored),
        "an agent's label": (dataclasses.replace(context, agent_labels={**context.agent_labels, agent: "renamed"}), stored),
        "an agent's link": (dataclasses.replace(context, agent_href=Links({**context.agent_href, agent: "moved.html"})), stored),
        "a call no longer spawns": (dataclasses.replace(context, spawned={key: value for key, value in context.spawned.items() if key != call}), stored),
        "a result moves late": (dataclasses.replace(context, results={**context.results, result_call: (len(messages) - 1, result_block)}), stored),
        "a result arrives late": (dataclasses.replace(context, results={**context.results, result_call: (len(messages) - 1, result_block)}), stored),
        "a result is gone": (dataclasses.replace(context, results={key: value for key, value in context.results.items() if key != result_call}), stored),
        "a stored message changed": (context, stored[:16] + bytes(16) + stored[32:]),
        "another zone": (dataclasses.replace(context, zone=ZoneInfo("Asia/Tokyo")), stored),
    }


def _early_request(messages: list[Message], context: TranscriptContext) -> str:
    return next(message.message_id for message in messages[:20] if message.message_id in context.requests)


def _counted_elsewhere(messages: list[Message], context: TranscriptContext) -> TranscriptContext:
    request = _early_request(messages, context)
    return dataclasses.replace(context, requests={**context.requests, request: dataclasses.replace(context.requests[request], counted_in="elsewhere")})


def _first_result(context: TranscriptContext) -> tuple[str, tuple[int, Block]]:
    return min(context.results.items(), key=lambda item: item[1][0])


def _before(change: str, messages: list[Message], context: TranscriptContext) -> TranscriptContext:
    """The context the last layout was made from: the one given, but for two changes.

    "a result arrives late": without its first result; "an owner's link": with an early request counted elsewhere.
    """
    if change == "an owner's link":
        return _counted_elsewhere(messages, context)
    if change != "a result arrives late":
        return context
    call = _first_result(context)[0]
    return dataclasses.replace(context, results={key: value for key, value in context.results.items() if key != call})


@pytest.mark.parametrize("change", CHANGES)
def test_keys_taken_from_the_last_layout_are_the_keys_made_one_by_one(transcript: Captured, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    _small_memos(monkeypatch)
    messages, context, stored = transcript
    last = _lay_out(messages, _before(change, messages, context), None, stored)
    changed, digests = _changes(messages, context, stored)[change]
    expected = _keys_one_by_one(messages, changed, digests)
    keys, made = _keyed(messages, changed, digests, last, monkeypatch)
    assert keys == expected
    if change in ("nothing", "a turn grew", "a result arrives late"):
        assert made < len(messages) // 2  # taken from the last layout, but for the messages that changed
    if change != "nothing":
        assert expected != last.keys  # the change reaches a key
    if change == "a result arrives late":
        assert made <= len(context.turns) + 2 + len(messages) % reader.PREFIX_STEP + reader.PREFIX_STEP  # the call's message keyed again


def test_random_changes_never_take_a_key_that_differs(transcript: Captured, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any two states of a transcript: the keys of the second, from the first's layout and memo, are its keys made one by one."""
    _small_memos(monkeypatch)
    messages, context, stored = transcript
    changes = list(_changes(messages, context, stored).values())
    chooser = random.Random(18)
    states = [(messages, context, stored)]
    for _ in range(40):
        changed, digests = chooser.choice(changes)
        length = chooser.randrange(len(messages) // 2, len(messages) + 1)
        states.append((messages[:length], changed, digests[: length * reader.STORED_DIGEST_BYTES]))
    for (old_messages, old_context, old_stored), (new_messages, new_context, new_stored) in zip(states, states[1:]):
        last = _lay_out(old_messages, old_context, None, old_stored)
        keys, _ = _keyed(new_messages, new_context, new_stored, last, monkeypatch)
        assert keys == _keys_one_by_one(new_messages, new_context, new_stored)


def test_a_transcript_without_stored_digests_or_too_short_keeps_no_memo(transcript: Captured, monkeypatch: pytest.MonkeyPatch) -> None:
    messages, context, stored = transcript
    monkeypatch.setattr(reader, "PREFIX_MIN_MESSAGES", len(messages) + 1)
    assert _lay_out(messages, context, None, stored).prefix == b""
    monkeypatch.setattr(reader, "PREFIX_MIN_MESSAGES", 20)
    assert len(_lay_out(messages, context, None, stored).prefix) == reader.PREFIX_MEMO_BYTES
    assert _lay_out(messages, context, None, None).prefix == b""  # masked (--redact): keyed by their text


def test_appends_to_a_long_transcript_build_the_site_a_cold_build_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole builds, each with the memo in the cache: replies and a new prompt appended, each build equal to a cold one, its keys mostly taken."""
    _small_memos(monkeypatch)
    corpus, out, cache = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache"
    generate_scale(corpus, sessions=1, seed=3, session_kb=1500)
    run_build(config(corpus, out, cache))
    (main,) = corpus.glob("*/*.jsonl")
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        memos = conn.execute("SELECT count(*) FROM layouts WHERE agent_id = ?", (pages.PREFIX + main.stem,)).fetchone()[0]
    assert memos == 1
    lines = main.read_bytes().splitlines(keepends=True)
    reply = next(line for line in reversed(lines) if b'"type":"assistant"' in line and b'"msg_' in line)
    prompt = next(line for line in lines if b'"type":"user"' in line and b'"tool_use_id"' not in line)
    for number, added in enumerate([reply, reply, prompt, reply]):
        tag = b"_added%d_" % number
        with main.open("ab") as handle:
            handle.write(added.replace(b'"msg_', b'"msg' + tag, 1).replace(b'"req_', b'"req' + tag, 1)
                         .replace(b'"uuid":"', b'"uuid":"added%d-' % number, 1))
        made: list[int] = []
        monkeypatch.setattr(reader, "lay_out", _counting_keys(monkeypatch, made))
        monkeypatch.setattr(pages, "lay_out", reader.lay_out)
        assert run_build(config(corpus, out, cache)).parsed == 1
        monkeypatch.setattr(pages, "lay_out", real_lay_out)
        assert 0 < len(made) < 50  # of the main transcript's 180-odd messages: prompts and the messages after the memo
        assert_equals_cold_build(corpus, out, tmp_path / f"cold{number}")


def _layout_rows(cache: Path) -> list[tuple[str, bytes]]:
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        return [(agent_id, bytes(sizes)) for agent_id, sizes in conn.execute("SELECT agent_id, sizes FROM layouts ORDER BY session_id, agent_id")]


def test_a_redact_build_leaves_no_memo_where_a_cold_one_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript laid out masked keeps no memo: its row goes, the layouts are a cold --redact build's; unmasked again, the memo comes back."""
    _small_memos(monkeypatch)
    corpus, out, cache = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache"
    generate_scale(corpus, sessions=1, seed=3, session_kb=1500)
    run_build(config(corpus, out, cache))
    memo = pages.PREFIX + next(corpus.glob("*/*.jsonl")).stem
    assert memo in dict(_layout_rows(cache))
    run_build(dataclasses.replace(config(corpus, out, cache), redact=True))
    run_build(dataclasses.replace(config(corpus, tmp_path / "cold", tmp_path / "cold-cache"), redact=True))
    assert memo not in dict(_layout_rows(cache))
    assert _layout_rows(cache) == _layout_rows(tmp_path / "cold-cache")
    run_build(config(corpus, out, cache))
    assert memo in dict(_layout_rows(cache))
    assert_equals_cold_build(corpus, out, tmp_path)


def _counting_keys(monkeypatch: pytest.MonkeyPatch, made: list[int]) -> Any:
    """Wrap lay_out to count the keys it makes one by one for a transcript of more than 150 messages (the main one)."""
    def counting(messages: list[Message], *rest: Any) -> reader.Layout:
        if len(messages) <= 150:
            return real_lay_out(messages, *rest)
        monkeypatch.setattr(reader, "message_key", lambda *args: made.append(args[1]) or real_key(*args))
        try:
            return real_lay_out(messages, *rest)
        finally:
            monkeypatch.setattr(reader, "message_key", real_key)

    return counting


real_lay_out, real_key = reader.lay_out, reader.message_key


def test_a_layout_narrows_each_message_it_keys_and_renders_once(transcript: Captured, monkeypatch: pytest.MonkeyPatch) -> None:
    """A message keyed and rendered in one layout (all of them, cold) is narrowed once, for both."""
    messages, context, stored = transcript
    narrowed: list[int] = []
    real = reader.narrowed
    monkeypatch.setattr(reader, "narrowed", lambda context, skeleton, index: narrowed.append(index) or real(context, skeleton, index))
    layout = _lay_out(messages, context, None, stored)
    assert sorted(narrowed) == list(range(len(messages))) and len(layout.fragments) == len(messages)
