"""Server-side SVG charts: no charting library, no canvas, no inline styles."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal

from markupsafe import Markup, escape

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


def _open_svg(label: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
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
            ticks = [(day, day.isoformat()) for day in (first + timedelta(days=offset) for offset in range(0, span, days))]
            spacing, chars = days * day_px, 10
        else:
            ticks = [(day, day.isoformat()[:7] if months < 12 else str(day.year)) for day in _month_ticks(first, last, months)]
            spacing, chars = 28 * months * day_px, 7 if months < 12 else 4
        if ticks and len(ticks) <= MAX_TICKS and spacing >= chars * CHAR_PX + TICK_GAP:
            return ticks
    return [(first, first.isoformat())]


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
        parts.append(
            f'<rect class="bar" x="{x:.2f}" y="{HEIGHT - PAD - height:.2f}" width="{width:.2f}" height="{height:.2f}">'
            f"<title>{escape(key)}: {_money(value)}</title></rect>"
        )
    for day, text in day_ticks(first, last):
        x = PAD + ((day - first).days + 0.5) * day_px
        half = len(text) * CHAR_PX / 2
        parts.append(f'<line class="tickmark" x1="{x:.2f}" y1="{HEIGHT - PAD}" x2="{x:.2f}" y2="{HEIGHT - PAD + 4}"/>')
        # The label is centred on its tick but kept inside the picture.
        parts.append(f'<text class="tick mid" x="{min(max(x, half), WIDTH - half):.2f}" y="{HEIGHT - 6}">{escape(text)}</text>')
    parts.append(f'<text class="tick" x="{PAD}" y="{PAD - 8}">max {_money(top)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def safe_mark_href(href: str) -> bool:
    """Tell whether a link may be put on a chart mark: a relative page path with an optional fragment, never a scheme."""
    return SAFE_MARK_HREF_RE.match(href) is not None


def _seconds(instant: str) -> float:
    return datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp()


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
    return Markup("".join(parts))
