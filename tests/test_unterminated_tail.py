"""A last line without a newline is a record when it decodes; glued records are each read (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.pipeline.build import run_build
from agenthropic_site.parse import SessionInput, Tokens, TranscriptInput, parse_session
from agenthropic_site.parse.lines import MAX_SEAM_TRIES, decode_jsonl, decode_line
from agenthropic_site.parse.model import UsageRow
from agenthropic_site.parse.usage import Candidate, dedupe_file
from agenthropic_site.audit.verify import MAX_SEAMS, line_objects, rescan_file
from records import SID, assistant, line, usage, user, write
from conftest import session_pages
from test_incremental import assert_equals_cold_build, config

PROJECT = "-home-u-app"
MAIN = f"{PROJECT}/{SID}.jsonl"


def raw(record: dict) -> bytes:
    """One record's JSON without its newline."""
    return line(record)[:-1]


def decoded(data: bytes) -> tuple[list[tuple[int, dict]], list[tuple[int, str]], bool]:
    result = decode_jsonl("p/x.jsonl", data)
    return [(r.line, r.data) for r in result.records], [(e.line, e.code) for e in result.errors], result.pending


# -- decode_jsonl --------------------------------------------------------------------------------


def test_a_complete_last_line_without_a_newline_is_a_record() -> None:
    assert decoded(b'{"a":1}\n{"b":2}') == ([(1, {"a": 1}), (2, {"b": 2})], [], False)


def test_half_a_last_line_is_pending_not_an_error() -> None:
    assert decoded(b'{"a":1}\n{"b":') == ([(1, {"a": 1})], [], True)


def test_a_blank_last_piece_is_neither_pending_nor_a_record() -> None:
    assert decoded(b'{"a":1}\n  \t') == ([(1, {"a": 1})], [], False)


@pytest.mark.parametrize("tail", [b"[1,2]", b"42", b'"text"', b"null"])
def test_a_last_line_that_is_another_json_value_is_not_an_object(tail: bytes) -> None:
    assert decoded(b'{"a":1}\n' + tail) == ([(1, {"a": 1})], [(2, "not-an-object")], False)


def test_records_glued_on_one_line_are_each_read_with_that_line_number() -> None:
    data = b'{"a":1}\n{"b":2}{"c":3}{"d":4}\n{"e":5}\n'
    assert decoded(data) == ([(1, {"a": 1}), (2, {"b": 2}), (2, {"c": 3}), (2, {"d": 4}), (3, {"e": 5})], [], False)


def test_a_seam_inside_a_string_is_not_a_seam() -> None:
    first = {"t": "x}{y}{z", "n": {"m": "}{"}}
    second = {"u": "}{"}
    assert decoded(orjson.dumps(first) + orjson.dumps(second) + b"\n") == ([(1, first), (1, second)], [], False)


def test_glued_records_as_the_last_piece_are_records_and_glued_with_half_a_record_are_pending() -> None:
    assert decoded(b'{"a":1}{"b":2}') == ([(1, {"a": 1}), (1, {"b": 2})], [], False)
    assert decoded(b'{"a":1}{"b":') == ([], [], True)


@pytest.mark.parametrize(
    "bad",
    [b'{"a":1}{"b":', b'{"a":1}[2]', b'{"a":1} {"b":2}', b'{"a":1}{"b":"\\ud800"}', b'{"a":1}{"b":NaN}', b"{not}{json}", b'{"a":1}x'],
)
def test_a_line_that_is_not_objects_back_to_back_stays_invalid(bad: bytes) -> None:
    assert decoded(bad + b'\n{"z":0}\n') == ([(2, {"z": 0})], [(1, "invalid-json")], False)


def test_only_the_first_seams_of_a_line_are_tried() -> None:
    def glued(decoys: int) -> bytes:
        return orjson.dumps({"tex": "\\frac{a}{b}" * decoys}) + b'{"b":2}\n'

    # The real seam is the line's MAX_SEAM_TRIES-th `}{`: found, by the parser and by verify.
    assert len(decoded(glued(MAX_SEAM_TRIES - 1))[0]) == 2
    assert len(line_objects(glued(MAX_SEAM_TRIES - 1))) == 2
    # One decoy more and it is the first seam past the bound: the line stays an error.
    assert decoded(glued(MAX_SEAM_TRIES)) == ([], [(1, "invalid-json")], False)
    assert line_objects(glued(MAX_SEAM_TRIES)) == []
    assert MAX_SEAMS == MAX_SEAM_TRIES


