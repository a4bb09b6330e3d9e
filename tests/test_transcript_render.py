"""The transcript renderer: tool calls by what they did, results inside their calls, figures, links and escaping."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from html.parser import HTMLParser
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from markupsafe import Markup, escape

from agenthropic_site.model.views import RequestFigures
from agenthropic_site.parse.model import Block, Message, Tokens
from agenthropic_site.render.formats import PREVIEW_CHARS
from agenthropic_site.render.fragments import escaped
from agenthropic_site.render.markdown import render_markdown
from agenthropic_site.render.transcript import (
    TranscriptContext,
    TurnFigures,
    fine_usd,
    index_requests,
    index_results,
    is_prompt,
    render_message,
    skeletons_of,
)

VOID = {"img", "br", "hr", "input", "meta", "link", "wbr"}
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)</li><img src=x onerror=alert(3)>'
OTHER_SESSION = "99999999-8888-4777-8666-555555555555"


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text for child in self.children)

    def walk(self) -> list[Node]:
        found = [self]
        for child in self.children:
            if isinstance(child, Node):
                found += child.walk()
        return found

    def find(self, tag: str, **attrs: str) -> list[Node]:
        """Return the elements of this tag whose attributes hold these values (`class_` matches one class)."""
        wanted = {key.rstrip("_"): value for key, value in attrs.items()}

        def matches(node: Node, key: str, value: str) -> bool:
            return value in node.attrs.get(key, "").split() if key == "class" else node.attrs.get(key) == value

        return [node for node in self.walk() if node.tag == tag and all(matches(node, key, value) for key, value in wanted.items())]

    def one(self, tag: str, **attrs: str) -> Node:
        found = self.find(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


class TreeBuilder(HTMLParser):
    """Build a tree of the fragment, failing on a closing tag that does not match."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {key: value or "" for key, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def tree(html: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], "an element is left open"
    return builder.root


