"""Measure one generated session of about 60 MB: a cold build, a no-change build and appends, against issue 18's bounds.

Usage: python bench/big_session.py [--session-kb 154000] [--seed 5] [--appends 5] [--new-agents 3]

Generates one session (`fixtures.generate --sessions 1 --session-kb N`: a long main transcript and
hundreds of agents; kept in bench/.work/ and reused), copies it and the working tree's package to a
scratch folder (an edit during the run changes nothing measured), compiles its bytecode (kept in
bench/.work/pycache, as `compare_claude_code_log.py` does), and runs each
build as its own `agenthropic build -q` process (wall time and peak RSS are that process's, from
wait4): one cold build, one no-change build, then `--appends` times a new reply on the main
transcript (its last reply with fresh ids, dated after every other record, as a live session
appends) followed by a build, and by a cold build of the same corpus into folders of its own (the
machine's speed drifts over minutes: each append is set against the cold build made right after
it). Then `--new-agents` times a new agent file (a subagent starting: the first lines of one of the
session's agents with fresh ids, named to sort before the others) followed by a build. Prints each
build, then the median of the appends' ratios to their cold builds (issue 18: at most 0.1), the
largest append's peak RSS against the session's bytes (at most 3), and the new agents' median.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from build_bench import REPO, WORK, base_env, package_copy, timed_build
from compare_claude_code_log import append, latest_instant, new_message_line

APPEND_BOUND = 0.1  # of the cold build's time
RSS_BOUND = 3.0  # times the session's bytes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--session-kb", type=int, default=154_000, help="the generator's session size (default 154000: about 60 MB)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--appends", type=int, default=5)
    parser.add_argument("--new-agents", type=int, default=3)
    args = parser.parse_args()
    corpus = WORK / f"big-{args.seed}-{args.session_kb}kb"
    if not corpus.is_dir():
        subprocess.run([sys.executable, "-m", "fixtures.generate", "--sessions", "1", "--seed", str(args.seed), "--out", str(corpus),
                        "--session-kb", str(args.session_kb)], cwd=REPO, check=True, capture_output=True)
    scratch = WORK / "big-session"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(corpus, scratch / "corpus")
    main_file = next(path for path in (scratch / "corpus").glob("*/*.jsonl"))
    size = sum(path.stat().st_size for path in (scratch / "corpus").rglob("*.jsonl"))
    folders = (scratch / "corpus", scratch / "out", scratch / "cache")
    # Every build runs the package as it is now, whatever happens to the checkout meanwhile, with its
    # bytecode compiled before the first measured build (as an installed package's is): with
    # PYTHONDONTWRITEBYTECODE set, each build compiled the package again (about 0.2 s a process).
    env = {**base_env(scratch / "home"), "PYTHONPATH": package_copy(scratch, os.environ.get("PYTHONPATH"))}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(scratch / "src")], env=env, check=True)
    print(f"session: {size / 2**20:.1f} MiB in {sum(1 for _ in (scratch / 'corpus').rglob('*.jsonl'))} transcripts")
    cold, cold_rss = timed_build(*folders, env, scratch)
    print(f"  cold           {cold:6.2f} s  {cold_rss:5.0f} MiB")
    same, same_rss = timed_build(*folders, env, scratch)
    print(f"  no change      {same:6.2f} s  {same_rss:5.0f} MiB")
    at = latest_instant(scratch / "corpus")
    runs, colds = [], []
    for number in range(1, args.appends + 1):
        append(main_file, new_message_line(main_file, at + timedelta(seconds=number)))
        runs.append(timed_build(*folders, env, scratch))
        print(f"  append {number}       {runs[-1][0]:6.2f} s  {runs[-1][1]:5.0f} MiB")
        again = (scratch / "corpus", scratch / "cold-out", scratch / "cold-cache")
        colds.append(timed_build(*again, env, scratch)[0])
        shutil.rmtree(again[1])
        shutil.rmtree(again[2])
        print(f"  cold {number}         {colds[-1]:6.2f} s  (ratio {runs[-1][0] / colds[-1]:.2f})")
    started = []
    for number in range(1, args.new_agents + 1):
        new_agent_file(main_file, number)
        started.append(timed_build(*folders, env, scratch)[0])
        print(f"  new agent {number}    {started[-1]:6.2f} s")
    ratio = statistics.median(wall / cold_wall for (wall, _), cold_wall in zip(runs, colds, strict=True))
    peak = max(rss for _, rss in runs)
    rss_ratio = peak * 1024 * 1024 / size
    print("\n| measure | value | bound (issue 18) | met? |\n|---|---:|---:|---|")
    print(f"| one append / the cold build after it (median of {len(runs)}; medians {statistics.median(w for w, _ in runs):.2f} / "
          f"{statistics.median(colds):.2f} s) | {ratio:.2f} | <= {APPEND_BOUND} | {'yes' if ratio <= APPEND_BOUND else 'no'} |")
    print(f"| an append's peak RSS / session bytes | {peak:.0f} MiB / {size / 2**20:.1f} MiB = {rss_ratio:.2f} | <= {RSS_BOUND} | "
          f"{'yes' if rss_ratio <= RSS_BOUND else 'no'} |")
    if started:
        print(f"\nA new agent: median {statistics.median(started):.2f} s against a one-append build's {statistics.median(w for w, _ in runs):.2f} s.")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


def new_agent_file(main_file: Path, number: int) -> None:
    """Start one more agent in the session: a file named to sort before its others, with the first lines of one of them under fresh ids."""
    folder = main_file.with_suffix("") / "subagents"
    existing = sorted(folder.glob("agent-a*.jsonl"))
    agent_id = f"a0{number:015x}"
    tag = f"new{number}"
    lines = []
    for raw in existing[len(existing) // 2].read_bytes().splitlines()[:6]:
        record = json.loads(raw)
        record["agentId"] = agent_id
        record["uuid"] = f"{record.get('uuid', '')}-{tag}"
        if isinstance(record.get("message"), dict) and "id" in record["message"]:
            record["message"]["id"] = f"{record['message']['id']}_{tag}"
        if "requestId" in record:
            record["requestId"] = f"{record['requestId']}_{tag}"
        lines.append(json.dumps(record, separators=(",", ":")))
    (folder / f"agent-{agent_id}.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
