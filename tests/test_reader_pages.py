"""Transcripts are read in bounded pages: stable page boundaries, an outline that lands, one page rewritten per append."""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import re
import shutil
import sqlite3
from contextlib import closing
from typing import Any
from pathlib import Path

import pytest

from agenthropic_site.cache import Cache
from agenthropic_site.parse.model import Message
from agenthropic_site.render import pages, reader
from agenthropic_site.render.transcript import Skeleton, TranscriptContext, render_message, skeletons_of
from conftest import DEMO_CORPUS
from fixtures.generate import generate_scale

from agenthropic_site.pipeline.build import run_build
from agenthropic_site.render.reader import MAX_PAGE_BYTES, MAX_PAGE_MESSAGES, PAGE_BOUND, paginate
from test_incremental import SESSION, assert_equals_cold_build, config, main_file

ANCHOR = re.compile(r'<a href="(transcript/\d+\.html)#(m\d+)"')


def test_pages_close_at_the_message_count_and_at_the_byte_bound() -> None:
    assert [len(page) for page in paginate([1] * (2 * MAX_PAGE_MESSAGES + 7))] == [MAX_PAGE_MESSAGES, MAX_PAGE_MESSAGES, 7]
    half = MAX_PAGE_BYTES // 2 + 1
    assert paginate([half, half, half]) == [[0], [1], [2]]
    assert paginate([MAX_PAGE_BYTES * 3]) == [[0]]  # one message per page at worst (the renderer keeps each under the bound)
    assert paginate([0, 5, 0, 0]) == [[0, 1, 2, 3]]  # messages that show nothing stay where they fall
    assert paginate([]) == [[]]


