"""The `agenthropic` command line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from pathlib import Path
from collections.abc import Sequence

from agenthropic_site import __version__
from agenthropic_site.config import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_WATCHDOG_MINUTES,
    BuildConfig,
    ConfigError,
    default_cache_dir,
    default_corpus_dir,
    default_jobs,
    resolve_now,
)
from agenthropic_site.corpus import ContainmentError, CorpusRootError
from agenthropic_site.terminal import printable

EXIT_OK, EXIT_FAILURES, EXIT_USAGE, EXIT_CONTAINMENT, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
DEFAULT_PORT = 8765
# Modules that add subcommands; each has `register(subparsers)` and keeps its imports light.
COMMAND_MODULES: tuple[str, ...] = ("agenthropic_site.hooks", "agenthropic_site.archive", "agenthropic_site.compare", "agenthropic_site.verify")

DESCRIPTION = """\
Turn Claude Code's session transcripts (~/.claude/projects) into a static HTML site:
which agents each session spawned and who spawned whom, what each agent and branch cost,
where the context was compacted, and what failed.

Exit codes: 0 built; 1 built, but some sessions failed or could not be priced (see the
build report); 2 usage error or missing corpus; 3 a corpus path escapes the corpus root;
4 internal error (a bug); 130 interrupted.
"""


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every command and option documented."""
    parser = argparse.ArgumentParser(prog="agenthropic", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"agenthropic {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    build = commands.add_parser(
        "build",
        help="build the static site from a corpus of transcripts",
        description="Build the static site. Only sessions whose files changed since the last build are read again.",
    )
    _shared_options(build)
    build.add_argument("--out", type=Path, default=Path("site"), metavar="DIR", help="output folder for the site (default: ./site)")
    build.add_argument("--theme", type=Path, metavar="DIR", help="theme folder whose templates/ and static/ files override the default theme's")
    build.add_argument(
        "--now", metavar="ISO8601",
        help="the build clock, for status ageing (default: $SOURCE_DATE_EPOCH, else the current time); never written into the site",
    )
    build.add_argument(
        "--watchdog-minutes", type=_positive, default=DEFAULT_WATCHDOG_MINUTES, metavar="N",
        help=f"an agent with no ending and no activity for N minutes before the build clock is shown as unknown (default: {DEFAULT_WATCHDOG_MINUTES})",
    )
    build.add_argument(
        "--max-file-mb", type=_positive, default=DEFAULT_MAX_FILE_BYTES // (1024 * 1024), metavar="N",
        help=f"skip transcripts larger than N MiB, reported as oversize (default: {DEFAULT_MAX_FILE_BYTES // (1024 * 1024)})",
    )
    build.add_argument(
        "--max-depth", type=_positive, default=DEFAULT_MAX_DEPTH, metavar="N",
        help=f"skip folders nested deeper than N levels under a session folder, reported as too-deep (default: {DEFAULT_MAX_DEPTH})",
    )
    build.add_argument(
        "--watch", action="store_true",
        help="after the first build, rebuild whenever the corpus, the hook spool or the theme changes (and every few "
        "seconds); print only changes and trouble; Ctrl-C stops with exit code 0",
    )
    build.add_argument("--serve", action="store_true", help="with --watch: serve the site on 127.0.0.1 and reload open pages after each build")
    build.add_argument("--port", type=_positive, default=DEFAULT_PORT, metavar="N", help=f"with --serve: the port (default: {DEFAULT_PORT})")
    build.add_argument(
        "--redact", action="store_true",
        help="mask credential shapes (API keys such as sk-ant-..., AWS keys, GitHub and Slack tokens, private key blocks, "
        "bearer tokens, api_key=... values) in every page and JSON file; the build report counts the masks by kind. "
        "The cache keeps the transcripts as they are",
    )
    build.add_argument(
        "-j", "--jobs", type=_positive, default=default_jobs(), metavar="N",
        help="use N processes to parse changed sessions and render session pages when many changed (a first build, a "
        "new theme); the site and cache are the same whatever N (default: one a core, at most 4)",
    )
    build.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    build.set_defaults(handler=_build)

    pricing = commands.add_parser(
        "pricing",
        help="print the effective price table and the corpus's model ids that have no price",
        description="Print the effective price table (built-in, with --pricing merged over it) and every model id "
        "found in the corpus that has no price. Exit code 1 when such a model exists.",
    )
    _shared_options(pricing)
    pricing.add_argument("--json", action="store_true", help="print JSON instead of text")
    pricing.add_argument("-q", "--quiet", action="store_true", help="print no progress lines")
    pricing.set_defaults(handler=_pricing)
    for module in COMMAND_MODULES:
        # Each module adds its subcommands with set_defaults(handler=...); see `register` there.
        importlib.import_module(module).register(commands)
    return parser


def _shared_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--corpus", type=Path, metavar="DIR",
        help="folder of Claude Code project folders (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)",
    )
    command.add_argument(
        "--cache", type=Path, metavar="DIR",
        help="cache folder (default: $AGENTHROPIC_CACHE_DIR, else $XDG_CACHE_HOME/agenthropic, else ~/.cache/agenthropic); "
        "never inside the corpus or the output",
    )
    command.add_argument(
        "--pricing", type=Path, metavar="FILE",
        help="JSON price file whose families are merged over the built-in prices (how to price a new model; "
        "see `agenthropic pricing`)",
    )


