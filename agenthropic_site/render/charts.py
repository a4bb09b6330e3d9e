"""Server-side SVG charts: no charting library, no canvas, no inline styles."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from markupsafe import Markup, escape

from agenthropic_site.model.insights import LONG_CONTEXT_TOKENS, ContextPoint, Week, context_limit
from agenthropic_site.model.views import AgentView, SessionView

WIDTH, HEIGHT, PAD = 640, 160, 24
AXIS = WIDTH - 2 * PAD
BAR_MAX = 40.0  # a bar wider than this (a span of a few days) is centred on its day instead
CHAR_PX = 6.0  # width of one tick character at the charts' 10 px font, rounded up
TICK_GAP = 12.0
MAX_TICKS = 6
MARK_RADIUS = 3
# A mark's link: a relative page path and an optional `#fragment`, nothing else. Without a colon
# there is no scheme (`javascript:`), and without a leading `//` no other host.
SAFE_MARK_HREF_RE = re.compile(r"^(?!//)[A-Za-z0-9._/-]*(#[A-Za-z0-9._-]+)?$")
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Tick spacings tried in order, each (days, months); the first whose labels do not overlap wins.
_TICK_STEPS = ((1, 0), (2, 0), (7, 0), (14, 0), (0, 1), (0, 2), (0, 3), (0, 6), (0, 12), (0, 24), (0, 60), (0, 120))


def _money(amount: Decimal) -> str:
    return f"${amount.quantize(Decimal('0.01'))}"


def _open_svg(label: str, linked: bool = False) -> str:
    # A chart holding links is a group, not an image: assistive technology reads an image as one
    # thing and hides its parts, so links inside one could be reached by Tab but never named.
    role = "group" if linked else "img"
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="{role}" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>'
    )


def _day(key: str) -> date | None:
    if not _DAY_RE.match(key):
        return None
    try:
        return date.fromisoformat(key)
    except ValueError:
        return None


def _month_ticks(first: date, last: date, months: int) -> list[date]:
    # The first of every `months`-th month counted from year 0: the same months are labelled
    # whatever day the data starts on.
    index = first.year * 12 + first.month - 1 + (first.day > 1)
    index += -index % months
    ticks = []
    while (day := date(index // 12, index % 12 + 1, 1)) <= last:
        ticks.append(day)
        index += months
    return ticks


def day_ticks(first: date, last: date) -> list[tuple[date, str]]:
    """Return a handful of dates between two days to label a time axis with, spaced so their labels do not overlap."""
    span = (last - first).days + 1
    day_px = AXIS / span
    for days, months in _TICK_STEPS:
        if days:
            offsets = range(0, span, days)
            if len(offsets) > MAX_TICKS:  # too many to label: do not make a date for each (a corpus of years has thousands of days)
                continue
            ticks = [(day, day.isoformat()) for day in (first + timedelta(days=offset) for offset in offsets)]
            spacing, chars = days * day_px, 10
        else:
            ticks = [(day, day.isoformat()[:7] if months < 12 else str(day.year)) for day in _month_ticks(first, last, months)]
            spacing, chars = 28 * months * day_px, 7 if months < 12 else 4
        if ticks and len(ticks) <= MAX_TICKS and spacing >= chars * CHAR_PX + TICK_GAP:
            return ticks
    return [(first, first.isoformat())]


def _time_bar(x: float, height: float, width: float, title: str) -> str:
    """Draw one bar of a chart on a time axis, standing on the axis, with its hover title."""
    return (f'<rect class="bar" x="{x:.2f}" y="{HEIGHT - PAD - height:.2f}" width="{width:.2f}" height="{height:.2f}">'
            f"<title>{escape(title)}</title></rect>")


def _time_ticks(first: date, last: date, day_px: float) -> list[str]:
    """Draw the date ticks of a time axis from `first` to `last`, each label centred on its tick but kept inside the picture."""
    parts = []
    for day, text in day_ticks(first, last):
        x = PAD + ((day - first).days + 0.5) * day_px
        half = len(text) * CHAR_PX / 2
        parts.append(f'<line class="tickmark" x1="{x:.2f}" y1="{HEIGHT - PAD}" x2="{x:.2f}" y2="{HEIGHT - PAD + 4}"/>')
        parts.append(f'<text class="tick mid" x="{min(max(x, half), WIDTH - half):.2f}" y="{HEIGHT - 6}">{escape(text)}</text>')
    return parts


def bar_chart(points: dict[str, Decimal], label: str) -> Markup:
    """Draw cost per day on a time axis from the first day to the last: one bar a day at its date, days without spend left empty.

    Keys are `YYYY-MM-DD`; any other key (such as "unknown") has no place on the axis, and its sum is said in the label.
    """
    if not points:
        return Markup("")
    days: dict[date, tuple[str, Decimal]] = {}
    undated = Decimal(0)
    undated_keys = 0
    for key, value in points.items():
        day = _day(key)
        if day is None:
            undated += value
            undated_keys += 1
        else:
            days[day] = (key, value)
    note = f"{_money(undated)} on days not known" if undated_keys else ""
    parts = [_open_svg(f"{label} ({note})" if note else label)]
    if note:
        parts.append(f'<text class="tick end" x="{WIDTH - PAD}" y="{PAD - 8}">+ {escape(note)}</text>')
    if not days:
        parts.append("</svg>")
        return Markup("".join(parts))
    ordered = sorted(days.items())
    first, last = ordered[0][0], ordered[-1][0]
    day_px = AXIS / ((last - first).days + 1)
    width = min(max(day_px - (1.0 if day_px >= 3 else 0.0), 1.0), BAR_MAX)
    top = max(value for _, (_, value) in ordered) or Decimal(1)
    for day, (key, value) in ordered:
        height = float(value / top) * (HEIGHT - 2 * PAD)
        x = PAD + (day - first).days * day_px + max(day_px - BAR_MAX, 0.0) / 2
        parts.append(_time_bar(x, height, width, f"{key}: {_money(value)}"))
    parts += _time_ticks(first, last, day_px)
    parts.append(f'<text class="tick" x="{PAD}" y="{PAD - 8}">max {_money(top)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def safe_mark_href(href: str) -> bool:
    """Tell whether a link may be put on a chart mark: a relative page path with an optional fragment, never a scheme."""
    return SAFE_MARK_HREF_RE.match(href) is not None


def _seconds(instant: str) -> float:
    moment = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    # An instant without an offset is UTC, never this machine's zone: the chart's bytes must not depend on it.
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def step_chart(points: list[tuple[str, Decimal | str]], label: str, marks: Sequence[tuple[str, str, str]] = ()) -> Markup:
    """Draw a cumulative series of (ISO instant, amount) as a step line over real time.

    Each mark `(instant, href, title)` is a small circle on the line at its instant, a link to `href`
    (a relative page URL, as `agents/a1.html#m3`; one with a scheme is drawn without its link) with `title` on hover.
    """
    if len(points) < 2:
        return Markup("")
    series = [(at, Decimal(str(value))) for at, value in points]
    times = [_seconds(at) for at, _ in series]
    start, span = times[0], (times[-1] - times[0]) or 1.0
    top = series[-1][1] or Decimal(1)

    def x_of(moment: float) -> float:
        return PAD + (moment - start) / span * AXIS

    def y_of(value: Decimal) -> float:
        return HEIGHT - PAD - float(value / top) * (HEIGHT - 2 * PAD)

    polyline: list[str] = []
    previous_y = float(HEIGHT - PAD)
    for moment, (_, value) in zip(times, series):
        x, y = x_of(moment), y_of(value)
        polyline.append(f"{x:.1f},{previous_y:.1f} {x:.1f},{y:.1f}")
        previous_y = y
    first, last = series[0][0], series[-1][0]
    parts = [
        _open_svg(label),
        f'<polyline class="line" points="{" ".join(polyline)}"/>',
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 6}">{escape(first[:16].replace("T", " "))}</text>',
        f'<text class="tick end" x="{WIDTH - PAD}" y="{HEIGHT - 6}">{escape(last[:16].replace("T", " "))}</text>',
        f'<text class="tick" x="{PAD}" y="{PAD - 8}">total {_money(top)}</text>',
    ]
    for instant, href, title in marks:
        try:
            moment = _seconds(instant)
        except ValueError:
            continue
        index = bisect_right(times, moment) - 1
        if index < 0 or moment > times[-1]:
            continue  # outside the line: nothing to sit on
        circle = f'<title>{escape(title)}</title><circle cx="{x_of(moment):.1f}" cy="{y_of(series[index][1]):.1f}" r="{MARK_RADIUS}"/>'
        if safe_mark_href(href):
            parts.append(f'<a class="mark" href="{escape(href)}">{circle}</a>')
        else:
            parts.append(f'<g class="mark">{circle}</g>')
    parts.append("</svg>")
    if any(part.startswith('<a class="mark"') for part in parts):
        parts[0] = _open_svg(label, linked=True)
    return Markup("".join(parts))


# --- context growth and weeks ------------------------------------------------------------------------

CONTEXT_HEIGHT = 220
SERIES_COLOURS = 6  # series classes s0..s5, coloured by the theme; more agents reuse them in turn
MAX_SERIES_POINTS = 600  # per series: each drawn point is the largest request of its run of requests
LEGEND_ITEMS = 6
LEGEND_CHARS = 28


def _tokens_short(count: int) -> str:
    if count >= 1_000_000 and count % 1_000_000 == 0:
        return f"{count // 1_000_000}M"
    return f"{count / 1000:.0f}k" if count >= 1000 else str(count)


def _thinned(series: list[tuple[float, ContextPoint]]) -> list[tuple[float, ContextPoint]]:
    """Keep at most MAX_SERIES_POINTS points, each the largest of its run, so no peak is lost."""
    if len(series) <= MAX_SERIES_POINTS:
        return series
    step = len(series) / MAX_SERIES_POINTS
    kept = []
    for bucket in range(MAX_SERIES_POINTS):
        run = series[int(bucket * step) : int((bucket + 1) * step)] or series[-1:]
        kept.append(max(run, key=lambda item: item[1].context))
    return kept


def _clip(text: str) -> str:
    return text if len(text) <= LEGEND_CHARS else text[: LEGEND_CHARS - 1] + "…"


def context_chart(points: Sequence[ContextPoint], boundaries: Sequence[tuple[str, str]], labels: dict[str, str], label: str) -> Markup:
    """Draw each agent's context size per request over real time, with compaction boundaries and the context limit.

    `boundaries` are (instant, title) pairs drawn as vertical lines; `labels` name the agents in the
    legend (an agent without one is shown by its id). Requests without a time have no place on the axis.
    """
    timed = [(point, _seconds(point.at)) for point in points if point.at and _DAY_RE.match(point.at[:10])]
    if not timed:
        return Markup("")
    limit = context_limit(points)
    top = max(limit, max(point.context for point, _ in timed))
    start = min(moment for _, moment in timed)
    span = (max(moment for _, moment in timed) - start) or 1.0
    height = CONTEXT_HEIGHT

    def x_of(moment: float) -> float:
        return PAD + (moment - start) / span * AXIS

    def y_of(tokens: int) -> float:
        return height - PAD - tokens / top * (height - 2 * PAD)

    parts = [
        f'<svg class="chart context-chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">',
        f'<line class="axis" x1="{PAD}" y1="{height - PAD}" x2="{WIDTH - PAD}" y2="{height - PAD}"/>',
        f'<line class="limit" x1="{PAD}" y1="{y_of(limit):.1f}" x2="{WIDTH - PAD}" y2="{y_of(limit):.1f}"><title>context limit {limit:,} tokens</title></line>',
        f'<text class="tick end" x="{WIDTH - PAD}" y="{y_of(limit) - 3:.1f}">limit {_tokens_short(limit)}</text>',
    ]
    if limit > LONG_CONTEXT_TOKENS:
        y = y_of(LONG_CONTEXT_TOKENS)
        parts.append(
            f'<line class="threshold" x1="{PAD}" y1="{y:.1f}" x2="{WIDTH - PAD}" y2="{y:.1f}">'
            f"<title>above {LONG_CONTEXT_TOKENS:,} tokens a request is long-context</title></line>"
        )
        parts.append(f'<text class="tick end" x="{WIDTH - PAD}" y="{y - 3:.1f}">long context above {_tokens_short(LONG_CONTEXT_TOKENS)}</text>')
    for instant, title in boundaries:
        try:
            moment = _seconds(instant)
        except ValueError:
            continue
        if start <= moment <= start + span:
            x = x_of(moment)
            parts.append(f'<line class="boundary" x1="{x:.1f}" y1="{PAD}" x2="{x:.1f}" y2="{height - PAD}"><title>{escape(title)}</title></line>')
    order: list[str] = []
    series: dict[str, list[tuple[float, ContextPoint]]] = {}
    for point, moment in timed:
        if point.agent_id not in series:
            order.append(point.agent_id)
            series[point.agent_id] = []
        series[point.agent_id].append((moment, point))
    for index, agent_id in enumerate(order):
        colour = f"s{index % SERIES_COLOURS}"
        name = labels.get(agent_id) or agent_id
        drawn = _thinned(series[agent_id])
        path = " ".join(f"{x_of(moment):.1f},{y_of(point.context):.1f}" for moment, point in drawn)
        parts.append(f'<polyline class="series {colour}" points="{path}"><title>{escape(name)}</title></polyline>')
        if len(drawn) == 1:  # a line of one point draws nothing: a dot shows the lone request
            moment, point = drawn[0]
            parts.append(f'<circle class="dot {colour}" cx="{x_of(moment):.1f}" cy="{y_of(point.context):.1f}" r="2"><title>{escape(name)}</title></circle>')
        for moment, point in series[agent_id]:
            if point.long_context:
                parts.append(
                    f'<circle class="long {colour}" cx="{x_of(moment):.1f}" cy="{y_of(point.context):.1f}" r="{MARK_RADIUS}">'
                    f"<title>{escape(name)} {escape(point.at or '')}: {point.context:,} tokens, long-context</title></circle>"
                )
    x = float(PAD)
    for index, agent_id in enumerate(order[:LEGEND_ITEMS]):
        text = _clip(labels.get(agent_id) or agent_id)
        parts.append(f'<text class="legend s{index % SERIES_COLOURS}" x="{x:.1f}" y="{PAD - 8}">■ {escape(text)}</text>')
        x += (len(text) + 3) * CHAR_PX
    if len(order) > LEGEND_ITEMS:
        parts.append(f'<text class="tick" x="{x:.1f}" y="{PAD - 8}">+{len(order) - LEGEND_ITEMS} more</text>')
    first, last = min(timed, key=lambda item: item[1])[0].at or "", max(timed, key=lambda item: item[1])[0].at or ""
    parts.append(f'<text class="tick" x="{PAD}" y="{height - 6}">{escape(first[:16].replace("T", " "))}</text>')
    parts.append(f'<text class="tick end" x="{WIDTH - PAD}" y="{height - 6}">{escape(last[:16].replace("T", " "))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def week_chart(weeks: Sequence[tuple[date, Decimal | int]], label: str, money: bool = True) -> Markup:
    """Draw one bar per week (Mondays given) on a time axis from the first week to the last; weeks not given stay empty."""
    if not weeks:
        return Markup("")
    ordered = sorted(weeks)
    first, last = ordered[0][0], ordered[-1][0] + timedelta(days=6)
    day_px = AXIS / ((last - first).days + 1)
    width = max(7 * day_px - 2.0, 1.0)
    top = max(Decimal(value) for _, value in ordered) or Decimal(1)
    parts = [_open_svg(label)]
    for monday, value in ordered:
        height = float(Decimal(value) / top) * (HEIGHT - 2 * PAD)
        x = PAD + (monday - first).days * day_px + 1.0
        shown = _money(Decimal(value)) if money else f"{value:,}"
        parts.append(_time_bar(x, height, width, f"week of {monday.isoformat()}: {shown}"))
    parts += _time_ticks(first, last, day_px)
    top_text = _money(top) if money else f"{int(top):,}"
    parts.append(f'<text class="tick" x="{PAD}" y="{PAD - 8}">max {escape(top_text)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def session_context_chart(session: SessionView, agent_id: str | None = None, points: Sequence[ContextPoint] | None = None,
                          agents: Mapping[str, AgentView] | None = None) -> Markup:
    """Draw a session's context growth (every agent), or one agent's (`points`, its own, when the caller has them), with the boundaries drawn.

    `agents` (the session's agents by id, when the caller has them) names the drawn agents without
    walking every agent: each of a 1,000-agent session's pages draws one.
    """
    if points is None:
        points = [point for point in session.context if agent_id is None or point.agent_id == agent_id]
    boundaries = [
        (c.at, f"compaction of {'main' if c.agent_id == session.session_id else c.agent_id} at {c.at}")
        for c in session.compactions
        if c.at and (agent_id is None or c.agent_id == agent_id)
    ]
    drawn = {point.agent_id for point in points}
    by_id = session.agent_map if agents is None else agents
    labels = {agent.agent_id: "main" if agent.agent_id == session.session_id else agent.description or agent.agent_type or agent.agent_id
              for agent in (by_id[drawn_id] for drawn_id in drawn if drawn_id in by_id)}
    return context_chart(points, boundaries, labels, "context size per request over time")


def weeks_charts(weeks: Sequence[Week]) -> tuple[Markup, Markup]:
    """Draw a project's cost per week and sessions per week."""
    return (
        week_chart([(week.start, week.cost) for week in weeks if week.cost], "cost per week"),
        week_chart([(week.start, week.sessions) for week in weeks if week.sessions], "sessions started per week", money=False),
    )
