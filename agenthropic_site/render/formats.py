"""How pages write figures and times: dollars, counts, instants, durations, Markdown."""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from decimal import Decimal

from markupsafe import Markup

from agenthropic_site.render.markdown import render_markdown

PREVIEW_CHARS = 2_000  # characters of a long text shown before "show all"


def usd(amount: Decimal | None) -> str:
    """Format a cost for people: dollars and cents, or a dash when unknown."""
    if amount is None:
        return "—"
    cents = amount.quantize(Decimal("0.01"))
    if cents == 0:
        cents = abs(cents)  # never "-0.00"
    return f"−${-cents:,}" if cents < 0 else f"${cents:,}"


def signed_usd(amount: Decimal | None) -> str:
    """Format a change in cost with its sign: `+$0.04`, `−$0.12`."""
    text = usd(amount)
    return text if text.startswith(("−", "—")) else "+" + text


def thousands(value: int | None) -> str:
    """Format a count with thousands separators."""
    return "—" if value is None else f"{value:,}"


# An instant as Claude Code writes it (UTC, `Z`), from the year 1000 on: shown in UTC it reads as written.
_UTC_INSTANT_RE = re.compile(r"[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z")


def short_time(instant: str | None, zone: tzinfo = UTC) -> str:
    """Show an ISO instant as `YYYY-MM-DD HH:MM` in a zone (the build's `--tz`; UTC unless given)."""
    if not instant:
        return "—"
    if zone is UTC and _UTC_INSTANT_RE.fullmatch(instant):
        # Its own digits, as parsing and formatting would give them (and as an invalid one is shown):
        # every message of a transcript page shows its time, and this takes a fifth as long.
        return f"{instant[:10]} {instant[11:16]}"
    try:
        moment = datetime.fromisoformat(instant)
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(zone).strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError):  # not an instant, or one the zone takes out of datetime's years: shown as written
        return f"{instant[:10]} {instant[11:16]}"


def epoch_ms(instant: str | None) -> str:
    """Return an ISO instant as milliseconds since 1970, a sortable column's key; empty when it is not an instant."""
    if not instant:
        return ""
    try:
        moment = datetime.fromisoformat(instant)
        return str(round((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() * 1000))
    except (ValueError, OverflowError):
        return ""


def duration_seconds(start: str | None, end: str | None) -> str:
    """Return the whole seconds between two ISO instants (never below 0), a sortable column's key; empty when unknown."""
    if not start or not end:
        return ""
    return str(_seconds_between(start, end))


def _seconds_between(start: str, end: str) -> int:
    """Return the whole seconds from one ISO instant to a later one, 0 when it is earlier."""
    seconds = int((datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds())
    return max(seconds, 0)


def duration(start: str | None, end: str | None) -> str:
    """Show the time between two ISO instants as `1h 02m` or `3m 05s`."""
    if not start or not end:
        return "—"
    hours, rest = divmod(_seconds_between(start, end), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def markdown(text: str) -> Markup:
    """Render Markdown to HTML that is safe to insert (raw HTML disabled)."""
    return Markup(render_markdown(text))


def fine_usd(amount: Decimal | None) -> str:
    """Format a cost with three significant digits under a dollar (`$0.0123`), else dollars and cents."""
    if amount is None:
        return "—"
    sign, size = ("−", -amount) if amount < 0 else ("", amount)
    if size == 0:
        return "$0.00"
    # A request costs fractions of a cent: cents alone would show most of them as $0.00.
    places = 2 if size >= 1 else min(max(2, 2 - size.adjusted()), 12)
    shown = size.quantize(Decimal(1).scaleb(-places))
    if shown >= 1:  # $0.9996 rounds up to a dollar: show it as one
        shown = size.quantize(Decimal("0.01"))
    return f"{sign}${shown:,}"
