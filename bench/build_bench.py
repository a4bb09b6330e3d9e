"""Measure whole builds: cold, no-change and one-append, with peak RSS, on generated corpora.

Usage: python bench/build_bench.py [--sessions 100 1000] [--seed 7]
Each build runs as its own `agenthropic build` process; wall time and peak RSS are that process's.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
NOW = "2026-06-01T00:00:00Z"


def timed_build(corpus: Path, out: Path, cache: Path) -> tuple[float, float]:
    """Run one build; return (wall seconds, peak RSS MiB of that process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(corpus), "--out", str(out), "--cache", str(cache),
                    "--now", NOW, "-q"], check=False, cwd=REPO)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest so far: report it only when this build raised it.
    return wall, max(after, before) / 1024 if after > before else float("nan")


def measure(count: int, seed: int) -> dict[str, float]:
    corpus = WORK / f"scale-{count}-{seed}"
    if not corpus.is_dir():
        subprocess.run([sys.executable, "-m", "fixtures.generate", "--sessions", str(count), "--seed", str(seed), "--out", str(corpus)],
                       cwd=REPO, check=True, capture_output=True)
    scratch = WORK / f"build-{count}"
    shutil.rmtree(scratch, ignore_errors=True)
    copy = scratch / "corpus"
    shutil.copytree(corpus, copy)
    out, cache = scratch / "site", scratch / "cache"
    cold, cold_rss = timed_build(copy, out, cache)
    nochange, _ = timed_build(copy, out, cache)
    nochange2, _ = timed_build(copy, out, cache)
    target = sorted(copy.rglob("*.jsonl"))[len(list(copy.rglob("*.jsonl"))) // 2]
    last = target.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    with target.open("ab") as handle:
        handle.write(last + b"\n")  # a copy of a real line: a replayed request, as a live session appends
    append, _ = timed_build(copy, out, cache)
    size = sum(p.stat().st_size for p in copy.rglob("*") if p.is_file())
    site = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    shutil.rmtree(scratch, ignore_errors=True)
    return {"sessions": count, "corpus_mb": size / 1e6, "site_mb": site / 1e6, "cold_s": cold, "cold_rss_mb": cold_rss,
            "nochange_s": min(nochange, nochange2), "append_s": append}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print("| sessions | corpus MB | site MB | cold s | cold peak RSS MB | no-change s | one-append s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for count in args.sessions:
        r = measure(count, args.seed)
        print(f"| {r['sessions']} | {r['corpus_mb']:.0f} | {r['site_mb']:.0f} | {r['cold_s']:.1f} | {r['cold_rss_mb']:.0f} | "
              f"{r['nochange_s']:.2f} | {r['append_s']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
