"""The parse stage: read a session's transcripts and parse them, here or in worker processes."""

from __future__ import annotations

import logging
import functools
from contextlib import closing
from collections.abc import Iterator
from dataclasses import dataclass

from agenthropic_site.config import BuildConfig
from agenthropic_site.corpus import SessionFiles, Skip, UnreadableError, read_bytes
from agenthropic_site.corpus.walk import SIDECAR_MAX_BYTES
from agenthropic_site.parse import SessionInput, TranscriptInput, parse_session
from agenthropic_site.parse.model import ParsedSession
from agenthropic_site.pipeline.pool import Task, map_in_order

log = logging.getLogger(__name__)

PARSE_IN_WORKERS_MIN = 32  # fewer changed sessions than this are parsed in the build's own process


@dataclass
class ReadCount:
    """Transcripts opened while reading a session (the incremental tests count them)."""

    opened: int = 0


def load_session(root: str, files: SessionFiles, max_bytes: int, count: ReadCount) -> tuple[SessionInput, list[Skip]]:
    """Read a session's transcripts and sidecars; an unreadable agent file is skipped, not fatal."""
    if files.main is None:
        # No main transcript (issue 13): the session is parsed from its agent files alone.
        main = TranscriptInput(f"{files.project}/{files.session_id}.jsonl", b"", "main")
    else:
        main = TranscriptInput(files.main.rel, read_bytes(root, files.main, max_bytes), "main")
        count.opened += 1
    agents = []
    skipped = []
    for agent in files.agents:
        try:
            data = read_bytes(root, agent.file, max_bytes)
            count.opened += 1
        except UnreadableError as exc:
            skipped.append(Skip(agent.file.rel, exc.reason, exc.detail, agent.file.size))
            continue
        meta = None
        if agent.meta is not None:
            try:
                meta = read_bytes(root, agent.meta, SIDECAR_MAX_BYTES)
            except UnreadableError as exc:
                skipped.append(Skip(agent.meta.rel, exc.reason, exc.detail))
        agents.append(TranscriptInput(agent.file.rel, data, agent.layout, agent.agent_id, meta, agent.run_id))
    return SessionInput(files.session_id, files.project, main, tuple(agents), files.main_state), skipped


@dataclass
class ParseOutcome:
    """One session read and parsed, or why it could not be (a worker process sends this back)."""

    parsed: ParsedSession | None
    skipped: list[Skip]
    opened: int  # transcripts opened
    failure: str | None = None  # unsanitized: the parent sanitizes it


def read_and_parse(root: str, files: SessionFiles, max_bytes: int) -> ParseOutcome:
    """Read a session's files and parse them; a failure is returned, never raised."""
    counter = ReadCount()
    try:
        source, skipped = load_session(root, files, max_bytes, counter)
        return ParseOutcome(parse_session(source), skipped, counter.opened)
    except UnreadableError as exc:
        return ParseOutcome(None, [], counter.opened, f"{exc.reason}: {exc.detail}")
    except Exception as exc:  # noqa: BLE001 - one bad session must not sink the build
        return ParseOutcome(None, [], counter.opened, f"{type(exc).__name__}: {exc}")


# The parse task of worker processes (pipeline/pool.py): the setup is (corpus root, size cap).
def start(setup: tuple[str, int]) -> tuple[str, int]:
    """Keep the corpus root and size cap (in a worker process)."""
    return setup


def run(setup: tuple[str, int], files: SessionFiles) -> ParseOutcome:
    """Read and parse one session (in a worker process)."""
    return read_and_parse(setup[0], files, setup[1])


# The forkserver starts once, for whichever task comes first: it loads the render task's modules too.
WORKER_PRELOAD = ("agenthropic_site.pipeline.parsing", "agenthropic_site.pipeline.rendering")
PARSE_TASK: Task[tuple[str, int], SessionFiles, ParseOutcome] = Task(start, run, WORKER_PRELOAD)
PARSE_CHUNK = 4  # sessions sent to a worker at a time: fewer round trips, answers still soon


def parse_all(
    todo: list[SessionFiles], root: str, config: BuildConfig
) -> Iterator[tuple[SessionFiles, ParseOutcome]]:
    """Yield each session with its ParseOutcome in order, parsed in worker processes when there are many."""
    here = functools.partial(read_and_parse, root, max_bytes=config.max_file_bytes)
    # One process fewer than --jobs: this one is busy too, pricing and writing each session.
    workers = min(config.jobs - 1, -(-len(todo) // PARSE_CHUNK))
    if workers < 1 or len(todo) < PARSE_IN_WORKERS_MIN:
        yield from ((files, here(files)) for files in todo)
        return
    log.info(f"parsing {len(todo)} changed sessions in {workers} worker process{'es' if workers > 1 else ''}")
    with closing(map_in_order(PARSE_TASK, (root, config.max_file_bytes), todo, workers, here, _fell_back, PARSE_CHUNK)) as outcomes:
        yield from outcomes


def _fell_back(why: str) -> None:
    log.info(f"notice: {why}; this process parsed the remaining sessions")
