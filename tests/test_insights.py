"""Insights (issue 17): context growth, cache efficiency, tool activity and weeks, against what the generator wrote."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import DEMO_EXPECTED, build
from fixtures import pricing
from records import SID, assistant, usage, user, write

from agenthropic_site.model.insights import ContextPoint, Week, hour_key, largest_requests, parsed_hour
from agenthropic_site.render.charts import context_chart, week_chart, weeks_charts

SESSIONS = sorted(p.stem for p in DEMO_EXPECTED.glob("*-*-*-*-*.json"))
SVG = "{http://www.w3.org/2000/svg}"
PROJECT = "-home-u-app"


def expected(session_id: str) -> dict[str, Any]:
    return json.loads((DEMO_EXPECTED / f"{session_id}.json").read_text())


def requests_of(session_id: str) -> list[dict[str, Any]]:
    """Return the requests the generator recorded as counted in a session (fixtures/truth.py)."""
    return expected(session_id)["requests"]


def site_session(site: Path, session_id: str) -> dict[str, Any]:
    return json.loads((site / "data" / "sessions" / f"{session_id}.json").read_text())


def context_of(tokens: dict[str, int]) -> int:
    return tokens["input"] + tokens["cache_read"] + tokens["cache_write_5m"] + tokens["cache_write_1h"]


def speed_of(request: dict[str, Any]) -> str:
    """Tell the generator's speed of a priced request from its own price (the list does not carry it)."""
    for speed in ("standard", "fast"):
        cost = pricing.request_cost(request["model"], request["tokens"], speed)
        if cost is not None and pricing.fmt(pricing.total(tuple(cost.values()))) == request["cost_usd"]:
            return speed
    raise AssertionError(f"no speed gives the recorded price of {request}")


