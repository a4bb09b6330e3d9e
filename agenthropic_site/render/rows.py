"""The index's table of every session, a session page's table of its agents and the status badge, written in Python, not Jinja.

The index shows one row per session, on every build that changes anything: at 500 sessions the
template's loop took 8.7 of the index's 12.4 ms, these rows take 4.6 ms (a one-append build
spends about 0.3 s). A session page shows one row per agent, on every append to the session: the
60 MB session's page (800 agents) took 85–110 ms with the loop, 47–89 ms with these rows, which
take 10–15 ms. The rows are the bytes the default theme's loops wrote (tests/test_rows.py compares
them); a theme that overrides `index.html` or `session.html` may still loop over
`model.recent_sessions` or `session.agents`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from markupsafe import Markup

from agenthropic_site.model.views import SessionSummary, SessionView
from agenthropic_site.render.formats import epoch_ms, thousands, usd
from agenthropic_site.render.fragments import escaped
from agenthropic_site.render.labels import linked_by

UNKNOWN_TITLE = "No hook events were received for it, or none recently, so its state is not known"


def status_badge(status: str, last_active: str | None) -> Markup:
    """Show an agent's or session's status; an unknown one shows when it was last active, if known."""
    if status != "unknown":
        return Markup(f'<span class="status {escaped(status)}">{escaped(status)}</span>')
    if not last_active:
        return Markup(f'<span class="status unknown" title="{UNKNOWN_TITLE}.">status unknown</span>')
    return Markup(
        f'<span class="status unknown" title="{UNKNOWN_TITLE}; this is the time of its last transcript record.">'
        f'last active <time datetime="{escaped(last_active)}">{escaped(last_active[:10])} {escaped(last_active[11:16])}</time></span>'
    )


def session_rows(sessions: Iterable[SessionSummary], root: str, short_time: Callable[[str | None], str]) -> Markup:
    """Return the index's session rows, each `<tr>` followed by a newline; `short_time` shows a time in the build's zone."""
    root = escaped(root)
    rows = []
    for session in sessions:
        sid = escaped(session.session_id)
        total = session.tokens.total
        excluded = session.excluded_reason
        if excluded:
            tokens, cost = "—", f'<span class="excluded" title="{escaped(excluded)}">excluded</span>'
        else:
            tokens, cost = thousands(total), usd(session.cost)  # digits, commas, signs and dashes: nothing to escape
        rows.append(
            f'<tr data-session="{sid}">\n'
            f'  <td class="col-title"><a href="{root}sessions/{sid}/index.html">{escaped(session.title or session.session_id)}</a></td>\n'
            f'  <td class="col-project">{escaped(session.cwd or session.project)}</td>\n'
            f'  <td class="col-date" data-sort="{epoch_ms(session.started_at)}">{escaped(short_time(session.started_at))}</td>\n'
            f'  <td class="col-status">{status_badge(session.status, session.ended_at)}</td>\n'
            f'  <td class="num col-tokens" data-sort="{total}">{tokens}</td>\n'
            f'  <td class="num col-cost" data-sort="{session.cost or 0}">{cost}</td>\n'
            "</tr>\n"
        )
    return Markup("".join(rows))


REPORTED_TITLE = "What the spawner's result reports of the agent's last request: shown apart, in no total"


def agent_rows(session: SessionView) -> Markup:
    """Return the session page's rows of its agents table, each `<tr>` followed by a newline."""
    critical = set(session.critical_path) if len(session.critical_path) > 1 else set()
    rows = []
    for agent in session.agents:
        agent_id = agent.agent_id
        name = escaped(agent.description or agent_id)
        if agent_id == session.session_id:
            label = "main"
        elif agent.has_transcript:
            label = f'<a href="agents/{escaped(agent_id)}.html">{name}</a>'
        else:
            label = f'{name} <span class="note">(transcript not in the corpus)</span>'
        tokens, subtree = agent.tokens.total, agent.subtree_tokens.total
        if not agent.has_transcript:
            reported = agent.reported.get("total_tokens") if agent.reported else None
            said = "not reported" if reported is None else f"{escaped(thousands(reported))} reported by the parent, not counted"
            figures = f'<td class="num" colspan="4" title="{REPORTED_TITLE}">{said}</td>\n'
        elif session.excluded_reason:
            figures = (f'<td class="num" data-sort="{tokens}">{thousands(tokens)}</td><td class="num">—</td>'
                       f'<td class="num" data-sort="{subtree}">{thousands(subtree)}</td><td class="num">—</td>')
        else:
            figures = (
                f'  <td class="num" data-sort="{tokens}">{thousands(tokens)}</td>\n'
                f'  <td class="num" data-sort="{escaped(agent.cost)}">{usd(agent.cost)}</td>\n'
                f'  <td class="num" data-sort="{subtree}">{thousands(subtree)}</td>\n'
                f'  <td class="num" data-sort="{escaped(agent.subtree_cost)}">{usd(agent.subtree_cost)}</td>'
            )
        opening = '<tr class="critical">' if agent_id in critical else "<tr>"
        rows.append(
            f'{opening}\n  <td class="depth-{min(agent.depth, 6)}">{label}</td>\n'
            f"  <td>{escaped(agent.kind)}</td><td>{escaped(agent.agent_type or '—')}</td>\n"
            f"  <td>{status_badge(agent.status, agent.last_seen_at)}</td>\n"
            f"  <td>{escaped(agent.outcome_cause or '—')}</td>\n"
            f"  <td>{escaped(linked_by(agent))}</td>\n"
            f"{figures}</tr>\n"
        )
    return Markup("".join(rows))
