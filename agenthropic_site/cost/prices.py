"""Dated per-family prices from a data file; exact Decimal arithmetic; no silent $0."""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import operator
import re
from collections.abc import Iterable
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import orjson

from agenthropic_site.digits import whole_number
from agenthropic_site.errors import UserError
from agenthropic_site.parse.model import TOKEN_CATEGORIES, Tokens
from agenthropic_site.records import record_class

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


class PricingFileError(UserError):
    """A `--pricing` file that is not a valid price table (exit code 2)."""


class _FieldError(Exception):
    """A field of one family's entry that is missing or wrong: (field path, what is wrong)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(field, problem)
        self.field = field
        self.problem = problem


_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


@record_class(frozen=True)
class Rates:
    """USD per million tokens for each category."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write_5m: Decimal
    cache_write_1h: Decimal

    @classmethod
    def from_json(cls, raw: dict[str, Any], where: str = "") -> Rates:
        """Read rates given as decimal strings or numbers (`where` prefixes the field named in an error)."""
        return cls(**{name: _amount(raw, name, where) for name in TOKEN_CATEGORIES})


def _field(raw: dict[str, Any], name: str, where: str) -> Any:
    if name not in raw:
        raise _FieldError(where + name, "is missing")
    return raw[name]


# The largest rate (USD per million tokens: $1 a token; the built-in table's largest is 75) and fast-mode
# multiplier a price file may give. Costs are decimals of 28 digits rounded once to 10 places
# (format_usd): a rate of 1e20 made totals that rounding cannot hold (decimal.InvalidOperation),
# 1e999999 overflowed; within these, a corpus of 10^13 tokens at the largest rate still fits.
MAX_RATE = Decimal(1_000_000)
MAX_FAST_MULTIPLIER = Decimal(1_000)


def _amount(raw: dict[str, Any], name: str, where: str, most: Decimal = MAX_RATE) -> Decimal:
    """Read a non-negative finite decimal of at most `most`, given as a string or a number."""
    value = _field(raw, name, where)
    try:
        amount = Decimal(str(value)) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    except ArithmeticError:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0:
        raise _FieldError(where + name, f"is not a non-negative number: {value!r}")
    if amount > most:
        raise _FieldError(where + name, f"is more than {most:,}: {value!r}")
    return amount


def _day(raw: dict[str, Any], where: str) -> str:
    """Read the day a period starts (YYYY-MM-DD, a time after it ignored)."""
    value = _field(raw, "from", where)
    text = value if isinstance(value, str) else ""
    try:
        date.fromisoformat(text[:10])  # a real day: not 2025-13-01
    except ValueError:
        text = ""
    if not _DATE_RE.match(text):
        raise _FieldError(where + "from", f"is not a date (YYYY-MM-DD): {value!r}")
    return text[:10]


def _period(item: Any, where: str) -> Period:
    if not isinstance(item, dict):
        raise _FieldError(where.rstrip("."), "is not an object")
    tier = item.get("long_context")
    if tier is not None and not isinstance(tier, dict):
        raise _FieldError(where + "long_context", "is not an object")
    threshold = None
    if tier is not None:
        raw_threshold = _field(tier, "threshold", where + "long_context.")
        if isinstance(raw_threshold, int) and not isinstance(raw_threshold, bool) and raw_threshold >= 0:
            threshold = raw_threshold
        else:
            threshold = whole_number(raw_threshold) if isinstance(raw_threshold, str) else None
            if threshold is None:
                raise _FieldError(where + "long_context.threshold", f"is not a whole number of tokens: {raw_threshold!r}")
    return Period(
        start=_day(item, where),
        rates=Rates.from_json(item, where),
        long_context_threshold=threshold,
        long_context=Rates.from_json(tier, where + "long_context.") if tier is not None else None,
        fast_multiplier=_amount(item, "fast_multiplier", where, MAX_FAST_MULTIPLIER) if item.get("fast_multiplier") is not None else None,
    )


@record_class(frozen=True)
class Period:
    """Prices in force from a day on (inclusive), with an optional long-context tier."""

    start: str
    rates: Rates
    long_context_threshold: int | None
    long_context: Rates | None
    fast_multiplier: Decimal | None


