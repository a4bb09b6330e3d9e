"""Time one build of an existing site by phase, in one process: where an incremental build spends its time.

Usage: python bench/build_phases.py CORPUS OUT CACHE [--now ISO8601] [--jobs N] [--time MODULE:NAME ...]

Run it after a build of the same folders (and a change to the corpus, such as one appended line):
it builds once more and prints the time of the imports and of each stage of `run_build` (the
no-change stamp, ingest, views, usage windows, gather, rendering, with the sessions' pages apart).
`--time` adds any function or method to the list, named where its callers look it up (a function
imported by name into another module is timed under that module's name):
`--time agenthropic_site.cache.store:Cache.write_session --time agenthropic_site.render.pages:Renderer.graph`.
Wall-clock seconds of one run: compare phases of one run, not runs of a busy machine.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()

from agenthropic_site import heap  # noqa: E402

heap.pause_for_imports()  # as `agenthropic build` does (entry.py); run_build resumes the collector
from agenthropic_site.config import BuildConfig, resolve_now  # noqa: E402
from agenthropic_site.pipeline import build, stamp  # noqa: E402
from agenthropic_site.pipeline import rendering  # noqa: E402
from agenthropic_site.render import pages, site  # noqa: E402

IMPORTED = time.perf_counter()
SPENT: dict[str, float] = {}


def timed(owner: Any, name: str, label: str) -> None:
    """Replace owner.name by a wrapper that adds its time to SPENT[label]."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] = SPENT.get(label, 0.0) + time.perf_counter() - start

    setattr(owner, name, wrapper)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--now", help="the build clock (default: as `agenthropic build`)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--time", action="append", default=[], metavar="MODULE:NAME",
                        help="also time this function or method (repeatable), e.g. agenthropic_site.cache.store:Cache.write_session")
    args = parser.parse_args()
    for spec in args.time:
        module, _, dotted = spec.partition(":")
        *path, name = dotted.split(".")
        try:
            holder: Any = functools.reduce(getattr, path, importlib.import_module(module))
            found = inspect.getattr_static(holder, name)
        except (ImportError, AttributeError):
            sys.exit(f"--time {spec}: no such function or method (give MODULE:NAME or MODULE:CLASS.METHOD, as its callers look it up)")
        if isinstance(found, staticmethod):
            sys.exit(f"--time {spec}: a static method cannot be timed here; time its caller")
        timed(holder, name, dotted)
    for owner, name, label in (
        (stamp, "before_build", "no-change stamp: state before"), (stamp, "record", "no-change stamp: record"),
        (build, "scan_and_ingest", "ingest (walk, parse, write)"), (build, "refresh_views", "views"),
        (build, "corpus_usage", "usage windows"), (build, "gather", "gather"), (rendering, "render_site", "render: all"),
        (site, "_render_sessions", "render: sessions' outputs"), (pages.Renderer, "render_session", "render: changed sessions"),
    ):
        timed(owner, name, label)
    now = resolve_now(args.now, os.environ)
    config = BuildConfig(corpus=args.corpus, out=args.out, cache=args.cache, now=now, quiet=True, jobs=args.jobs)
    start = time.perf_counter()
    result = build.run_build(config)
    total = time.perf_counter() - start
    print(f"imports {IMPORTED - STARTED:.3f} s; run_build {total:.3f} s ({result.parsed} parsed, {result.pages_rendered} outputs rendered)")
    for label, seconds in SPENT.items():
        print(f"  {label:32} {seconds:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
