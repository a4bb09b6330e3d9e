"""Price a session's usage rows: in the build's process as it writes the session, or in the worker that parsed it."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from agenthropic_site.cache import Priced, PricedRow
from agenthropic_site.cache.store import PriceColumns, price_columns
from agenthropic_site.cost import PriceTable, PricingError
from agenthropic_site.parse.model import TOKEN_CATEGORIES, ParsedSession

_token_counts = operator.attrgetter(*TOKEN_CATEGORIES)  # a row's tokens in the order the cache stores them (store.PRICED_BY)


def rows_to_price(parsed: ParsedSession) -> list[PricedRow]:
    """Return a parsed session's usage rows as prices are made of them, by their keys."""
    return [PricedRow(seq, row.model, row.tokens, row.timestamp, row.speed) for seq, row in zip(parsed.usage_keys, parsed.usage, strict=True)]


def price_rows(rows: list[PricedRow], prices: PriceTable, stored: Mapping[tuple[Any, ...], PriceColumns] | None = None) -> Priced:
    """Price every usage row; a row that cannot be priced says why (the halt gate reads it with ownership).

    `stored` (Cache.stored_prices): a row with the model, tokens, time and speed of a stored row
    takes its stored price. The cache holds prices of this table and code only, and an append
    leaves every earlier row as it was: the 60 MB session's 9,490 rows were priced and formatted
    again at every append (about 70 ms). Not by the row's key: a new agent file that sorts before
    others moves their rows' keys, not what their prices are made of.
    """
    priced: Priced = []
    stored = stored or {}
    for row in rows:
        kept = stored.get((row.model, *_token_counts(row.tokens), row.at, row.speed))
        if kept is not None:
            priced.append((row.seq, kept))
            continue
        try:
            cost = prices.cost(row.model, row.tokens, row.at, row.speed)
        except PricingError as exc:
            priced.append((row.seq, price_columns(None, None, f"{exc.why} for model {exc.model}")))
            continue
        priced.append((row.seq, price_columns(prices.family(row.model) or "", cost.as_tuple(), None)))
    return priced
