"""Search data: which blocks become entries, and script files whose JSON no transcript text can escape."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.parse.model import Block, Message
from agenthropic_site.render.search import (
    SearchEntry, entries_of, group_file, join_shard, sessions_js, shard_groups, shard_js, shard_part, split_shard,
)
from records import line, user

HOSTILE = 'a </script><script>alert(1)</script> "quoted" \\ back\\slash \u2028 line \u2029 para agenthropicSearch.x(); `tick` <!-- &amp;'


def message(role: str, *blocks: Block, is_meta: bool = False) -> Message:
    return Message(role=role, uuid=None, timestamp=None, blocks=blocks, is_meta=is_meta)


def page_of(index: int) -> str:
    return f"sessions/s1/transcript/{index // 3 + 1}.html"


def transcript() -> list[Message]:
    return [
        message("user", Block("text", "Fix the build please")),  # m0, page 1
        message("assistant", Block("thinking", "The build fails on lint"), Block("text", "Running the linter."),
                Block("tool_use", json.dumps({"command": "make lint\necho done", "timeout": 60}), name="Bash", tool_use_id="t1")),  # m1
        message("user", Block("tool_result", "lint: 3 problems", tool_use_id="t1", is_error=True)),  # m2, with its call on m1
        message("user", Block("tool_result", "orphan output", tool_use_id="elsewhere")),  # m3, page 2: its call is not here
        message("user", Block("text", "<command-name>/clear</command-name>"), is_meta=True),  # m4: injected, not searched
        message("assistant", Block("image", "iVBORw0KGgo=", name="image/png"), Block("text", "   "), Block("thinking", "")),  # m5: nothing to search
        message("system", Block("text", "Conversation compacted")),  # m6: not a prompt or an answer
        message("assistant", Block("tool_use", '{"command": "cut bef', name="Bash", tool_use_id="t2")),  # m7, page 3: input cut, not JSON
    ]


def test_entries_of_picks_each_kind_with_its_page_and_anchor() -> None:
    assert entries_of(transcript(), page_of) == [
        SearchEntry("sessions/s1/transcript/1.html", "m0", "prompt", "Fix the build please"),
        SearchEntry("sessions/s1/transcript/1.html", "m1-b0", "thinking", "The build fails on lint"),
        SearchEntry("sessions/s1/transcript/1.html", "m1", "answer", "Running the linter."),
        # A tool input is searched as its values, with real newlines, not as escaped JSON.
        SearchEntry("sessions/s1/transcript/1.html", "m1-b2", "tool-input", "make lint\necho done\n60"),
        # A result points at its call's card, where it is shown.
        SearchEntry("sessions/s1/transcript/1.html", "m1-b2", "tool-output", "lint: 3 problems"),
        SearchEntry("sessions/s1/transcript/2.html", "m3", "tool-output", "orphan output"),
        SearchEntry("sessions/s1/transcript/3.html", "m7-b0", "tool-input", '{"command": "cut bef'),
    ]


def test_a_result_links_to_its_call_on_an_earlier_page() -> None:
    messages = [message("assistant", Block("tool_use", "{}", name="Read", tool_use_id="r")), message("user", Block("tool_result", "body", tool_use_id="r"))]
    entries = entries_of(messages, lambda index: f"p{index}.html")
    assert [(e.href, e.anchor, e.kind) for e in entries] == [("p0.html", "m0-b0", "tool-output")]


def payload(script: bytes, function: str) -> list:
    """Parse the arguments of the one call in a data script back out, or fail when the script is anything more."""
    text = script.decode()
    assert "\u2028" not in text and "\u2029" not in text and "<" not in text
    match = re.fullmatch(rf"agenthropicSearch\.{function}\((.*)\);\n", text, re.S)
    assert match, text
    return json.loads(f"[{match.group(1)}]")


def test_shard_js_keeps_hostile_text_inside_its_json_strings() -> None:
    entries = [SearchEntry("sessions/s1/transcript/1.html", "m0", "prompt", HOSTILE), SearchEntry("sessions/s1/transcript/2.html", "m9-b1", "thinking", "ok")]
    script = shard_js("s1", entries)
    rows = [["sessions/s1/transcript/1.html", "m0", "prompt", HOSTILE], ["sessions/s1/transcript/2.html", "m9-b1", "thinking", "ok"]]
    assert payload(script, "shard") == ["s1", rows]
    assert b"</script" not in script.lower()
    assert shard_js("s1", list(entries)) == script


@pytest.mark.parametrize("sizes", [[0, 2, 0, 1, 3], [0, 0], [1], [3, 0, 0, 2]])
def test_a_shard_joined_from_parts_is_the_whole_shard_and_cuts_back_into_them(sizes: list[int]) -> None:
    groups = [[SearchEntry(f"sessions/s1/agents/a{part}.html", f"m{row}", "answer", f"{HOSTILE} {part}.{row}") for row in range(size)]
              for part, size in enumerate(sizes)]
    parts = [shard_part(group) for group in groups]
    script = join_shard("s1", parts)
    assert script == shard_js("s1", [entry for group in groups for entry in group])
    cut = split_shard("s1", script, [len(part) for part in parts])
    assert cut is not None
    # Every part comes back as it was, the first with rows too (the join dropped its comma).
    assert [bytes(piece) for piece in cut] == parts
    assert split_shard("s1", script, [len(part) + 1 for part in parts]) is None
    assert split_shard("s2", script, [len(part) for part in parts]) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.text(alphabet=st.sampled_from('ab<>&"\\/\u2028\u2029\x00é😀 ')) for _ in range(4)]), max_size=6))
def test_a_part_holds_each_row_encoded_alone_led_by_a_comma(rows: list[tuple[str, str, str, str]]) -> None:
    """A part's bytes are its rows encoded one at a time, each led by a comma (as it was made): split_shard and kept parts rely on it."""
    one_by_one = b"".join(b"," + _script_json(list(row)) for row in rows)
    assert shard_part([SearchEntry(*row) for row in rows]) == one_by_one