def test_a_line_that_decodes_whole_is_never_split() -> None:
    assert decode_line(b'{"a":"}{"}') == [{"a": "}{"}]


# Strings of any text, or of the characters that make seams and decoys (`}{` inside a string).
texts = st.text(max_size=8) | st.text(st.sampled_from('{}[]":,\\ x'), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(texts, children, max_size=3),
    max_leaves=6,
)
objects = st.dictionaries(texts, json_values, max_size=3)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(objects, st.booleans()), min_size=1, max_size=8), st.booleans())
def test_any_mix_of_newlines_and_glued_records_reads_every_record_once(items: list[tuple[dict, bool]], final_newline: bool) -> None:
    data, expected, number = b"", [], 1
    for index, (value, glued_to_next) in enumerate(items):
        data += orjson.dumps(value)
        expected.append((number, value))
        if index < len(items) - 1 and not glued_to_next:
            data += b"\n"
            number += 1
    if any(piece.count(b"}{") > MAX_SEAM_TRIES for piece in data.split(b"\n")):
        return  # more decoys than the bound allows: covered by test_only_the_first_seams_of_a_line_are_tried
    records, errors, pending = decoded(data + (b"\n" if final_newline else b""))
    assert (records, errors, pending) == (expected, [], False)


# -- verify's own reader agrees with the parser --------------------------------------------------


def _parser_objects(piece: bytes) -> list:
    values = decode_line(piece)
    return [] if isinstance(values, str) else [value for value in values if isinstance(value, dict)]


@settings(max_examples=300, deadline=None)
@given(st.lists(objects, min_size=1, max_size=3), st.sampled_from([b"", b" ", b"x", b"{", b"}", b"[1]", b'"\\ud800"', b"NaN", b"\r", b"1e999"]),
       st.integers(0, 40))
@pytest.mark.slow
def test_verify_reads_a_line_as_the_parser_does(values: list[dict], junk: bytes, where: int) -> None:
    piece = b"".join(orjson.dumps(value) for value in values)
    for candidate in (piece, piece[:where] + junk + piece[where:], piece + junk):
        parser = _parser_objects(candidate)
        assert [value for value in line_objects(candidate) if isinstance(value, dict)] == parser


@pytest.mark.parametrize("piece", [b'{"a":"\\ud800"}', b'{"a":NaN}', b'{"a":-Infinity}', b'{"a":1e999}', b"\xef\xbb\xbf{}", b'{"a":"\xff"}'])
def test_verify_refuses_what_the_parser_refuses(piece: bytes) -> None:
    assert line_objects(piece) == [] and isinstance(decode_line(piece), str)


def test_verify_counts_the_unterminated_last_line_and_both_glued_id_less_records() -> None:
    first = assistant("a1", "m1", "r1", usage(1, 2))
    idless = [assistant(f"a{n}", "x", f"r{n}", usage(n * 10, n)) for n in (2, 3)]
    for record in idless:
        del record["message"]["id"]
    kept = rescan_file(line(first) + raw(idless[0]) + raw(idless[1]))
    assert sorted(counts for _, counts in kept.values()) == [(1, 2, 0, 0, 0), (20, 2, 0, 0, 0), (30, 3, 0, 0, 0)]


# -- the parser: counted, shown, linked ----------------------------------------------------------


def parse(main: bytes, *agents: TranscriptInput):
    return parse_session(SessionInput(SID, PROJECT, TranscriptInput(MAIN, main, "main"), tuple(agents)))


def test_glued_id_less_requests_are_two_requests() -> None:
    records = [assistant(f"a{n}", "x", f"r{n}", usage(n, 10 * n)) for n in (1, 2)]
    for record in records:
        del record["message"]["id"]
    parsed = parse(raw(records[0]) + raw(records[1]) + b"\n")
    assert [(row.line, row.tokens) for row in parsed.usage] == [(1, Tokens(input=1, output=10)), (1, Tokens(input=2, output=20))]


def test_dedupe_keeps_id_less_candidates_of_one_line_apart() -> None:
    def candidate(output: int) -> Candidate:
        return Candidate("main", None, None, "claude-sonnet-4-5", Tokens(output=output), None, None, "end_turn", "f", 7, None)

    rows = dedupe_file([candidate(5), candidate(3)])
    assert [row.tokens.output for row in rows] == [5, 3] and all(isinstance(row, UsageRow) for row in rows)


# -- builds: a finished transcript, and appends after each kind of tail ---------------------------

