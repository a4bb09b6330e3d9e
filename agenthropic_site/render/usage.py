"""The usage windows as data/usage.json and as the index's usage section: tables and a chart of 5-hour blocks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from markupsafe import Markup, escape

from agenthropic_site.model.usage import Usage, Window
from agenthropic_site.records import record_class
from agenthropic_site.render.charts import HEIGHT, PAD, WIDTH
from agenthropic_site.render.data import usd
from agenthropic_site.render.formats import usd as money

TABLE_ROWS = {"days": 14, "weeks": 12, "months": 12}  # most recent first; data/usage.json has every one
TABLE_TITLES = {"days": "Days", "weeks": "Weeks (Monday to Sunday)", "months": "Months"}
CHART_BLOCKS = 60  # the most recent blocks drawn, one bar each
TOP_MODELS = 3
TICK_LABELS = 5


def window_json(window: Window) -> dict[str, Any]:
    """Return one window of data/usage.json: costs of unpriced sessions are left out, and `cost_complete` says so."""
    return {
        "start": window.start.isoformat(timespec="seconds"),
        "end": window.end.isoformat(timespec="seconds"),
        "tokens": window.tokens_by_category(),
        # null when no request of the window has a price: never a $0 that only means "unknown"
        "cost_usd": usd(window.cost) if window.priced else None,
        "cost_complete": window.cost_complete,
        "requests": window.requests,
        "sessions": window.sessions,
        "models": window.models,
    }


def usage_json(usage: Usage) -> dict[str, Any]:
    """Return data/usage.json: the zone, every block, day, week and month with usage, and what has no time."""
    return {
        "tz": usage.tz,
        "blocks": [window_json(window) for window in usage.blocks],
        "days": [window_json(window) for window in usage.days],
        "weeks": [window_json(window) for window in usage.weeks],
        "months": [window_json(window) for window in usage.months],
        "untimed": {"requests": usage.untimed_requests, "tokens": usage.untimed_tokens.as_dict()},
    }


@record_class(frozen=True)
class UsageRow:
    """One row of a usage table on the index."""

    label: str
    window: Window

    @property
    def top_models(self) -> list[str]:
        """Return the window's models with the most tokens, at most TOP_MODELS."""
        return self.window.top_models[:TOP_MODELS]


@record_class(frozen=True)
class UsageTable:
    """The most recent windows of one kind, and how many earlier ones only data/usage.json lists."""

    kind: str
    title: str
    rows: list[UsageRow]
    earlier: int


@record_class(frozen=True)
class UsageSection:
    """What the index shows of the usage windows."""

    tz: str
    chart: Markup
    busiest: UsageRow | None
    blocks: int
    tables: list[UsageTable]


def usage_section(usage: Usage) -> UsageSection:
    """Return the index's usage section: the blocks chart, the busiest block, and a bounded table per calendar window."""
    tables = []
    for kind, rows in TABLE_ROWS.items():
        windows: list[Window] = getattr(usage, kind)
        shown = windows[::-1][:rows]
        tables.append(UsageTable(kind, TABLE_TITLES[kind], [UsageRow(period_label(kind, w), w) for w in shown], len(windows) - len(shown)))
    busiest = busiest_block(usage.blocks)
    return UsageSection(
        tz=usage.tz, chart=blocks_chart(usage.blocks, busiest), blocks=len(usage.blocks), tables=tables,
        busiest=None if busiest is None else UsageRow(period_label("blocks", busiest), busiest),
    )


def busiest_block(blocks: list[Window]) -> Window | None:
    """Return the block with the most tokens (the figure usage limits count), the earliest of a tie."""
    return max(blocks, key=lambda block: (block.total_tokens, -block.start.timestamp()), default=None)


def period_label(kind: str, window: Window) -> str:
    """Name a window for people, in its zone: `2025-10-08 09:00–14:00`, `2025-10-08 Wed`, `2025-W41 (10-06 to 10-12)`, `2025-10`."""
    start = window.start
    if kind == "blocks":
        return f"{start:%Y-%m-%d %H:%M}–{window.end:%H:%M}"
    if kind == "days":
        return f"{start:%Y-%m-%d %a}"
    if kind == "weeks":
        year, week, _ = start.isocalendar()
        return f"{year}-W{week:02d} ({start:%m-%d} to {window.end - timedelta(days=1):%m-%d})"
    return f"{start:%Y-%m}"


def blocks_chart(blocks: list[Window], busiest: Window | None) -> Markup:
    """Draw the most recent blocks as one bar each, height by tokens, the busiest marked (class `busiest` and a triangle over it)."""
    if not blocks:
        return Markup("")
    shown = blocks[-CHART_BLOCKS:]
    slot = (WIDTH - 2 * PAD) / len(shown)
    width = max(min(slot * 0.8, 24.0), 1.0)
    top = max(block.total_tokens for block in shown) or 1
    label = f"tokens per 5-hour block, the last {len(shown)} of {len(blocks)}" if len(shown) < len(blocks) else "tokens per 5-hour block"
    parts = [
        f'<svg class="chart blocks" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">',
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>',
    ]
    for index, block in enumerate(shown):
        height = block.total_tokens / top * (HEIGHT - 2 * PAD)
        x = PAD + index * slot + (slot - width) / 2
        mark = block is busiest
        cost = (money(block.cost) + ("" if block.cost_complete else " at least")) if block.priced else "cost unknown"
        title = f"{period_label('blocks', block)}: {block.total_tokens:,} tokens, {cost}, {block.sessions} session(s)" + (" (busiest)" if mark else "")
        parts.append(
            f'<rect class="bar{" busiest" if mark else ""}" x="{x:.2f}" y="{HEIGHT - PAD - height:.2f}" width="{width:.2f}" '
            f'height="{height:.2f}"><title>{escape(title)}</title></rect>'
        )
        if mark:
            # A triangle over the bar: seen without the stylesheet too.
            middle, over = x + width / 2, HEIGHT - PAD - height - 2
            triangle = f"M{middle - 4:.2f} {over - 6:.2f}H{middle + 4:.2f}L{middle:.2f} {over:.2f}Z"
            parts.append(f'<path class="busiest-mark" d="{triangle}"><title>busiest block</title></path>')
    step = max(1, -(-len(shown) // TICK_LABELS))
    for index in range(0, len(shown), step):
        x = PAD + (index + 0.5) * slot
        text = f"{shown[index].start:%Y-%m-%d}"
        half = len(text) * 3.0
        parts.append(f'<line class="tickmark" x1="{x:.2f}" y1="{HEIGHT - PAD}" x2="{x:.2f}" y2="{HEIGHT - PAD + 4}"/>')
        parts.append(f'<text class="tick mid" x="{min(max(x, half), WIDTH - half):.2f}" y="{HEIGHT - 6}">{escape(text)}</text>')
    parts.append(f'<text class="tick" x="{PAD}" y="{PAD - 8}">max {top:,} tokens</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
