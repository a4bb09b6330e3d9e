"""The ingest stage: bring the cache up to date with the corpus (walk, parse what changed, price, project)."""

from __future__ import annotations

import logging
import os
import re

from agenthropic_site import code_identity
from agenthropic_site.cache import Cache
from agenthropic_site.cache.checkpoints import FilesIdentity, ParsedFile, ScanCheckpoint
from agenthropic_site.config import BuildConfig, check_folders
from agenthropic_site.console import progress_step
from agenthropic_site.corpus import CorpusScan, FileRef, SessionFiles, real_root, scan_corpus
from agenthropic_site.corpus.walk import Walked
from agenthropic_site.corpus.sniff import sniff_session_id
from agenthropic_site.cost import PriceTable, load_price_table
from agenthropic_site.live.events import apply_hook_statuses, ingest_spool
from agenthropic_site.pipeline.parsing import ReadCount, content_digest, holds_bytes_parsed, keeps_checkpoints, parse_all
from agenthropic_site.pipeline.pricing import price_rows, rows_to_price
from agenthropic_site.pipeline.repair import repair_line, with_repairs
from agenthropic_site.pipeline.result import BuildResult

log = logging.getLogger(__name__)

REASON_MAX_CHARS = 300
PARSE_PROGRESS_EVERY = 50  # sessions parsed between progress lines, at least (a first build of 20 or more tells them)
_ABS_PATH_RE = re.compile(r"(?:[A-Za-z]:)?[\\/](?:[^\s'\"\\/:]+[\\/])+[^\s'\"]*")


def sanitize_reason(text: str) -> str:
    """Make a failure reason safe to publish: no absolute paths, one line, at most 300 characters."""
    flat = " ".join(_ABS_PATH_RE.sub("<path>", text).split())
    return flat if len(flat) <= REASON_MAX_CHARS else flat[: REASON_MAX_CHARS - 1] + "…"


def priced_with(prices: PriceTable) -> str:
    """Say what the cache's prices are made with: the price table and the code (a new version may price otherwise)."""
    return f"{prices.digest}|{code_identity()}"


def price_sessions(cache: Cache, session_ids: list[str], prices: PriceTable) -> None:
    """(Re)price sessions from their cached rows: a price change never needs a re-parse."""
    for session_id in session_ids:
        cache.set_prices(session_id, price_rows(cache.usage_rows(session_id), prices))


