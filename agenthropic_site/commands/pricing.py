"""`agenthropic pricing`: the effective price table and the corpus's models that have no price."""

from __future__ import annotations

import argparse
import sys

from agenthropic_site.commands.options import build_config, corpus_options, verbosity_options
from agenthropic_site.errors import EXIT_FAILURES, EXIT_OK, UserError, report


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `pricing` command."""
    pricing = subparsers.add_parser(
        "pricing",
        help="print the effective price table and the corpus's model ids that have no price",
        description="Print the effective price table (built-in, with --pricing merged over it) and every model id "
        "found in the corpus that has no price. Exit code 1 when such a model exists.",
    )
    corpus_options(pricing)
    pricing.add_argument("--json", action="store_true", help="print JSON instead of text")
    verbosity_options(pricing, quiet="print no progress lines")
    pricing.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the price table and the corpus's unpriced models; return 1 when there are any."""
    from agenthropic_site.pipeline.ingest import corpus_models
    from agenthropic_site.cost import load_price_table
    from agenthropic_site.cost.report import price_table_json, price_table_text

    try:
        config = build_config(args)
        prices = load_price_table(config.pricing)
        models = corpus_models(config)
    except UserError as exc:
        return report(exc)
    unpriced = {model: count for model, count in models.items() if model != "<synthetic>" and prices.family(model) is None}
    if args.json:
        sys.stdout.write(price_table_json(prices, models, unpriced))
    else:
        sys.stdout.write(price_table_text(prices, models, unpriced))
    return EXIT_FAILURES if unpriced else EXIT_OK
