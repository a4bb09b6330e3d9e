"""A scan carried on from a checkpoint gives the session a scan from byte 0 gives, wherever the transcripts were cut."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import random
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest

from agenthropic_site.cache import Cache, store
from agenthropic_site.cache.store import _sum
from agenthropic_site.corpus import scan_corpus
from agenthropic_site.parse import ParsedSession, SessionInput, TranscriptInput, parse_session
from agenthropic_site.parse import checkpoint
from agenthropic_site.parse.checkpoint import CannotResume
from agenthropic_site.parse.model import Block, Message, message_from_row, message_row
from agenthropic_site.pipeline import parsing
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.pipeline.parsing import ReadCount, load_session
from agenthropic_site.render import facts as render_facts
from agenthropic_site.render import pages
from conftest import DEMO_CORPUS, fuzz_harness, stored_bodies, tree_bytes
from fixtures.generate import generate_scale
from records import SID, assistant, line, usage, user
from test_incremental import assert_equals_cold_build, config, main_file

MAIN = f"p/{SID}.jsonl"


def sessions_of(corpus: Path) -> list[SessionInput]:
    """Read every session of a corpus as the build reads it (whole files)."""
    scan = scan_corpus(str(corpus.resolve()), 1 << 30, 8, lambda ref: None)
    return [load_session(scan.root, files, 1 << 30, ReadCount()).source for _, files in sorted(scan.sessions.items())]


def corpora(tmp_path: Path) -> list[Path]:
    generated = tmp_path / "generated"
    generate_scale(generated, sessions=3, seed=17, session_kb=300)  # spawns, results, compactions, multi-line replies
    shared = os.environ.get("AGENTHROPIC_SHARED_DIR")  # set by .ci/run: the real transcripts
    return [DEMO_CORPUS, generated, *(sorted((Path(shared) / "corpora").iterdir()) if shared else [])]


def cut_at_a_line(data: bytes, rng: random.Random) -> int:
    """Return where a random prefix of `data` ends: after one of its newlines, or (rarely) inside a line."""
    ends = [index + 1 for index, byte in enumerate(data) if byte == 0x0A]
    if not ends or rng.random() < 0.1:
        return rng.randint(0, len(data))
    return rng.choice([0, *ends])


def with_data(transcript: TranscriptInput, data: bytes, resume: bytes | None = None, chunks: dict[str, bytes] | None = None) -> TranscriptInput:
    return dataclasses.replace(transcript, data=data, resume=resume, resume_chunks=tuple((chunks or {}).items()))


def resumed_parse(source: SessionInput, rng: random.Random) -> tuple[ParsedSession, ParsedSession]:
    """Parse a prefix of every transcript, then the rest from the checkpoints; return (the prefix's parse, the carried-on parse)."""
    transcripts = [source.main, *source.agents]
    cuts = [cut_at_a_line(transcript.data, rng) for transcript in transcripts]
    prefix = dataclasses.replace(
        source, checkpoint=True, main=with_data(source.main, source.main.data[: cuts[0]]),
        agents=tuple(with_data(t, t.data[:cut]) for t, cut in zip(source.agents, cuts[1:])),
    )
    first = parse_session(prefix)
    ids = [source.session_id, *(t.agent_id or "" for t in source.agents)]

    def rest(transcript: TranscriptInput, agent_id: str, cut: int) -> TranscriptInput:
        state = first.scan_states.get(agent_id)
        return with_data(transcript, transcript.data[cut:], state, first.scan_chunks.get(agent_id)) if state is not None else transcript

    carried = dataclasses.replace(
        source, checkpoint=True, main=rest(source.main, ids[0], cuts[0]),
        agents=tuple(rest(t, agent_id, cut) for t, agent_id, cut in zip(source.agents, ids[1:], cuts[1:])),
    )
    return first, parse_session(carried)


def joined(first: ParsedSession, carried: ParsedSession) -> dict[str, list[Message]]:
    """Each agent's whole transcript: the messages stored after the first parse, then the tail's (the reply it went on replacing the last)."""
    whole = {}
    for agent_id in sorted(set(carried.transcripts) | set(carried.tails)):
        messages = carried.transcripts.get(agent_id, [])
        if agent_id in carried.tails:  # with no new bytes it is not in `transcripts`: what is stored stands
            before = first.transcripts[agent_id]
            whole[agent_id] = [*(before[:-1] if carried.tails[agent_id] and messages else before), *messages]
        else:
            whole[agent_id] = messages
    return whole


def comparable(parsed: ParsedSession) -> dict[str, Any]:
    fields = dataclasses.asdict(parsed)
    for name in ("transcripts", "tails"):
        fields.pop(name)
    return fields


@pytest.mark.parametrize("chunk", [checkpoint.CHUNK_ITEMS, 3])
def test_a_scan_carried_on_from_checkpoints_equals_one_from_byte_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Also with long lists kept in chunks of 3 items: the carried-on parse names the chunks a parse from byte 0 names."""
    monkeypatch.setattr(checkpoint, "CHUNK_ITEMS", chunk)
    rng = random.Random(5)
    sessions = resumed = chunked = 0
    for corpus in corpora(tmp_path):
        for source in sessions_of(corpus):
            whole = parse_session(dataclasses.replace(source, checkpoint=True))
            for _ in range(2):
                try:
                    first, carried = resumed_parse(source, rng)
                except CannotResume:
                    continue  # said, and the build reads the session from byte 0
                assert comparable(carried) == comparable(whole), source.session_id
                assert joined(first, carried) == whole.transcripts, source.session_id
                resumed += len(carried.tails)
                chunked += sum(map(len, first.scan_chunks.values()))
            sessions += 1
    assert sessions >= 10 and resumed >= 50, (sessions, resumed)
    assert chunked >= (100 if chunk == 3 else 0), chunked


def test_a_message_comes_back_from_its_stored_row_with_every_field() -> None:
    # Each field set to a value no other field has: a field read from another's place shows.
    blocks = (Block("tool_use", "the input", "Bash", "toolu_1", True, 9_001), Block("text", "words", None, None, False, None))
    message = Message("assistant", "uuid-1", "2026-05-01T10:00:00.000Z", blocks, "claude-x", True, "a subtype", "msg_1")
    assert message_from_row(orjson.loads(orjson.dumps(message_row(message)))) == message


def test_a_reply_cut_between_its_lines_goes_on_in_the_same_message() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    first_line = line(assistant("a1", "msg_1", "req_1", usage(5, 1), stop=None, content=[{"type": "text", "text": "Looking."}]))
    second_line = line(assistant("a2", "msg_1", "req_1", usage(5, 9), stop="tool_use", content=[call]))
    answer = line(user("u1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b"}], ts="2026-01-01T10:00:07.000Z"))
    main = TranscriptInput(MAIN, first_line, "main")
    first = parse_session(SessionInput(SID, "p", main, checkpoint=True))
    carried = parse_session(SessionInput(SID, "p", dataclasses.replace(main, data=second_line + answer, resume=first.scan_states[SID]),
                                         checkpoint=True))
    assert carried.tails == {SID: True}
    reply = carried.transcripts[SID][0]
    assert [block.kind for block in reply.blocks] == ["text", "tool_use"]
    assert carried.tool_calls[SID] == [["msg_1", "Bash", 0, carried.tool_calls[SID][0][3]]] and carried.tool_calls[SID][0][3] is not None
    assert [row.tokens.output for row in carried.usage] == [9]


def test_a_spawn_of_a_result_the_checkpoint_left_out_means_reading_from_byte_0() -> None:
    result = line(user("u1", [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "agentId: a1b2c3 done"}]))
    first = parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, result, "main"), checkpoint=True))
    spawn = {"type": "tool_use", "id": "toolu_9", "name": "Task", "input": {"prompt": "p", "description": "d"}}
    late = line(assistant("a1", "msg_1", "req_1", usage(1, 1), stop="tool_use", content=[spawn]))
    with pytest.raises(CannotResume):
        parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, late, "main", resume=first.scan_states[SID]), checkpoint=True))


@pytest.mark.parametrize("state", [b"", b"[]", b'{"format": 99}', b'{"format": 1}', b"\xff"])
def test_a_checkpoint_this_code_did_not_write_is_refused(state: bytes) -> None:
    with pytest.raises(CannotResume):
        parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, b"", "main", resume=state)))


def test_a_summariser_is_paired_by_its_chain_after_a_checkpoint() -> None:
    """The main transcript's record ids are kept: a compaction file pointing into its chain pairs with its boundary, not a closer one."""
    def boundary(uuid: str, ts: str, session: str = SID) -> dict[str, Any]:
        return {"type": "system", "subtype": "compact_boundary", "uuid": uuid, "timestamp": ts, "sessionId": session,
                "compactMetadata": {"trigger": "auto", "preTokens": 150000}}

    main = line(user("u-main", "hello", ts="2026-01-01T10:00:00.000Z")) + line(boundary("b-main", "2026-01-01T10:00:10.000Z"))
    other = TranscriptInput(f"p/{SID}/subagents/agent-a1.jsonl", line(user("u-a1", "go", ts="2026-01-01T10:00:00.000Z"))
                            + line(boundary("b-a1", "2026-01-01T10:00:10.200Z")), "subagents", "a1")
    summary = TranscriptInput(f"p/{SID}/subagents/agent-acompact-1.jsonl",
                              line(user("s1", "summarise", parent="u-main", ts="2026-01-01T10:00:10.250Z")), "subagents", "acompact-1")
    whole = parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, main, "main"), (other, summary)))
    assert [(c.agent_id, c.compaction_agent_id) for c in whole.compactions] == [(SID, "acompact-1"), ("a1", None)]
    first = parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, main, "main"), checkpoint=True))
    carried = parse_session(SessionInput(SID, "p", TranscriptInput(MAIN, b"", "main", resume=first.scan_states[SID]), (other, summary)))
    assert carried.compactions == whole.compactions


