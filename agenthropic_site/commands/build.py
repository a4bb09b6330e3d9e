"""`agenthropic build`: build the site once, or keep it built with --watch (and --serve)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from agenthropic_site import console, heap
from agenthropic_site.commands.summary import tell
from agenthropic_site.commands.options import build_config, corpus_options, default_jobs, positive, verbosity_options
from agenthropic_site.config import DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES, DEFAULT_TZ, DEFAULT_WATCHDOG_MINUTES, ConfigError
from agenthropic_site.errors import EXIT_USAGE, UserError, report
from agenthropic_site.terminal import printable

DEFAULT_PORT = 8765


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `build` command."""
    build = subparsers.add_parser(
        "build",
        help="build the static site from a corpus of transcripts",
        description="Build the static site. Only sessions whose files changed since the last build are read again.",
    )
    corpus_options(build)
    build.add_argument("--out", type=Path, default=Path("site"), metavar="DIR", help="output folder for the site (default: ./site)")
    build.add_argument("--theme", type=Path, metavar="DIR", help="theme folder whose templates/ and static/ files override the default theme's")
    build.add_argument(
        "--now", metavar="ISO8601",
        help="the build clock, for status ageing (default: $SOURCE_DATE_EPOCH, else the current time); never written into the site",
    )
    build.add_argument(
        "--tz", default=DEFAULT_TZ, metavar="ZONE",
        help=f"IANA time zone (such as Europe/Paris) that usage days, weeks and months are cut in and pages show times in "
        f"(default: {DEFAULT_TZ}, whatever the machine's zone, so a corpus builds the same site anywhere)",
    )
    build.add_argument(
        "--watchdog-minutes", type=positive, default=DEFAULT_WATCHDOG_MINUTES, metavar="N",
        help=f"an agent with no ending and no activity for N minutes before the build clock is shown as unknown (default: {DEFAULT_WATCHDOG_MINUTES})",
    )
    build.add_argument(
        "--max-file-mb", type=positive, default=DEFAULT_MAX_FILE_BYTES // (1024 * 1024), metavar="N",
        help=f"skip transcripts larger than N MiB, reported as oversize (default: {DEFAULT_MAX_FILE_BYTES // (1024 * 1024)})",
    )
    build.add_argument(
        "--max-depth", type=positive, default=DEFAULT_MAX_DEPTH, metavar="N",
        help=f"skip folders nested deeper than N levels under a session folder, reported as too-deep (default: {DEFAULT_MAX_DEPTH})",
    )
    build.add_argument(
        "--watch", action="store_true",
        help="after the first build, rebuild whenever the corpus, the hook spool or the theme changes (and every few "
        "seconds); print only changes and trouble; Ctrl-C (or SIGTERM) stops with exit code 0",
    )
    build.add_argument("--serve", action="store_true", help="with --watch: serve the site on 127.0.0.1 and reload open pages after each build")
    build.add_argument("--port", type=positive, default=DEFAULT_PORT, metavar="N", help=f"with --serve: the port (default: {DEFAULT_PORT})")
    build.add_argument(
        "--redact", action="store_true",
        help="mask credential shapes (API keys such as sk-ant-..., AWS keys, GitHub and Slack tokens, private key blocks, "
        "bearer tokens, api_key=... values) in every page and JSON file; the build report counts the masks by kind. "
        "The cache keeps the transcripts as they are",
    )
    build.add_argument(
        "-j", "--jobs", type=positive, default=default_jobs(), metavar="N",
        help="use N processes to parse changed sessions, compute their views and render their pages when many changed (a first build, a "
        "new theme); the site and cache are the same whatever N (default: one a core, at most 4)",
    )
    verbosity_options(build, quiet="print only errors")
    build.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Build the site (or watch); return the exit code."""
    if args.serve and not args.watch:
        print("agenthropic: --serve needs --watch", file=sys.stderr)
        return EXIT_USAGE
    if args.watch:
        return _watch(args)
    from agenthropic_site.pipeline import stamp

    try:
        config = dataclasses.replace(build_config(args), live_clock=not _fixed_clock(args), invocation=_invocation(args))
        if config.theme is not None and not (config.theme / "templates").is_dir() and not (config.theme / "static").is_dir():
            raise ConfigError(f"theme folder has neither templates/ nor static/: {config.theme}")
        # Nothing changed since the last build of this folder: said without loading the pipeline
        # (with -v the build runs, to explain each decision).
        result, measured = (None, {}) if args.verbose else stamp.unchanged(config)
        if result is None:
            from agenthropic_site.pipeline.build import run_build

            result = run_build(config, measured)
    except UserError as exc:
        # A full cache or output folder is exit 1 (nothing lost, the site whole); the rest exit 2 or 3.
        return report(exc)
    if result.cache_repairs:
        from agenthropic_site.pipeline.repair import repair_line

        print(printable(repair_line(result.cache_repairs)), file=sys.stderr)  # even with -q: the user's cache was damaged
    return tell(vars(result), os.fspath(config.out), args.quiet)


def _invocation(args: argparse.Namespace) -> str | None:
    """Return what the stamp of this build is keyed on (pipeline/stamp.py invocation); None for none."""
    if args.verbose:
        return None  # a run that explains each decision runs the build, never answers from the stamp
    try:
        folder = os.getcwd()
    except OSError:
        return None  # run from a folder since deleted: nothing to key a stamp on
    from agenthropic_site.pipeline.stamp import invocation

    return invocation(getattr(args, "words", ()), os.environ, folder)


def _fixed_clock(args: argparse.Namespace) -> bool:
    """Tell whether the build clock is given (--now or SOURCE_DATE_EPOCH) rather than read from the wall."""
    return bool(args.now) or bool(os.environ.get("SOURCE_DATE_EPOCH", "").strip())


def _watch(args: argparse.Namespace) -> int:
    """Build, then rebuild on every change until Ctrl-C (serving the site with --serve)."""
    from agenthropic_site.pipeline.watch import serve_and_watch, watch_forever

    heap.resume_after_imports()  # a watch lives long: it collects its garbage
    try:
        # Without a fixed clock, each pass ages statuses with the current time.
        config = dataclasses.replace(build_config(args), wait_for_cache=False, live_clock=not _fixed_clock(args))
    except ConfigError as exc:
        return report(exc)
    # A watch says only what changed and what went wrong; the builds it runs stay quiet (unless -v).
    console.configure(console.verbosity(args.quiet, args.verbose), only="agenthropic_site.pipeline.watch")
    if args.serve:
        return serve_and_watch(config, args.port)
    return watch_forever(config)
