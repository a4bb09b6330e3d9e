"""Put hostile values into real transcripts' records and run whole builds, for as long as asked.

    .venv/bin/python tests/fuzz/hostile_values.py --seconds 600 --seed 1 [--keep DIR] CORPUS [CORPUS ...]

fuzz_parse.py reaches the parser alone; this reaches the views, the costs and the pages too. Each
trial copies three sessions of the corpora (the main transcript and the session's folder), and in
about one record in seven of their transcripts replaces one value, at any depth, with a hostile
one: another type, a huge or negative number, a lone surrogate, markup, a deep list, an impossible
date, or removes the field. Then `agenthropic build` runs in a process of its own: any exit but 0
or 1 (built; built with sessions left out of the totals) or a traceback is a bug, printed with the
trial that found it (`--seed S --trials N` draws the same trials again; `--keep DIR` keeps each
such trial's corpus there). The exit status is then 1. `make test` runs two trials on the demo
corpus (`test_record_robustness.py`), so the harness cannot rot.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HOSTILE: list[Any] = [
    None, True, -1, 0, 10**30, -(10**30), 1e308, -0.5, 3.5, "", "x" * 5000, "\ud800", "<script>alert(1)</script>", "\u202e", "NaN",
    "../../etc/passwd", "2026-13-45T99:99:99Z", [], {}, [[[[[]]]]], {"a": {"b": {}}}, {"type": "text"}, [{"type": "tool_use"}],
    [{"type": "tool_result", "content": None}],
]
SESSIONS_A_TRIAL = 3
CHANGED_SHARE = 0.15  # of a transcript's records


def mutate(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """Return `value` with one value inside it replaced by a hostile one (or a key removed), or a hostile value in its place."""
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        if rng.random() < 0.1:
            del value[key]
        else:
            value[key] = rng.choice(HOSTILE) if rng.random() < 0.35 or depth > 6 else mutate(value[key], rng, depth + 1)
        return value
    if isinstance(value, list) and value:
        index = rng.randrange(len(value))
        value[index] = rng.choice(HOSTILE) if rng.random() < 0.35 or depth > 6 else mutate(value[index], rng, depth + 1)
        return value
    return rng.choice(HOSTILE)


def spoil(text: bytes, rng: random.Random) -> bytes:
    """Return a transcript's bytes with hostile values in some of its records (lines that are not JSON are kept)."""
    lines = text.split(b"\n")
    for number, line in enumerate(lines):
        if line.strip() and rng.random() < CHANGED_SHARE:
            try:
                lines[number] = json.dumps(mutate(json.loads(line), rng)).encode()
            except ValueError:
                pass
    return b"\n".join(lines)


def main_transcripts(corpora: list[Path]) -> list[Path]:
    """Return every main transcript of the corpora (a `<session id>.jsonl` in a project folder), in name order."""
    return sorted(path for corpus in corpora for path in corpus.glob("*/*.jsonl") if not path.name.startswith("agent-"))


def one_trial(mains: list[Path], rng: random.Random, work: Path) -> str | None:
    """Build a spoiled copy of a few sessions in `work`; return what went wrong, or None when the build ended as a build may."""
    shutil.rmtree(work, ignore_errors=True)
    project = work / "corpus" / "project"
    project.mkdir(parents=True)
    for main in rng.sample(mains, min(SESSIONS_A_TRIAL, len(mains))):
        (project / main.name).write_bytes(spoil(main.read_bytes(), rng))
        folder = main.with_suffix("")
        if folder.is_dir():
            shutil.copytree(folder, project / folder.name)
            for transcript in sorted((project / folder.name).rglob("*.jsonl")):
                transcript.write_bytes(spoil(transcript.read_bytes(), rng))
    done = subprocess.run([sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(work / "corpus"), "--out", str(work / "site"),
                           "--cache", str(work / "cache"), "--now", "2026-12-01T00:00:00Z", "-q"], capture_output=True, text=True, timeout=300)
    if done.returncode in (0, 1) and "Traceback" not in done.stderr:
        return None
    return f"exit {done.returncode}: " + " | ".join(done.stderr.strip().splitlines()[-6:])


def main(argv: list[str]) -> int:
    """Run trials until the time or the count is up; print each failure; exit 1 if there was one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", type=Path, help="folders laid out as ~/.claude/projects/")
    parser.add_argument("--seconds", type=float, default=60, help="how long to run (default 60, or until --trials were run)")
    parser.add_argument("--seed", type=int, default=1, help="the seed the trials are drawn from (default 1)")
    parser.add_argument("--trials", type=int, help="stop after this many trials")
    parser.add_argument("--keep", type=Path, help="copy the corpus of each failed trial into this folder")
    args = parser.parse_args(argv)
    mains = main_transcripts(args.corpora)
    if not mains:
        parser.error("no main transcripts (<project>/<session id>.jsonl) in the corpora")
    rng = random.Random(args.seed)
    deadline, trial, failed = time.monotonic() + args.seconds, 0, 0
    with tempfile.TemporaryDirectory(prefix="hostile-values-") as folder:
        work = Path(folder) / "trial"
        while time.monotonic() < deadline and (args.trials is None or trial < args.trials):
            trial += 1
            problem = one_trial(mains, rng, work)
            if problem is not None:
                failed += 1
                print(f"trial {trial} (--seed {args.seed} --trials {trial}): {problem}", flush=True)
                if args.keep is not None:
                    shutil.copytree(work / "corpus", args.keep / f"trial-{trial}")
    print(f"{trial} trials, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