def ingest(cache: Cache, scan: CorpusScan, config: BuildConfig, prices: PriceTable) -> BuildResult:
    """Parse and project every session whose fingerprint changed since its checkpoint."""
    result = BuildResult(sessions=len(scan.sessions))
    build_number = cache.build_number()
    identities = cache.identities()
    checkpoints = {sid: fingerprint for sid, (fingerprint, _) in identities.items()}
    changed = [files for sid, files in scan.sessions.items() if checkpoints.get(sid) != files.fingerprint]
    parsed_before: dict[str, dict[str, ParsedFile]] = {}
    changed = _same_bytes_adopted(cache, changed, identities, scan.root, config.max_file_bytes, result, parsed_before)
    todo = [files for files in changed if not cache.is_quarantined(files.session_id, files.fingerprint, build_number)]
    result.quarantined = len(changed) - len(todo)
    result.reused = len(scan.sessions) - len(changed)
    if log.isEnabledFor(logging.DEBUG):
        _explain_reads(changed, {files.session_id for files in todo}, checkpoints)
    def before(files: SessionFiles) -> tuple[dict[str, ScanCheckpoint] | None, dict[str, ParsedFile]]:
        sid = files.session_id
        kept = cache.scan_checkpoints(sid) if keeps_checkpoints(files, sid in checkpoints) else None
        if sid not in parsed_before and sid in checkpoints and any(agent.meta is not None for agent in files.agents):
            parsed_before[sid] = cache.parsed_files(sid, sidecars_only=True)  # its sidecars as they were (an append changes the shape)
        return kept, parsed_before.pop(sid, {})

    step = progress_step(len(todo), PARSE_PROGRESS_EVERY)  # about ten lines, however many sessions
    for done, (files, outcome) in enumerate(parse_all(todo, scan.root, config, before, prices), start=1):
        if len(todo) >= 20 and (done % step == 0 or done == len(todo)):
            log.info(f"parsed {done}/{len(todo)} changed sessions")
        fingerprint = files.fingerprint
        # Sessions that shared messages with the old version may gain or lose their ownership. A new
        # cache file holds only the sessions this build parses, each dirty: its requests are not indexed
        # by id yet, and not looked up (a cold build of 500 sessions: 0.28 s).
        result.dirty.add(files.session_id)
        if cache.request_ids_indexed:
            result.dirty |= cache.neighbours([files.session_id])
        result.transcripts_opened += outcome.opened
        parsed, skipped = outcome.parsed, outcome.skipped
        if parsed is None:
            cache.record_failure(files.session_id, files.project, fingerprint, sanitize_reason(outcome.failure or ""), build_number)
            result.failed += 1
            continue
        result.read_skips.extend(skipped)
        if skipped:
            # Read again next time: the skipped files may be readable then.
            fingerprint += ":partial"
        # Priced where it was parsed when a worker parsed it (pricing.py), else here, taking a stored row's price.
        priced = outcome.priced if outcome.priced is not None else price_rows(rows_to_price(parsed), prices, cache.stored_prices(files.session_id))
        cache.write_session(parsed, _identity(files, fingerprint, outcome.digests, outcome.sidecars), priced, outcome.scanned, outcome.used,
                            outcome.encoded)
        if cache.request_ids_indexed:
            result.dirty |= cache.neighbours([files.session_id])
        result.parsed += 1
    cache.index_request_ids()
    gone = cache.missing_sessions(set(scan.sessions), set(scan.unlisted))
    # A removed session changes the pages that list it even when it shared nothing and no status
    # changes with it: dirty, it has the site rendered (its view is not computed: it is gone).
    result.dirty |= cache.neighbours(gone) | set(gone)
    cache.forget(gone)
    result.removed_sessions = len(gone)
    return result


def _identity(files: SessionFiles, fingerprint: str, digests: dict[str, str], sidecars: dict[str, bytes]) -> FilesIdentity:
    """Say what a session was parsed from: its files' fingerprint and shape, the digest of each file read whole, small sidecars' bytes."""
    read = tuple((ref, digests[ref.rel], sidecars.get(ref.rel)) for ref in files.parsed_files() if ref.rel in digests)
    return FilesIdentity(fingerprint, files.shape, content_digest(files, digests) or fingerprint, read)


def _same_bytes_adopted(
    cache: Cache, changed: list[SessionFiles], identities: dict[str, tuple[str, str]], root: str, max_bytes: int, result: BuildResult,
    parsed_before: dict[str, dict[str, ParsedFile]],
) -> list[SessionFiles]:
    """Take as they are the changed sessions whose files hold the paths, sizes and bytes of their last parse; return the others.

    `parsed_before` gets what the cache says each of the others' last parse read (Cache.parsed_files), when it was asked.

    Copying or restoring a corpus (`cp -a`, a backup, another disk) gives every file a new inode,
    and `touch` a new time: the fingerprints change, the bytes do not. Only sessions whose files
    have the paths and sizes of their last parse are looked at (an append changes a size: it is
    parsed without this), and of those only the files whose lstat changed are read.
    """
    others = []
    for files in changed:
        known = identities.get(files.session_id)
        if known is None or known[1] != files.shape:
            others.append(files)
            continue
        count = ReadCount()
        parsed = cache.parsed_files(files.session_id)
        same = holds_bytes_parsed(root, files, parsed, max_bytes, count)
        result.transcripts_opened += count.opened
        if not same:
            parsed_before[files.session_id] = parsed
            others.append(files)
            continue
        cache.adopt(files.session_id, files.fingerprint, files.shape, [(ref, *parsed[ref.rel][1:]) for ref in files.parsed_files()])
        log.debug(f"not read again: {files.project}/{files.session_id}: its files have new times or inodes, and the bytes it was parsed from")
    return others


