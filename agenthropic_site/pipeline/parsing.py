"""The parse stage: read a session's transcripts and parse them, here or in worker processes."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from contextlib import closing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field

from agenthropic_site.config import BuildConfig
from agenthropic_site.cost import PriceTable
from agenthropic_site.cache.checkpoints import FileScanned, ParsedFile, ScanCheckpoint
from agenthropic_site.corpus import FileRef, SessionFiles, Skip, UnreadableError, read_bytes
from agenthropic_site.corpus.walk import SIDECAR_MAX_BYTES
from agenthropic_site.parse import SessionInput, TranscriptInput, parse_session
from agenthropic_site.parse.checkpoint import CannotResume
from agenthropic_site.parse.model import ParsedSession
from agenthropic_site.cache import Priced
from agenthropic_site.cache.store import EncodedMessages, encode_messages
from agenthropic_site.pipeline.pool import Task, map_in_order
from agenthropic_site.pipeline.pricing import price_rows, rows_to_price
from agenthropic_site.records import record_class

log = logging.getLogger(__name__)

PARSE_IN_WORKERS_MIN = 32  # fewer changed sessions than this are parsed in the build's own process


@record_class
class ReadCount:
    """Transcripts opened while reading a session (the incremental tests count them)."""

    opened: int = 0


# Sessions with at least this many transcript bytes keep a scan checkpoint of each transcript, so
# an append is scanned from where the last build stopped. A smaller session keeps them once it has
# changed since it was first parsed (it is live: the next append is scanned from the checkpoints
# this parse leaves); parsed once, it would parse from byte 0 in a fraction of a second, and its
# checkpoints would only cost the cold build time and space.
CHECKPOINT_MIN_BYTES = 4 << 20
# A checkpoint holds whole texts the session's linking compares (first prompts, spawn inputs,
# spawns' results): one larger than this or a quarter of its transcript's bytes (a hostile 50 MB
# prompt) is not kept, so the cache stays a fraction of the corpus; that file is read whole.
CHECKPOINT_STATE_FLOOR = 1 << 20
# A sidecar (an agent's .meta.json: 60-160 bytes in every corpus seen) up to this size is kept
# whole with the session's parsed files: the next parse takes it while its lstat is the same. An
# append to the 60 MB session opened its 734 sidecars again (about 55 ms).
SIDECAR_KEPT_MAX_BYTES = 64 << 10


def keeps_checkpoints(files: SessionFiles, parsed_before: bool) -> bool:
    """Tell whether a session keeps a scan checkpoint of each transcript: it is big, or parsed again (it changed since the cache first read it).

    A session of the 500 generated ones (at most 0.6 MB) parsed from byte 0 took 8.9 ms of a
    one-append build; carried on from its checkpoints, 3.9 ms.
    """
    return parsed_before or files.transcript_bytes() >= CHECKPOINT_MIN_BYTES


@record_class
class SessionRead:
    """A session's transcripts as read for the parser, and what the cache keeps of the reading."""

    source: SessionInput
    skipped: list[Skip]
    scanned: dict[str, FileScanned] = field(default_factory=dict)  # by path: each transcript read to a line's end, when checkpointed
    used: dict[str, ScanCheckpoint] = field(default_factory=dict)  # by agent: the checkpoints the parse carries on from
    digests: dict[str, str] = field(default_factory=dict)  # by path: file_digest of each file read whole at the size the walk saw
    sidecars: dict[str, bytes] = field(default_factory=dict)  # by path: each small sidecar's bytes, read whole at the size the walk saw
    proofs: list[PrefixProof] = field(default_factory=list)  # transcripts given to the parser from checkpoints not proved yet

    def settle(self) -> bool:
        """Wait for the prefix proofs; give each transcript whose first bytes were rewritten to the parser whole; tell whether every proof held."""
        held = True
        for proof in self.proofs:
            if not proof.wait():
                held = False
                del self.used[proof.agent_id]  # rewritten, not appended to: read from its start
                self.source = _whole(self.source, proof.ref.rel, proof.data)
            _note_read(self, proof.ref, proof.data, True, proof.whole_digest)
        self.proofs = []
        return held


# A transcript carried on from its checkpoint has the bytes the checkpoint was taken after proved to
# be its first bytes, by their digest. Past this many bytes the digest is taken in a thread while the
# parse goes on from the checkpoint (hashlib lets other threads run while it digests): the 60 MB
# session's 35 MB main transcript took 27 ms a build to prove, and the parse 57 ms to decode its
# checkpoints. A rewrite found then has the parse made again, that transcript from its byte 0. A
# thread's start and end take about 0.16 ms, the digest of 1 MiB 0.6 ms.
PROVE_APART_BYTES = 1 << 20


