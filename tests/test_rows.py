"""The index's session rows and the status badge, written in Python, are the bytes the Jinja loop and macro they replace wrote.

The reference templates below are the default theme's before render/rows.py took their place,
rendered by the site's own environment (autoescape, the same filters): any summary, hostile text
included, gives the same HTML both ways.
"""

from __future__ import annotations

import functools
from datetime import UTC, timedelta, timezone, tzinfo
from types import SimpleNamespace

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from agenthropic_site.model.views import AgentView, SessionSummary
from agenthropic_site.parse.model import Tokens
from agenthropic_site.render.formats import epoch_ms, short_time, thousands, usd
from agenthropic_site.render.labels import linked_by
from agenthropic_site.render.rows import agent_rows, session_rows, status_badge

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
  <td class="col-date" data-sort="{{ session.started_at | epoch_ms }}">{{ session.started_at | short_time }}</td>
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
    env.filters.update(usd=usd, thousands=thousands, short_time=functools.partial(short_time, zone=zone), epoch_ms=epoch_ms)
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


# The session page's agents table as the default theme's loop wrote it before render/rows.py took its place.
AGENT_ROWS = BADGE + """<tbody>
{% for agent in session.agents %}
<tr{% if agent.agent_id in session.critical_path and session.critical_path | length > 1 %} class="critical"{% endif %}>
  <td class="depth-{{ [agent.depth, 6] | min }}">{% if agent.agent_id == session.session_id %}main\
{% elif agent.has_transcript %}<a href="agents/{{ agent.agent_id }}.html">{{ agent.description or agent.agent_id }}</a>\
{% else %}{{ agent.description or agent.agent_id }} <span class="note">(transcript not in the corpus)</span>{% endif %}</td>
  <td>{{ agent.kind }}</td><td>{{ agent.agent_type or "—" }}</td>
  <td>{{ status_badge(agent.status, agent.last_seen_at) }}</td>
  <td>{{ agent.outcome_cause or "—" }}</td>
  <td>{{ agent | linked_by }}</td>
  {% if not agent.has_transcript %}\
<td class="num" colspan="4" title="What the spawner's result reports of the agent's last request: shown apart, in no total">\
{% if agent.reported and agent.reported.total_tokens is not none %}{{ agent.reported.total_tokens | thousands }} reported by the parent, not counted\
{% else %}not reported{% endif %}</td>
  {% elif session.excluded_reason %}<td class="num" data-sort="{{ agent.tokens.total }}">{{ agent.tokens.total | thousands }}</td><td class="num">—</td>\
<td class="num" data-sort="{{ agent.subtree_tokens.total }}">{{ agent.subtree_tokens.total | thousands }}</td><td class="num">—</td>{% else %}
  <td class="num" data-sort="{{ agent.tokens.total }}">{{ agent.tokens.total | thousands }}</td>
  <td class="num" data-sort="{{ agent.cost }}">{{ agent.cost | usd }}</td>
  <td class="num" data-sort="{{ agent.subtree_tokens.total }}">{{ agent.subtree_tokens.total | thousands }}</td>
  <td class="num" data-sort="{{ agent.subtree_cost }}">{{ agent.subtree_cost | usd }}</td>{% endif %}
</tr>
{% endfor %}
</tbody>"""
AGENT_IDS = st.sampled_from(["main-id", "a1", "a<2>", "a&3"]) | TEXT


@st.composite
def agents(draw: st.DrawFn) -> AgentView:
    tokens = Tokens(input=draw(st.integers(0, 10**12)), output=draw(st.integers(0, 10**9)))
    subtree = tokens + Tokens(cache_read=draw(st.integers(0, 10**9)))
    return AgentView(
        agent_id=draw(AGENT_IDS), parent_agent_id=draw(st.none() | AGENT_IDS), kind=draw(TEXT),
        edge_source=draw(st.none() | st.sampled_from(["tool_use_id", "agent_id_in_result", "description_match"]) | TEXT),
        agent_type=draw(st.none() | TEXT), description=draw(st.none() | TEXT), status=draw(STATUS), outcome_cause=draw(st.none() | TEXT),
        notification_status=None, spawn_tool_use_id=None, first_seen_at=None, last_seen_at=draw(st.none() | INSTANT),
        tokens=tokens, cost=draw(st.decimals(min_value=-5, max_value=10_000, places=8, allow_nan=False)), subtree_tokens=subtree,
        subtree_cost=draw(st.decimals(min_value=0, max_value=10_000, places=8, allow_nan=False)), depth=draw(st.integers(0, 12)),
        has_transcript=draw(st.booleans()), reported=draw(st.none() | st.fixed_dictionaries({"total_tokens": st.none() | st.integers(0, 10**9)})),
    )


@settings(max_examples=300, deadline=None)
@given(
    members=st.lists(agents(), max_size=5), session_id=st.sampled_from(["main-id", "a1"]), excluded=st.none() | TEXT,
    critical=st.lists(AGENT_IDS, max_size=3),
)
def test_the_agent_rows_are_the_template_loops_bytes(members: list[AgentView], session_id: str, excluded: str | None, critical: list[str]) -> None:
    # The rows read a session's id, agents, critical path and exclusion, and nothing else of it.
    session = SimpleNamespace(session_id=session_id, agents=members, excluded_reason=excluded, critical_path=critical)
    env = _environment(UTC)
    env.filters["linked_by"] = linked_by
    expected = env.from_string(AGENT_ROWS).render(session=session)
    assert "<tbody>\n" + str(agent_rows(session)) + "</tbody>" == expected  # type: ignore[arg-type]
