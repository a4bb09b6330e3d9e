"""Cost engine: exact prices per deduplicated request, and the halt gate for unknown models."""

from agenthropic_site.cost.prices import (
    PriceTable,
    PricingError,
    PricingFileError,
    format_usd,
    load_price_table,
    normalise_model,
)

__all__ = ["PriceTable", "PricingError", "PricingFileError", "format_usd", "load_price_table", "normalise_model"]
