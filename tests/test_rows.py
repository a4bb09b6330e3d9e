"""The index's session rows and the status badge, written in Python, are the bytes the Jinja loop and macro they replace wrote.

The reference templates below are the default theme's before render/rows.py took their place,
rendered by the site's own environment (autoescape, the same filters): any summary, hostile text
included, gives the same HTML both ways.
"""

from __future__ import annotations

import functools
from datetime import UTC, timedelta, timezone, tzinfo

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.model.views import SessionSummary
from agenthropic_site.parse.model import Tokens
from agenthropic_site.render.formats import short_time, thousands, usd
from agenthropic_site.render.rows import session_rows, status_badge

BADGE = """{% macro status_badge(status, last_active) -%}
{% if status == "unknown" -%}
<span class="status unknown" title="No hook events were received for it, or none recently, so its state is not known\
{% if last_active %}; this is the time of its last transcript record{% endif %}.">
{%- if last_active %}last active <time datetime="{{ last_active }}">{{ last_active[:10] }} {{ last_active[11:16] }}</time>{% else %}status unknown{% endif -%}
</span>
{%- else -%}
<span class="status {{ status }}">{{ status }}</span>
{%- endif %}
{%- endmacro %}
"""
ROWS = BADGE + """<tbody>
{% for session in sessions %}
<tr data-session="{{ session.session_id }}">
  <td class="col-title"><a href="{{ root }}sessions/{{ session.session_id }}/index.html">{{ session.title or session.session_id }}</a></td>
  <td class="col-project">{{ session.cwd or session.project }}</td>
  <td class="col-date">{{ session.started_at | short_time }}</td>
  <td class="col-status">{{ status_badge(session.status, session.ended_at) }}</td>
  <td class="num col-tokens" data-sort="{{ session.tokens.total }}">\
{% if session.excluded_reason %}—{% else %}{{ session.tokens.total | thousands }}{% endif %}</td>
  <td class="num col-cost" data-sort="{{ session.cost or 0 }}">\
{% if session.excluded_reason %}<span class="excluded" title="{{ session.excluded_reason }}">excluded</span>{% else %}{{ session.cost | usd }}{% endif %}</td>
</tr>
{% endfor %}
</tbody>"""

HOSTILE = st.sampled_from(["", "<script>alert(1)</script>", "a & b", '"quoted"', "it's", "{{ x }}", "2026-05-01T10:20:30.123Z", "x" * 30, "é\u2028"])
TEXT = HOSTILE | st.text(max_size=24)
INSTANT = st.none() | TEXT | st.datetimes(timezones=st.just(UTC)).map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")
COST = st.none() | st.decimals(min_value=-5, max_value=10_000, places=8, allow_nan=False)
STATUS = st.sampled_from(["unknown", "working", "idle", "done", "error", "<b>"]) | TEXT


@st.composite
def summaries(draw: st.DrawFn) -> SessionSummary:
    return SessionSummary(
        session_id=draw(TEXT), project=draw(TEXT), title=draw(st.none() | TEXT), cwd=draw(st.none() | TEXT),
        started_at=draw(INSTANT), ended_at=draw(INSTANT), excluded_reason=draw(st.none() | TEXT), main_status=None,
        main_last_seen=None, open_last_seen=[], agent_ids=[], compactions=0, failed_agents=0,
        tokens=Tokens(input=draw(st.integers(0, 10**12)), output=draw(st.integers(0, 10**9))), cost=draw(COST), by_model={},
        cost_by_day={}, cost_by_category={}, collisions=0, prompts=[], view_digest="d", status=draw(STATUS),
    )


def _environment(zone: tzinfo) -> jinja2.Environment:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(usd=usd, thousands=thousands, short_time=functools.partial(short_time, zone=zone))
    return env


ZONES = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))])


@settings(max_examples=300, deadline=None)
@given(sessions=st.lists(summaries(), max_size=4), root=st.sampled_from(["", "../", "../../"]), zone=ZONES)
def test_the_rows_are_the_template_loops_bytes(sessions: list[SessionSummary], root: str, zone: timezone) -> None:
    expected = _environment(zone).from_string(ROWS).render(sessions=sessions, root=root)
    found = "<tbody>\n" + str(session_rows(sessions, root, functools.partial(short_time, zone=zone))) + "</tbody>"
    assert found == expected


@settings(max_examples=300, deadline=None)
@given(status=STATUS, last_active=st.none() | TEXT)
def test_the_badge_is_the_macros_bytes(status: str, last_active: str | None) -> None:
    expected = _environment(UTC).from_string(BADGE + "{{ status_badge(status, last_active) }}").render(status=status, last_active=last_active)
    assert str(status_badge(status, last_active)) == expected


def test_a_session_without_title_or_cost_shows_its_id_and_a_dash() -> None:
    summary = SessionSummary("s<1>", "p", None, None, None, None, None, None, None, [], [], 0, 0, Tokens(1234), None, {}, {}, {}, 0, [], "d")
    html = str(session_rows([summary], "", short_time))
    assert '<a href="sessions/s&lt;1&gt;/index.html">s&lt;1&gt;</a>' in html
    assert 'data-sort="1234">1,234</td>' in html and 'data-sort="0">—</td>' in html
    assert html.endswith("</tr>\n")
