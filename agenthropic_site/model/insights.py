"""Insights into where tokens went: context growth, cache efficiency, tool activity, projects week by week."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from functools import cache
from typing import Protocol, TypeVar

from agenthropic_site.config import DEFAULT_TZ, zone_of
from agenthropic_site.cost import PriceTable, PricingError
from agenthropic_site.cost.prices import RequestSums
from agenthropic_site.parse.model import Tokens
from agenthropic_site.parse.tools import ToolCall, mcp_server
from agenthropic_site.records import record_class

# Above this many tokens of context a request is billed at long-context rates where its family has
# such a tier (docs/cost.md §3), and only a long-context (1M) model can take it at all.
LONG_CONTEXT_TOKENS = 200_000
STANDARD_LIMIT = 200_000
LONG_LIMIT = 1_000_000
LARGEST = 10  # rows of the largest-requests and most-expensive-sessions tables
ZERO = Decimal(0)


def context_size(tokens: Tokens) -> int:
    """Return a request's context: everything it sent, fresh or cached (output is not context yet)."""
    return tokens.input + tokens.cache_read + tokens.cache_write_5m + tokens.cache_write_1h


@record_class(frozen=True)
class ContextPoint:
    """One owned request's context size, as the growth chart and the largest-requests table show it."""

    at: str | None
    agent_id: str
    model: str
    context: int
    cost: Decimal | None  # None: the session's cost is unknown
    tokens: Tokens = Tokens()  # the request's tokens by category, for the usage windows (model/usage.py)

    @property
    def long_context(self) -> bool:
        """Tell whether the request went past the standard window (priced differently)."""
        return self.context > LONG_CONTEXT_TOKENS


def context_limit(points: Iterable[ContextPoint]) -> int:
    """Return the window to draw: 1M when a request is long-context or names a 1M model (`[1m]`), else 200k."""
    return LONG_LIMIT if any(point.long_context or point.model.endswith("[1m]") for point in points) else STANDARD_LIMIT


def largest_requests(points: Iterable[ContextPoint], count: int = LARGEST) -> list[ContextPoint]:
    """Return the requests with the largest context, largest first (ties by time, then agent)."""
    return sorted(points, key=lambda point: (-point.context, point.at or "", point.agent_id))[:count]


# --- cache efficiency --------------------------------------------------------------------------------


def uncached_cost(families: dict[str, tuple[RequestSums, Decimal]], prices: PriceTable) -> Decimal | None:
    """Price every request again (`family_sums`) with its cache reads and writes as plain input (same model, day and speed); None when one cannot be."""
    try:
        # A priced row without a family is synthetic: it cost nothing, cached or not.
        return sum((prices.total_of(family, sums.uncached()) for family, (sums, _) in families.items() if family), ZERO)
    except PricingError:
        return None


class Cached(Protocol):
    """What cache efficiency is summed from: a session's view or summary."""

    tokens: Tokens
    cost: Decimal | None
    cost_by_category: dict[str, Decimal]
    uncached_cost: Decimal | None


@record_class(frozen=True)
class CacheEfficiency:
    """How much of the input came from the cache, and what caching saved.

    Tokens are facts of every session; costs are those of sessions with a known cost only.
    """

    tokens: Tokens
    cost: Decimal | None
    uncached_cost: Decimal | None
    write_5m_cost: Decimal | None
    write_1h_cost: Decimal | None

    @property
    def input_tokens(self) -> int:
        """Return every token of input: fresh, read from the cache and written to it."""
        return context_size(self.tokens)

    @property
    def read_share(self) -> float | None:
        """Return cache reads as a share of all input, or None without input."""
        return self.tokens.cache_read / self.input_tokens if self.input_tokens else None

    @property
    def saved(self) -> Decimal | None:
        """Return what caching saved (negative when writes cost more than reads saved)."""
        return None if self.cost is None or self.uncached_cost is None else self.uncached_cost - self.cost


def cache_efficiency(items: Iterable[Cached]) -> CacheEfficiency:
    """Sum the cache figures of sessions (one view, or a project's or the corpus's summaries)."""
    every: list[Tokens] = []
    costs: list[Decimal] = []
    uncached: list[Decimal | None] = []
    writes_5m: list[Decimal] = []
    writes_1h: list[Decimal] = []
    for item in items:
        every.append(item.tokens)
        if item.cost is None:
            continue
        costs.append(item.cost)
        uncached.append(item.uncached_cost)
        writes_5m.append(item.cost_by_category.get("cache_write_5m", ZERO))
        writes_1h.append(item.cost_by_category.get("cache_write_1h", ZERO))
    tokens = Tokens.sum_of(every)
    if not costs:
        return CacheEfficiency(tokens, None, None, None, None)
    known = [value for value in uncached if value is not None]
    return CacheEfficiency(
        tokens, sum(costs, ZERO), sum(known, ZERO) if len(known) == len(uncached) else None, sum(writes_5m, ZERO), sum(writes_1h, ZERO)
    )


# --- tool activity -----------------------------------------------------------------------------------


@record_class(frozen=True)
class ToolStats:
    """One tool's calls, errors and times from call to result."""

    name: str
    calls: int
    errors: int
    timed: int = 0  # calls with both timestamps
    median_ms: int | None = None
    max_ms: int | None = None


def _median(values: Sequence[int]) -> int:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) // 2


