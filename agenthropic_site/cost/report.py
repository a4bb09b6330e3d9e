"""Print the effective price table and the corpus's unpriced model ids (`agenthropic pricing`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson

from agenthropic_site.cost.prices import PriceTable, Rates
from agenthropic_site.parse.model import TOKEN_CATEGORIES
from agenthropic_site.terminal import printable, printable_json, stdout_is_unicode


def _rates(rates: Rates) -> dict[str, str]:
    return {name: _plain(getattr(rates, name)) for name in TOKEN_CATEGORIES}


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


def _models_of(prices: PriceTable) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {name: [] for name in prices.families}
    for model, family in sorted(prices.family_of.items()):
        members[family].append(model)
    return members


def price_table_json(prices: PriceTable, models: dict[str, int], unpriced: dict[str, int]) -> str:
    """Return the effective table, the corpus's model ids and the unpriced ones as JSON."""
    members = _models_of(prices)
    document: dict[str, Any] = {
        "unit": "USD per million tokens",
        "families": {
            name: {
                "models": members[name],
                "periods": [
                    {
                        "from": period.start,
                        **_rates(period.rates),
                        "long_context": (
                            {"threshold": period.long_context_threshold, **_rates(period.long_context)} if period.long_context else None
                        ),
                        "fast_multiplier": _plain(period.fast_multiplier) if period.fast_multiplier is not None else None,
                    }
                    for period in periods
                ],
            }
            for name, periods in prices.families.items()
        },
        "corpus_models": {model: {"requests": count, "family": prices.family(model)} for model, count in models.items()},
        "unpriced_models": unpriced,
    }
    text = orjson.dumps(document, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode()
    # Printed to a terminal: corpus model ids never carry a raw control (orjson escapes C0 itself).
    return printable_json(text, ascii_only=not stdout_is_unicode()) + "\n"


def price_table_text(prices: PriceTable, models: dict[str, int], unpriced: dict[str, int]) -> str:
    """Return the effective table as aligned text, then the corpus's models and the unpriced ones."""
    members = _models_of(prices)
    header = ("family", "from", "input", "output", "write 5m", "write 1h", "read", "long context", "fast")
    rows: list[tuple[str, ...]] = [header]
    for name, periods in prices.families.items():
        for period in periods:
            tier = "—"
            if period.long_context is not None:
                tier = f">{period.long_context_threshold:,}: {_plain(period.long_context.input)}/{_plain(period.long_context.output)}"
            rows.append(
                (name, period.start, *(_plain(getattr(period.rates, n)) for n in ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")),
                 tier, f"x{_plain(period.fast_multiplier)}" if period.fast_multiplier is not None else "—")
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["Prices in USD per million tokens (built-in, with --pricing merged over it):", ""]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines += ["", "Model ids of each family (after dropping provider prefixes, [1m], @… and date suffixes):"]
    lines += [f"  {name}: {', '.join(members[name])}" for name in prices.families]
    lines += ["", f"Model ids in the corpus ({len(models)}):"]
    for model, count in models.items():
        family = prices.family(model) or ("no price needed" if model == "<synthetic>" else "NO PRICE")
        lines.append(f"  {model}: {count:,} requests, {family}")
    if unpriced:
        lines += ["", "Sessions using these models are left out of every total until they have a price:"]
        lines += [f"  {model}" for model in unpriced]
        lines += ["", 'Add them with --pricing FILE, a JSON object like {"families": {"my-family": {"models": ["<model id>"], '
                  '"periods": [{"from": "2025-01-01", "input": "3", "output": "15", "cache_write_5m": "3.75", "cache_write_1h": "6", "cache_read": "0.3"}]}}}']
    else:
        lines += ["", "Every model id in the corpus has a price."]
    # Model ids come from the corpus: control characters are shown, never sent to the terminal.
    return "\n".join(printable(line) for line in lines) + "\n"
