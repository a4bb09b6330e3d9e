"""Where the money went: by category, by compaction segment, and what-if repricing."""

from __future__ import annotations

import bisect
from decimal import Decimal
from collections.abc import Iterable

from agenthropic_site.cost.prices import PriceTable, PricingError, RequestSums
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens
from agenthropic_site.records import record_class

ZERO = Decimal(0)


@record_class(frozen=True)
class CostedRow:
    """One priced, owned request as the breakdowns need it."""

    agent_id: str
    model: str
    family: str
    tokens: Tokens
    at: str | None
    speed: str | None
    parts: tuple[Decimal, ...]  # cost by category, TOKEN_CATEGORIES order
    segment: int
    # The request's whole cost, the sum of `parts`: stored beside them (cache/store.py price_columns,
    # sealed with the row), read once rather than summed by each breakdown that needs it (the 60 MB
    # session has 9,490 requests).
    cost: Decimal


@record_class(frozen=True)
class WhatIf:
    """What a session would have cost had one family's requests been priced as another's."""

    source: str
    target: str
    cost: Decimal
    delta: Decimal


def by_category(rows: Iterable[CostedRow]) -> dict[str, Decimal]:
    """Sum the cost of each token category."""
    totals = dict.fromkeys(TOKEN_CATEGORIES, ZERO)
    for row in rows:
        for name, part in zip(TOKEN_CATEGORIES, row.parts):
            totals[name] += part
    return totals


def add_categories(maps: Iterable[dict[str, Decimal]]) -> dict[str, Decimal]:
    """Add category maps (sessions into a project, projects into the index)."""
    totals = dict.fromkeys(TOKEN_CATEGORIES, ZERO)
    for values in maps:
        for name in TOKEN_CATEGORIES:
            totals[name] += values.get(name, ZERO)
    return totals


def segment_costs(rows: Iterable[CostedRow], boundaries: int) -> list[Decimal]:
    """Sum the cost of each session segment (one more segment than main-agent boundaries)."""
    costs = [ZERO] * (boundaries + 1)
    for row in rows:
        costs[min(row.segment, boundaries)] += row.cost
    return costs


def window_cost(rows: Iterable[CostedRow], agent_id: str, start: str | None, end: str | None, summariser: str | None) -> Decimal:
    """Cost of one agent's requests in [start, end), plus the summariser that closed the window."""
    total = ZERO
    for row in rows:
        if row.agent_id == summariser and summariser is not None:
            total += row.cost
        elif row.agent_id == agent_id and row.at is not None and (start is None or row.at >= start) and (end is None or row.at < end):
            total += row.cost
    return total


def family_sums(rows: Iterable[CostedRow]) -> dict[str, tuple[RequestSums, Decimal]]:
    """Sum each family's requests for pricing at any family's rates (`RequestSums`), with what they cost, by family name."""
    requests: dict[str, list[tuple[Tokens, str | None, str | None]]] = {}
    costs: dict[str, Decimal] = {}
    for row in rows:
        requests.setdefault(row.family, []).append((row.tokens, row.at, row.speed))
        costs[row.family] = costs.get(row.family, ZERO) + row.cost
    return {family: (RequestSums.of(requests[family]), costs[family]) for family in sorted(requests)}


def what_if(families: dict[str, tuple[RequestSums, Decimal]], prices: PriceTable, session_cost: Decimal) -> list[WhatIf]:
    """Reprice each family present (`family_sums`) as each what-if target family, each request at the target's rates for its day, tier and speed.

    A family whose requests cannot be priced as the target (fast mode without a multiplier
    there) gets no figure for that target rather than a guessed one.
    """
    results = []
    for source, (sums, _) in families.items():
        # Summed once for every target: each target's figure prices these sums, not each request.
        others = sum((cost for family, (_, cost) in families.items() if family != source), ZERO)
        for target in prices.what_if_targets:
            if target == source:
                continue
            try:
                swapped = prices.total_of(target, sums)
            except PricingError:
                continue  # e.g. a fast-mode request and a target without a fast price: no honest figure
            swapped += others
            if swapped != session_cost:  # the same rates under another name tell nothing
                results.append(WhatIf(source, target, swapped, swapped - session_cost))
    return results


def spend_over_time(rows: Iterable[CostedRow], points: int = 120) -> list[tuple[str, Decimal | str]]:
    """Return the cumulative cost after each request in time order, thinned to at most `points`."""
    timed = sorted((row.at, row.cost) for row in rows if row.at)
    series: list[tuple[str, Decimal | str]] = []
    running = ZERO
    for at, cost in timed:
        running += cost
        series.append((at, running))
    if len(series) <= points:
        return series
    step = len(series) / points
    return [series[min(int(index * step), len(series) - 1)] for index in range(points - 1)] + [series[-1]]


def previous_boundary(times: list[str], at: str) -> str | None:
    """Return the latest boundary time strictly before `at`, or None."""
    index = bisect.bisect_left(times, at)
    return times[index - 1] if index > 0 else None