@record_class(frozen=True)
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


@record_class(frozen=True)
class RequestSums:
    """Requests summed for pricing at any family's rates: by day and speed, in order of context size, with running token sums.

    Which tier a request falls in depends on the family priced (its threshold), so the sums are
    kept in context order: the requests above a threshold are a suffix, found by bisection.
    """

    # (day, fast) -> (each request's context, ascending; running sums of the counts in
    # TOKEN_CATEGORIES order, from none of the requests to all of them)
    groups: dict[tuple[str | None, bool], tuple[list[int], list[tuple[int, ...]]]]

    @classmethod
    def of(cls, requests: Iterable[tuple[Tokens, str | None, str | None]]) -> RequestSums:
        """Sum (tokens, day, speed) requests; only the day of a timestamp chooses a price period."""
        found: dict[tuple[str | None, bool], list[Tokens]] = {}
        for tokens, day, speed in requests:
            found.setdefault((day[:10] if day is not None else None, speed == "fast"), []).append(tokens)
        groups = {}
        for key, requested in found.items():
            requested.sort(key=_context)
            # Each category's running sum in one pass (C loops), then the sums of each prefix side by side.
            columns = [itertools.accumulate(map(count, requested), initial=0) for count in _COUNTS]
            groups[key] = (list(map(_context, requested)), list(zip(*columns)))
        return cls(groups)

    def uncached(self) -> RequestSums:
        """Return these requests as if nothing were cached: every cache read and write sent as plain input.

        A request's context is the same either way, so its tier and its place in the order are too:
        only the running sums change (TOKEN_CATEGORIES order), and pricing them is exactly pricing
        each request made uncached (a 60 MB session's 9,455 requests: no Tokens made again, no sort).
        """
        return RequestSums({
            key: (contexts, [(fresh + read + five + hour, output, 0, 0, 0) for fresh, output, read, five, hour in running])
            for key, (contexts, running) in self.groups.items()
        })


def _context(tokens: Tokens) -> int:
    """Return the tokens a request's context holds: what decides its long-context tier."""
    return tokens.input + tokens.cache_read + tokens.cache_write_5m + tokens.cache_write_1h


_COUNTS = tuple(operator.attrgetter(name) for name in TOKEN_CATEGORIES)


@record_class(frozen=True)
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
        if period.long_context is not None and period.long_context_threshold is not None and _context(tokens) > period.long_context_threshold:
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

    def total_as(self, family: str, requests: Iterable[tuple[Tokens, str | None, str | None]]) -> Decimal:
        """Return what (tokens, day, speed) requests cost at a family's rates: the sum of cost_as over them.

        Raises PricingError as cost_as. To price the same requests at several families' rates, sum
        them once (`RequestSums.of`) and price the sums with `total_of`.
        """
        return self.total_of(family, RequestSums.of(requests))

    def total_of(self, family: str, sums: RequestSums) -> Decimal:
        """Return what summed requests cost at a family's rates (the sum of cost_as over them); raise PricingError as cost_as.

        Requests at the same rates (period, tier, speed) are priced once, on their summed tokens:
        prices are linear in tokens and Decimal arithmetic here is exact, so the total is the same
        as request by request, and a session's what-ifs price each family's sums, not each request.
        """
        total = Decimal(0)
        for (day, fast), (contexts, running) in sums.groups.items():
            period = self._period(family, day, family)
            if fast and period.fast_multiplier is None:
                raise PricingError(family, "no fast-mode price")
            multiplier = period.fast_multiplier if fast and period.fast_multiplier is not None else Decimal(1)
            # Requests whose context is above the threshold are billed whole at the long-context rates.
            split = len(contexts)
            if period.long_context is not None and period.long_context_threshold is not None:
                split = bisect.bisect_right(contexts, period.long_context_threshold)
            parts = [(period.rates, running[split])] if split else []
            if split < len(contexts) and period.long_context is not None:
                parts.append((period.long_context, tuple(whole - below for whole, below in zip(running[-1], running[split]))))
            for rates, counts in parts:
                total += sum((Decimal(count) * getattr(rates, name) * multiplier / PER_MILLION for count, name in zip(counts, TOKEN_CATEGORIES)),
                             Decimal(0))
        return total

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


