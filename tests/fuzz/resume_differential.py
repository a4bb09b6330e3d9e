"""Compare parses carried on from checkpoints with parses from byte 0, at random cuts, for as long as asked.

    .venv/bin/python tests/fuzz/resume_differential.py --seconds 600 --seed 1 [--chunk-items 3] CORPUS [CORPUS ...]

Every `make test` makes this comparison twice a session of its corpora
(`test_checkpoint.py::test_a_scan_carried_on_from_checkpoints_equals_one_from_byte_0`). This runs
it on any corpus for longer: each trial draws a session, cuts each of its transcripts at a random
point (after a newline mostly, inside a line sometimes), parses the prefixes, carries on from their
checkpoints with the rest, and compares everything the cache keeps with a parse of the whole files.
A trial whose checkpoint is refused (CannotResume: the build reads that session from byte 0) is
counted apart. Each difference, or exception, is printed with the session and the trial that found
it (`--seed S --trials N` draws the same trials again); the exit status is then 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from dataclasses import field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' own helpers

from agenthropic_site.parse import SessionInput, checkpoint, parse_session  # noqa: E402
from agenthropic_site.parse.checkpoint import CannotResume  # noqa: E402
from test_checkpoint import comparable, joined, resumed_parse, sessions_of  # noqa: E402


@dataclasses.dataclass
class Tally:
    """What a run found: trials compared, trials whose checkpoint was refused, and each difference said in a line."""

    compared: int = 0
    refused: int = 0
    different: list[str] = field(default_factory=list)


def compare(sources: list[SessionInput], seconds: float, seed: int, trials: int | None = None) -> Tally:
    """Run trials on sessions drawn from `sources` until `seconds` have passed or `trials` were run."""
    rng = random.Random(seed)
    wholes = [parse_session(dataclasses.replace(source, checkpoint=True)) for source in sources]
    tally = Tally()
    deadline = time.monotonic() + seconds
    trial = 0
    while sources and time.monotonic() < deadline and (trials is None or trial < trials):
        trial += 1
        index = rng.randrange(len(sources))
        source, whole = sources[index], wholes[index]
        named = f"trial {trial}, {source.project}/{source.session_id}"
        try:
            first, carried = resumed_parse(source, rng)
        except CannotResume:
            tally.refused += 1
            continue
        except Exception as exc:  # noqa: BLE001 - what the run is looking for
            tally.different.append(f"{named}: raised {type(exc).__name__}: {exc}")
            continue
        tally.compared += 1
        now, then = comparable(carried), comparable(whole)
        fields = [name for name in then if now.get(name) != then[name]]
        if joined(first, carried) != whole.transcripts:
            fields.append("transcripts")
        if fields:
            tally.different.append(f"{named}: differs in {', '.join(fields)}")
    return tally


def main(argv: list[str]) -> int:
    """Run the comparison on the corpora named; return 1 when a trial differed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpora", nargs="+", type=Path, help="folders laid out as ~/.claude/projects/")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to run (default 60)")
    parser.add_argument("--seed", type=int, default=1, help="the seed the trials are drawn from (default 1)")
    parser.add_argument("--trials", type=int, default=None, help="stop after this many trials (to draw a reported one again)")
    parser.add_argument("--chunk-items", type=int, default=None,
                        help="keep a checkpoint's long lists in chunks of this many items (a few: many chunks to carry on from)")
    args = parser.parse_args(argv)
    if args.chunk_items is not None:
        if args.chunk_items < 1:
            parser.error("--chunk-items must be at least 1")
        checkpoint.CHUNK_ITEMS = args.chunk_items
    for corpus in args.corpora:
        if not corpus.is_dir():
            parser.error(f"{corpus} is not a folder")
    sources = [source for corpus in args.corpora for source in sessions_of(corpus)]
    tally = compare(sources, args.seconds, args.seed, args.trials)
    for line in tally.different:
        print(line)
    print(f"{len(sources)} sessions: {tally.compared} trials compared, {tally.refused} refused a checkpoint, {len(tally.different)} different")
    return 1 if tally.different else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
