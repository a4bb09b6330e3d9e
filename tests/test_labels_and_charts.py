"""Graph labels and tooltips in plain words, the unknown-status badge, and charts on a real time axis."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import jinja2
import pytest
from markupsafe import Markup

from agenthropic_site.graph.draw import DrawEdge, DrawNode, dot_source, render_svg
from agenthropic_site.model.views import AgentView
from agenthropic_site.parse import Tokens
from agenthropic_site.parse.model import EDGE_SOURCES
from agenthropic_site.render.charts import AXIS, CHAR_PX, PAD, bar_chart, day_ticks, step_chart
from agenthropic_site.render.labels import PROVENANCE, linked_by, node_label, node_tooltip, shorten
from agenthropic_site.render.rows import status_badge
from conftest import DOT_MISSING

TEMPLATES = Path(__file__).resolve().parent.parent / "themes" / "default" / "templates"
HOSTILE = [
    'x"]; evil [label="pwned"]; y [label="',
    "back\\slash\\ \\N \\G \\l \\",
    "<script>alert(1)</script> <b>bold</b> <<b>html</b>>",
    "line one\nline two\r\nline three\rfour",
    '" onmouseover="alert(1)" x="',
    "&#1; &#x0; &lt;script&gt; &foo; & &amp;",
    "nul\x00 bell\x07 esc\x1b[31m del\x7f c1\x85 \ud800 \ufffe \u202e reversed",
    "}; digraph g { a -> b } //",
]


def agent(agent_id: str = "a1", **fields: object) -> AgentView:
    base = AgentView(
        agent_id=agent_id, parent_agent_id="main", kind="subagent", edge_source="tool_result_agent_id", agent_type="general-purpose",
        description=None, status="completed", outcome_cause=None, notification_status=None, spawn_tool_use_id=None,
        first_seen_at="2025-03-01T10:00:00Z", last_seen_at="2025-03-01T10:05:00Z", subtree_cost=Decimal("1.234"),
        subtree_tokens=Tokens(input=1200, output=34),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def test_labels_name_description_and_type_and_tell_agents_of_one_type_apart() -> None:
    parser = agent("a1", description="Read the parser and list its edge cases")
    writer = agent("a2", description="Write the CSS for the agent graph")
    first, second = node_label(parser, excluded=False), node_label(writer, excluded=False)
    assert first.split("\n") == ["Read the parser and list its edge cases", "general-purpose", "completed · $1.23"]
    assert first != second and "Write the CSS for the agent graph" in second
    main = agent("main", kind="main", agent_type=None, parent_agent_id=None, edge_source=None, status="working")
    assert node_label(main, excluded=False).split("\n") == ["main session", "working · $1.23"]
    assert node_label(parser, excluded=True).endswith("completed · 1,234 tokens")
    assert node_label(replace(parser, has_transcript=False), excluded=False).endswith("completed · transcript not in the corpus")
    assert node_label(replace(parser, status="unknown"), excluded=False).endswith("last active 2025-03-01 10:05 · $1.23")


def test_long_descriptions_are_cut_at_a_word_with_an_ellipsis() -> None:
    label = node_label(agent(description="Investigate why the incremental build re-reads every session\nsecond line"), excluded=False)
    first_line = label.split("\n")[0]
    assert first_line == "Investigate why the incremental build…" and len(first_line) <= 40
    assert shorten("\n\n  spaced   out  \n", 40) == "spaced out"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"


def test_every_kind_of_evidence_has_plain_words() -> None:
    assert set(PROVENANCE) == set(EDGE_SOURCES)
    assert all(phrase and "_" not in phrase for phrase in PROVENANCE.values())


def test_tooltips_say_the_provenance_in_plain_words() -> None:
    described = agent(description="Audit the cache schema\nand list every table", edge_source="prompt_match", agent_type="Explore")
    tooltip = node_tooltip(described)
    assert "Audit the cache schema and list every table" in tooltip
    assert "type: Explore · kind: subagent" in tooltip
    assert PROVENANCE["prompt_match"] in tooltip and "prompt_match" not in tooltip
    assert not any(name in node_tooltip(agent(edge_source=name)) for name in EDGE_SOURCES)
    assert "not linked" in node_tooltip(agent(edge_source=None))
    assert linked_by(agent(kind="main", edge_source=None)) == "no parent: it is the session's main agent"
    assert "not in the corpus" in node_tooltip(agent(has_transcript=False))


def test_edges_carry_no_evidence_label_but_keep_their_style() -> None:
    nodes = [DrawNode("m", "main", "working", "index.html"), DrawNode("a", "a", "completed", "agents/a.html"),
             DrawNode("b", "b", "completed", "agents/b.html")]
    source = dot_source(nodes, [DrawEdge("m", "a", "tool_result_agent_id", critical=True), DrawEdge("m", "b", "prompt_match")])
    edges = [line for line in source.splitlines() if "->" in line]
    assert len(edges) == 2 and not any("label" in line for line in edges)
    assert not any(name in source for name in EDGE_SOURCES)
    assert "penwidth=3" in edges[0] and "#b4541e" in edges[0] and "style=dashed" in edges[1]
    assert source == dot_source(nodes, [DrawEdge("m", "a", "tool_result_agent_id", critical=True), DrawEdge("m", "b", "prompt_match")])


def test_hostile_descriptions_cannot_break_the_dot_or_the_svg() -> None:
    agents = [agent(f"a{index}", description=text, agent_type=text) for index, text in enumerate(HOSTILE)]
    nodes = [DrawNode("main", "main session", "working", "index.html")] + [
        DrawNode(item.agent_id, node_label(item, False), item.status, f"agents/{item.agent_id}.html", tooltip=node_tooltip(item)) for item in agents
    ]
    source = dot_source(nodes, [DrawEdge("main", item.agent_id, "tool_result_agent_id") for item in agents])
    store: dict[str, bytes] = {}
    svg = render_svg(source, store.get, store.__setitem__)
    if svg is None:
        pytest.skip(DOT_MISSING)
    text = svg.decode("utf-8")
    root = ET.fromstring(text)  # well-formed XML: no raw control character, no undefined entity
    assert text.count('class="node"') == len(nodes) and text.count('class="edge"') == len(agents)  # no node named "evil"
    assert "<script" not in text.lower() and "<b>" not in text
    for element in root.iter():
        assert not [name for name in element.attrib if name.rsplit("}", 1)[-1].lower().startswith("on")], element.attrib
        assert element.tag.rsplit("}", 1)[-1] not in {"script", "foreignObject", "style"}
    titles = [value for element in root.iter() for name, value in element.attrib.items() if name.endswith("}title")]
    assert any("<script>alert(1)</script>" in title for title in titles)  # an attribute's text, escaped in the bytes
    assert any("line one\nline two" in title for title in titles)  # a newline in a tooltip stays a line break
    labels = ["".join(element.itertext()) for element in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "&#1; &#x0; &lt;script&gt; &foo; & &amp;" in labels  # shown as written, never decoded
    assert "back\\slash\\ \\N \\G \\l \\" in labels


def test_bars_sit_at_their_dates_and_leave_gaps() -> None:
    first = date(2025, 1, 1)
    points = {first.isoformat(): Decimal("1"), (first + timedelta(days=10)).isoformat(): Decimal("2"),
              (first + timedelta(days=29)).isoformat(): Decimal("4")}
    svg = str(bar_chart(points, "cost per day"))
    bars = [(float(x), float(width)) for x, width in re.findall(r'<rect class="bar" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)]
    assert len(bars) == 3  # one bar a day with spend, none for the 27 days without
    day = AXIS / 30
    assert bars[0][0] == pytest.approx(PAD, abs=0.01)
    assert bars[1][0] == pytest.approx(PAD + 10 / 30 * AXIS, abs=0.01)
    assert bars[2][0] == pytest.approx(PAD + 29 * day, abs=0.01)
    assert bars[1][0] - (bars[0][0] + bars[0][1]) > 8 * day  # the empty days are a visible gap
    assert all(1 <= width <= day for _, width in bars)
    assert "<title>2025-01-11: $2.00</title>" in svg


def test_undated_cost_is_left_off_the_axis_and_said() -> None:
    svg = str(bar_chart({"2025-02-01": Decimal("1"), "2025-02-03": Decimal("1"), "unknown": Decimal("0.5")}, "cost per day"))
    assert 'aria-label="cost per day ($0.50 on days not known)"' in svg and "unknown" not in svg
    assert svg.count('class="bar"') == 2
    assert "$0.50 on days not known" in str(bar_chart({"unknown": Decimal("0.5")}, "c")) and bar_chart({}, "c") == Markup("")


def test_long_spans_give_a_handful_of_ticks_that_do_not_overlap() -> None:
    first = date(2024, 11, 17)
    for span in (1, 5, 12, 45, 100, 365, 1000, 4000):
        ticks = day_ticks(first, first + timedelta(days=span - 1))
        assert 1 <= len(ticks) <= 6, span
        positions = [((day - first).days + 0.5) * AXIS / span for day, _ in ticks]
        widths = [len(text) * CHAR_PX for _, text in ticks]
        assert all(right - left >= (a + b) / 2 for left, right, a, b in zip(positions, positions[1:], widths, widths[1:])), (span, ticks)
        assert all(first <= day <= first + timedelta(days=span - 1) for day, _ in ticks)
    svg = str(bar_chart({"2024-11-17": Decimal(1), "2025-11-16": Decimal(2)}, "year"))
    assert [text for text in re.findall(r'class="tick mid"[^>]*>([^<]+)<', svg)] == ["2025-01", "2025-03", "2025-05", "2025-07", "2025-09", "2025-11"]


def test_marks_on_the_cumulative_line_link_to_turns() -> None:
    points: list[tuple[str, Decimal | str]] = [("2025-03-01T10:00:00Z", "0.10"), ("2025-03-01T10:10:00Z", "0.30"), ("2025-03-01T10:20:00Z", "0.40")]
    marks = [
        ("2025-03-01T10:10:00Z", "agents/a1.html#m3", 'turn 3 <"quoted">'),
        ("2025-03-01T10:15:00Z", "javascript:alert(1)", "evil"),
        ("2025-03-01T10:15:00Z", "JaVa\tScRiPt:alert(1)", "evil too"),
        ("2025-03-01T10:15:00Z", "//evil.example/x", "other host"),
        ("2025-03-01T10:20:00Z", "index.html#m7", "turn 7"),
    ]
    svg = str(step_chart(points, "cumulative cost", marks))
    links = re.findall(r'<a class="mark" href="([^"]*)"><title>([^<]*)</title><circle cx="([\d.]+)" cy="([\d.]+)"', svg)
    assert [(href, title) for href, title, _, _ in links] == [("agents/a1.html#m3", "turn 3 &lt;&#34;quoted&#34;&gt;"), ("index.html#m7", "turn 7")]
    assert float(links[0][2]) == pytest.approx(PAD + AXIS / 2, abs=0.1) and float(links[1][2]) == pytest.approx(PAD + AXIS, abs=0.1)
    assert float(links[0][3]) > float(links[1][3])  # the line has risen by the later turn
    assert "javascript" not in svg.lower() and "evil.example" not in svg
    assert svg.count('<g class="mark">') == 3  # refused links still show their point and title, unlinked
    ET.fromstring(svg)
    assert str(step_chart(points, "no marks")).count("<circle") == 0


def macros() -> object:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined)
    # The file's other macros use the site's filters; these calls never reach them.
    env.filters.update(short_time=str, thousands=str, usd=str, markdown=str)
    env.globals["status_badge_html"] = status_badge  # as the site's environment has it (render/pages.py)
    return env.get_template("_macros.html").make_module({"preview_chars": 2000})


def test_unknown_status_shows_when_the_agent_was_last_active() -> None:
    module = macros()
    badge = str(module.status_badge("unknown", "2025-03-01T10:05:09.123Z"))  # type: ignore[attr-defined]
    assert '<span class="status unknown" title="No hook events' in badge and "state is not known" in badge
    assert 'last active <time datetime="2025-03-01T10:05:09.123Z">2025-03-01 10:05</time></span>' in badge
    assert ">status unknown</span>" in str(module.status_badge("unknown", None))  # type: ignore[attr-defined]
    assert str(module.status_badge("completed", "2025-03-01T10:05:09Z")) == '<span class="status completed">completed</span>'  # type: ignore[attr-defined]
    hostile = str(module.status_badge("unknown", '"><script>x</script>'))  # type: ignore[attr-defined]
    assert "<script>" not in hostile and "&#34;&gt;&lt;script&gt;" in hostile
