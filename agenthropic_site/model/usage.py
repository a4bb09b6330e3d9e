"""Usage windows: every owned request summed in 5-hour blocks, days, ISO weeks and months of one time zone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import NamedTuple

from agenthropic_site.config import zone_of
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens
from agenthropic_site.records import record_class

BLOCK = timedelta(hours=5)  # ccusage's block: the span subscription usage limits are counted in


class UsageRequest(NamedTuple):
    """One request as its owning session counts it: when, which model, its tokens and its cost (a tuple: a corpus has many)."""

    session_id: str
    at: datetime | None  # UTC; None when the transcript gave no usable time
    model: str
    tokens: Tokens
    cost: Decimal | None  # None: the owning session has an unpriced request, so none of its costs is stated


@record_class
class Window:
    """The requests of one span of time: [start, end) in the build's zone."""

    start: datetime
    end: datetime
    counts: list[int] = field(default_factory=lambda: [0] * len(TOKEN_CATEGORIES))  # tokens by category, summed in place
    cost: Decimal = Decimal(0)  # of the priced requests only
    priced: int = 0
    requests: int = 0
    session_ids: set[str] = field(default_factory=set)
    model_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> Tokens:
        """Return the window's tokens by category."""
        return Tokens(*self.counts)

    @property
    def total_tokens(self) -> int:
        """Return the window's tokens over all categories (without making a Tokens)."""
        return sum(self.counts)

    def tokens_by_category(self) -> dict[str, int]:
        """Return the window's tokens keyed by category name, as `Tokens.as_dict` does."""
        return dict(zip(TOKEN_CATEGORIES, self.counts))

    @property
    def cost_complete(self) -> bool:
        """Tell whether every request of the window is priced (else the cost leaves some out)."""
        return self.priced == self.requests

    @property
    def sessions(self) -> int:
        """Count the distinct sessions with a request in the window."""
        return len(self.session_ids)

    @property
    def models(self) -> list[str]:
        """Return the model ids of the window, sorted."""
        return sorted(self.model_tokens)

    @property
    def top_models(self) -> list[str]:
        """Return the model ids of the window, most tokens first (ties by id)."""
        return sorted(self.model_tokens, key=lambda model: (-self.model_tokens[model], model))

    def merge(self, other: Window) -> None:
        """Count another window's requests in this one (a week is its days, a month too)."""
        for index, count in enumerate(other.counts):
            self.counts[index] += count
        self.cost += other.cost
        self.priced += other.priced
        self.requests += other.requests
        self.session_ids |= other.session_ids
        for model, tokens in other.model_tokens.items():
            self.model_tokens[model] = self.model_tokens.get(model, 0) + tokens

    def add(self, request: UsageRequest) -> None:
        """Count one request in the window (sums kept as plain integers: a corpus has hundreds of thousands)."""
        counts, tokens = self.counts, request.tokens
        counts[0] += tokens.input
        counts[1] += tokens.output
        counts[2] += tokens.cache_read
        counts[3] += tokens.cache_write_5m
        counts[4] += tokens.cache_write_1h
        self.requests += 1
        if request.cost is not None:
            self.cost += request.cost
            self.priced += 1
        self.session_ids.add(request.session_id)
        self.model_tokens[request.model] = self.model_tokens.get(request.model, 0) + tokens.total


@record_class
class Usage:
    """The usage windows of the whole corpus in one zone; requests without a time are in none of them."""

    tz: str
    blocks: list[Window] = field(default_factory=list)
    days: list[Window] = field(default_factory=list)
    weeks: list[Window] = field(default_factory=list)
    months: list[Window] = field(default_factory=list)
    untimed_requests: int = 0
    untimed_tokens: Tokens = Tokens()


def parse_time(text: str | None) -> datetime | None:
    """Return a stored request time as an aware UTC datetime, or None when there is none to use."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def block_starts(times: Sequence[datetime]) -> list[datetime]:
    """Return the start of each request's 5-hour block; `times` are aware and sorted (see BlockScan)."""
    scan = BlockScan()
    return [scan.place(at) for at in times]


@record_class
class BlockScan:
    """Where the scan of requests in time order stands: the block it is in and the last request's time.

    ccusage's rule (`identifySessionBlocks`): a block starts at its first request's time floored
    to the UTC hour and lasts 5 hours; a request more than 5 hours after the block's start, or
    more than 5 hours after the previous request, starts a new block (so a request at exactly the
    end stays in the block it closes, as in ccusage; docs/cost.md).
    """

    start: datetime | None = None  # UTC
    previous: datetime | None = None  # UTC

    def place(self, at: datetime) -> datetime:
        """Return the start of the block of a request at `at`, no earlier than the last one placed."""
        moment = at.astimezone(UTC)
        if self.start is None or self.previous is None or moment - self.start > BLOCK or moment - self.previous > BLOCK:
            self.start = moment.replace(minute=0, second=0, microsecond=0)
        self.previous = moment
        return self.start


def usage_windows(requests: Iterable[UsageRequest], tz: str) -> Usage:
    """Sum requests into blocks, days, ISO weeks (Monday first) and months of the zone `tz` (an IANA name)."""
    usage = Usage(tz=tz)
    add_requests(usage, BlockScan(), requests)
    return usage


def add_requests(usage: Usage, scan: BlockScan, requests: Iterable[UsageRequest]) -> None:
    """Count requests no earlier than any counted so far (`scan` says where the blocks stand), then sum weeks and months again."""
    zone = zone_of(usage.tz)
    timed: list[tuple[datetime, UsageRequest]] = []
    for request in requests:
        if request.at is None:
            usage.untimed_requests += 1
            usage.untimed_tokens = usage.untimed_tokens + request.tokens
        else:
            timed.append((request.at, request))
    # The order of requests at one instant changes no sum; the key keeps the sort total anyway.
    timed.sort(key=lambda pair: (pair[0], pair[1].session_id, pair[1].model))
    days = {window.start.date(): window for window in usage.days}
    for at, request in timed:
        start = scan.start
        if scan.place(at) != start or not usage.blocks:
            block = scan.start
            assert block is not None
            usage.blocks.append(Window(block.astimezone(zone), (block + BLOCK).astimezone(zone)))
        usage.blocks[-1].add(request)
        day = at.astimezone(zone).date()
        if day not in days:
            days[day] = Window(local_midnight(day, zone), local_midnight(day + timedelta(days=1), zone))
        days[day].add(request)
    usage.days = [days[day] for day in sorted(days)]
    # Weeks and months are their days merged: each request is added twice, not four times.
    for name, span in {"weeks": _week_span, "months": _month_span}.items():
        windows: dict[date, Window] = {}
        for window in usage.days:
            first, following = span(window.start.date())
            if first not in windows:
                windows[first] = Window(local_midnight(first, zone), local_midnight(following, zone))
            windows[first].merge(window)
        setattr(usage, name, [windows[key] for key in sorted(windows)])


def local_midnight(day: date, zone: tzinfo) -> datetime:
    """Return the first instant of a calendar day in a zone (where midnight is skipped, the instant the day begins)."""
    naive = datetime(day.year, day.month, day.day, tzinfo=zone)
    # Through UTC and back: a midnight a DST change skips becomes the day's real first instant, with its offset.
    return naive.astimezone(UTC).astimezone(zone)


def _week_span(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=7)


def _month_span(day: date) -> tuple[date, date]:
    first = day.replace(day=1)
    return first, (first.replace(year=first.year + 1, month=1) if first.month == 12 else first.replace(month=first.month + 1))
