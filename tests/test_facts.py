"""A long transcript read by the facts its last build kept (render/facts.py) is the transcript read whole, and decodes only what it renders."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agenthropic_site.cache import Cache, store
from agenthropic_site.cache.store import CacheDamaged, _sum
from agenthropic_site.parse.model import message_from_row
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.render import facts, pages, reader
from agenthropic_site.render.transcript import skeletons_of
from conftest import tree_bytes
from test_incremental import SESSION, assert_equals_cold_build, config, main_file


@pytest.fixture
def facts_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Have the demo's main transcripts (a few dozen messages) keep facts, in steps of 4."""
    monkeypatch.setattr(pages, "FACTS_MIN_MESSAGES", 1)
    monkeypatch.setattr(facts, "FACTS_STEP", 4)


def append_reply(corpus: Path, tag: str) -> None:
    """Append the main transcript's last reply again with new ids, as a live session does."""
    main = main_file(corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:
        handle.write(reply.replace(b'"msg_', b'"msg_%s_' % tag.encode(), 1).replace(b'"req_', b'"req_%s_' % tag.encode(), 1)
                     .replace(b'"uuid":"', b'"uuid":"%s-' % tag.encode(), 1) + b"\n")


def kept(cache: Path) -> bytes:
    """Return the facts the cache keeps for the demo's main session."""
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        ((packed,),) = conn.execute("SELECT sizes FROM layouts WHERE session_id = ? AND agent_id = ?", (SESSION, pages.FACTS + SESSION)).fetchall()
    return bytes(packed)


def test_a_transcript_read_by_its_facts_is_the_transcript_read_whole(demo_corpus: Path, tmp_path: Path, facts_kept: None) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    packed = kept(cache)
    for tag in ("one", "two"):  # rows after the facts, and a reply that goes on
        append_reply(demo_corpus, tag)
    run_build(config(demo_corpus, out, cache))
    with closing(Cache(cache)) as opened:
        messages, digests = opened.keyed_transcript(SESSION, SESSION)
        body = opened.transcript_body(SESSION, SESSION)
        assert body is not None and body.digests == digests
        read = facts.read_by_facts(body, packed)  # the last build's facts: they stand for the messages before the appends
        assert read is not None and len(read.stored or b"") == len(digests)
        assert 0 < facts.counted_in(packed) < len(messages) - 1
        assert list(read.messages) == messages and read.skeletons == skeletons_of(messages)
        assert read.ends == facts.row_ends(messages, body)
        assert facts.read_by_facts(body, packed[:4] + bytes(16) + packed[20:]) is None  # facts of other messages
        assert facts.read_by_facts(body, packed[:-1]) is None  # facts this code did not write
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_an_append_decodes_the_rows_after_the_facts_and_those_its_pages_show(demo_corpus: Path, tmp_path: Path, facts_kept: None,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_PAGE_MESSAGES", 4)  # the main transcript takes several pages: an append renders the last
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    decoded: list[Any] = []
    monkeypatch.setattr(facts, "message_from_row", lambda row: decoded.append(row[1]) or message_from_row(row))
    whole = store.Cache.keyed_transcript
    read_whole: list[str] = []
    monkeypatch.setattr(store.Cache, "keyed_transcript", lambda self, sid, agent_id: read_whole.append(agent_id) or whole(self, sid, agent_id))
    append_reply(demo_corpus, "appended")
    assert run_build(config(demo_corpus, out, cache)).parsed == 1
    assert SESSION not in read_whole
    with closing(Cache(cache)) as opened:
        count = len(whole(opened, SESSION, SESSION)[0])
    after_facts = count - facts.counted_in(kept(cache))
    # The rows after the facts (a step at most, and the new one), and those of the last page or two (4 messages shown each).
    assert after_facts <= facts.FACTS_STEP + 1 and 0 < len(decoded) <= after_facts + 8 < count // 2
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_facts_that_misplace_a_row_are_reported_and_derived_again(demo_corpus: Path, tmp_path: Path, facts_kept: None,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A row read where forged facts say it is does not have its message's digest: the damage is reported, the site is as a cold build's."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    packed = kept(cache)
    at = 20 + 8  # the second row's end
    forged = packed[:at] + (int.from_bytes(packed[at : at + 8], "big") + 1).to_bytes(8, "big") + packed[at + 8 :]  # a byte late
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn, conn:
        conn.execute("UPDATE layouts SET sizes = ?, sizes_sum = ? WHERE session_id = ? AND agent_id = ?",
                     (forged, _sum(SESSION, pages.FACTS + SESSION, forged), SESSION, pages.FACTS + SESSION))
    with closing(Cache(cache)) as opened:
        body = opened.transcript_body(SESSION, SESSION)
        assert body is not None
        read = facts.read_by_facts(body, forged)
        assert read is not None
        read.messages[0]  # its row is where the facts say
        with pytest.raises(CacheDamaged):
            read.messages[1]
    append_reply(demo_corpus, "after-forgery")  # the one page is rendered again: each of its rows is read
    capsys.readouterr()
    result = run_build(config(demo_corpus, out, cache))
    assert any("the stored transcript of an agent of session" in repair for repair in result.cache_repairs), result.cache_repairs
    # The session's rows and layouts are forgotten, not the whole cache: were the forged facts kept, each
    # attempt would meet them again until the cache were rebuilt from nothing, every session parsed.
    assert result.parsed == 1
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    site = tree_bytes(out)
    again = run_build(config(demo_corpus, out, cache))  # derived again for good: nothing to repair, nothing changed
    assert not again.cache_repairs and tree_bytes(out) == site