# Every priced request asks twice (its family, then its cost); a session uses a handful of model ids.
@functools.lru_cache(maxsize=1024)
def normalise_model(model: str) -> str:
    """Map provider prefixes, `[1m]`, `@…`, `-v1:0` and date suffixes away: `us.anthropic.claude-opus-4-8` -> `claude-opus-4-8`."""
    name = _PREFIX_RE.sub("", model.strip().lower())
    for pattern in _SUFFIX_RES:
        name = pattern.sub("", name)
    return name


# Shipped beside this module (package data of the wheel). Read as a plain file: importlib.resources
# would import zipfile and tempfile (about 7 ms) into every build for a package that is never zipped.
BUILTIN_PRICES = Path(__file__).with_name("pricing.json")


def builtin_families() -> dict[str, Any]:
    """Return the raw built-in price document."""
    return orjson.loads(BUILTIN_PRICES.read_bytes())


def load_price_table(extra: Path | None = None) -> PriceTable:
    """Load the built-in table, with a user's `--pricing` file merged over it family by family."""
    raw = builtin_families()
    families = dict(raw["families"])
    if extra is not None:
        try:
            user = orjson.loads(extra.read_bytes())
            if not isinstance(user, dict) or not isinstance(user.get("families"), dict):
                raise PricingFileError(f"{extra}: expected an object with a \"families\" object")
        except OSError as exc:
            raise PricingFileError(f"{extra}: {exc}") from None
        except orjson.JSONDecodeError as exc:  # orjson says "str is not valid UTF-8" of bytes that are not: name the file's fault first
            raise PricingFileError(f"{extra}: not a JSON price file (UTF-8 JSON): {exc}") from None
        families.update(user["families"])
        user_names = set(user["families"])
    else:
        user_names = set()
    return _table(families, tuple(raw.get("what_if_targets", ())), user_names, str(extra) if extra is not None else "")


def _family(entry: Any) -> tuple[tuple[Period, ...], list[str]]:
    """Read one family's dated periods (in date order) and model ids; a wrong field raises _FieldError."""
    if not isinstance(entry, dict):
        raise _FieldError("", "is not an object with models and periods")
    models = _field(entry, "models", "")
    if not isinstance(models, list) or not all(isinstance(model, str) for model in models):
        raise _FieldError("models", "is not a list of model ids")
    raw_periods = _field(entry, "periods", "")
    if not isinstance(raw_periods, list) or not raw_periods:
        raise _FieldError("periods", "is not a list of at least one price period")
    periods = [_period(item, f"periods[{index}].") for index, item in enumerate(raw_periods)]
    return tuple(sorted(periods, key=lambda period: period.start)), models


def _table(families: dict[str, Any], targets: tuple[str, ...], user_names: set[str], source: str) -> PriceTable:
    table: dict[str, tuple[Period, ...]] = {}
    family_of: dict[str, str] = {}
    labels: dict[str, str] = {}
    # User families come last so that a model id they list overrides a built-in family's.
    for name, entry in sorted(families.items(), key=lambda item: (item[0] in user_names, item[0])):
        try:
            table[name], models = _family(entry)
        except _FieldError as exc:
            where = source if name in user_names else "the built-in price table"
            field = f": field {exc.field}" if exc.field else ""
            raise PricingFileError(f"{where}: family {name!r}{field} {exc.problem}") from None
        labels[name] = str(entry.get("label") or name)
        for model in models:
            family_of[normalise_model(model)] = name
    digest = hashlib.sha256(orjson.dumps(families, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return PriceTable(table, family_of, labels, tuple(t for t in targets if t in table), digest)


def format_usd(amount: Decimal) -> str:
    """Render a cost as a fixed-point decimal string, rounded once, half-even."""
    return format(amount.quantize(USD_PLACES, rounding=ROUND_HALF_EVEN), "f")