def uncached_of(request: dict[str, Any]) -> Decimal:
    """Price a request as the generator would with every cache read and write sent as plain input."""
    tokens = request["tokens"]
    plain = {"input": context_of(tokens), "output": tokens["output"], "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0}
    cost = pricing.request_cost(request["model"], plain, speed_of(request))
    assert cost is not None
    return pricing.total(tuple(cost.values()))


# --- context growth ----------------------------------------------------------------------------------


@pytest.mark.parametrize("session_id", SESSIONS)
def test_context_per_request_matches_the_generator(demo_site: Path, session_id: str) -> None:
    truth = requests_of(session_id)
    got = site_session(demo_site, session_id)["context"]
    want = sorted((r["at"] or "", r["agent_id"], context_of(r["tokens"]), context_of(r["tokens"]) > 200_000) for r in truth)
    assert sorted((p["at"] or "", p["agent_id"], p["context_tokens"], p["long_context"]) for p in got) == want
    assert [p["at"] or "" for p in got] == sorted(p["at"] or "" for p in got), "in time order"


def test_the_demo_has_a_long_context_request_and_it_is_marked(demo_site: Path) -> None:
    marked = [(sid, p) for sid in SESSIONS for p in site_session(demo_site, sid)["context"] if p["long_context"]]
    truth = [(sid, r) for sid in SESSIONS for r in requests_of(sid) if context_of(r["tokens"]) > 200_000]
    assert truth, "the demo corpus has a request over 200k"
    assert sorted((sid, p["at"], p["context_tokens"]) for sid, p in marked) == sorted((sid, r["at"], context_of(r["tokens"])) for sid, r in truth)
    for sid, _ in truth:
        page = (demo_site / "sessions" / sid / "index.html").read_text()
        table = page.split('class="compact largest-requests"', 1)[1].split("</table>", 1)[0]
        assert 'class="long-context"' in table


@pytest.mark.parametrize("session_id", SESSIONS)
def test_largest_requests_table_lists_the_ten_largest(demo_site: Path, session_id: str) -> None:
    truth = requests_of(session_id)
    page = (demo_site / "sessions" / session_id / "index.html").read_text()
    if not truth:
        assert "largest-requests" not in page
        return
    table = page.split('class="compact largest-requests"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>\s*<td>.*?</tr>", table, re.S)
    shown = [int(re.findall(r'<td class="num">([\d,]+)', row)[0].replace(",", "")) for row in rows]
    assert shown == sorted((context_of(r["tokens"]) for r in truth), reverse=True)[:10]


def test_largest_requests_orders_by_size_then_time() -> None:
    points = [ContextPoint(f"2026-01-01T10:00:{i:02d}Z", "a", "m", size, None) for i, size in enumerate([5, 9, 9, 1, 7])]
    assert [(p.context, p.at[-3:-1]) for p in largest_requests(points, 3)] == [(9, "01"), (9, "02"), (7, "04")]


# --- cache efficiency --------------------------------------------------------------------------------


@pytest.mark.parametrize("session_id", SESSIONS)
def test_cache_efficiency_matches_the_generator(demo_site: Path, session_id: str) -> None:
    truth = requests_of(session_id)
    got = site_session(demo_site, session_id)["cache_efficiency"]
    read = sum(r["tokens"]["cache_read"] for r in truth)
    every = sum(context_of(r["tokens"]) for r in truth)
    assert got["input_tokens"] == every and got["cache_read_tokens"] == read
    assert got["cache_read_share"] == (round(read / every, 6) if every else None)
    for ttl in ("5m", "1h"):
        assert got[f"cache_write_{ttl}"]["tokens"] == sum(r["tokens"][f"cache_write_{ttl}"] for r in truth)
    if expected(session_id)["cost_usd"] is None:
        assert (got["cost_usd"], got["uncached_cost_usd"], got["saved_usd"]) == (None, None, None)
        return
    uncached = pricing.total([uncached_of(r) for r in truth])
    assert got["uncached_cost_usd"] == pricing.fmt(uncached)
    assert got["cost_usd"] == expected(session_id)["cost_usd"]
    assert Decimal(got["saved_usd"]) == uncached - Decimal(expected(session_id)["cost_usd"])


def test_overall_and_project_cache_efficiency_sum_the_sessions(demo_site: Path) -> None:
    index = json.loads((demo_site / "data" / "index.json").read_text())
    by_project: dict[str, list[str]] = defaultdict(list)
    for sid in SESSIONS:
        by_project[expected(sid)["project"]].append(sid)
    for scope, members in [("totals", SESSIONS), *((project, ids) for project, ids in by_project.items())]:
        figures = index["totals"]["cache_efficiency"] if scope == "totals" else next(
            p["cache_efficiency"] for p in index["projects"] if p["project"] == scope
        )
        truth = [r for sid in members for r in requests_of(sid)]
        priced = [r for sid in members if expected(sid)["cost_usd"] is not None for r in requests_of(sid)]
        assert figures["cache_read_tokens"] == sum(r["tokens"]["cache_read"] for r in truth), scope
        assert figures["uncached_cost_usd"] == pricing.fmt(pricing.total([uncached_of(r) for r in priced])), scope


# --- projects over time ------------------------------------------------------------------------------


def monday(at: str) -> str:
    day = datetime.fromisoformat(at.replace("Z", "+00:00")).date()
    return (day - timedelta(days=day.weekday())).isoformat()


def test_weekly_project_cost_matches_the_generator(demo_site: Path) -> None:
    index = json.loads((demo_site / "data" / "index.json").read_text())
    want: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for sid in SESSIONS:
        truth = expected(sid)
        if truth["cost_usd"] is None:
            continue
        for r in requests_of(sid):
            if r["at"]:
                want[truth["project"]][monday(r["at"])] += Decimal(r["cost_usd"])
    started = {s["session_id"]: s["started_at"] for s in index["sessions"]}
    for project in index["projects"]:
        weeks = project["weeks"]
        assert [w["start"] for w in weeks] == sorted(w["start"] for w in weeks)
        assert all(date.fromisoformat(w["start"]).weekday() == 0 for w in weeks)
        got = {w["start"]: Decimal(w["cost_usd"]) for w in weeks if Decimal(w["cost_usd"])}
        assert got == {week: cost for week, cost in want[project["project"]].items() if cost}, project["project"]
        members = [sid for sid in SESSIONS if expected(sid)["project"] == project["project"] and started.get(sid)]
        assert {w["start"]: w["sessions"] for w in weeks if w["sessions"]} == dict(Counter(monday(started[sid]) for sid in members))


# --- tool activity (a hand-built corpus whose calls are known) ---------------------------------------


def tool_use(tool_id: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {}}


def tool_result(tool_id: str, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "done", "is_error": error}


def tools_corpus(root: Path) -> Path:
    """One session: Read twice (answered after 2 s and 4 s), Bash once with an error, an MCP call without a result."""
    u = usage(inp=10, out=5, read=100, w5=20)
    write(
        root / PROJECT / f"{SID}.jsonl",
        user("u1", "start", ts="2026-01-05T10:00:00.000Z"),
        assistant("a1", "msg_1", "req_1", u, content=[tool_use("t1", "Read"), tool_use("t2", "Bash")], ts="2026-01-05T10:00:01.000Z"),
        user("u2", [tool_result("t1")], ts="2026-01-05T10:00:03.000Z"),
        user("u3", [tool_result("t2", error=True)], ts="2026-01-05T10:00:04.000Z"),
        assistant("a2", "msg_2", "req_2", u, content=[tool_use("t3", "Read")], ts="2026-01-05T10:00:05.000Z"),
        user("u4", [tool_result("t3")], ts="2026-01-05T10:00:09.000Z"),
        assistant("a3", "msg_3", "req_3", u, content=[tool_use("t4", "mcp__github__get_issue")], ts="2026-01-05T10:00:10.000Z"),
    )
    return root


def test_tool_calls_errors_and_times_per_session_and_project(tmp_path: Path) -> None:
    corpus = tools_corpus(tmp_path / "corpus")
    assert build(corpus, tmp_path / "site", tmp_path / "cache") == 0
    session = site_session(tmp_path / "site", SID)
    got = {t["tool"]: (t["calls"], t["errors"], t["timed_calls"], t["median_ms"], t["max_ms"], t["mcp_server"]) for t in session["tools"]["all"]}
    assert got == {
        "Read": (2, 0, 2, 3000, 4000, None),
        "Bash": (1, 1, 1, 3000, 3000, None),
        "mcp__github__get_issue": (1, 0, 0, None, None, "github"),
    }
    assert [t["tool"] for t in session["tools"]["all"]] == ["Read", "Bash", "mcp__github__get_issue"], "most called first, then by name"
    assert session["tools"]["by_agent"] == {SID: session["tools"]["all"]}
    project = json.loads((tmp_path / "site" / "data" / "index.json").read_text())["projects"][0]
    assert project["tools"] == [{"tool": "Read", "calls": 2, "errors": 0}, {"tool": "Bash", "calls": 1, "errors": 1},
                                {"tool": "mcp__github__get_issue", "calls": 1, "errors": 0}]
    assert project["mcp_servers"] == [{"server": "github", "calls": 1, "errors": 0}]
    page = (tmp_path / "site" / "sessions" / SID / "index.html").read_text()
    table = page.split('class="sortable compact tool-activity"', 1)[1].split("</table>", 1)[0]
    assert "<code>Bash</code>" in table and 'class="has-errors"' in table and "3.0 s" in table


def test_a_session_without_requests_or_times_still_renders(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    untimed = user("u1", "hello", ts="")
    write(corpus / PROJECT / f"{SID}.jsonl", untimed, assistant("a1", "msg_1", "req_1", usage(inp=3, out=1), ts=""))
    other = "22222222-3333-4444-8555-666666666666"
    write(corpus / PROJECT / f"{other}.jsonl", user("u1", "only a prompt", session=other))
    assert build(corpus, tmp_path / "site", tmp_path / "cache") in (0, 1)
    for sid in (SID, other):
        assert (tmp_path / "site" / "sessions" / sid / "index.html").is_file()
        assert site_session(tmp_path / "site", sid)["cache_efficiency"]["input_tokens"] in (0, 3)
    assert site_session(tmp_path / "site", other)["context"] == []
    assert site_session(tmp_path / "site", other)["cache_efficiency"]["cache_read_share"] is None
    assert (tmp_path / "site" / "projects").is_dir()


# --- the charts ----------------------------------------------------------------------------------------


def svg_of(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def test_context_chart_draws_a_line_per_agent_the_limit_boundaries_and_long_requests() -> None:
    points = [
        ContextPoint("2026-01-01T10:00:00Z", "main", "claude-sonnet-4-5", 50_000, None),
        ContextPoint("2026-01-01T10:01:00Z", "sub", "claude-haiku-4-5", 20_000, None),
        ContextPoint("2026-01-01T10:02:00Z", "main", "claude-sonnet-4-5", 250_000, None),
        ContextPoint("2026-01-01T10:03:00Z", "sub", "claude-haiku-4-5", 30_000, None),
        ContextPoint(None, "main", "claude-sonnet-4-5", 999, None),
    ]
    svg = svg_of(context_chart(points, [("2026-01-01T10:02:30Z", "compaction <b>")], {"sub": "<script>x</script>"}, "context"))
    lines = svg.findall(f"{SVG}polyline")
    assert [line.get("class") for line in lines] == ["series s0", "series s1"]
    assert [len(line.get("points", "").split()) for line in lines] == [2, 2], "untimed requests have no place on the axis"
    assert [c.get("class") for c in svg.iter(f"{SVG}circle")] == ["long s0"]
    assert len(svg.findall(f"{SVG}line[@class='boundary']")) == 1
    assert svg.find(f"{SVG}line[@class='boundary']/{SVG}title").text == "compaction <b>"  # escaped in the markup, text here
    assert len(svg.findall(f"{SVG}line[@class='limit']")) == 1 and len(svg.findall(f"{SVG}line[@class='threshold']")) == 1
    assert "limit 1M" in "".join(svg.itertext())
    assert "<script>x</script>" in "".join(svg.itertext()) and "<script" not in str(context_chart(points, [], {"sub": "<script>"}, "c"))
    # The biggest request reaches the top of a 1M scale no higher than the limit: 250k sits a quarter of the way up.
    limit_y = float(svg.find(f"{SVG}line[@class='limit']").get("y1", "0"))
    assert limit_y == pytest.approx(24.0)


def test_context_chart_without_times_or_requests_is_empty() -> None:
    assert str(context_chart([], [], {}, "c")) == ""
    assert str(context_chart([ContextPoint(None, "a", "m", 5, None)], [], {}, "c")) == ""
    only = svg_of(context_chart([ContextPoint("2026-01-01T10:00:00Z", "a", "m", 5, None)], [], {}, "c"))
    assert only.find(f"{SVG}line[@class='limit']") is not None and not only.findall(f"{SVG}line[@class='threshold']")
    assert [c.get("class") for c in only.iter(f"{SVG}circle")] == ["dot s0"], "a lone request is drawn as a dot"


def test_week_chart_puts_weeks_on_a_time_axis_with_gaps() -> None:
    weeks = [Week(date(2026, 1, 5), Decimal("2"), 1), Week(date(2026, 1, 12), Decimal(0), 2), Week(date(2026, 2, 2), Decimal("4"), 1)]
    cost, sessions = weeks_charts(weeks)
    bars = svg_of(cost).findall(f"{SVG}rect")
    assert [bar.find(f"{SVG}title").text for bar in bars] == ["week of 2026-01-05: $2.00", "week of 2026-02-02: $4.00"]
    x = [float(bar.get("x", "0")) for bar in bars]
    width = float(bars[0].get("width", "0"))
    assert x[1] - x[0] == pytest.approx(4 * (width + 2.0), rel=0.01), "four weeks apart: the empty weeks are gaps"
    assert float(bars[1].get("height", "0")) == pytest.approx(2 * float(bars[0].get("height", "0")))
    assert [bar.find(f"{SVG}title").text for bar in svg_of(sessions).findall(f"{SVG}rect")] == [
        "week of 2026-01-05: 1", "week of 2026-01-12: 2", "week of 2026-02-02: 1"
    ]
    assert str(week_chart([], "nothing")) == ""


def _two_digits(top: int) -> st.SearchStrategy[str]:
    return st.integers(0, top).map(lambda value: f"{value:02d}")


# Instants shaped as transcripts write them, with every part also out of range, and their near misses.
INSTANTS = st.builds(
    lambda year, month, day, hour, minute, second, fraction, zone: f"{year}-{month}-{day}T{hour}:{minute}:{second}{fraction}{zone}",
    st.integers(0, 9999).map(lambda value: f"{value:04d}") | st.sampled_from(["999", "12025", "２０２６"]),
    _two_digits(14), _two_digits(33), _two_digits(26), _two_digits(62), _two_digits(62),
    st.sampled_from(["", ".1", ".12", ".123", ".1234", ".12345", ".123456", ".1234567", ",123"]),
    st.sampled_from(["Z", "", "z", "ZZ", "+00:00", "+05:30", "-08:00", " Z"]),
)


@settings(max_examples=600, deadline=None)
@given(at=INSTANTS | st.text(max_size=30))
@example(at="0999-01-01T10:00:00.123Z")  # strftime writes the year as 999
@example(at="2026-02-29T10:00:00.123Z")  # no such day
@example(at="2026-01-01T24:00:00Z")  # no such hour
@example(at="2026-01-01T10:00:00.1234567Z")  # seven digits of fraction: parsed
@example(at="2026-04-28T10:15:02.880Z")  # as transcripts write them
@example(at="0001-01-01T00:00:00+05:30")  # before year 1 in UTC: no hour, never an OverflowError
def test_the_hour_of_an_instant_is_the_hour_its_parse_gives(at: str) -> None:
    """The shortcut for instants in the transcripts' own form gives what parsing the instant gives, for any text."""
    assert hour_key(at) == parsed_hour(at)
