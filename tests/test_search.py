"""Search data: which blocks become entries, and script files whose JSON no transcript text can escape."""

from __future__ import annotations

import json
import re

import pytest

from agenthropic_site.parse.model import Block, Message
from agenthropic_site.render.search import SearchEntry, entries_of, join_shard, sessions_js, shard_js, shard_part, split_shard

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


def test_sessions_js_keeps_key_order_and_hostile_titles_inside_strings() -> None:
    sessions = [{"id": "s1", "title": HOSTILE, "project": "p\u2028q", "started": "2025-01-02T03:04:05Z", "shard": "search/s/s1.js"},
                {"id": "s2", "title": "", "project": "p", "started": "", "shard": "search/s/s2.js"}]
    script = sessions_js(sessions)
    (parsed,) = payload(script, "sessions")
    assert parsed == sessions
    assert list(parsed[0]) == ["id", "title", "project", "started", "shard"]
    assert sessions_js([dict(entry) for entry in sessions]) == script
    assert sessions_js([]) == b"agenthropicSearch.sessions([]);\n"