def _explain_reads(changed: list[SessionFiles], todo: set[str], checkpoints: dict[str, str]) -> None:
    """Say (with -v) why each changed session is read again, or why it is not."""
    for files in changed:
        where = f"{files.project}/{files.session_id}"
        if files.session_id not in todo:
            log.debug(f"not read: {where}: its last reads failed; it waits a few builds before the next try")
        elif files.session_id not in checkpoints:
            log.debug(f"read: {where}: not in the cache yet")
        elif checkpoints[files.session_id].endswith(":partial"):
            log.debug(f"read: {where}: some of its files could not be read last time")
        else:
            log.debug(f"read: {where}: its files changed (size, time or inode)")


def scan_and_ingest(
    cache: Cache, root: str, config: BuildConfig, prices: PriceTable, listed: dict[str, list[os.DirEntry[str]]] | None = None,
    walked: Walked | None = None,
) -> tuple[CorpusScan, BuildResult]:
    """Bring the cache up to date with the corpus: walk (taking the folders in `listed` as listed, or `walked`, their walk), then parse what changed."""
    if cache.rebuilt_reason:
        log.info(f"cache rebuilt from the corpus: {cache.rebuilt_reason}")
    if cache.invalidate_unless(code_identity()):
        log.info("agenthropic changed since the last build: every session is read again")
    sniffed = [0]

    def owner_of_flat_file(ref: FileRef) -> str | None:
        known, session_id = cache.flat_owner(ref)
        if not known:
            sniffed[0] += 1
            session_id = sniff_session_id(root, ref)
            cache.put_flat_owner(ref, session_id)
        return session_id

    scan = scan_corpus(root, config.max_file_bytes, config.max_depth, owner_of_flat_file, listed, walked)
    for skip in scan.skips:
        log.debug(f"skipped: {skip.path}: {skip.reason}" + (f" ({skip.detail})" if skip.detail else ""))
    repriced = []
    if cache.prices_digest() != priced_with(prices):
        # Re-price what is cached, without opening a transcript; the digest is recorded only
        # once every session carries the new prices, so an interrupted build re-prices again.
        repriced = cache.session_ids()
        if repriced:
            log.debug(f"repriced: {len(repriced)} cached sessions: the price table or the code changed")
        price_sessions(cache, repriced, prices)
        cache.set_prices_digest(priced_with(prices))
    result = ingest(cache, scan, config, prices)
    result.transcripts_opened += sniffed[0]
    result.repriced = len(repriced)
    result.dirty |= set(repriced)
    spool = ingest_spool(cache, config.cache)
    result.hook_events = spool.added
    # Replay hook events for sessions with new events and for sessions parsed again (their new
    # agents may have started and finished between two builds): statuses only, never the tree.
    touched = (set(spool.sessions or ()) | result.dirty) & set(cache.session_ids())
    apply_hook_statuses(cache, touched)
    result.dirty |= touched
    return scan, result


def corpus_models(config: BuildConfig) -> dict[str, int]:
    """Ingest the corpus into the cache (no site) and count deduplicated requests per model id."""
    root = real_root(config.corpus)
    check_folders(config.corpus, config.out, config.cache)
    prices = load_price_table(config.pricing)

    def count(repairs: list[str]) -> dict[str, int]:
        cache = Cache(config.cache, repairs=repairs)
        try:
            scan_and_ingest(cache, root, config, prices)
            cache.verify_sessions(cache.session_ids(), ("token_usage",))
            return cache.requests_per_model()
        finally:
            cache.close()

    repairs: list[str] = []
    models = with_repairs(config, repairs, count)
    if repairs:
        log.info(repair_line(repairs))
    return models
