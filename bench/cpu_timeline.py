"""Show how many cores a build keeps busy as it goes, beside its progress lines (Linux: reads /proc/stat).

Usage: python bench/cpu_timeline.py [--every SECONDS] -- COMMAND ...

e.g. `python bench/cpu_timeline.py -- python -m agenthropic_site build --corpus C --out O --cache K`.
Runs the command, prints each line it writes to stderr with the second it came at, then the cores
busy in each interval (the whole machine's, so run it on a quiet one) and the core-seconds left
idle while the command ran. A stage that leaves cores idle can gain from more workers; one that
keeps every core busy can gain only by doing less.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time


def ticks() -> tuple[int, int]:
    """Return the machine's CPU ticks so far: all of them, and the idle ones (idle and waiting for I/O)."""
    with open("/proc/stat", encoding="ascii") as stat:
        values = [int(value) for value in stat.readline().split()[1:]]
    return sum(values), values[3] + values[4]


def main(argv: list[str]) -> int:
    """Run the command and print its timeline; return its exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--every", type=float, default=0.25, help="the sampling interval in seconds (default 0.25)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    cores = len(os.sched_getaffinity(0))
    busy: list[tuple[float, float]] = []  # (end of the interval, cores busy in it)
    done = threading.Event()
    started = time.monotonic()

    def sample() -> None:
        before = ticks()
        while not done.wait(args.every):
            now = ticks()
            total, idle = now[0] - before[0], now[1] - before[1]
            busy.append((time.monotonic() - started, cores * (total - idle) / total if total else 0.0))
            before = now

    try:
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as exc:
        parser.error(f"cannot run {command[0]}: {exc.strerror or exc}")
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert process.stderr is not None
    for line in process.stderr:
        print(f"{time.monotonic() - started:7.2f}  {line.rstrip()}")
    status = process.wait()
    ended = time.monotonic() - started
    done.set()
    sampler.join()
    print(f"cores busy ({cores} in all), by {args.every:g} s:")
    for at in range(0, len(busy), 8):
        print("  " + "  ".join(f"{end:6.2f}: {used:3.1f}" for end, used in busy[at : at + 8]))
    idle = sum((cores - used) * args.every for _, used in busy)
    print(f"ran {ended:.2f} s; {idle:.1f} core-seconds idle of {cores * ended:.1f}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