def _script_json(value: list[str]) -> bytes:
    data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    for character in ("<", ">", "&", "\u2028", "\u2029"):
        data = data.replace(character.encode(), f"\\u{ord(character):04x}".encode())
    return data


def test_sessions_js_keeps_key_order_and_hostile_titles_inside_strings() -> None:
    sessions = [{"id": "s1", "title": HOSTILE, "project": "p\u2028q", "started": "2025-01-02T03:04:05Z", "shard": "search/s/s1.js"},
                {"id": "s2", "title": "", "project": "p", "started": "", "shard": "search/s/s2.js"}]
    script = sessions_js(sessions)
    (parsed,) = payload(script, "sessions")
    assert parsed == sessions
    assert list(parsed[0]) == ["id", "title", "project", "started", "shard"]
    assert sessions_js([dict(entry) for entry in sessions]) == script
    assert sessions_js([]) == b"agenthropicSearch.sessions([]);\n"


def test_shard_groups_cut_by_names_alone() -> None:
    """A file of a split shard starts where a part's name says so: a part changed, or added at the end, leaves the other cuts as they were."""
    names = [f"s1/{page}" for page in range(1, 40)] + [f"agent-{number:03d}" for number in range(300)]
    groups = shard_groups(names)
    assert [index for group in groups for index in group] == list(range(len(names)))
    assert groups[:39] == [[index] for index in range(39)]  # a page of the session's transcript has a file of its own
    assert 300 / 64 < len(groups) - 39 < 300 / 4  # the agents' parts: about SHARD_GROUP_PARTS a file
    firsts = {names[group[0]] for group in groups}
    more = [*names[:39], "s1/40", *names[39:]]  # the session's transcript gets a page
    assert firsts - {more[group[0]] for group in shard_groups(more)} == set()  # every file that started before starts again
    assert len({group_file("s1", name) for name in firsts}) == len(firsts)


