"""Measure `agenthropic build --watch` under a steady stream of appends: does it keep up?

Usage: python bench/watch_stream.py [--rate 50] [--seconds 60] [--sessions 10]
Appends `rate` new assistant lines per second, round-robin over `sessions` generated sessions,
and measures for each line the time until the session's data JSON counts it (its lag).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def line(session_id: str, index: int) -> bytes:
    record = {"type": "assistant", "uuid": f"stream-{index}", "sessionId": session_id, "requestId": f"req_stream_{index}",
              "timestamp": "2026-06-01T00:00:00.000Z", "message": {"id": f"msg_stream_{index}", "model": "claude-sonnet-4-5-20250929",
              "role": "assistant", "stop_reason": "end_turn", "content": [{"type": "text", "text": "streamed"}],
              "usage": {"input_tokens": 0, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}
    return json.dumps(record).encode() + b"\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    from fixtures.generate import generate_scale

    with tempfile.TemporaryDirectory() as work:
        base = Path(work)
        generate_scale(base / "corpus", sessions=args.sessions, seed=3, session_kb=200)
        mains = sorted(p for p in (base / "corpus").rglob("*.jsonl") if p.parent.parent == base / "corpus" and "-" in p.stem)
        out = base / "site"
        command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--corpus", str(base / "corpus"), "--out", str(out),
                   "--cache", str(base / "cache"), "--now", "2026-06-01T00:00:00Z", "-q"]
        watcher = subprocess.Popen(command, cwd=REPO)

        def output_tokens(path: Path) -> int | None:
            try:
                return json.loads((out / "data" / "sessions" / f"{path.stem}.json").read_text())["tokens"]["output"]
            except (OSError, ValueError, TypeError, KeyError):
                return None

        while any(output_tokens(p) is None for p in mains):
            time.sleep(0.1)
        base_tokens = {p: output_tokens(p) for p in mains}
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
            target = mains[index % len(mains)]
            with target.open("ab") as handle:
                handle.write(line(target.stem, index))
            appended[target].append(time.monotonic())
            index += 1
            time.sleep(max(0.0, started + index / args.rate - time.monotonic()))
        stop_time = time.monotonic()
        done.set()
        thread.join()
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
    lags.sort()
    print("| lines | rate/s | seconds | sessions | median lag s | p95 lag s | max lag s | all seen |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    print(f"| {index} | {args.rate:g} | {args.seconds:g} | {len(mains)} | {statistics.median(lags):.2f} | "
          f"{lags[int(len(lags) * 0.95) - 1]:.2f} | {lags[-1]:.2f} | {len(lags) == index} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
