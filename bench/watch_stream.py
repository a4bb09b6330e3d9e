"""Measure `agenthropic build --watch` under a steady stream of appends: does it keep up?

Usage: python bench/watch_stream.py [--rate 50] [--seconds 60] [--sessions 10]
Appends `rate` new assistant lines per second, round-robin over `sessions` generated sessions,
and measures for each line the time until the session's data JSON counts it (its lag), and the
watch's resident memory after its first build and at the end (Linux: /proc/PID/status).
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def resident_mb(pid: int) -> float | None:
    """Return a process's resident memory in MB (VmRSS), or None where /proc does not say."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def shown(megabytes: float | None) -> str:
    """Show megabytes with one decimal, or n/a when unknown."""
    return "n/a" if megabytes is None else f"{megabytes:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    from fixtures.stream import append_line, generate_stream_corpus, session_data

    with tempfile.TemporaryDirectory() as work:
        base = Path(work)
        mains = generate_stream_corpus(base / "corpus", args.sessions)
        out = base / "site"
        command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--corpus", str(base / "corpus"), "--out", str(out),
                   "--cache", str(base / "cache"), "--now", "2026-06-01T00:00:00Z", "-q"]
        watcher = subprocess.Popen(command, cwd=REPO)

        def output_tokens(path: Path) -> int | None:
            data = session_data(out, path.stem)
            return None if data is None else data["tokens"]["output"]

        while any(output_tokens(p) is None for p in mains):
            time.sleep(0.1)
        base_tokens = {p: output_tokens(p) for p in mains}
        first_rss = resident_mb(watcher.pid)
        appended: dict[Path, list[float]] = {p: [] for p in mains}
        lags: list[float] = []
        done = threading.Event()

        def observe() -> None:
            seen = {p: 0 for p in mains}
            while not done.is_set() or any(seen[p] < len(appended[p]) for p in mains):
                now = time.monotonic()
                for p in mains:
                    count = (output_tokens(p) or base_tokens[p]) - base_tokens[p]
                    while seen[p] < min(count, len(appended[p])):
                        lags.append(now - appended[p][seen[p]])
                        seen[p] += 1
                time.sleep(0.02)
                if done.is_set() and time.monotonic() - stop_time > 30:
                    break

        stop_time = float("inf")
        thread = threading.Thread(target=observe, daemon=True)
        thread.start()
        started = time.monotonic()
        index = 0
        while time.monotonic() - started < args.seconds:
            target = append_line(mains, index)
            appended[target].append(time.monotonic())
            index += 1
            time.sleep(max(0.0, started + index / args.rate - time.monotonic()))
        stop_time = time.monotonic()
        done.set()
        thread.join()
        last_rss = resident_mb(watcher.pid)
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
    lags.sort()
    print("| lines | rate/s | seconds | sessions | median lag s | p95 lag s | max lag s | all seen | RSS MB, first build | RSS MB, end |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    print(f"| {index} | {args.rate:g} | {args.seconds:g} | {len(mains)} | {statistics.median(lags):.2f} | "
          f"{lags[int(len(lags) * 0.95) - 1]:.2f} | {lags[-1]:.2f} | {len(lags) == index} | "
          f"{shown(first_rss)} | {shown(last_rss)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
