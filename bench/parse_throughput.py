"""Measure read layer + parser throughput (MB/s, one core) and peak memory on a generated corpus.

Usage: python bench/parse_throughput.py [--sessions 500] [--seed N]
Each size runs in its own process so peak RSS belongs to that size alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"


def measure(corpus: Path) -> dict[str, float]:
    """Walk, read and parse every session once; return bytes, seconds and peak RSS."""
    from agenthropic_site.corpus import real_root, scan_corpus
    from agenthropic_site.corpus.sniff import sniff_session_id
    from agenthropic_site.parse import parse_session
    from agenthropic_site.pipeline.parsing import ReadCount, load_session

    root = real_root(corpus)
    cap = 64 << 20
    started = time.perf_counter()
    cpu_started = time.process_time()
    scan = scan_corpus(root, cap, 4, lambda ref: sniff_session_id(root, ref))
    total = 0
    largest = 0
    for files in scan.sessions.values():
        # As a build reads a session (a session without a main transcript, issue 13, included).
        source = load_session(root, files, cap, ReadCount()).source
        size = len(source.main.data) + sum(len(agent.data) for agent in source.agents)
        total += size
        largest = max(largest, size)
        parse_session(source)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return {
        "sessions": len(scan.sessions),
        "mb": total / 1e6,
        "largest_session_mb": largest / 1e6,
        "wall_s": wall,
        "cpu_s": cpu,
        "mb_per_s": total / 1e6 / wall,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 500], help="corpus sizes to measure (default: 100 500)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    print("| sessions | corpus MB | largest session MB | wall s | CPU s | MB/s | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for count in args.sessions:
        corpus = WORK / f"scale-{count}-{args.seed}"
        if not corpus.is_dir():
            subprocess.run([sys.executable, "-m", "fixtures.generate", "--sessions", str(count), "--seed", str(args.seed), "--out", str(corpus)],
                           cwd=REPO, check=True, capture_output=True)
        out = subprocess.run([sys.executable, __file__, "--measure", str(corpus)], cwd=REPO, check=True, capture_output=True, text=True)
        r = json.loads(out.stdout)
        cells = (r["sessions"], f"{r['mb']:.1f}", f"{r['largest_session_mb']:.2f}", f"{r['wall_s']:.2f}", f"{r['cpu_s']:.2f}",
                 f"{r['mb_per_s']:.0f}", f"{r['peak_rss_mb']:.0f}")
        print("| " + " | ".join(str(cell) for cell in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