def last_reply(path: Path) -> dict[str, Any]:
    return json.loads(next(raw for raw in reversed(path.read_bytes().splitlines()) if b'"type":"assistant"' in raw and b'"usage"' in raw))


def retimed(data: bytes) -> bytes:
    """Change the first prompt's time by a second: the same size, another stored message."""
    line_at = data.index(b'"type":"user"')
    at = data.index(b'"timestamp":"', line_at) + len(b'"timestamp":"2026-01-01T00:00:0')
    return data[:at] + (b"7" if data[at:at + 1] != b"7" else b"8") + data[at + 1 :]


def rewritten(data: bytes) -> bytes:
    """Change the first output token count's first digit: the same size, another figure on the pages."""
    at = data.index(b'"output_tokens":') + len(b'"output_tokens":')
    return data[:at] + (b"7" if data[at:at + 1] != b"7" else b"8") + data[at + 1 :]


@pytest.mark.parametrize(("piece", "chunk", "apart", "facts"),
                         [(store.BODY_PIECE, checkpoint.CHUNK_ITEMS, parsing.PROVE_APART_BYTES, pages.FACTS_MIN_MESSAGES), (97, 3, 0, 1)])
def test_builds_carried_on_from_checkpoints_equal_cold_builds(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              piece: int, chunk: int, apart: int, facts: int) -> None:
    """Appends, a reply going on, a line written in two goes, rewrites, a cut, a new agent and one gone: each build equals a cold one.

    Also with bodies stored in pieces of 97 bytes (the demo's are shorter than a real piece): an append
    rewrites them from the one the splice falls in; with checkpoints' lists in chunks of 3 items; with
    every transcript's first bytes proved in a thread while the parse goes on (`PrefixProof`); and with
    the main transcript read by the facts its last layout kept (render/facts.py), whole only when they
    no longer stand for its first messages.
    """
    monkeypatch.setattr(parsing, "CHECKPOINT_MIN_BYTES", 0)  # every session keeps checkpoints
    monkeypatch.setattr(store, "BODY_PIECE", piece)
    monkeypatch.setattr(checkpoint, "CHUNK_ITEMS", chunk)
    monkeypatch.setattr(parsing, "PROVE_APART_BYTES", apart)
    monkeypatch.setattr(pages, "FACTS_MIN_MESSAGES", facts)
    monkeypatch.setattr(render_facts, "FACTS_STEP", 2 if facts == 1 else render_facts.FACTS_STEP)
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    main = main_file(demo_corpus)
    read_whole: list[str] = []  # the agents whose transcripts a build decoded whole
    keyed_transcript = store.Cache.keyed_transcript
    monkeypatch.setattr(store.Cache, "keyed_transcript", lambda self, sid, agent_id: read_whole.append(agent_id) or keyed_transcript(self, sid, agent_id))
    # Ordinary subagents (their requests are counted as their own), smallest first.
    agents = sorted((path for path in main.with_suffix("").rglob("agent-*.jsonl") if not re.search(r"compact|aside|suggestion", path.name)),
                    key=lambda path: path.stat().st_size)
    reply = last_reply(main)

    def append(path: Path, data: bytes) -> None:
        with path.open("ab") as handle:
            handle.write(data)

    def new_reply(suffix: str, content: list[Any] | None = None, same_message: bool = False) -> bytes:
        record = json.loads(json.dumps(reply))
        record["uuid"], record["requestId"] = f"carried-{suffix}", f"req_carried_{suffix}"
        if not same_message:
            record["message"]["id"] = f"msg_carried_{suffix}"
        record["timestamp"] = "2026-05-30T12:00:00.000Z"
        if content is not None:
            record["message"]["content"] = content
        return line(record)

    call = {"type": "tool_use", "id": "toolu_carried", "name": "Bash", "input": {"command": "ls"}}
    # (what, change, transcripts the build opens); with facts kept, a build after one marked * decodes the main transcript whole:
    # one of the messages its facts cover is no longer as stored (a rewrite of figures changes no stored message).
    steps: list[tuple[str, Any, int]] = [
        ("a reply appended to the main transcript", lambda: append(main, new_reply("1")), 1),
        ("the same reply going on in a second line", lambda: append(main, new_reply("2", [call], same_message=True)), 1),
        ("its result", lambda: append(main, line(user("carried-r", [{"type": "tool_result", "tool_use_id": "toolu_carried", "content": "x"}],
                                                       ts="2026-05-30T12:00:03.000Z"))), 1),
        # Its first bytes are not those of its checkpoint: it is parsed from byte 0, from the bytes read once.
        ("the main transcript's first reply rewritten and a reply appended", lambda: main.write_bytes(rewritten(main.read_bytes()) + new_reply("4")), 1),
        ("half a line in an agent's file", lambda: append(agents[0], new_reply("3")[:40]), 1),
        ("the rest of it", lambda: append(agents[0], new_reply("3")[40:]), 1),
        # Read twice: its size is the one it was parsed at, so its bytes are compared first (ingest.py _same_bytes_adopted).
        ("an agent's file rewritten at the same size", lambda: agents[1].write_bytes(rewritten(agents[1].read_bytes())), 2),
        ("the main transcript cut by a line", lambda: main.write_bytes(b"".join(main.read_bytes().splitlines(keepends=True)[:-1])), 1),
        ("the main transcript's first prompt's time rewritten *", lambda: main.write_bytes(retimed(main.read_bytes())), 2),
        ("a new agent file", lambda: (agents[0].parent / "agent-acarried.jsonl").write_bytes(agents[0].read_bytes()), 1),
        ("an agent's file and its sidecar removed", lambda: [path.unlink() for path in (agents[2], agents[2].with_suffix(".meta.json"))
                                                             if path.exists()], 0),
        ("the new agent file removed (nothing else names its agent)", lambda: (agents[0].parent / "agent-acarried.jsonl").unlink(), 0),
    ]
    for what, change, opened in steps:
        change()
        read_whole.clear()
        result = run_build(config(demo_corpus, out, cache))
        assert result.transcripts_opened == opened, what
        assert (main.stem in read_whole) == (facts > 1 or what.endswith("*")), what
        cold = tmp_path / f"cold-{len(list(tmp_path.glob('cold-*')))}"
        shutil.copytree(demo_corpus, cold / "corpus")
        run_build(config(cold / "corpus", cold / "site", cold / "cache"))
        assert tree_bytes(out) == tree_bytes(cold / "site"), what
        assert stored_bodies(cache) == stored_bodies(cold / "cache"), what
        # Written row by row where they changed (Cache._write_rows), and the bodies from the piece a splice falls in, with their checksums.
        for table in ("agents", "orchestration_edges", "compactions", "transcripts", "transcript_pieces"):
            assert table_rows(cache, table) == table_rows(cold / "cache", table), (what, table)
        assert kept_facts(cache) == kept_facts(cold / "cache") and bool(kept_facts(cache)) == (facts == 1), what
        assert table_rows(cache, "checkpoint_chunks") == stored_chunks(cache), what  # only those the checkpoints name, each as named
        assert_digests_are_of_the_stored_rows(cache)  # spliced (a reply going on replaces the last) as written whole