def call(name: str, inputs: Any, tool_use_id: str | None = None, truncated_from: int | None = None) -> Block:
    text = orjson.dumps(inputs, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    return Block(kind="tool_use", text=text, name=name, tool_use_id=tool_use_id, truncated_from=truncated_from)


def result(tool_use_id: str, text: str, is_error: bool = False, truncated_from: int | None = None) -> Block:
    return Block(kind="tool_result", text=text, tool_use_id=tool_use_id, is_error=is_error, truncated_from=truncated_from)


def assistant(*blocks: Block, message_id: str | None = None) -> Message:
    return Message("assistant", "a", "2026-01-01T10:00:01.000Z", tuple(blocks), model="claude-sonnet-4-5", message_id=message_id)


def user(*blocks: Block, meta: bool = False) -> Message:
    return Message("user", "u", "2026-01-01T10:00:00.000Z", tuple(blocks), is_meta=meta)


def context(messages: list[Message], **extra: Any) -> TranscriptContext:
    values: dict[str, Any] = {
        "spawned": {}, "agent_href": lambda agent: f"agents/{agent}.html", "agent_labels": {},
        "session_href": lambda session: f"../../sessions/{session}/index.html", "requests": {}, "turns": {},
        "results": index_results(skeletons_of(messages), messages), "request_at": index_requests(skeletons_of(messages)),
    }
    values.update(extra)
    return TranscriptContext(**values)


def render_all(messages: list[Message], **extra: Any) -> list[str]:
    ctx = context(messages, **extra)
    return [render_message(message, index, ctx) for index, message in enumerate(messages)]


def one_call(name: str, inputs: Any, **extra: Any) -> Node:
    """Render an assistant message with one call and return the call's card."""
    html = render_all([assistant(call(name, inputs, "t1"))], **extra)[0]
    return tree(html).one("details", class_="call")


def summary_of(card: Node) -> str:
    return card.one("summary").text


# --- gists ---


def test_bash_shows_the_first_line_and_its_description_and_the_whole_command_inside() -> None:
    card = one_call("Bash", {"command": "cd app &&\nmake test", "description": "Run the tests", "timeout": 600000})
    assert card.attrs["data-tool"] == "Bash"
    assert card.attrs["id"] == "m0-b0"
    summary = card.one("summary")
    assert summary.one("code", class_="gist").text == "cd app &&"
    assert summary.one("span", class_="sub").text == "Run the tests"
    assert card.one("pre", class_="command").text == "cd app &&\nmake test"
    assert "timeout" in card.one("dl", class_="args").text  # fields not shown otherwise are listed


def test_a_one_line_command_is_not_printed_twice() -> None:
    card = one_call("Bash", {"command": "ls -la"})
    assert card.text.count("ls -la") == 1


@pytest.mark.parametrize(
    ("name", "inputs", "shown"),
    [
        ("Read", {"file_path": "/repo/src/app.py", "offset": 120, "limit": 40}, ["/repo/src/app.py", "offset 120", "limit 40"]),
        ("Write", {"file_path": "/repo/new.txt", "content": "x"}, ["/repo/new.txt"]),
        ("Edit", {"file_path": "/repo/a.py", "old_string": "a", "new_string": "b"}, ["/repo/a.py"]),
        ("MultiEdit", {"file_path": "/repo/m.py", "edits": [{"old_string": "a", "new_string": "b"}]}, ["/repo/m.py", "1 edit"]),
        ("NotebookEdit", {"notebook_path": "/repo/n.ipynb", "new_source": "print(1)", "cell_id": "c1"}, ["/repo/n.ipynb"]),
        ("Grep", {"pattern": "def \\w+", "path": "src", "glob": "*.py", "type": "py", "output_mode": "content"},
         ["def \\w+", "in src", "glob *.py", "type py"]),
        ("Glob", {"pattern": "**/*.ts", "path": "web"}, ["**/*.ts", "in web"]),
        ("WebFetch", {"url": "https://example.com/doc", "prompt": "Summarise"}, ["https://example.com/doc"]),
        ("WebSearch", {"query": "markdown-it render rules"}, ["markdown-it render rules"]),
        ("Task", {"description": "Audit the parser", "subagent_type": "general-purpose", "prompt": "Look at parse/"}, ["Audit the parser", "general-purpose"]),
        ("Agent", {"description": "Write docs", "subagent_type": "Explore", "prompt": "Go"}, ["Write docs", "Explore"]),
        ("TodoWrite", {"todos": [{"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}]}, ["Todos: 1 of 2 done"]),
        ("mcp__github__search_issues", {"query": "parser bug", "limit": 5}, ["search_issues", "github", "parser bug"]),
        ("FancyTool", {"count": 3, "mode": "fast", "notes": "long\ntext"}, ["FancyTool", "fast"]),
    ],
)
def test_the_summary_shows_the_gist_of_each_tool(name: str, inputs: dict[str, Any], shown: list[str]) -> None:
    card = one_call(name, inputs)
    summary = summary_of(card)
    for part in shown:
        assert part in summary, (part, summary)


def test_an_mcp_tool_is_named_with_its_server_and_its_input_is_json() -> None:
    card = one_call("mcp__github__search_issues", {"query": "parser bug"})
    summary = card.one("summary")
    assert summary.one("span", class_="tool").text == "search_issues"
    assert summary.one("span", class_="server").text == "github"
    assert orjson.loads(card.one("pre", class_="json").text) == {"query": "parser bug"}


def test_a_spawn_links_to_the_agent_page_it_started() -> None:
    card = one_call("Task", {"description": "Audit the parser", "subagent_type": "general-purpose", "prompt": "Look"},
                    spawned={"t1": "agent-a1"})
    link = card.one("summary").one("a")
    assert link.attrs["href"] == "agents/agent-a1.html"
    assert link.text == "Audit the parser"
    assert card.one("summary").one("span", class_="sub").text == "general-purpose"
    assert "Look" in card.one("div", class_="call-body").text


def test_a_spawn_without_a_page_is_not_a_link() -> None:
    card = one_call("Agent", {"description": "Write docs", "prompt": "Go"})
    assert card.find("a") == []


def test_todo_write_is_a_checklist_without_form_controls() -> None:
    card = one_call("TodoWrite", {"todos": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Write the renderer", "status": "in_progress"},
        {"content": "Test it", "status": "pending"},
    ]})
    items = card.one("ul", class_="todos").find("li")
    assert [item.attrs["class"] for item in items] == ["todo-done", "todo-active", "todo-pending"]
    assert [item.one("span", class_="mark").text for item in items] == ["✓", "▸", "○"]
    assert "Write the renderer" in items[1].text
    assert card.find("input") == []
    assert summary_of(card).endswith("Todos: 1 of 3 done")


def test_an_unknown_tool_shows_indented_json_with_real_newlines() -> None:
    card = one_call("FancyTool", {"notes": "first line\nsecond line", "nested": {"depth": 2}})
    text = card.one("pre", class_="json").text
    assert '  "nested": {\n    "depth": 2\n  }' in text
    assert "first line\nsecond line" in text
    assert "\\n" not in text


def test_input_that_is_not_json_is_shown_as_text() -> None:
    cut = '{\n  "command": "echo start'  # an older cache cut the JSON text itself
    html = render_all([assistant(Block(kind="tool_use", text=cut, name="Bash", tool_use_id="t1", truncated_from=90_000))])[0]
    card = tree(html).one("details", class_="call")
    assert card.one("pre").text == cut
    assert "90,000" in card.text


# --- diffs ---


def test_an_edit_shows_removed_and_added_lines() -> None:
    card = one_call("Edit", {"file_path": "a.py", "old_string": "keep\nold line\nend", "new_string": "keep\nnew line\nend", "replace_all": True})
    diff = card.one("pre", class_="diff")
    assert [node.text for node in diff.find("del", class_="diff-del")] == ["old line\n"]
    assert [node.text for node in diff.find("ins", class_="diff-add")] == ["new line\n"]
    assert [node.text for node in diff.find("span", class_="diff-ctx")] == ["keep\n", "end\n"]
    assert "every occurrence" in card.text


def test_multi_edit_has_one_diff_per_edit_and_write_adds_every_line() -> None:
    multi = one_call("MultiEdit", {"file_path": "m.py", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]})
    assert len(multi.find("pre", class_="diff")) == 2
    write = one_call("Write", {"file_path": "w.py", "content": "one\ntwo\n"})
    assert [node.text for node in write.find("ins", class_="diff-add")] == ["one\n", "two\n"]
    assert write.find("del") == []


def test_a_large_edit_shows_every_changed_line_once() -> None:
    old = "\n".join(["head"] + [f"line {number}" for number in range(3_000)] + ["foot"])
    new = "\n".join(["head"] + [f"line {number}!" for number in range(3_000)] + ["foot"])
    diff = one_call("Edit", {"file_path": "big.py", "old_string": old, "new_string": new}).one("pre", class_="diff")
    assert len(diff.find("del", class_="diff-del")) == 3_000
    assert len(diff.find("ins", class_="diff-add")) == 3_000
    assert [node.text for node in diff.find("span", class_="diff-ctx")] == ["head\n", "foot\n"]


def test_a_shortened_value_keeps_its_ellipsis_and_says_so() -> None:
    html = render_all([assistant(call("Write", {"file_path": "w.py", "content": "start of a long file…"}, "t1", truncated_from=50_000))])[0]
    card = tree(html).one("details", class_="call")
    assert card.one("ins", class_="diff-add").text == "start of a long file…\n"
    assert "50,000" in card.one("div", class_="call-body").text


# --- results ---


def test_a_result_sits_inside_its_call_and_its_message_is_left_out() -> None:
    messages = [assistant(call("Bash", {"command": "pytest"}, "t1")), user(result("t1", "3 passed"))]
    first, second = render_all(messages)
    card = tree(first).one("details", class_="call")
    output = card.one("div", class_="result")
    assert output.one("pre").text == "3 passed"
    assert "Output" in output.text and "8 characters · 1 line" in output.text
    assert second == ""


def test_a_result_without_its_call_is_its_own_card() -> None:
    html = render_all([user(result("elsewhere", "orphan output"))])[0]
    node = tree(html).one("div", class_="result")
    assert "standalone" in node.attrs["class"].split()
    assert node.one("pre").text == "orphan output"


def test_an_error_result_is_marked_on_the_call_and_the_result() -> None:
    messages = [assistant(call("Read", {"file_path": "x"}, "t1"), message_id="msg_1"), user(result("t1", "File does not exist.", is_error=True))]
    first, second = render_all(messages)
    root = tree(first)
    card = root.one("details", class_="call")
    assert "error" in card.attrs["class"].split()
    assert root.one("span", class_="flag-error").text == "Error"
    error = card.one("div", class_="result")
    assert "error" in error.attrs["class"].split()
    assert error.one("span", class_="label").text == "Error"
    assert root.one("li").attrs["data-has"] == "error tool"
    assert second == ""


def test_a_long_output_is_collapsed_once_with_its_size() -> None:
    text = "".join(f"line {number} of the output\n" for number in range(40))
    html = render_all([assistant(call("Bash", {"command": "seq"}, "t1")), user(result("t1", text, truncated_from=99_999))])[0]
    output = tree(html).one("div", class_="result")
    collapsed = output.one("details", class_="output")
    assert "40 lines" in collapsed.one("summary").text
    assert f"{len(text):,} characters" in collapsed.one("summary").text
    assert html.count("line 39 of the output") == 1
    assert "Stored output cut at" in output.text and "99,999" in output.text


def test_a_short_output_is_not_collapsed() -> None:
    html = render_all([assistant(call("Bash", {"command": "true"}, "t1")), user(result("t1", "ok\n" * 5))])[0]
    assert tree(html).find("details", class_="output") == []


def test_long_text_is_previewed_without_printing_it_twice() -> None:
    paragraphs = [f"Paragraph {number} " + "word " * 60 for number in range(20)]
    text = "\n\n".join(paragraphs[:5]) + "\n\n```python\n" + "\n".join(f"x{n} = {n}" for n in range(200)) + "\n```\n\n" + "\n\n".join(paragraphs[5:])
    assert len(text) > PREVIEW_CHARS
    html = render_all([assistant(Block("text", text))])[0]
    root = tree(html)
    more = root.one("details", class_="more-text")
    for marker in ["Paragraph 0 ", "Paragraph 19 ", "x0 = 0", "x199 = 199"]:
        assert html.count(marker) == 1, marker
    assert "Paragraph 0 " not in more.text
    assert "Paragraph 19 " in more.text
    code = "".join(node.text for node in root.find("code"))
    assert "x0 = 0" in code and "x199 = 199" in code


def test_a_code_block_cut_by_the_preview_is_closed_and_reopened() -> None:
    text = "Intro\n\n~~~~python\n" + "\n".join(f"x{n} = {n}" for n in range(400)) + "\n~~~~\n\nAfter."
    root = tree(render_all([assistant(Block("text", text))])[0])
    blocks = root.find("pre")
    assert len(blocks) == 2  # the head's part of the code and the rest's, each a code block
    assert "x0 = 0" in blocks[0].text and "x399 = 399" in blocks[1].text
    assert all(block.one("code").attrs["class"] == "language-python" for block in blocks)
    assert "After." in root.one("details", class_="more-text").text
    assert "~~~~" not in root.text


# --- other blocks ---


def test_thinking_is_collapsed_and_empty_thinking_says_not_recorded() -> None:
    root = tree(render_all([assistant(Block("thinking", "consider it"), Block("thinking", ""))])[0])
    summaries = [node.one("summary").text for node in root.find("details", class_="thinking")]
    assert "not recorded" in summaries[1] and "not recorded" not in summaries[0]
    assert root.one("li").attrs["data-has"] == "thinking"


def test_only_stored_raster_images_become_thumbnails() -> None:
    good = Block("image", "iVBORw0KGgo=", name="image/png")
    svg = Block("image", "PHN2Zz4=", name="image/svg+xml")
    bad = Block("image", 'x" onerror="alert(1)', name="image/png")
    root = tree(render_all([user(good, svg, bad)])[0])
    images = root.find("img")
    assert [image.attrs["src"] for image in images] == ["data:image/png;base64,iVBORw0KGgo="]
    assert "image/svg+xml" in root.text


# --- messages ---


def test_data_has_lists_what_each_message_holds() -> None:
    messages = [
        user(Block("text", "please fix it")),
        assistant(Block("thinking", "hm"), call("Bash", {"command": "make"}, "t1")),
        user(result("t1", "boom", is_error=True)),
        assistant(Block("text", "done")),
        user(Block("text", "<system-reminder>"), meta=True),
    ]
    roots = [tree(html) if html else None for html in render_all(messages)]
    assert roots[0] is not None and roots[0].one("li").attrs["data-has"] == "prompt"
    assert "prompt" in roots[0].one("li").attrs["class"].split()
    assert roots[1] is not None and roots[1].one("li").attrs["data-has"] == "error thinking tool"
    assert roots[2] is None
    assert roots[3] is not None and roots[3].one("li").attrs["data-has"] == ""
    assert roots[4] is not None and roots[4].one("li").attrs["class"] == "msg user meta"
    assert [is_prompt(message) for message in messages] == [True, False, False, False, False]


def test_interrupt_markers_and_command_output_are_not_prompts_and_a_typed_command_is() -> None:
    """Claude Code writes the interrupt marker and a local command's output as user text: neither opens a turn."""
    messages = [
        user(Block("text", "[Request interrupted by user]")),
        user(Block("text", "[Request interrupted by user for tool use]")),
        user(Block("text", "<local-command-stdout>Set model to opus</local-command-stdout>")),
        user(Block("text", "<command-name>/model</command-name>\n<command-message>model</command-message>")),
        user(Block("text", "  fix the failing test")),
    ]
    assert [is_prompt(message) for message in messages] == [False, False, False, True, True]


def test_figures_show_once_per_request_and_a_copy_names_its_owner() -> None:
    messages = [
        user(Block("text", "go")),
        assistant(Block("text", "first part"), call("Bash", {"command": "ls"}, "t1"), message_id="msg_1"),
        user(result("t1", "a")),
        assistant(call("Bash", {"command": "pwd"}, "t2"), message_id="msg_1"),  # the same reply, after the first result
        assistant(Block("text", "replayed"), message_id="msg_2"),
        assistant(Block("text", "unpriced"), message_id="msg_3"),
        assistant(Block("text", "no figures"), message_id="msg_4"),
    ]
    html = render_all(
        messages,
        requests={
            "msg_1": RequestFigures(Tokens(input=1_000, output=234), Decimal("0.0123456")),
            "msg_2": RequestFigures(Tokens(output=10), Decimal("0.5"), counted_in=OTHER_SESSION),
            "msg_3": RequestFigures(Tokens(output=7), None),
        },
        turns={0: TurnFigures(1, Tokens(input=50_000, output=2_000), Decimal("1.5"))},
    )
    figures = [tree(fragment).find("span", class_="figures") if fragment else [] for fragment in html]
    assert [len(found) for found in figures] == [0, 1, 0, 0, 1, 1, 0]
    assert figures[1][0].text == "1,234 tokens · $0.0123"
    copy = figures[4][0]
    assert "copy, counted in" in copy.text and "$" not in copy.text
    assert copy.one("a").attrs["href"] == f"../../sessions/{OTHER_SESSION}/index.html"
    assert figures[5][0].text == "7 tokens"
    turn = tree(html[0]).one("span", class_="turn")
    assert turn.text == "turn 1 · 52,000 tokens · $1.50 incl. subagents"
    assert tree(html[0]).one("span", class_="role").text == "You"


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (None, "—"),
        (Decimal(0), "$0.00"),
        (Decimal("0.0123456"), "$0.0123"),
        (Decimal("0.000042"), "$0.0000420"),
        (Decimal("0.5"), "$0.500"),
        (Decimal("0.99996"), "$1.00"),
        (Decimal("1.234"), "$1.23"),
        (Decimal("12345.678"), "$12,345.68"),
    ],
)
def test_fine_usd_keeps_small_amounts_readable(amount: Decimal | None, shown: str) -> None:
    assert fine_usd(amount) == shown


# --- safety and determinism ---


def test_hostile_text_is_escaped_in_every_field() -> None:
    messages = [
        assistant(
            call(HOSTILE, {"x": HOSTILE}, "t0"),
            call("Bash", {"command": HOSTILE, "description": HOSTILE}, "t1"),
            call("Read", {"file_path": HOSTILE}, "t2"),
            call("Edit", {"file_path": HOSTILE, "old_string": HOSTILE, "new_string": HOSTILE + "!"}, "t3"),
            call("Grep", {"pattern": HOSTILE, "path": HOSTILE}, "t4"),
            call("Task", {"description": HOSTILE, "subagent_type": HOSTILE, "prompt": HOSTILE}, "t5"),
            call("TodoWrite", {"todos": [{"content": HOSTILE, "status": HOSTILE}]}, "t6"),
            call(f"mcp__{HOSTILE}__{HOSTILE}", {HOSTILE: HOSTILE}, "t7"),
            Block("thinking", HOSTILE),
            Block("text", f"{HOSTILE} [click](javascript:alert(4)) [x]({HOSTILE})"),
            message_id="m",
        ),
        user(result("t1", HOSTILE), result("t2", HOSTILE, is_error=True), result("t404", HOSTILE)),
        Message("system", None, HOSTILE, (Block("text", HOSTILE), Block("notice", HOSTILE)), model=HOSTILE, subtype=HOSTILE),
    ]
    html = "".join(render_all(messages, spawned={"t5": "agent-1"}, agent_labels={"agent-1": HOSTILE}))
    root = tree(html)
    assert root.find("script") == []
    assert [image for image in root.find("img")] == []
    for node in root.walk():
        assert not any(name.startswith("on") for name in node.attrs), node
        if node.tag == "a":
            assert node.attrs["href"] in ("agents/agent-1.html",), node.attrs
    # Three messages, three items: no </li> in the text closed one early (the tree builder checks every closing tag).
    assert [node.tag for node in root.children if isinstance(node, Node)] == ["li", "li", "li"]
    assert "javascript:" not in "".join(node.attrs.get("href", "") for node in root.walk())
    assert root.text.count("<script>alert(1)</script>") >= 15  # the payload is shown as text wherever it was


@pytest.mark.parametrize(
    ("source", "href"),
    [
        ("[docs](https://example.com/a?b=1)", "https://example.com/a?b=1"),
        ("[site](http://example.org)", "http://example.org"),
        ("<https://example.net/x>", "https://example.net/x"),
    ],
)
def test_web_links_stay_links_with_noopener(source: str, href: str) -> None:
    link = tree(render_markdown(source)).one("a")
    assert link.attrs["href"] == href
    assert link.attrs["rel"] == "noopener noreferrer"


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("[package.json](package.json)", "package.json"),
        ("[main](src/main.py#L3)", "main"),
        ("[root](/etc/hosts)", "root"),
        ("[mail](mailto:a@example.com)", "mail"),
        ("[click](javascript:alert(1))", "click"),
        ("[frag](#top)", "frag"),
        ("[file](file:///etc/passwd)", "file"),
        ("[data](data:text/html,hi)", "data"),
        ("[proto](//evil.example/x)", "proto"),
    ],
)
def test_other_links_are_not_links(source: str, text: str) -> None:
    root = tree(render_markdown(source))
    assert root.find("a") == []
    assert text in root.text


