"""Server-side SVG charts: no charting library, no canvas, no inline styles."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from markupsafe import Markup, escape

WIDTH, HEIGHT, PAD = 640, 160, 24


def bar_chart(points: dict[str, Decimal], label: str) -> Markup:
    """Draw one bar per key (days, in order) scaled to the largest value."""
    if not points:
        return Markup("")
    top = max(points.values()) or Decimal(1)
    step = (WIDTH - 2 * PAD) / len(points)
    bar = max(step * 0.8, 1.0)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">',
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>',
    ]
    for index, (key, value) in enumerate(points.items()):
        height = float(value / top) * (HEIGHT - 2 * PAD)
        x = PAD + index * step + (step - bar) / 2
        y = HEIGHT - PAD - height
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{height:.1f}">'
            f"<title>{escape(key)}: ${value.quantize(Decimal('0.01'))}</title></rect>"
        )
    first, last = next(iter(points)), next(reversed(points))
    parts.append(f'<text class="tick" x="{PAD}" y="{HEIGHT - 6}">{escape(first)}</text>')
    if last != first:
        parts.append(f'<text class="tick end" x="{WIDTH - PAD}" y="{HEIGHT - 6}">{escape(last)}</text>')
    parts.append(f'<text class="tick" x="{PAD}" y="{PAD - 8}">max ${top.quantize(Decimal("0.01"))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def step_chart(points: list[tuple[str, Decimal | str]], label: str) -> Markup:
    """Draw a cumulative series of (ISO instant, amount) as a step line over real time."""
    if len(points) < 2:
        return Markup("")
    series = [(at, Decimal(str(value))) for at, value in points]
    times = [datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() for at, _ in series]
    start, span = times[0], (times[-1] - times[0]) or 1.0
    top = series[-1][1] or Decimal(1)
    polyline: list[str] = []
    previous_y = float(HEIGHT - PAD)
    for moment, (_, value) in zip(times, series):
        x = PAD + (moment - start) / span * (WIDTH - 2 * PAD)
        y = HEIGHT - PAD - float(value / top) * (HEIGHT - 2 * PAD)
        polyline.append(f"{x:.1f},{previous_y:.1f} {x:.1f},{y:.1f}")
        previous_y = y
    first, last = series[0][0], series[-1][0]
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>'
        f'<polyline class="line" points="{" ".join(polyline)}"/>'
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 6}">{escape(first[:16].replace("T", " "))}</text>'
        f'<text class="tick end" x="{WIDTH - PAD}" y="{HEIGHT - 6}">{escape(last[:16].replace("T", " "))}</text>'
        f'<text class="tick" x="{PAD}" y="{PAD - 8}">total ${top.quantize(Decimal("0.01"))}</text>'
        "</svg>"
    )