def built_in_pieces(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str, bytes]:
    """Build a corpus whose sessions keep checkpoints and bodies in pieces of 100 bytes; return the site, the cache, the main session and its stored body."""
    monkeypatch.setattr(parsing, "CHECKPOINT_MIN_BYTES", 0)
    monkeypatch.setattr(store, "BODY_PIECE", 100)
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(corpus, out, cache))
    sid = main_file(corpus).stem
    return out, cache, sid, stored_bodies(cache)[(sid, sid)]


def test_an_append_writes_a_stored_body_again_only_from_the_piece_it_changes(demo_corpus: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out, cache, sid, before = built_in_pieces(demo_corpus, tmp_path, monkeypatch)
    written: list[tuple[str, int, int]] = []
    events: list[str] = []
    put_body, stored_body, write_session = store.Cache._put_body, store.Cache._stored_body, store.Cache.write_session

    def counted(self: Cache, session_id: str, agent_id: str, pieces: list[tuple[int, memoryview, str]], digests: bytes, body_sum: str,
                first: int) -> None:
        written.append((agent_id, first, sum(len(data) for _, data, _ in pieces)))
        put_body(self, session_id, agent_id, pieces, digests, body_sum, first)

    def read(self: Cache, *args: Any) -> bytearray | None:
        events.append("a whole body read")
        return stored_body(self, *args)

    def writing(self: Cache, *args: Any, **kwargs: Any) -> Any:
        events.append("write")
        try:
            return write_session(self, *args, **kwargs)
        finally:
            events.append("written")

    monkeypatch.setattr(store.Cache, "_put_body", counted)
    monkeypatch.setattr(store.Cache, "_stored_body", read)
    monkeypatch.setattr(store.Cache, "write_session", writing)
    ask_again(demo_corpus, "pieces-late", "and one more")
    run_build(config(demo_corpus, out, cache))
    ((agent_id, unchanged, size),) = written
    after = stored_bodies(cache)[(sid, sid)]
    # Only the main transcript is written, and only from the piece its last byte of old messages falls in.
    assert agent_id == sid and unchanged == (len(before) - 1) // 100 and unchanged * 100 + size == len(after) > len(before)
    # Written without reading the stored body whole (only the piece it changes); the render reads it, checked.
    assert events == ["write", "written", "a whole body read"]
    assert after[: unchanged * 100] == before[: unchanged * 100]
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    assert_digests_are_of_the_stored_rows(cache)


def test_a_damaged_piece_an_append_does_not_read_is_found_when_the_page_reads_it(demo_corpus: Path, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An append checks the checksums of the pieces it keeps, not their bytes: the render reads them, finds the flipped byte; the session is derived again."""
    out, cache, sid, before = built_in_pieces(demo_corpus, tmp_path, monkeypatch)
    assert len(before) > 300  # pieces 0 and 1 stand whole after the append
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn, conn:
        ((data,),) = conn.execute("SELECT bytes FROM transcript_pieces WHERE session_id = ? AND agent_id = ? AND piece = 1", (sid, sid))
        flipped = bytearray(data)
        flipped[50] ^= 0x20  # a letter's case, or another character: the piece's checksum no longer holds
        conn.execute("UPDATE transcript_pieces SET bytes = ? WHERE session_id = ? AND agent_id = ? AND piece = 1", (bytes(flipped), sid, sid))
    ask_again(demo_corpus, "pieces-damaged", "and one more")
    result = run_build(config(demo_corpus, out, cache))
    assert len(result.cache_repairs) == 1 and "the stored transcript of an agent of session" in result.cache_repairs[0]
    after = stored_bodies(cache)[(sid, sid)]
    assert after[100:200] == before[100:200] and after[:len(before) - 1] == before[:-1]  # derived again: the byte as it was
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    assert not run_build(config(demo_corpus, out, cache)).cache_repairs


def assert_digests_are_of_the_stored_rows(cache: Path) -> None:
    """Check that each stored transcript's message digests, spliced or written whole, are those of its stored rows, in order."""
    bodies = stored_bodies(cache)
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        digests = {(sid, agent_id): bytes(value) for sid, agent_id, value in conn.execute("SELECT session_id, agent_id, digests FROM transcripts")}
    assert digests.keys() == bodies.keys() and len(digests) > 5
    for key, body in bodies.items():
        assert digests[key] == b"".join(store.message_digest(orjson.dumps(row)) for row in orjson.loads(body)), key


def test_a_copied_corpus_keeps_its_checkpoints_and_the_next_append_opens_one_file(demo_corpus: Path, tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy is taken as it is (its bytes compared); its checkpoints take the copies' lstat, so an append opens only its file."""
    out, cache = built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    copy = tmp_path / "copy"
    shutil.copytree(demo_corpus, copy)
    assert run_build(config(copy, out, cache)).parsed == 0
    ask_again(copy, "after-the-copy", "and after the copy")
    appended = run_build(config(copy, out, cache))
    assert (appended.parsed, appended.transcripts_opened) == (1, 1)
    assert_equals_cold_build(copy, out, tmp_path)


def stored_chunks(cache: Path) -> list[tuple[Any, ...]]:
    """Return the chunk rows the stored checkpoints name, each with the bytes its digest names (as table_rows orders them)."""
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        named = set()
        for sid, rel, state in conn.execute("SELECT session_id, rel, state FROM scan_checkpoints"):
            for value in json.loads(state).values():
                if isinstance(value, dict) and "chunks" in value:
                    named |= {(sid, rel, digest) for digest in value["chunks"]}
        rows = conn.execute("SELECT * FROM checkpoint_chunks").fetchall()
    assert all(checkpoint.chunk_digest(data) == digest for _, _, digest, data in rows)
    return sorted((row for row in rows if row[:3] in named), key=repr) if {row[:3] for row in rows} == named else []


def kept_facts(cache: Path) -> list[tuple[Any, ...]]:
    """Return the facts of long transcripts the cache keeps beside their layouts (render/facts.py)."""
    return [row for row in table_rows(cache, "layouts") if row[1].startswith(pages.FACTS)]


def table_rows(cache: Path, table: str) -> list[tuple[Any, ...]]:
    """Return every row of a cache's table, in order."""
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        return sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def test_an_append_writes_only_the_rows_it_changes(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session parsed again keeps every stored agent, edge and file row that is as it was (its rowid too): they are not written again."""
    out, cache = built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    tables = {"agents": "agent_id", "orchestration_edges": "parent, child", "parsed_files": "rel"}

    def stored() -> dict[str, dict[tuple[Any, ...], int]]:
        with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
            return {table: {row[1:]: row[0] for row in conn.execute(f"SELECT rowid, * FROM {table} ORDER BY {order}")}
                    for table, order in tables.items()}

    before = stored()
    main = ask_again(demo_corpus, "rows-kept", "one more")
    assert run_build(config(demo_corpus, out, cache)).parsed == 1
    after = stored()
    for table in tables:
        kept = set(before[table]) & set(after[table])  # rows with the same values before and after
        assert len(kept) >= len(before[table]) - 2 and len(kept) > 5, table
        assert {row: after[table][row] for row in kept} == {row: before[table][row] for row in kept}, table
    sid = main.stem
    assert any(row[0] == sid and row[1] == sid for row in set(after["agents"]) - set(before["agents"]))  # the main agent's row changed
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def built_with_checkpoints(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Build the corpus into tmp_path's site and cache with every session keeping checkpoints, their lists in chunks of 3; return (site, cache)."""
    monkeypatch.setattr(parsing, "CHECKPOINT_MIN_BYTES", 0)
    monkeypatch.setattr(checkpoint, "CHUNK_ITEMS", 3)
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(corpus, out, cache))
    return out, cache


def ask_again(corpus: Path, uuid: str, text: str) -> Path:
    """Append a prompt to the demo session's main transcript; return that transcript."""
    main = main_file(corpus)
    with main.open("ab") as handle:
        handle.write(line(user(uuid, text, ts="2026-05-30T12:00:00.000Z")))
    return main


@pytest.mark.parametrize("apart", [parsing.PROVE_APART_BYTES, 0], ids=["proved-inline", "proved-in-a-thread"])
@pytest.mark.parametrize("damage", ["UPDATE scan_checkpoints SET state = CAST('{}' AS BLOB)",
                                    "UPDATE scan_checkpoints SET scanned_digest = '00'",
                                    "UPDATE transcripts SET body_sum = 'x'",
                                    "UPDATE checkpoint_chunks SET bytes = CAST('[]' AS BLOB)",
                                    "DELETE FROM checkpoint_chunks"])
def test_a_checkpoint_not_as_written_is_not_used(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, apart: int) -> None:
    """A checkpoint whose checksum fails, or whose transcript changed since, is passed over: the file is read whole."""
    out, cache = built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    monkeypatch.setattr(parsing, "PROVE_APART_BYTES", apart)
    connection = sqlite3.connect(cache / "cache.sqlite3")
    with connection:
        connection.execute(damage + " WHERE session_id = ?", (main_file(demo_corpus).stem,))
    connection.close()
    ask_again(demo_corpus, "carried-late", "one more question")
    result = run_build(config(demo_corpus, out, cache))
    assert result.transcripts_opened > 1
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    assert stored_chunks(cache)  # the chunks named are there again, each as named


def test_a_forged_checkpoint_that_misleads_the_scan_means_reading_from_byte_0(demo_corpus: Path, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A state whose checksum holds but whose values are of the wrong kind (a hand-edited cache) fails no session, its proof in a thread."""
    out, cache = built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    monkeypatch.setattr(parsing, "PROVE_APART_BYTES", 0)
    connection = sqlite3.connect(cache / "cache.sqlite3")
    with connection:
        for rowid, *values in connection.execute("SELECT rowid, session_id, rel, agent_id, size, mtime_ns, inode, scanned, scanned_digest, "
                                                 "body_sum, body_len, body_last, state FROM scan_checkpoints").fetchall():
            state = json.loads(values[-1])
            state["lines"] = "many"
            values[-1] = json.dumps(state).encode()
            connection.execute("UPDATE scan_checkpoints SET state = ?, row_sum = ? WHERE rowid = ?", (values[-1], _sum(*values), rowid))
    connection.close()
    ask_again(demo_corpus, "forged-late", "and then?")
    result = run_build(config(demo_corpus, out, cache))
    assert result.failed == 0
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_a_worker_process_is_given_the_checkpoints_and_sends_back_what_the_cache_keeps(demo_corpus: Path, tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse task of worker processes carries a session's checkpoints and files parsed in, and the states, files read, checkpoints used and sidecars out."""
    built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    main = ask_again(demo_corpus, "worker-late", "one more")
    scan = scan_corpus(str(demo_corpus.resolve()), 1 << 30, 8, lambda ref: None)
    files = scan.sessions[main.stem]
    cache = Cache(tmp_path / "cache")
    try:
        checkpoints = cache.scan_checkpoints(main.stem)
        parsed_before = cache.parsed_files(main.stem)
    finally:
        cache.close()
    assert main.relative_to(demo_corpus).as_posix() in checkpoints
    outcome = pickle.loads(pickle.dumps(parsing.run((scan.root, 1 << 30, None), (files, checkpoints, parsed_before))))  # as the pool sends it
    assert outcome.failure is None and outcome.opened == 1
    metas = [agent.meta.rel for agent in files.agents if agent.meta is not None]
    assert metas and outcome.sidecars == {rel: (demo_corpus / rel).read_bytes() for rel in metas}
    assert outcome.parsed.tails and set(outcome.used) == set(outcome.parsed.tails)
    assert set(outcome.parsed.scan_states) == {agent.agent_id for agent in outcome.parsed.agents if agent.file}
    assert outcome.scanned[main.relative_to(demo_corpus).as_posix()].scanned == main.stat().st_size


def test_a_small_session_keeps_checkpoints_once_it_changes_and_its_next_append_opens_one_file(demo_corpus: Path, tmp_path: Path) -> None:
    """Below CHECKPOINT_MIN_BYTES a cold build keeps no checkpoint; a session parsed again is live, and carries on from then."""
    main = main_file(demo_corpus)
    sid = main.stem
    transcripts = 1 + len(list(main.with_suffix("").rglob("agent-*.jsonl")))
    assert transcripts > 2 and sum(path.stat().st_size for path in demo_corpus.rglob("*.jsonl")) < parsing.CHECKPOINT_MIN_BYTES
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))

    def kept() -> set[str]:
        with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
            return {row[0] for row in conn.execute("SELECT DISTINCT session_id FROM scan_checkpoints")}

    assert kept() == set()  # a cold build parses each session once: nothing kept
    ask_again(demo_corpus, "live-1", "first change")
    first = run_build(config(demo_corpus, out, cache))
    assert (first.parsed, first.transcripts_opened) == (1, transcripts)  # from byte 0, leaving checkpoints
    assert kept() == {sid}
    ask_again(demo_corpus, "live-2", "second change")
    second = run_build(config(demo_corpus, out, cache))
    assert (second.parsed, second.transcripts_opened) == (1, 1)  # only the grown transcript, from its checkpoint
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    assert_digests_are_of_the_stored_rows(cache)


def test_an_append_takes_the_sidecars_kept_and_a_changed_one_is_read(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sidecar whose lstat is the one parsed is taken from the cache, not opened; one that changed is read, and what it says is shown."""
    out, cache = built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    opened: list[str] = []
    read_bytes = parsing.read_bytes

    def counted(root: str, ref: Any, cap: int) -> bytes:
        opened.append(ref.rel)
        return read_bytes(root, ref, cap)

    monkeypatch.setattr(parsing, "read_bytes", counted)
    main = ask_again(demo_corpus, "sidecars-kept", "one more")
    metas = sorted(main.with_suffix("").rglob("agent-*.meta.json"))
    assert metas
    appended = run_build(config(demo_corpus, out, cache))
    assert (appended.parsed, opened) == (1, [main.relative_to(demo_corpus).as_posix()])

    opened.clear()
    said = json.loads(metas[0].read_bytes())
    metas[0].write_text(json.dumps({**said, "description": "Renamed by its sidecar"}))
    changed = run_build(config(demo_corpus, out, cache))
    assert (changed.parsed, opened) == (1, [metas[0].relative_to(demo_corpus).as_posix()])
    agent_id = metas[0].name[len("agent-") : -len(".meta.json")]
    shown = json.loads((out / "data" / "sessions" / f"{main.stem}.json").read_bytes())
    assert [agent["description"] for agent in shown["agents"] if agent["agent_id"] == agent_id] == ["Renamed by its sidecar"]
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_an_append_writes_only_the_checkpoint_chunks_it_changes(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole chunks of a checkpoint's long lists stay where they are stored (their rowid too); an append writes at most a new one a list.

    Nor are they encoded again: a chunk's digest is taken when it is checked as decoded, and when a new one is made.
    """
    out, cache = built_with_checkpoints(demo_corpus, tmp_path, monkeypatch)
    main = main_file(demo_corpus)
    rel = main.relative_to(demo_corpus).as_posix()

    def chunks(where: str = "rel = ?", args: tuple[str, ...] = (rel,)) -> dict[str, int]:
        with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
            return dict(conn.execute(f"SELECT digest, rowid FROM checkpoint_chunks WHERE {where}", args).fetchall())

    before = chunks()
    assert len(before) >= 10
    in_session = len(chunks("session_id = ?", (main.stem,)))
    digested: list[bytes] = []
    real = checkpoint.chunk_digest
    monkeypatch.setattr(checkpoint, "chunk_digest", lambda data: digested.append(data) or real(data))
    with main.open("ab") as handle:  # a reply, and the next prompt
        handle.write(line(assistant("chunk-a", "msg_chunk", "req_chunk", usage(2, 3), ts="2026-05-30T12:00:01.000Z")))
        handle.write(line(user("chunk-u", "and then?", ts="2026-05-30T12:00:02.000Z")))
    assert run_build(config(demo_corpus, out, cache)).transcripts_opened == 1
    after = chunks()
    assert {digest: after[digest] for digest in before} == before  # every chunk kept, as it was
    assert len(after) - len(before) <= 3  # candidates, record ids, results: at most one new whole chunk each
    assert len(digested) == in_session + len(after) - len(before)
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    assert stored_chunks(cache)


def test_the_resume_harness_compares_carried_on_parses_and_names_a_difference(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """tests/fuzz/resume_differential.py (runs longer than this file's) must keep working, and must see a carried-on parse that differs."""
    from agenthropic_site.parse.model import LineError

    harness = fuzz_harness("resume_differential")
    sources = sessions_of(DEMO_CORPUS)
    tally = harness.compare(sources, 600.0, 3, trials=40)
    assert tally.different == [] and tally.compared + tally.refused == 40 and tally.compared >= 30, tally
    assert harness.main([str(DEMO_CORPUS), "--trials", "10"]) == 0
    assert capsys.readouterr().out.endswith(" 0 different\n")

    def with_an_error_too_many(source: SessionInput, rng: random.Random) -> tuple[ParsedSession, ParsedSession]:
        first, carried = resumed_parse(source, rng)
        carried.line_errors.append(LineError(MAIN, 1, "invalid_json", "made up by the test"))
        return first, carried

    monkeypatch.setattr(harness, "resumed_parse", with_an_error_too_many)
    tally = harness.compare(sources, 600.0, 3, trials=10)
    assert tally.compared >= 5 and len(tally.different) == tally.compared, tally
    assert all(line.startswith("trial ") and line.endswith(": differs in line_errors") for line in tally.different), tally
    assert harness.main([str(DEMO_CORPUS), "--trials", "10"]) == 1