def _config(args: argparse.Namespace) -> BuildConfig:
    env = os.environ
    home = Path.home()
    config = BuildConfig(
        corpus=args.corpus if args.corpus is not None else default_corpus_dir(env, home),
        out=getattr(args, "out", None) or Path("site"),
        cache=args.cache if args.cache is not None else default_cache_dir(env, home),
        now=resolve_now(getattr(args, "now", None), env),
        theme=getattr(args, "theme", None),
        pricing=args.pricing,
        max_file_bytes=getattr(args, "max_file_mb", DEFAULT_MAX_FILE_BYTES // (1024 * 1024)) * 1024 * 1024,
        max_depth=getattr(args, "max_depth", DEFAULT_MAX_DEPTH),
        watchdog_minutes=getattr(args, "watchdog_minutes", DEFAULT_WATCHDOG_MINUTES),
        quiet=args.quiet,
        redact=getattr(args, "redact", False),
        jobs=getattr(args, "jobs", 1),
    )
    if config.pricing is not None and not config.pricing.is_file():
        raise ConfigError(f"pricing file not found: {config.pricing}")
    return config


def _watch(args: argparse.Namespace) -> int:
    import dataclasses

    from agenthropic_site.watch import serve_and_watch, watch_forever

    def log(message: str) -> None:
        if not args.quiet or message.startswith(("watch:", "FATAL")):
            print(printable(message), file=sys.stderr, flush=True)

    try:
        # Without a fixed clock, each pass ages statuses with the current time.
        fixed_clock = bool(args.now) or bool(os.environ.get("SOURCE_DATE_EPOCH", "").strip())
        config = dataclasses.replace(_config(args), wait_for_cache=False, live_clock=not fixed_clock)
    except ConfigError as exc:
        print(f"agenthropic: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.serve:
        return serve_and_watch(config, log, args.port)
    return watch_forever(config, log)


def _pricing(args: argparse.Namespace) -> int:
    from agenthropic_site.build import corpus_models
    from agenthropic_site.cost import PricingFileError, load_price_table
    from agenthropic_site.cost.report import price_table_json, price_table_text

    def log(message: str) -> None:
        if not args.quiet:
            print(printable(message), file=sys.stderr)

    try:
        config = _config(args)
        prices = load_price_table(config.pricing)
        models = corpus_models(config, log)
    except (CorpusRootError, ConfigError, PricingFileError, ContainmentError) as exc:
        return _report(exc)
    unpriced = {model: count for model, count in models.items() if model != "<synthetic>" and prices.family(model) is None}
    if args.json:
        sys.stdout.write(price_table_json(prices, models, unpriced))
    else:
        sys.stdout.write(price_table_text(prices, models, unpriced))
    return EXIT_FAILURES if unpriced else EXIT_OK


def _report(exc: Exception) -> int:
    """Print one line for an error the user can fix and return its exit code."""
    if isinstance(exc, ContainmentError):
        print(printable(f"FATAL: corpus containment violation - {exc}"), file=sys.stderr)
        return EXIT_CONTAINMENT
    print(printable(f"agenthropic: {exc}"), file=sys.stderr)  # a path named in it may hold control characters
    return EXIT_USAGE


def _build(args: argparse.Namespace) -> int:
    if args.serve and not args.watch:
        print("agenthropic: --serve needs --watch", file=sys.stderr)
        return EXIT_USAGE
    if args.watch:
        return _watch(args)
    from agenthropic_site.build import repair_line, run_build
    from agenthropic_site.cache.store import CacheFullError
    from agenthropic_site.cost import PricingFileError
    from agenthropic_site.render.writer import OutputError

    def log(message: str) -> None:
        if not args.quiet:
            print(printable(message), file=sys.stderr)

    try:
        config = _config(args)
        if config.theme is not None and not (config.theme / "templates").is_dir() and not (config.theme / "static").is_dir():
            raise ConfigError(f"theme folder has neither templates/ nor static/: {config.theme}")
        result = run_build(config, log)
    except CacheFullError as exc:
        # Like a full output folder (exit 1): nothing is lost, the site is whole and the cache consistent.
        print(f"agenthropic: {exc}; the site was left whole: free some space and build again", file=sys.stderr)
        return EXIT_FAILURES
    except (CorpusRootError, ConfigError, PricingFileError, ContainmentError) as exc:
        return _report(exc)
    except OutputError as exc:
        print(f"agenthropic: {exc}; the previous site was left as it was", file=sys.stderr)
        return EXIT_FAILURES
    if result.cache_repairs:
        print(printable(repair_line(result.cache_repairs)), file=sys.stderr)  # even with -q: the user's cache was damaged
    log(
        f"{result.sessions} sessions: {result.parsed} parsed, {result.reused} unchanged, {result.failed} failed, "
        f"{result.excluded} unpriced; {result.skips} files skipped; "
        f"{result.pages_written} files written, {result.pages_unchanged} unchanged, {result.files_removed} removed"
    )
    if not args.quiet:
        print(config.out.resolve() / "index.html")
    if result.exit_code:
        print("agenthropic: some sessions are left out of the cost totals; see report.html", file=sys.stderr)
    return result.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        print("agenthropic: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - a bug must not look like "built with failures" (exit 1)
        traceback.print_exc()
        print("agenthropic: internal error (a bug): please report it with the lines above", file=sys.stderr)
        return EXIT_INTERNAL