class PrefixProof:
    """A thread proving a transcript's first bytes are those its checkpoint was taken after, and digesting all its bytes."""

    def __init__(self, ref: FileRef, agent_id: str, data: bytes, checkpoint: ScanCheckpoint) -> None:
        self.ref, self.agent_id, self.data = ref, agent_id, data
        self.held = False
        self.digest = ""
        self._thread = threading.Thread(target=self._prove, args=(checkpoint.file.scanned, checkpoint.file.scanned_digest), daemon=True)
        self._thread.start()

    def _prove(self, scanned: int, expected: str) -> None:
        digest = _new_digest()
        digest.update(memoryview(self.data)[:scanned])
        self.held = digest.hexdigest() == expected
        digest.update(memoryview(self.data)[scanned:])
        self.digest = digest.hexdigest()

    def whole_digest(self) -> str:
        """Return the digest of all the transcript's bytes (after `wait`)."""
        return self.digest

    def wait(self) -> bool:
        """Return whether the first bytes are the checkpoint's, once the thread has digested them all."""
        self._thread.join()
        return self.held


def _whole(source: SessionInput, rel: str, data: bytes) -> SessionInput:
    """Return a session's input with one transcript given whole, from its byte 0, not from a checkpoint."""
    def whole(transcript: TranscriptInput) -> TranscriptInput:
        return dataclasses.replace(transcript, data=data, resume=None, resume_chunks=()) if transcript.rel == rel else transcript

    return dataclasses.replace(source, main=whole(source.main), agents=tuple(map(whole, source.agents)))


# How a file's bytes are digested, whole (file_digest) or as far as a scan checkpoint read them:
# SHA-256, as OpenSSL's uses the CPU's SHA instructions where there are any (1.8 GB/s here, against
# 0.87 GB/s for hashlib's own BLAKE2b); a parse digests every byte it reads.
_new_digest = hashlib.sha256


def file_digest(data: bytes | memoryview) -> str:
    """Digest one file's bytes, as the scan checkpoints digest what they scanned."""
    return _new_digest(data).hexdigest()