def tool_stats(calls: Iterable[ToolCall]) -> list[ToolStats]:
    """Sum calls by tool, most called first (ties by name)."""
    counts: dict[str, list[int]] = {}
    times: dict[str, list[int]] = {}
    for _, name, is_error, elapsed in calls:
        entry = counts.setdefault(str(name), [0, 0])
        entry[0] += 1
        entry[1] += int(is_error or 0)
        if isinstance(elapsed, int):
            times.setdefault(str(name), []).append(elapsed)
    stats = []
    for name, (count, errors) in counts.items():
        timed = times.get(name, [])
        stats.append(ToolStats(name, count, errors, len(timed), _median(timed) if timed else None, max(timed) if timed else None))
    return sorted(stats, key=lambda stat: (-stat.calls, stat.name))


def owned_calls(calls: Iterable[ToolCall], copied: set[str]) -> list[ToolCall]:
    """Leave out calls made by replies this session copies from another one (counted there, once)."""
    return [call for call in calls if not (isinstance(call[0], str) and call[0] in copied)]


class WithTools(Protocol):
    """A session summary's tool figures."""

    tool_calls: dict[str, list[int]]


def tool_totals(sessions: Iterable[WithTools]) -> list[ToolStats]:
    """Sum sessions' calls and errors by tool, most called first (no times: those stay per session)."""
    totals: dict[str, list[int]] = {}
    for session in sessions:
        for name, (calls, errors) in session.tool_calls.items():
            entry = totals.setdefault(name, [0, 0])
            entry[0] += calls
            entry[1] += errors
    return sorted((ToolStats(name, calls, errors) for name, (calls, errors) in totals.items()), key=lambda stat: (-stat.calls, stat.name))


def mcp_servers(tools: Iterable[ToolStats]) -> list[ToolStats]:
    """Sum tool figures by MCP server (`mcp__<server>__<tool>`), most called first."""
    totals: dict[str, list[int]] = {}
    for stat in tools:
        server = mcp_server(stat.name)
        if server is not None:
            entry = totals.setdefault(server, [0, 0])
            entry[0] += stat.calls
            entry[1] += stat.errors
    return sorted((ToolStats(name, calls, errors) for name, (calls, errors) in totals.items()), key=lambda stat: (-stat.calls, stat.name))


# --- projects over time ------------------------------------------------------------------------------


@record_class(frozen=True)
class Week:
    """One week (Monday to Sunday in the site's time zone) with spend or sessions in it."""

    start: date
    cost: Decimal
    sessions: int


class Dated(Protocol):
    """A session summary's figures over time."""

    started_at: str | None
    cost: Decimal | None
    cost_by_hour: dict[str, Decimal]


def _monday(instant: datetime, tz: tzinfo) -> date:
    day = instant.astimezone(tz).date()
    return day - timedelta(days=day.weekday())


def _instant(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# An instant as transcripts write it (`2026-04-28T10:15:02.880Z`, every version seen): in UTC, with
# minutes, seconds and a fraction every Python parses, it falls in the hour its first 13 characters
# name, and it parses exactly when that hour does. So the hour is parsed once, not each instant in it
# (3.2 against 0.9 us an instant; summarizing the 60 MB session's view: 23 ms against 13 ms).
_UTC_INSTANT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-5][0-9]:[0-5][0-9](?:\.[0-9]{3}|\.[0-9]{6})?Z")


def hour_key(at: str) -> str | None:
    """Return the UTC hour an instant falls in (`YYYY-MM-DDTHH`), the unit weekly figures are summed from."""
    if _UTC_INSTANT_RE.fullmatch(at):
        return _hour_if_valid(at[:13])
    return parsed_hour(at)


@cache
def _hour_if_valid(hour: str) -> str | None:
    """Return hour_key's answer for the start of an hour (`YYYY-MM-DDTHH`): None when there is no such hour (a few thousand a corpus: kept)."""
    return parsed_hour(hour + ":00:00Z")


def parsed_hour(at: str) -> str | None:
    """Return hour_key's answer by parsing the instant, whatever its form."""
    moment = _instant(at)
    try:
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H") if moment is not None else None
    except OverflowError:  # an offset that takes it out of datetime's years (0001-01-01T00:00+05:30)
        return None


def weekly(sessions: Iterable[Dated], tz: str = DEFAULT_TZ) -> list[Week]:
    """Sum cost and count sessions by week, weeks starting Monday in the zone (UTC by default), in time order.

    Cost is summed by the hour each request fell in (a zone a half hour off UTC puts at most that
    half hour of a week's edge into the week its hour starts in); a session counts in the week it started.
    Only weeks with spend or a session are listed: the chart leaves the others as gaps.
    """
    zone = zone_of(tz)
    cost: dict[date, Decimal] = {}
    started: dict[date, int] = {}
    for session in sessions:
        begun = _instant(session.started_at) if session.started_at else None
        if begun is not None:
            week = _monday(begun, zone)
            started[week] = started.get(week, 0) + 1
        if session.cost is None:
            continue  # an unknown cost is in no total
        for hour, amount in session.cost_by_hour.items():
            moment = _instant(hour + ":00:00+00:00")
            if moment is not None:
                week = _monday(moment, zone)
                cost[week] = cost.get(week, ZERO) + amount
    return [Week(week, cost.get(week, ZERO), started.get(week, 0)) for week in sorted(set(cost) | set(started))]


class Priced(Protocol):
    """A session summary's identity and cost."""

    session_id: str
    cost: Decimal | None


P = TypeVar("P", bound=Priced)


def most_expensive(sessions: Iterable[P], count: int = LARGEST) -> list[P]:
    """Return the sessions with the highest known cost, highest first (ties by id)."""
    priced = [session for session in sessions if session.cost is not None]
    return sorted(priced, key=lambda session: (-(session.cost or ZERO), session.session_id))[:count]