A = assistant("a1", "msg_A", "req_A", usage(1, 2), content=[{"type": "text", "text": "reply-A"}], ts="2026-01-01T10:00:01.000Z")
B = assistant("b1", "msg_B", "req_B", usage(10, 20), content=[{"type": "text", "text": "reply-B"}], ts="2026-01-01T10:00:02.000Z")
C = assistant("c1", "msg_C", "req_C", usage(100, 200), content=[{"type": "text", "text": "reply-C"}], ts="2026-01-01T10:00:03.000Z")


def session_doc(site: Path) -> dict:
    return json.loads((site / "data" / "sessions" / f"{SID}.json").read_bytes())


def main_path(corpus: Path) -> Path:
    return corpus / PROJECT / f"{SID}.jsonl"


def build_live(corpus: Path, tmp_path: Path):
    return run_build(config(corpus, tmp_path / "live", tmp_path / "cache"))


def test_a_finished_transcript_without_final_newlines_is_counted_shown_and_linked(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    spawn = assistant("s1", "msg_S", "req_S", usage(3, 4), stop="tool_use",
                      content=[{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "sub", "description": "d"}}])
    result = user("r1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sub done\nagentId: k1 (for resuming)"}]}],
                  ts="2026-01-01T10:00:05.000Z")
    # The spawn result that links k1 is the main file's last line; k1's last request is its file's.
    write(main_path(corpus), user("u1", "hello"), spawn, raw(result))
    last = assistant("k2", "msg_K", "req_K", usage(7, 9), content=[{"type": "text", "text": "sub-final-words"}], isSidechain=True, agentId="k1")
    write(corpus / PROJECT / SID / "subagents" / "agent-k1.jsonl", user("k0", "sub", isSidechain=True, agentId="k1"), raw(last))
    build_live(corpus, tmp_path)
    site = tmp_path / "live"
    doc = session_doc(site)
    agents = {agent["agent_id"]: agent for agent in doc["agents"]}
    assert agents["k1"]["parent_agent_id"] == SID and agents["k1"]["edge_source"] == "result_text_agent_id"
    assert agents["k1"]["tokens"]["input"] == 7 and agents["k1"]["tokens"]["output"] == 9
    assert doc["tokens"]["input"] == 10 and doc["tokens"]["output"] == 13
    assert doc["warnings"] == [] and doc["malformed_lines"] == 0
    assert "sub done" in session_pages(site, SID)
    assert b"sub-final-words" in (site / "sessions" / SID / "agents" / "k1.html").read_bytes()


def _append_case(tmp_path: Path, before: bytes, appended: bytes) -> tuple[dict, dict]:
    """Build `before`, append, build again; check the result equals a cold build; return both session docs."""
    corpus = tmp_path / "corpus"
    path = write(main_path(corpus), before)
    build_live(corpus, tmp_path)
    first = session_doc(tmp_path / "live")
    with path.open("ab") as handle:
        handle.write(appended)
    second = build_live(corpus, tmp_path)
    assert second.parsed == 1
    assert_equals_cold_build(corpus, tmp_path / "live", tmp_path)
    return first, session_doc(tmp_path / "live")


def test_a_newline_and_a_line_appended_after_a_complete_unterminated_line(tmp_path: Path) -> None:
    first, final = _append_case(tmp_path, line(A) + raw(B), b"\n" + line(C))
    assert (first["tokens"]["input"], first["warnings"]) == (11, [])
    assert (final["tokens"]["input"], final["tokens"]["output"], final["agents"][0]["requests"]) == (111, 222, 3)


def test_a_line_appended_right_after_a_complete_unterminated_line(tmp_path: Path) -> None:
    first, final = _append_case(tmp_path, line(A) + raw(B), line(C))
    assert first["tokens"]["input"] == 11
    assert (final["tokens"]["input"], final["tokens"]["output"], final["agents"][0]["requests"]) == (111, 222, 3)
    assert final["malformed_lines"] == 0 and final["warnings"] == []
    page = session_pages(tmp_path / "live", SID)
    assert all(text in page for text in ("reply-A", "reply-B", "reply-C"))


def test_half_a_line_is_pending_then_counted_once(tmp_path: Path) -> None:
    whole = raw(B)
    first, final = _append_case(tmp_path, line(A) + whole[:25], whole[25:] + b"\n")
    assert first["tokens"]["input"] == 1 and [w["code"] for w in first["warnings"]] == ["pending_last_line"]
    assert first["malformed_lines"] == 0
    assert (final["tokens"]["input"], final["agents"][0]["requests"], final["warnings"]) == (11, 2, [])
