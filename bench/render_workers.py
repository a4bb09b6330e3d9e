"""Where render workers pay: cold builds of generated corpora in one process and in two, workers forced on.

Usage: python bench/render_workers.py [--sessions 10 20 40] [--runs 3]

For each corpus size (fixtures.generate.generate_scale, seed 3, under bench/.work/), builds it cold
`--runs` times with `--jobs 1` and with `--jobs 2`, render workers started whatever the number of
pages (render/site.py's PARALLEL_MIN_PAGES lowered to 1 in the build's process), and prints the
corpus's transcripts (a page each) and the median wall time of each. Each build is its own process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from build_bench import check_built

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
NOW = "2026-06-01T00:00:00Z"
# A build with render workers whatever the number of pages (the worker processes import the module afresh).
FORCED = ("import sys\nfrom agenthropic_site.render import site\nsite.PARALLEL_MIN_PAGES = 1\n"
          "from agenthropic_site.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def cold(corpus: Path, jobs: int, scratch: Path) -> float:
    shutil.rmtree(scratch, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", FORCED, "build", "--corpus", str(corpus), "--out", str(scratch / "site"), "--cache",
                           str(scratch / "cache"), "--now", NOW, "-q", "--jobs", str(jobs)], cwd=REPO, check=False)
    wall = time.perf_counter() - started
    check_built(done.returncode, f"{corpus} with --jobs {jobs}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from fixtures.generate import generate_scale

    print("| corpus | transcripts | one process | two processes |\n|---|---:|---:|---:|")
    for sessions in args.sessions:
        corpus = WORK / f"workers-{sessions}-3"
        if not corpus.is_dir():
            generate_scale(corpus, sessions=sessions, seed=3)
        scratch = WORK / "workers-scratch"
        times = {jobs: statistics.median(cold(corpus, jobs, scratch) for _ in range(args.runs)) for jobs in (1, 2)}
        transcripts = sum(len(json.loads(path.read_text())["agents"]) for path in (scratch / "site" / "data" / "sessions").glob("*.json"))
        print(f"| {sessions} sessions | {transcripts} | {times[1]:.2f} s | {times[2]:.2f} s |", flush=True)
    shutil.rmtree(WORK / "workers-scratch", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