def test_a_repository_path_is_code() -> None:
    assert tree(render_markdown("see [package.json](package.json)")).one("code").text == "package.json"


def test_markdown_images_never_load_and_raw_html_stays_text() -> None:
    root = tree(render_markdown('![diagram](https://example.com/d.png) <img src="x" onerror="alert(1)">'))
    assert root.find("img") == []
    assert "diagram" in root.text and "https://example.com/d.png" in root.text
    assert '<img src="x" onerror="alert(1)">' in root.text


def test_markdown_is_rendered_once_per_text() -> None:
    text = "a *repeated* reply [x](https://example.com)"
    assert render_markdown(text) is render_markdown(text)  # the second answer is the first one, not a new rendering


def test_rendering_is_byte_identical_across_calls() -> None:
    messages = [
        user(Block("text", "go [a](https://a.example)")),
        assistant(Block("thinking", "t"), call("Edit", {"file_path": "a", "old_string": "x\ny", "new_string": "x\nz"}, "t1"),
                  call("TodoWrite", {"todos": [{"content": "a", "status": "pending"}]}, "t2"), message_id="m1"),
        user(result("t1", "ok")),
    ]
    extra: dict[str, Any] = {"requests": {"m1": RequestFigures(Tokens(output=3), Decimal("0.001"))}, "turns": {0: TurnFigures(1, Tokens(output=3), None)}}
    assert render_all(messages, **extra) == render_all(messages, **extra)
    assert all(isinstance(fragment, str) for fragment in render_all(messages, **extra))


@given(st.one_of(st.text(alphabet=st.sampled_from(list("&<>\"'a é\x00\u2028")) | st.characters()), st.integers(), st.none(),
                 st.text().map(Markup)))
@example("it's \"<b>&amp;</b>\"")
@example(Markup("<b>kept</b>"))
@example(3)
def test_escaped_is_markupsafe_escape_as_text(value: object) -> None:
    assert escaped(value) == str(escape(value))
    assert type(escaped(value)) is str