def content_digest(files: SessionFiles, digests: dict[str, str]) -> str | None:
    """Digest the bytes a parse of the session reads, from each file's digest by path; None when one is not known.

    Equal digests mean a parse would see the same bytes under the same paths: a session whose
    files were copied, restored or touched (new times or inodes) need not be parsed again.
    """
    digest = hashlib.sha256()
    for ref in files.parsed_files():
        known = digests.get(ref.rel)
        if known is None:
            return None
        digest.update(f"{ref.rel}\0{known}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def holds_bytes_parsed(root: str, files: SessionFiles, parsed: dict[str, ParsedFile], max_bytes: int, count: ReadCount) -> bool:
    """Tell whether every file a parse of the session reads holds the bytes of the last parse (`parsed`: Cache.parsed_files).

    A file whose lstat is the one it was parsed at is taken as it was; any other is read (with the
    size cap a parse reads it with) and its digest compared, a transcript counted as a parse counts
    it. The first file that differs ends the look (the session is parsed).
    """
    transcripts = {ref.rel for ref in files.transcripts()}
    for ref in files.parsed_files():
        known = parsed.get(ref.rel)
        if known is None or known[0].size != ref.size:
            return False
        if known[0] == ref:
            continue
        transcript = ref.rel in transcripts
        try:
            data = read_bytes(root, ref, max_bytes if transcript else SIDECAR_MAX_BYTES)
        except UnreadableError:
            return False
        if transcript:
            count.opened += 1
        if len(data) != ref.size or file_digest(data) != known[1]:
            return False
    return True


def load_session(root: str, files: SessionFiles, max_bytes: int, count: ReadCount,
                 checkpoints: dict[str, ScanCheckpoint] | None = None, parsed_before: Mapping[str, ParsedFile] | None = None) -> SessionRead:
    """Read a session's transcripts and sidecars; an unreadable agent file is skipped, not fatal.

    `checkpoints`: None, the session keeps no checkpoints (`keeps_checkpoints`); else the last
    build's (by path, maybe none): a transcript whose file is as it was then is not opened, one
    that only grew is given to the parser from where its checkpoint stops, and the parse leaves
    a checkpoint of each transcript. `parsed_before`: the files the last parse read (Cache.parsed_files):
    a sidecar whose lstat is the one then is taken from its kept bytes, not opened.
    """
    keep = checkpoints is not None
    read = SessionRead(SessionInput(files.session_id, files.project, TranscriptInput("", b"", "main")), [])
    known = checkpoints or {}
    if files.main is None:
        # No main transcript (issue 13): the session is parsed from its agent files alone.
        main = TranscriptInput(f"{files.project}/{files.session_id}.jsonl", b"", "main")
    else:
        main = _transcript(root, files.main, "main", files.session_id, max_bytes, count, known, keep, read)
    agents = []
    for agent in files.agents:
        try:
            transcript = _transcript(root, agent.file, agent.layout, agent.agent_id, max_bytes, count, known, keep, read)
        except UnreadableError as exc:
            read.skipped.append(Skip(agent.file.rel, exc.reason, exc.detail, agent.file.size))
            continue
        meta = None if agent.meta is None else _sidecar(root, agent.meta, parsed_before or {}, read)
        agents.append(dataclasses.replace(transcript, agent_id=agent.agent_id, meta=meta, run_id=agent.run_id))
    read.source = SessionInput(files.session_id, files.project, main, tuple(agents), files.main_state, checkpoint=keep)
    return read


def _sidecar(root: str, ref: FileRef, parsed: Mapping[str, ParsedFile], read: SessionRead) -> bytes | None:
    """Read a sidecar (None, and a skip, when it cannot be), or take its bytes as the last parse kept them when its lstat is the one then."""
    kept = parsed.get(ref.rel)
    if kept is not None and kept[0] == ref and kept[2] is not None:
        read.digests[ref.rel], read.sidecars[ref.rel] = kept[1], kept[2]
        return kept[2]
    try:
        data = read_bytes(root, ref, SIDECAR_MAX_BYTES)
    except UnreadableError as exc:
        read.skipped.append(Skip(ref.rel, exc.reason, exc.detail))
        return None
    if len(data) == ref.size:
        read.digests[ref.rel] = file_digest(data)
        if len(data) <= SIDECAR_KEPT_MAX_BYTES:
            read.sidecars[ref.rel] = data
    return data


def _transcript(root: str, ref: FileRef, layout: str, agent_id: str, max_bytes: int, count: ReadCount,
                checkpoints: dict[str, ScanCheckpoint], keep: bool, read: SessionRead) -> TranscriptInput:
    """Read one transcript, from its checkpoint when the bytes it was taken after are still the file's first bytes."""
    checkpoint = checkpoints.get(ref.rel)
    if checkpoint is not None and checkpoint.agent_id == agent_id and keep:
        seen = checkpoint.file
        if (seen.size, seen.mtime_ns, seen.inode, seen.ctime_ns) == (ref.size, ref.mtime_ns, ref.inode, ref.ctime_ns) and seen.scanned == ref.size:
            read.used[agent_id] = checkpoint
            read.scanned[ref.rel] = seen
            read.digests[ref.rel] = seen.scanned_digest  # of all its bytes: it was scanned to its end
            return TranscriptInput(ref.rel, b"", layout, resume=checkpoint.state, resume_chunks=checkpoint.chunks)  # as it was: not opened
    data = read_bytes(root, ref, max_bytes)
    count.opened += 1
    digest = _new_digest()
    start: int = 0
    resume: bytes | None = None
    chunks: tuple[tuple[str, bytes], ...] = ()
    if checkpoint is not None and checkpoint.agent_id == agent_id and keep and len(data) >= checkpoint.file.scanned:
        if checkpoint.file.scanned >= PROVE_APART_BYTES:
            read.proofs.append(PrefixProof(ref, agent_id, data, checkpoint))  # its read is noted once proved (`SessionRead.settle`)
            read.used[agent_id] = checkpoint
            return TranscriptInput(ref.rel, data[checkpoint.file.scanned :], layout, resume=checkpoint.state, resume_chunks=checkpoint.chunks)
        digest.update(memoryview(data)[: checkpoint.file.scanned])
        if digest.hexdigest() == checkpoint.file.scanned_digest:
            start, resume, chunks = checkpoint.file.scanned, checkpoint.state, checkpoint.chunks
            read.used[agent_id] = checkpoint
        else:
            digest = _new_digest()  # rewritten, not appended to: read from its start

    def whole_digest() -> str:
        digest.update(memoryview(data)[start:])
        return digest.hexdigest()

    _note_read(read, ref, data, keep, whole_digest)
    return TranscriptInput(ref.rel, data[start:] if start else data, layout, resume=resume, resume_chunks=chunks)


def _note_read(read: SessionRead, ref: FileRef, data: bytes, keep: bool, whole_digest: Callable[[], str]) -> None:
    """Note what the next build needs of a transcript read: how far it was scanned (to a line's end), the digest of all its bytes (taken once)."""
    same = len(data) == ref.size  # else it grew while read: the next build reads it to compare
    if keep and (not data or data.endswith(b"\n")):
        read.scanned[ref.rel] = FileScanned(ref.rel, ref.size if same else None, ref.mtime_ns if same else None, ref.inode if same else None,
                                            ref.ctime_ns if same else None, len(data), whole_digest())
        if same:
            read.digests[ref.rel] = read.scanned[ref.rel].scanned_digest
    elif same:
        read.digests[ref.rel] = whole_digest()


@record_class
class ParseOutcome:
    """One session read and parsed, or why it could not be (a worker process sends this back)."""

    parsed: ParsedSession | None
    skipped: list[Skip]
    opened: int  # transcripts opened
    failure: str | None = None  # unsanitized: the parent sanitizes it
    scanned: dict[str, FileScanned] = field(default_factory=dict)
    used: dict[str, ScanCheckpoint] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # by path: file_digest of each file read whole at the size walked
    sidecars: dict[str, bytes] = field(default_factory=dict)  # by path: the bytes of each small sidecar read whole at the size walked
    priced: Priced | None = None  # its usage rows priced, when the build parses in workers (`parse_all`); else the build prices them
    # Its transcripts encoded as the cache stores them, when the build parses in workers (their lists
    # in `parsed.transcripts` are then left out); else the build encodes them as it writes them.
    encoded: dict[str, EncodedMessages] = field(default_factory=dict)


def read_and_parse(root: str, files: SessionFiles, max_bytes: int, checkpoints: dict[str, ScanCheckpoint] | None = None,
                   parsed_before: Mapping[str, ParsedFile] | None = None) -> ParseOutcome:
    """Read a session's files and parse them (carrying on from checkpoints where they hold; None: it keeps none); a failure is returned, never raised.

    `parsed_before`: the files its last parse read (`load_session`).
    """
    counter = ReadCount()
    try:
        read = load_session(root, files, max_bytes, counter, checkpoints, parsed_before)
        try:
            parsed = _parse_proved(read)
        except Exception as exc:  # noqa: BLE001 - CannotResume, or a checkpoint whose shape misleads the scan: read from byte 0
            if not read.used:
                raise
            log.debug(f"read: {files.project}/{files.session_id}: from byte 0: {exc if isinstance(exc, CannotResume) else type(exc).__name__}")
            read = load_session(root, files, max_bytes, counter, None if checkpoints is None else {}, parsed_before)
            parsed = parse_session(read.source)
        files_of = {agent.agent_id: agent.file for agent in parsed.agents}
        for agent_id, state in list(parsed.scan_states.items()):
            scanned = read.scanned.get(files_of.get(agent_id) or "")
            size = len(state) + sum(map(len, parsed.scan_chunks.get(agent_id, {}).values()))
            if scanned is None or size > max(CHECKPOINT_STATE_FLOOR, scanned.scanned // 4):
                del parsed.scan_states[agent_id]
                parsed.scan_chunks.pop(agent_id, None)
        return ParseOutcome(parsed, read.skipped, counter.opened, scanned=read.scanned, used=read.used, digests=read.digests, sidecars=read.sidecars)
    except UnreadableError as exc:
        return ParseOutcome(None, [], counter.opened, f"{exc.reason}: {exc.detail}")
    except Exception as exc:  # noqa: BLE001 - one bad session must not sink the build
        return ParseOutcome(None, [], counter.opened, f"{type(exc).__name__}: {exc}")


def _parse_proved(read: SessionRead) -> ParsedSession:
    """Parse a session as read; when a transcript given from its checkpoint proves rewritten, parse it again with that transcript whole."""
    try:
        parsed = parse_session(read.source)
    except Exception:
        if read.settle():  # a rewritten transcript may be what misled the scan
            raise
        return parse_session(read.source)
    return parsed if read.settle() else parse_session(read.source)


# The parse task of worker processes (pipeline/pool.py): the setup is (corpus root, size cap, prices or None).
ParseSetup = tuple[str, int, PriceTable | None]


def start(setup: ParseSetup) -> ParseSetup:
    """Keep the corpus root, size cap and prices (in a worker process)."""
    return setup


# A parse task: the session's files, its checkpoints (None: it keeps none) and the files its last parse read.
ParseTask = tuple[SessionFiles, dict[str, ScanCheckpoint] | None, dict[str, ParsedFile]]


def run(setup: ParseSetup, task: ParseTask) -> ParseOutcome:
    """Read and parse one session (in a worker process); given prices, price its usage rows and encode its transcripts for the cache."""
    root, max_bytes, prices = setup
    outcome = read_and_parse(root, task[0], max_bytes, task[1], task[2])
    if prices is not None and outcome.parsed is not None:
        # The same prices as the build's process would make (the cache keeps prices of this table
        # and code only): on 2 cores that process writes every session while the worker waits for
        # it, and pricing was a tenth of its part of a cold build's parsing.
        outcome.priced = price_rows(rows_to_price(outcome.parsed), prices)
        # Encoded here too, for the same reason, and sent as bytes: unpickling the messages took that
        # process about as long again.
        outcome.encoded = {agent_id: encode_messages(messages) for agent_id, messages in outcome.parsed.transcripts.items()}
        outcome.parsed.transcripts = {}
    return outcome


# The forkserver starts once, for whichever task comes first: it loads the views and render tasks' modules too,
# and markdown-it, which render/markdown.py loads only when a text is first rendered (each render worker would load it).
WORKER_PRELOAD = ("agenthropic_site.pipeline.parsing", "agenthropic_site.pipeline.viewing", "agenthropic_site.pipeline.rendering", "markdown_it")
PARSE_TASK: Task[ParseSetup, ParseTask, ParseOutcome] = Task(start, run, WORKER_PRELOAD)
PARSE_CHUNK = 4  # sessions sent to a worker at a time: fewer round trips, answers still soon
# Transcript bytes sent to a worker at a time (a larger session alone). A parsed session is several
# times its bytes in memory, and up to `pool.AHEAD` chunks a process wait for their turn: in chunks of
# four, 36 sessions of 15 MB parsed by a worker took the build's process to 387 MB (145 MB parsing them
# all itself, 188 MB in these chunks).
PARSE_CHUNK_BYTES = 8 << 20


def parse_all(
    todo: list[SessionFiles], root: str, config: BuildConfig,
    before: Callable[[SessionFiles], tuple[dict[str, ScanCheckpoint] | None, dict[str, ParsedFile]]], prices: PriceTable | None = None,
) -> Iterator[tuple[SessionFiles, ParseOutcome]]:
    """Yield each session with its ParseOutcome in order, parsed in worker processes when there are many.

    `before` gives a session's checkpoints and the files its last parse read (`read_and_parse`).
    Parsed in workers, each session's usage rows are priced with `prices`, and its transcripts encoded, where it was parsed (`run`).
    """
    tasks: list[ParseTask] = [(files, *before(files)) for files in todo]

    # One process fewer than --jobs: this one is busy too, writing each session.
    workers = min(config.jobs - 1, -(-len(todo) // PARSE_CHUNK))
    if workers < 1 or len(todo) < PARSE_IN_WORKERS_MIN:
        # The build prices each session itself: a row it stored keeps its price (an append to a long session).
        yield from ((task[0], run((root, config.max_file_bytes, None), task)) for task in tasks)
        return
    setup: ParseSetup = (root, config.max_file_bytes, prices)

    def here(task: ParseTask) -> ParseOutcome:
        return run(setup, task)

    log.info(f"parsing {len(todo)} changed sessions in {workers} worker process{'es' if workers > 1 else ''}")
    # This process writes each session in order; while the next is not parsed yet, it parses one itself.
    with closing(map_in_order(PARSE_TASK, setup, tasks, workers, here, _fell_back, PARSE_CHUNK, help_here=True, weigh=_task_bytes,
                              chunk_weight=PARSE_CHUNK_BYTES)) as outcomes:
        yield from ((task[0], outcome) for task, outcome in outcomes)


def _task_bytes(task: ParseTask) -> int:
    return task[0].transcript_bytes()


def _fell_back(why: str) -> None:
    log.info(f"notice: {why}; this process parsed the remaining sessions")
