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
    """A request that cannot be priced honestly: the session must not be priced at all."""

    def __init__(self, model: str, why: str = "no price") -> None:
        super().__init__(f"{why} for model {model}")
        self.model = model
        self.why = why


class PricingFileError(Exception):
    """A `--pricing` file that is not a valid price table (exit code 2)."""


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
        """Read rates given as decimal strings or numbers."""
        values = {}
        for name in TOKEN_CATEGORIES:
            value = Decimal(str(raw[name]))
            if not value.is_finite() or value < 0:
                raise ValueError(f"{name} must be a non-negative number")
            values[name] = value
        return cls(**values)


@dataclass(frozen=True)
class Period:
    """Prices in force from a day on (inclusive), with an optional long-context tier."""

    start: str
    rates: Rates
    long_context_threshold: int | None
    long_context: Rates | None
    fast_multiplier: Decimal | None


@dataclass(frozen=True)
class RequestCost:
    """One request's cost by category, multipliers applied."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write_5m: Decimal
    cache_write_1h: Decimal

    @property
    def total(self) -> Decimal:
        """Return the sum of all categories."""
        return self.input + self.output + self.cache_read + self.cache_write_5m + self.cache_write_1h

    def as_tuple(self) -> tuple[Decimal, ...]:
        """Return the categories in TOKEN_CATEGORIES order."""
        return tuple(getattr(self, name) for name in TOKEN_CATEGORIES)


ZERO_COST = RequestCost(Decimal(0), Decimal(0), Decimal(0), Decimal(0), Decimal(0))


@dataclass(frozen=True)
class PriceTable:
    """Families of model ids with dated price periods."""

    families: dict[str, tuple[Period, ...]]
    family_of: dict[str, str]
    labels: dict[str, str]
    what_if_targets: tuple[str, ...]
    digest: str  # changes whenever any price changes: cached costs are then recomputed

    def family(self, model: str) -> str | None:
        """Return the family a model id belongs to, or None when it is unknown."""
        return self.family_of.get(normalise_model(model))

    def cost(self, model: str, tokens: Tokens, day: str | None, speed: str | None) -> RequestCost:
        """Price one request exactly; raise PricingError when that cannot be done honestly."""
        if model == SYNTHETIC_MODEL:
            return ZERO_COST
        family = self.family(model)
        if family is None:
            raise PricingError(model)
        return self.cost_as(family, tokens, day, speed, model)

    def cost_as(self, family: str, tokens: Tokens, day: str | None, speed: str | None, model: str | None = None) -> RequestCost:
        """Price a request with a given family's rates (the what-if uses this)."""
        period = self._period(family, day, model or family)
        rates = period.rates
        context = tokens.input + tokens.cache_read + tokens.cache_write_5m + tokens.cache_write_1h
        if period.long_context is not None and period.long_context_threshold is not None and context > period.long_context_threshold:
            # Anthropic bills the whole request at the long-context rates, not only the excess.
            rates = period.long_context
        multiplier = Decimal(1)
        if speed == "fast":
            if period.fast_multiplier is None:
                raise PricingError(model or family, "no fast-mode price")
            multiplier = period.fast_multiplier
        return RequestCost(
            *(Decimal(getattr(tokens, name)) * getattr(rates, name) * multiplier / PER_MILLION for name in TOKEN_CATEGORIES)
        )

    def _period(self, family: str, day: str | None, model: str) -> Period:
        periods = self.families[family]
        if day is None:
            if len(periods) == 1:
                return periods[0]
            raise PricingError(model, "no timestamp to choose a dated price")
        chosen = None
        for candidate in periods:
            if candidate.start <= day[:10]:
                chosen = candidate
        if chosen is None:
            raise PricingError(model, f"no price in force on {day[:10]}")
        return chosen


def normalise_model(model: str) -> str:
    """Map provider prefixes, `[1m]`, `@…`, `-v1:0` and date suffixes away: `us.anthropic.claude-opus-4-8` -> `claude-opus-4-8`."""
    name = _PREFIX_RE.sub("", model.strip().lower())
    for pattern in _SUFFIX_RES:
        name = pattern.sub("", name)
    return name


def builtin_families() -> dict[str, Any]:
    """Return the raw built-in price document."""
    return orjson.loads(resources.files("agenthropic_site.cost").joinpath("pricing.json").read_bytes())


def load_price_table(extra: Path | None = None) -> PriceTable:
    """Load the built-in table, with a user's `--pricing` file merged over it family by family."""
    raw = builtin_families()
    families = dict(raw["families"])
    if extra is not None:
        try:
            user = orjson.loads(extra.read_bytes())
            if not isinstance(user, dict) or not isinstance(user.get("families"), dict):
                raise PricingFileError(f"{extra}: expected an object with a \"families\" object")
        except (OSError, orjson.JSONDecodeError) as exc:
            raise PricingFileError(f"{extra}: {exc}") from None
        families.update(user["families"])
        user_names = set(user["families"])
    else:
        user_names = set()
    try:
        return _table(families, tuple(raw.get("what_if_targets", ())), user_names)
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
        raise PricingFileError(f"invalid price table entry: {exc!r}") from None


def _table(families: dict[str, Any], targets: tuple[str, ...], user_names: set[str]) -> PriceTable:
    table: dict[str, tuple[Period, ...]] = {}
    family_of: dict[str, str] = {}
    labels: dict[str, str] = {}
    # User families come last so that a model id they list overrides a built-in family's.
    for name, entry in sorted(families.items(), key=lambda item: (item[0] in user_names, item[0])):
        periods = []
        for item in sorted(entry["periods"], key=lambda period: str(period["from"])):
            tier = item.get("long_context")
            multiplier = item.get("fast_multiplier")
            periods.append(
                Period(
                    start=str(item["from"])[:10],
                    rates=Rates.from_json(item),
                    long_context_threshold=int(tier["threshold"]) if tier else None,
                    long_context=Rates.from_json(tier) if tier else None,
                    fast_multiplier=Decimal(str(multiplier)) if multiplier is not None else None,
                )
            )
        if not periods:
            raise ValueError(f"family {name} has no price period")
        table[name] = tuple(periods)
        labels[name] = str(entry.get("label") or name)
        for model in entry["models"]:
            family_of[normalise_model(str(model))] = name
    digest = hashlib.sha256(orjson.dumps(families, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return PriceTable(table, family_of, labels, tuple(t for t in targets if t in table), digest)


def format_usd(amount: Decimal) -> str:
    """Render a cost as a fixed-point decimal string, rounded once, half-even."""
    return format(amount.quantize(USD_PLACES, rounding=ROUND_HALF_EVEN), "f")
