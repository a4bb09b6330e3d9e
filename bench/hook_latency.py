"""Measure `agenthropic hook` as Claude Code runs it: a new process per event, payload on stdin.

Usage: python bench/hook_latency.py [--runs 50]
Prints the median, 90th percentile and maximum wall time per call (target: median <= 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    command = shutil.which("agenthropic", path=str(Path(sys.executable).parent)) or "agenthropic"
    payload = json.dumps({"hook_event_name": "SubagentStop", "session_id": "11111111-2222-4333-8444-555555555555",
                          "agent_id": "a1", "last_assistant_message": "x" * 20000}).encode()
    times = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "AGENTHROPIC_CACHE_DIR": cache}
        for _ in range(args.runs + 3):
            started = time.perf_counter()
            subprocess.run([command, "hook"], input=payload, env=env, check=True)
            times.append(time.perf_counter() - started)
        lines = (Path(cache) / "hooks" / "spool.jsonl").read_text().count("\n")
    times = sorted(times[3:])  # the first calls warm the OS file cache
    print("| calls | median ms | p90 ms | max ms | spool lines |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {len(times)} | {statistics.median(times) * 1000:.0f} | {times[int(len(times) * 0.9) - 1] * 1000:.0f} | "
          f"{times[-1] * 1000:.0f} | {lines} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