def test_a_large_sessions_rows_are_written_in_files_and_an_append_rewrites_only_those_it_changes(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past SHARD_SPLIT_BYTES a session's shard lists files of its rows: together they are its whole shard, and an append writes the list
    and the files of the parts it changed, keeping the others (their inode too); the site equals a cold build's."""
    from agenthropic_site.pipeline.build import run_build
    from agenthropic_site.render import pages, search
    from agenthropic_site.render.writer import SiteWriter
    from test_incremental import assert_equals_cold_build, config, main_file

    whole = tmp_path / "whole"
    run_build(config(demo_corpus, whole, tmp_path / "whole-cache"))
    monkeypatch.setattr(pages, "SHARD_SPLIT_BYTES", 1)
    monkeypatch.setattr(search, "SHARD_GROUP_PARTS", 2)
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    sid = main_file(demo_corpus).stem
    listed = re.fullmatch(rf'agenthropicSearch\.parts\("{sid}", (\[.*\])\);\n', (out / "search" / "s" / f"{sid}.js").read_text())
    assert listed is not None
    files = json.loads(listed.group(1))
    assert len(files) >= 3 and sorted(files) == sorted(f"search/s/{sid}/{path.name}" for path in (out / "search" / "s" / sid).iterdir())

    def rows(script: Path) -> list[Any]:
        found = re.fullmatch(rf'agenthropicSearch\.shard\("{sid}", (\[.*\])\);\n', script.read_text(), re.DOTALL)
        assert found is not None
        return json.loads(found.group(1))

    assert [row for file in files for row in rows(out / file)] == rows(whole / "search" / "s" / f"{sid}.js")
    inodes = {file: (out / file).stat().st_ino for file in files}
    main = main_file(demo_corpus)
    with main.open("ab") as handle:
        handle.write(line(user("split-late", "one more question", ts="2026-05-30T12:00:00.000Z")))
    read: list[str] = []
    read_previous = SiteWriter.read_previous
    monkeypatch.setattr(SiteWriter, "read_previous", lambda writer, rel: read.append(rel) or read_previous(writer, rel))
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    # A file is read back only for a kept part of a file written again: the last page's file is all new, the others are kept unread.
    assert len([rel for rel in read if rel.startswith(f"search/s/{sid}/")]) <= 1
    after = json.loads(re.fullmatch(r'agenthropicSearch\.parts\("[^"]+", (\[.*\])\);\n', (out / "search" / "s" / f"{sid}.js").read_text()).group(1))
    kept = [file for file in files if file in after and (out / file).stat().st_ino == inodes[file]]
    assert len(kept) >= len(files) - 2  # the file of the transcript's last page, and one a new page may start
    assert_equals_cold_build(demo_corpus, out, tmp_path)


def test_split_search_rows_masked_with_redact_equal_a_cold_build_after_an_append(demo_corpus: Path, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With --redact every part a session's masks are counted from is made again, and a kept file stays only when its parts are the same."""
    import dataclasses

    from agenthropic_site.pipeline.build import run_build
    from agenthropic_site.render import pages, search
    from test_incremental import config, main_file
    from conftest import tree_bytes

    monkeypatch.setattr(pages, "SHARD_SPLIT_BYTES", 1)
    monkeypatch.setattr(search, "SHARD_GROUP_PARTS", 2)

    def masked(corpus: Path, name: str) -> Path:
        run_build(dataclasses.replace(config(corpus, tmp_path / name, tmp_path / f"{name}-cache"), redact=True))
        return tmp_path / name

    masked(demo_corpus, "site")
    with main_file(demo_corpus).open("ab") as handle:
        handle.write(line(user("redact-late", "my key sk-ant-api03-" + "A" * 90 + " leaked", ts="2026-05-30T12:00:00.000Z")))
    site = masked(demo_corpus, "site")
    assert any(name.count("/") == 3 for name in tree_bytes(site) if name.startswith("search/s/"))
    assert b"sk-ant-api03-AAAA" not in b"".join(data for name, data in tree_bytes(site).items() if name.startswith("search/"))
    shutil.copytree(demo_corpus, tmp_path / "cold-corpus")
    assert tree_bytes(site) == tree_bytes(masked(tmp_path / "cold-corpus", "cold"))
