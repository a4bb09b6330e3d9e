"""Dated per-family prices from a data file; exact Decimal arithmetic; no silent $0."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens

PER_MILLION = Decimal(1_000_000)
# Every rate in the table is a whole number of 1e-10 dollars per token, so costs at this scale
# are exact and sums of rounded parts equal the rounded whole.
USD_PLACES = Decimal("0.0000000001")
SYNTHETIC_MODEL = "<synthetic>"
_PREFIX_RE = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?anthropic[./]")
_SUFFIX_RES = (re.compile(r"\[1m\]$"), re.compile(r"@.*$"), re.compile(r"-v\d+(?::\d+)?$"), re.compile(r"-\d{8}$"))


class PricingError(Exception):
    """A request whose model has no known price: the session must not be priced at all."""

    def __init__(self, model: str) -> None:
        super().__init__(f"no price for model {model!r}")
        self.model = model


@dataclass(frozen=True)
class Rates:
    """USD per million tokens for each category."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write_5m: Decimal
    cache_write_1h: Decimal

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Rates:
        """Read rates given as decimal strings."""
        return cls(**{name: Decimal(str(raw[name])) for name in TOKEN_CATEGORIES})


@dataclass(frozen=True)
class Period:
    """Prices in force from a date on (inclusive), with an optional long-context tier."""

    start: str
    rates: Rates
    long_context_threshold: int | None
    long_context: Rates | None
    fast_multiplier: Decimal | None


@dataclass(frozen=True)
class PriceTable:
    """Families of model ids with dated price periods."""

    families: dict[str, tuple[Period, ...]]
    family_of: dict[str, str]
    digest: str = ""  # changes whenever any price changes: cached costs are then recomputed

    def family(self, model: str) -> str | None:
        """Return the family a model id belongs to, or None when it is unknown."""
        return self.family_of.get(normalise_model(model))

    def cost(self, model: str, tokens: Tokens, day: str | None, speed: str | None) -> Decimal:
        """Price one request exactly; raise PricingError when that cannot be done honestly."""
        if model == SYNTHETIC_MODEL:
            return Decimal(0)
        family = self.family(model)
        if family is None:
            raise PricingError(model)
        periods = self.families[family]
        period = periods[0]
        for candidate in periods:
            if day is not None and candidate.start <= day[:10]:
                period = candidate
        rates = period.rates
        context = tokens.input + tokens.cache_read + tokens.cache_write_5m + tokens.cache_write_1h
        if period.long_context is not None and period.long_context_threshold is not None and context > period.long_context_threshold:
            # Anthropic bills the whole request at the long-context rates, not per field.
            rates = period.long_context
        total = sum((Decimal(getattr(tokens, name)) * getattr(rates, name) for name in TOKEN_CATEGORIES), Decimal(0)) / PER_MILLION
        if speed == "fast":
            if period.fast_multiplier is None:
                raise PricingError(f"{model} (fast mode)")
            total *= period.fast_multiplier
        return total


def normalise_model(model: str) -> str:
    """Map provider prefixes, `[1m]`, `@…`, `-v1:0` and date suffixes away: `us.anthropic.claude-opus-4-8` -> `claude-opus-4-8`."""
    name = _PREFIX_RE.sub("", model.strip().lower())
    for pattern in _SUFFIX_RES:
        name = pattern.sub("", name)
    return name


def load_price_table(extra: Path | None = None) -> PriceTable:
    """Load the built-in table, with a user's `--pricing` file merged over it by family."""
    raw = orjson.loads(resources.files("agenthropic_site.cost").joinpath("pricing.json").read_bytes())
    families = dict(raw["families"])
    if extra is not None:
        families.update(orjson.loads(extra.read_bytes()).get("families", {}))
    table: dict[str, tuple[Period, ...]] = {}
    family_of: dict[str, str] = {}
    for name, entry in sorted(families.items()):
        periods = []
        for item in sorted(entry["periods"], key=lambda period: period["from"]):
            tier = item.get("long_context")
            multiplier = item.get("fast_multiplier")
            periods.append(
                Period(
                    start=item["from"],
                    rates=Rates.from_json(item),
                    long_context_threshold=int(tier["threshold"]) if tier else None,
                    long_context=Rates.from_json(tier) if tier else None,
                    fast_multiplier=Decimal(str(multiplier)) if multiplier is not None else None,
                )
            )
        table[name] = tuple(periods)
        for model in entry["models"]:
            family_of[normalise_model(model)] = name
    digest = hashlib.sha256(orjson.dumps(families, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return PriceTable(table, family_of, digest)


def format_usd(amount: Decimal) -> str:
    """Render a cost as a fixed-point decimal string, rounded once, half-even."""
    return str(amount.quantize(USD_PLACES, rounding=ROUND_HALF_EVEN))