def test_an_append_never_moves_an_earlier_page_boundary() -> None:
    rng = random.Random(16)
    for _ in range(300):
        sizes = [rng.choice((0, 1, 100, MAX_PAGE_BYTES // 3, MAX_PAGE_BYTES)) for _ in range(rng.randrange(0, 40))]
        before = paginate(sizes)
        after = paginate(sizes + [rng.choice((0, 1, MAX_PAGE_BYTES // 2)) for _ in range(rng.randrange(1, 6))])
        assert after[: len(before) - 1] == before[:-1]
        assert after[len(before) - 1][: len(before[-1])] == before[-1]


def _inodes(site: Path) -> dict[str, int]:
    return {path.relative_to(site).as_posix(): path.stat().st_ino for path in site.rglob("*.html")} | {
        path.relative_to(site).as_posix(): path.stat().st_ino for path in site.rglob("*.js") if "search" in path.parts
    }


def test_the_outline_lands_on_its_prompts_and_an_append_rewrites_one_transcript_page(demo_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    session_page = (out / "sessions" / SESSION / "index.html").read_text()
    links = ANCHOR.findall(session_page)
    assert links, "the session page outlines its prompts"
    for page, anchor in links:
        target = (out / "sessions" / SESSION / page).read_text()
        assert f'id="{anchor}"' in target and 'class="msg user prompt' in target.split(f'id="{anchor}"')[0].rsplit("<li", 1)[-1]
    assert "<ol class=\"transcript\">" not in session_page  # the session page stays small: no transcript on it
    for path in out.rglob("*.html"):
        assert path.stat().st_size <= PAGE_BOUND, path
    before = _inodes(out)
    main = main_file(demo_corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:  # one more reply: a new request, at the end of the last turn
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    after = _inodes(out)
    rewritten = sorted(rel for rel in after if before.get(rel) != after[rel])
    session_files = [rel for rel in rewritten if rel.startswith(f"sessions/{SESSION}/")]
    pages = sorted((out / "sessions" / SESSION / "transcript").glob("*.html"), key=lambda path: int(path.stem))
    assert session_files == [f"sessions/{SESSION}/index.html", f"sessions/{SESSION}/transcript/{pages[-1].stem}.html"]
    assert f"search/s/{SESSION}.js" in rewritten
    assert not [rel for rel in rewritten if rel.startswith("sessions/") and not rel.startswith(f"sessions/{SESSION}/")]


def test_a_turn_costs_its_own_requests_once_and_the_subtree_of_every_agent_it_spawned() -> None:
    from decimal import Decimal

    from agenthropic_site.model.views import AgentView, RequestFigures
    from agenthropic_site.parse.model import Block, Message, Tokens
    from agenthropic_site.render.reader import turns_of

    def reply(message_id: str, *blocks: Block) -> Message:
        return Message(role="assistant", uuid=None, timestamp=None, blocks=blocks or (Block("text", "ok"),), message_id=message_id)

    def prompt(text: str) -> Message:
        return Message(role="user", uuid=None, timestamp=None, blocks=(Block("text", text),))

    messages = [
        prompt("first"),
        reply("msg_a", Block("tool_use", "{}", name="Bash", tool_use_id="toolu_0")),
        Message(role="user", uuid=None, timestamp=None, blocks=(Block("tool_result", "done", tool_use_id="toolu_0"),)),
        reply("msg_a"),  # the same request, written after its tool result: counted once
        reply("msg_b", Block("tool_use", "{}", name="Task", tool_use_id="toolu_1")),
        prompt("second"),
        reply("msg_copy"),  # a replayed copy counted in another session: not this turn's
        reply("msg_d"),
    ]
    requests = {
        "msg_a": RequestFigures(Tokens(input=10), Decimal("0.10")),
        "msg_b": RequestFigures(Tokens(output=20), Decimal("0.20")),
        "msg_copy": RequestFigures(Tokens(input=1000), Decimal("9"), counted_in="other"),
        "msg_d": RequestFigures(Tokens(output=5), Decimal("0.05")),
    }
    child = AgentView("agent-1", "main", "subagent", None, None, None, "completed", None, None, "toolu_1", None, None,
                      subtree_tokens=Tokens(input=100), subtree_cost=Decimal("1.00"))
    turns = turns_of(skeletons_of(messages), requests, {"toolu_1": "agent-1"}, {"agent-1": child}, excluded=False)
    assert sorted(turns) == [0, 5]
    assert (turns[0].number, turns[0].tokens, turns[0].cost) == (1, Tokens(input=110, output=20), Decimal("1.30"))
    assert (turns[5].number, turns[5].tokens, turns[5].cost) == (2, Tokens(output=5), Decimal("0.05"))
    unknown = turns_of(skeletons_of(messages), requests, {"toolu_1": "agent-1"}, {"agent-1": child}, excluded=True)
    assert unknown[0].cost is None and unknown[0].tokens == turns[0].tokens


def test_the_cumulative_cost_chart_links_to_the_turns(demo_site: Path) -> None:
    page = (demo_site / "sessions" / SESSION / "index.html").read_text()
    chart = page[page.index("<h2>Cumulative cost</h2>") :]
    marks = re.findall(r'<a class="mark" href="(transcript/\d+\.html#m\d+)"', chart[: chart.index("</svg>")])
    assert marks and set(marks) <= set(f"{page}#{anchor}" for page, anchor in ANCHOR.findall(page))


def _rendered(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.getMessage().startswith("render: ")]


def test_an_append_renders_the_pages_of_the_agents_it_touches_and_no_other(
    demo_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    agent_files = sorted(main_file(demo_corpus).with_suffix("").rglob("agent-*.jsonl"))
    assert len(agent_files) >= 2
    caplog.set_level(logging.DEBUG, logger="agenthropic_site.render.pages")
    loaded: list[str] = []
    real_transcript = pages.Renderer.transcript
    monkeypatch.setattr(pages.Renderer, "transcript", lambda self, sid, agent_id, masks: loaded.append(agent_id) or real_transcript(self, sid, agent_id, masks))
    for changed in (main_file(demo_corpus), agent_files[0]):
        caplog.clear()
        loaded.clear()
        lines = changed.read_bytes().splitlines()
        reply = next(line for line in reversed(lines) if b'"type":"assistant"' in line and b'"msg_' in line)
        with changed.open("ab") as handle:  # one more reply: a new request in this transcript only
            handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
        run_build(config(demo_corpus, out, tmp_path / "cache"))
        agents = sorted({line.split(":")[1].strip() for line in _rendered(caplog) if f"sessions/{SESSION}/agents/" in line})
        touched = [] if changed.name.startswith(SESSION) else [f"sessions/{SESSION}/agents/{changed.stem.removeprefix('agent-')}.html"]
        assert agents == touched, (changed.name, agents)
        # The search shard takes the other agents' rows from the last shard: no other transcript is read back.
        assert sorted(loaded) == sorted([SESSION, *(path.rsplit("/", 1)[1].removesuffix(".html") for path in touched)]), (changed.name, loaded)
        assert f"render: sessions/{SESSION}/index.html: its inputs changed" in _rendered(caplog)
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def _watch_reads(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Log what the renderer renders, and return the list of the agents whose transcripts it reads from now on."""
    caplog.set_level(logging.DEBUG, logger="agenthropic_site.render.pages")
    loaded: list[str] = []
    real_transcript = pages.Renderer.transcript
    monkeypatch.setattr(pages.Renderer, "transcript", lambda self, sid, agent_id, masks: loaded.append(agent_id) or real_transcript(self, sid, agent_id, masks))
    return loaded


def _agent_pages_rendered(caplog: pytest.LogCaptureFixture) -> list[str]:
    return sorted(line.split(":")[1].strip().rsplit("/", 1)[1] for line in _rendered(caplog) if f"sessions/{SESSION}/agents/" in line)


def _fresh_ids(record: dict[str, Any], agent_id: str | None, tag: str) -> dict[str, Any]:
    """Return a copy of a record (as another agent's, with `agent_id`), its own ids made new (`tag` in each) so that no file replays another."""
    record = {**record, "agentId": agent_id} if agent_id else dict(record)
    for key in ("uuid", "parentUuid"):
        if isinstance(record.get(key), str):
            record[key] = record[key][:-len(tag)] + tag
    if isinstance(record.get("requestId"), str):
        record["requestId"] += tag
    if isinstance(record.get("message"), dict) and isinstance(record["message"].get("id"), str):
        record["message"] = {**record["message"], "id": record["message"]["id"] + tag}
    return record


def _spawn_another(corpus: Path, like: str, new_agent: str) -> None:
    """Make the demo session spawn one more agent as it spawned `like`: the call and its result in the main transcript, then its own file."""
    main = main_file(corpus)
    records = [json.loads(line) for line in main.read_bytes().splitlines()]
    call_id = next(edge_call for edge_call in _call_ids(records) if like in json.dumps(_result_of(records, edge_call)))
    tag = "7e57e"
    added = []
    for record in records:
        if call_id in json.dumps(record):
            text = json.dumps(_fresh_ids(record, record.get("agentId"), tag)).replace(call_id, call_id + tag).replace(like, new_agent)
            added.append(json.loads(text))
    assert len(added) >= 2  # the call, and the result that names the agent
    with main.open("a") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in added)
    folder = main.with_suffix("") / "subagents"
    lines = (folder / f"agent-{like}.jsonl").read_bytes().splitlines()
    (folder / f"agent-{new_agent}.jsonl").write_text("".join(json.dumps(_fresh_ids(json.loads(line), new_agent, tag)) + "\n" for line in lines))
    (folder / f"agent-{new_agent}.meta.json").write_text(json.dumps({"agentType": "general-purpose", "description": "One more agent"}))


def _call_ids(records: list[dict[str, Any]]) -> list[str]:
    return [block["id"] for record in records for block in _blocks(record) if block.get("type") == "tool_use" and block.get("name") == "Agent"]


def _result_of(records: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [block for record in records for block in _blocks(record) if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id]


def _blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    content = record.get("message", {}).get("content") if isinstance(record.get("message"), dict) else None
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def test_a_new_agent_renders_its_page_and_no_other_agents(
    demo_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session that spawns one more agent renders that agent's page: the other agents' pages show nothing of it (issue 18).

    Before, every agent page of the session was rendered again: 797 pages, 3.0-3.5 s of a 60 MB session's build.
    """
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    loaded = _watch_reads(caplog, monkeypatch)
    _spawn_another(demo_corpus, "ae1edbb896130ba3a", "a0123456789abcdef")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    assert _agent_pages_rendered(caplog) == ["a0123456789abcdef.html"]
    assert sorted(loaded) == sorted([SESSION, "a0123456789abcdef"])
    assert "One more agent" in (out / "sessions" / SESSION / "index.html").read_text()
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_a_page_that_replays_a_spawn_call_shows_that_agent_as_it_is_now(
    demo_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A side question that replays a prompt and a spawn call counts the spawned agent in its turn: an append to that agent renders it again.

    Its page was kept before, showing the agent's spend as it was (its digest named no other agent's figures).
    """
    main = main_file(demo_corpus)
    records = [json.loads(line) for line in main.read_bytes().splitlines()]
    call = "toolu_01dc9RYlYuFDBtlgVzeLW8BK"  # the main agent's call that spawned a17674eb37aff16b3 (linked by its task notification)
    assert call in _call_ids(records)
    at = next(index for index, record in enumerate(records) if any(block.get("id") == call for block in _blocks(record)))
    prompt = next(record for record in reversed(records[:at]) if record.get("type") == "user" and isinstance(record["message"].get("content"), str))
    replay = "aside_question-ffff000000000001"
    replayed = [{**record, "isSidechain": True, "agentId": replay} for record in (prompt, records[at])]
    (main.with_suffix("") / "subagents" / f"agent-{replay}.jsonl").write_text("".join(json.dumps(record) + "\n" for record in replayed))
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    before = (out / "sessions" / SESSION / "agents" / f"{replay}.html").read_text()
    assert "incl. subagents" in before  # its turn counts the agent its replayed call spawned
    loaded = _watch_reads(caplog, monkeypatch)
    child = main.with_suffix("") / "subagents" / "agent-a17674eb37aff16b3.jsonl"
    reply = next(line for line in reversed(child.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with child.open("ab") as handle:
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    # The demo's compaction replays that call too, in no turn: its page shows the agent's name, not its spend, and stays.
    replaying = ["a17674eb37aff16b3", replay]
    assert _agent_pages_rendered(caplog) == sorted(f"{agent_id}.html" for agent_id in replaying)
    assert sorted(loaded) == sorted([SESSION, *replaying])
    assert (out / "sessions" / SESSION / "agents" / f"{replay}.html").read_text() != before
    assert_equals_cold_build(demo_corpus, out, tmp_path)


@pytest.mark.parametrize("memo", ["gone", "stale"])
def test_an_agent_whose_calls_are_not_kept_as_its_transcript_is_stored_is_read_to_learn_them(
    demo_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, memo: str,
) -> None:
    """Without its memo of calls, or with one made of another transcript, an agent's transcript is read: its page stays when nothing it shows changed."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn, conn:
        rows = conn.execute("SELECT agent_id, sizes FROM layouts WHERE session_id = ? AND agent_id LIKE ?", (SESSION, pages.CALLS + "%")).fetchall()
        assert len(rows) == 7  # every agent of the session with a transcript
        conn.execute("DELETE FROM layouts WHERE agent_id LIKE ?", (pages.CALLS + "%",))
    if memo == "stale":  # each memo sound, but made of another transcript (another checksum before the same calls)
        stale = Cache(cache)
        try:
            stale.put_layout_sizes({(SESSION, agent_id): b"0" + bytes(sizes) for agent_id, sizes in rows})
        finally:
            stale.close()
    loaded = _watch_reads(caplog, monkeypatch)
    append_reply = main_file(demo_corpus)
    lines = append_reply.read_bytes().splitlines()
    reply = next(line for line in reversed(lines) if b'"type":"assistant"' in line and b'"msg_' in line)
    with append_reply.open("ab") as handle:
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, cache))
    assert sorted(loaded) == sorted([SESSION, *(agent_id.removeprefix(pages.CALLS) for agent_id, _ in rows)])
    assert _agent_pages_rendered(caplog) == []  # read to learn its calls, each page kept: what it shows is the same
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        assert conn.execute("SELECT agent_id, sizes FROM layouts WHERE session_id = ? AND agent_id LIKE ?", (SESSION, pages.CALLS + "%")).fetchall() == rows
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_a_message_renders_the_same_from_its_narrowed_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages are rendered (and keyed) from what `narrowed` keeps: it must keep all they read."""
    checked = [0]
    real_lay_out = pages.lay_out

    real_whole = pages.lay_out_whole

    def check(messages: list[Message], skeletons: list[Skeleton], context: TranscriptContext) -> None:
        for index, message in enumerate(messages):
            assert render_message(message, index, reader.narrowed(context, skeletons[index], index)) == render_message(message, index, context)
            checked[0] += 1

    def checking(messages: list[Message], skeletons: list[Skeleton], context: TranscriptContext, *rest: Any) -> reader.Layout:
        check(messages, skeletons, context)
        return real_lay_out(messages, skeletons, context, *rest)

    def checking_whole(messages: list[Message], skeletons: list[Skeleton], context: TranscriptContext) -> reader.Layout:
        check(messages, skeletons, context)
        return real_whole(messages, skeletons, context)

    monkeypatch.setattr(pages, "lay_out", checking)
    monkeypatch.setattr(pages, "lay_out_whole", checking_whole)
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    generate_scale(corpus / "scale", sessions=2, seed=3, session_kb=300)  # spawns, results, copies counted elsewhere
    run_build(config(corpus, tmp_path / "site", tmp_path / "cache"))
    assert checked[0] > 400


def _layout_names(cache: Path) -> list[tuple[str, bytes]]:
    """Return the layout rows of the demo session's transcripts (their agent ids and sizes), none of the memos beside them."""
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        rows = conn.execute("SELECT agent_id, sizes FROM layouts WHERE session_id = ? ORDER BY agent_id", (SESSION,)).fetchall()
    return [(agent_id, bytes(sizes)) for agent_id, sizes in rows if agent_id[:1] not in (pages.CALLS, pages.PREFIX, pages.GRAPH, pages.SEARCH_PARTS)]


def test_a_transcript_shown_whole_on_its_agents_page_keeps_no_layout(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent page showing its whole transcript renders every message for it: none is keyed and no layout is kept (issue 18).

    One paged in the last build keeps its row until it is shown whole; then the row goes, as a cold build would have none.
    """
    monkeypatch.setattr(reader, "MAX_PAGE_MESSAGES", 4)  # the demo's longer agents are then paged, the others shown whole
    keyed: list[int] = []
    real_key = reader.message_key
    monkeypatch.setattr(reader, "message_key", lambda message, index, *rest: keyed.append(index) or real_key(message, index, *rest))
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    agents = out / "sessions" / SESSION / "agents"
    paged = {path.name for path in agents.iterdir() if path.is_dir()}
    whole = {path.stem for path in agents.glob("*.html")} - paged
    assert paged and whole
    assert {agent_id for agent_id, _ in _layout_names(cache)} == paged | {SESSION}
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        messages = sum(len(bytes(sizes)) for (sizes,) in conn.execute("SELECT sizes FROM layouts WHERE agent_id NOT GLOB '[#^.]*' AND agent_id != ''"))
    assert len(keyed) == messages // (reader.KEY_BYTES + 4)  # the paged transcripts' messages, each keyed once
    # A paged agent's transcript rewritten short enough for its page: its row goes.
    shortened = sorted(paged)[0]
    transcript = next(demo_corpus.rglob(f"agent-{shortened}.jsonl"))
    transcript.write_bytes(b"".join(transcript.read_bytes().splitlines(keepends=True)[:2]))
    run_build(config(demo_corpus, out, cache))
    assert not (agents / shortened).exists() and (agents / f"{shortened}.html").exists()
    assert shortened not in {agent_id for agent_id, _ in _layout_names(cache)}
    assert_equals_cold_build(demo_corpus, out, tmp_path)
    assert _layout_names(cache) == _layout_names(tmp_path / "cold-cache")


def test_an_append_renders_only_the_pages_it_changed(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_PAGE_MESSAGES", 4)  # the demo's main transcript then takes several pages
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    folder = out / "sessions" / SESSION / "transcript"
    before = {path.name: path.stat().st_ino for path in folder.glob("*.html")}
    assert len(before) >= 4
    rendered: list[int] = []
    real_fitting = reader._fitting
    monkeypatch.setattr(reader, "_fitting", lambda message, index, context: rendered.append(index) or real_fitting(message, index, context))
    main = main_file(demo_corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:  # a new request at the end of the last turn
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    numbered = sorted(folder.glob("*.html"), key=lambda path: int(path.stem))
    firsts = [min(int(index) for index in re.findall(r' id="m(\d+)"', path.read_text())) for path in numbered]
    firsts.append(firsts[-1] + 10_000)  # the last page runs to the end
    # Pages hold runs of messages: those that show nothing (results shown in their calls) stay on the page they fall on.
    on_page = {path.name: set(range(firsts[number], firsts[number + 1])) for number, path in enumerate(numbered)}
    rewritten = [path.name for path in numbered if before.get(path.name) != path.stat().st_ino]
    # The last page (the new reply), and the page of the prompt whose turn it joins; every message
    # rendered is on one of them: the others are measured from the last build's layout.
    assert 1 <= len(rewritten) <= 2 < len(before), rewritten
    assert rendered and set(rendered) <= set().union(*(on_page[name] for name in rewritten)), (sorted(set(rendered)), rewritten)
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_an_append_makes_the_search_rows_of_the_pages_it_changed_only(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main transcript's rows of the shard are kept page by page: the others come from the last shard, byte for byte."""
    monkeypatch.setattr(reader, "MAX_PAGE_MESSAGES", 4)  # the demo's main transcript then takes several pages
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    folder = out / "sessions" / SESSION / "transcript"
    pages_before = len(list(folder.glob("*.html")))
    assert pages_before >= 4
    made: list[list[int]] = []
    real_entries_of = pages.entries_of

    def recording(messages: list[Message], href_of: Any, indices: Any = None, calls: Any = None) -> Any:
        if indices and href_of(indices[0]).startswith(f"sessions/{SESSION}/transcript/"):
            made.append(list(indices))
        return real_entries_of(messages, href_of, indices, calls)

    monkeypatch.setattr(pages, "entries_of", recording)
    main = main_file(demo_corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    numbered = sorted(folder.glob("*.html"), key=lambda path: int(path.stem))
    last_page = {int(index) for index in re.findall(r' id="m(\d+)"', numbered[-1].read_text())}
    # The last page (the new reply) and at most the page of the prompt whose turn it joins: never every page.
    assert 1 <= len(made) <= 2 < len(numbered), made
    assert last_page <= set(made[-1]), (made, sorted(last_page))
    assert_equals_cold_build(demo_corpus, out, tmp_path)


@pytest.mark.parametrize("tamper", ["edited", "linked", "removed"])
def test_a_shard_not_as_published_is_made_again_whole(demo_corpus: Path, tmp_path: Path, tamper: str) -> None:
    """An append reuses the last shard's parts only when the shard holds the bytes the last build published."""
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    shard = out / "search" / "s" / f"{SESSION}.js"
    data = shard.read_bytes()
    shard.unlink()
    if tamper == "edited":  # same length, the last agent's rows changed: the memo's lengths still fit
        at = data.rindex(b"/agents/")
        shard.write_bytes(data[:at] + b"/agentz/" + data[at + 8 :])
    elif tamper == "linked":
        (tmp_path / "elsewhere.js").write_bytes(data)
        shard.symlink_to(tmp_path / "elsewhere.js")
    main = main_file(demo_corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    assert not shard.is_symlink()
    assert_equals_cold_build(demo_corpus, out, tmp_path)


@pytest.mark.parametrize("redact", [False, True])
def test_a_message_is_keyed_by_its_stored_digest_unless_masked(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                redact: bool) -> None:
    """Messages read from the cache are keyed by their stored rows' digests, never serialised again; masked ones (--redact) by their text."""
    serialised: list[bool] = []
    real_plain_json = reader.plain_json

    def watching(value: object) -> bytes:
        serialised.append(isinstance(value, tuple) and isinstance(value[0], Message))
        return real_plain_json(value)

    monkeypatch.setattr(reader, "plain_json", watching)
    settings = dataclasses.replace(config(demo_corpus, tmp_path / "site", tmp_path / "cache"), redact=redact)
    run_build(settings)
    assert len(serialised) > 100 and all(serialised) if redact else not any(serialised)
    with main_file(demo_corpus).open("ab") as handle:
        handle.write(main_file(demo_corpus).read_bytes().splitlines(keepends=True)[-1].replace(b'"msg_', b'"msg_again_', 1))
    serialised.clear()
    assert run_build(settings).parsed == 1
    assert len(serialised) > 10 and all(serialised) if redact else serialised and not any(serialised)


def _layout_keys(cache: Path) -> list[bytes]:
    """The demo session's main transcript's message keys, in order, as the last build laid it out."""
    with closing(sqlite3.connect(cache / "cache.sqlite3")) as conn:
        (packed,) = conn.execute("SELECT sizes FROM layouts WHERE session_id = ? AND agent_id = ?", (SESSION, SESSION)).fetchone()
    return reader.unpack_layout(bytes(packed))[0]


def _append_reply(corpus: Path, suffix: str) -> None:
    main = main_file(corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:  # a new request at the end of the last turn
        handle.write(reply.replace(b'"msg_', b'"msg_%s_' % suffix, 1).replace(b'"req_', b'"req_%s_' % suffix, 1) + b"\n")


@pytest.mark.parametrize("tamper", ["none", "shifted", "cut", "removed"])
def test_an_append_takes_the_last_pages_unchanged_messages_from_it_as_published(demo_corpus: Path, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch, tamper: str) -> None:
    """Only messages whose key is new or changed are rendered; the rest of the page comes from its published bytes, when they are as laid out."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    run_build(config(demo_corpus, out, cache))
    before = _layout_keys(cache)
    page = out / "sessions" / SESSION / "transcript" / "1.html"
    data = page.read_bytes()
    tags = [found.start() for found in re.finditer(rb' id="m\d+" data-has="', data)]
    assert len(tags) > 15  # one page holds the whole transcript
    middle = tags[len(tags) // 2]
    if tamper == "shifted":  # a byte more inside a message: the sizes no longer land on the messages' tags
        page.write_bytes(data[:middle] + b" " + data[middle:])
    elif tamper == "cut":
        page.write_bytes(data[:middle])
    elif tamper == "removed":
        page.unlink()
    rendered: list[int] = []
    real_fitting = reader._fitting
    monkeypatch.setattr(reader, "_fitting", lambda message, index, context: rendered.append(index) or real_fitting(message, index, context))
    _append_reply(demo_corpus, b"taken")
    run_build(config(demo_corpus, out, cache))
    after = _layout_keys(cache)
    changed = {index for index, key in enumerate(after) if index >= len(before) or before[index] != key}
    if tamper == "none":
        assert changed and set(rendered) == changed, (sorted(rendered), sorted(changed))  # measured once, never rendered again
    else:
        assert set(rendered) > changed and len(set(rendered)) == len(after)  # measured, then the whole page rendered
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_a_folder_another_version_built_takes_no_message_from_its_pages(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Message keys leave out the code: pages another version made are rendered whole, not taken apart.

    The first folder is built by "another version" that rendered one letter of a message
    differently (its length kept); the second, sharing the cache, by this one. After an append the
    first folder's page is rendered again, whole, and equals a cold build.
    """
    import agenthropic_site

    cache = tmp_path / "cache"
    first, second = tmp_path / "first", tmp_path / "second"
    monkeypatch.setattr(agenthropic_site, "_identity", [f"{agenthropic_site.__version__}+0000000000000000"])
    run_build(config(demo_corpus, first, cache))
    monkeypatch.undo()
    page = first / "sessions" / SESSION / "transcript" / "1.html"
    data = page.read_bytes()
    at = data.index(b"<p>", data.index(b' data-has="')) + 3
    page.write_bytes(data[:at] + (b"Y" if data[at:at + 1] != b"Y" else b"Z") + data[at + 1:])
    run_build(config(demo_corpus, second, cache))
    _append_reply(demo_corpus, b"elsewhere")
    run_build(config(demo_corpus, first, cache))
    assert_equals_cold_build(demo_corpus, first, tmp_path)
