"""Options shared by the commands that read a corpus, and the BuildConfig made from them."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from agenthropic_site.config import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_TZ,
    DEFAULT_WATCHDOG_MINUTES,
    BuildConfig,
    ConfigError,
    check_zone,
    default_cache_dir,
    default_corpus_dir,
    default_jobs,
    other_default_corpus,
    resolve_now,
)
from agenthropic_site.places import home_folder


def positive(text: str) -> int:
    """Parse a positive whole number for argparse."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


def corpus_options(command: argparse.ArgumentParser) -> None:
    """Add --corpus, --cache and --pricing."""
    command.add_argument(
        "--corpus", type=Path, metavar="DIR",
        help="folder of Claude Code project folders (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects; a notice names "
        "~/.config/claude/projects, where some Claude Code 1.0 versions wrote, when it holds anything)",
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


def verbosity_options(command: argparse.ArgumentParser, quiet: str) -> None:
    """Add -q and -v (cli.main sends the log to the terminal at the level they ask for)."""
    command.add_argument("-q", "--quiet", action="store_true", help=quiet)
    command.add_argument(
        "-v", "--verbose", action="store_true",
        help="explain each decision: why a session is read again, why pages are rendered, what is skipped and why",
    )


def build_config(args: argparse.Namespace) -> BuildConfig:
    """Return the BuildConfig the parsed options ask for; raise ConfigError for a missing pricing file or an unknown zone."""
    env = os.environ
    home = Path(home_folder(env))
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
        tz=check_zone(getattr(args, "tz", None) or DEFAULT_TZ),
    )
    other = other_default_corpus(env, home) if args.corpus is None else None
    if other is not None:
        # Said by each build that runs (the no-change answer, which loads none of this, says nothing).
        said = (f"notice: {other} holds Claude Code transcripts too (some 1.0 versions wrote there); this build reads {config.corpus}: "
                f"build that folder with --corpus {other} and an --out of its own") if config.corpus.is_dir() else (
                f"notice: {other} holds Claude Code transcripts (some 1.0 versions wrote there): build it with --corpus {other}")
        logging.getLogger(__name__).info(said)
    if config.pricing is not None and not config.pricing.is_file():
        if not config.pricing.exists():
            raise ConfigError(f"pricing file not found: {config.pricing}")
        # A folder or a FIFO given by mistake: it is there, so "not found" would mislead.
        raise ConfigError(f"--pricing {config.pricing} is {'a folder' if config.pricing.is_dir() else 'not a regular file'}; give a JSON price file")
    return config


__all__ = ["build_config", "corpus_options", "default_jobs", "positive", "verbosity_options"]
