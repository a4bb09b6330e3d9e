"""One build: walk, parse what changed, price, project into the cache, gather, render."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar
from collections.abc import Callable

from agenthropic_site import code_identity
from agenthropic_site.cache import Cache, Priced, PricedRow
from agenthropic_site.cache.store import CacheDamaged, cache_os_problem, cache_problem
from agenthropic_site.config import BuildConfig, ConfigError, check_folders, check_output_path
from agenthropic_site.corpus import CorpusScan, FileRef, SessionFiles, Skip, UnreadableError, read_bytes, real_root, scan_corpus
from agenthropic_site.corpus.sniff import sniff_session_id
from agenthropic_site.corpus.walk import SIDECAR_MAX_BYTES
from agenthropic_site.cost import PriceTable, PricingError, load_price_table
from agenthropic_site.events import apply_hook_statuses, ingest_spool
from agenthropic_site.gather import Failure, gather
from agenthropic_site.parse import SessionInput, TranscriptInput, parse_session
from agenthropic_site.parse.model import ParsedSession
from agenthropic_site.render.manifest import read_manifest
from agenthropic_site.render.writer import SiteWriter, prepare_output, site_lock
from agenthropic_site.stored_views import load_view, refresh_views
from agenthropic_site.workers import Workers, WorkersFailed

REASON_MAX_CHARS = 300
PARSE_IN_WORKERS_MIN = 32  # fewer changed sessions than this are parsed in the build's own process
MAX_REPAIRS = 3  # times a build starts again after damaged rows, before it rebuilds the whole cache
SHOWN_REPAIRS = 3  # damaged rows named in the one line that reports them
T = TypeVar("T")
_ABS_PATH_RE = re.compile(r"(?:[A-Za-z]:)?[\\/](?:[^\s'\"\\/:]+[\\/])+[^\s'\"]*")


@dataclass
class BuildResult:
    """What a build did: counts for the summary line and the exit code."""

    sessions: int = 0
    parsed: int = 0
    reused: int = 0
    dirty: set[str] = field(default_factory=set)  # sessions whose view must be computed again
    quarantined: int = 0
    hook_events: int = 0
    failed: int = 0
    excluded: int = 0
    removed_sessions: int = 0
    transcripts_opened: int = 0
    pages_rendered: int = 0
    pages_written: int = 0
    pages_unchanged: int = 0
    files_removed: int = 0
    skips: int = 0
    read_skips: list[Skip] = field(default_factory=list)
    repriced: int = 0
    cache_repairs: list[str] = field(default_factory=list)  # damaged rows of the cache derived again (repair_line)

    @property
    def exit_code(self) -> int:
        """Return 1 when anything was left out (failed or unpriced sessions), else 0."""
        return 1 if self.failed or self.excluded else 0


def sanitize_reason(text: str) -> str:
    """Make a failure reason safe to publish: no absolute paths, one line, at most 300 characters."""
    flat = " ".join(_ABS_PATH_RE.sub("<path>", text).split())
    return flat if len(flat) <= REASON_MAX_CHARS else flat[: REASON_MAX_CHARS - 1] + "…"


def price_rows(rows: list[PricedRow], prices: PriceTable) -> Priced:
    """Price every usage row; a row that cannot be priced says why (the halt gate reads it with ownership)."""
    priced: Priced = []
    for row in rows:
        try:
            cost = prices.cost(row.model, row.tokens, row.at, row.speed)
        except PricingError as exc:
            priced.append((row.seq, None, None, f"{exc.why} for model {exc.model}"))
            continue
        priced.append((row.seq, prices.family(row.model) or "", cost.as_tuple(), None))
    return priced


def price_sessions(cache: Cache, session_ids: list[str], prices: PriceTable) -> None:
    """(Re)price sessions from their cached rows: a price change never needs a re-parse."""
    for session_id in session_ids:
        cache.set_prices(session_id, price_rows(cache.usage_rows(session_id), prices))


def load_session(root: str, files: SessionFiles, max_bytes: int, result: BuildResult) -> tuple[SessionInput, list[Skip]]:
    """Read a session's transcripts and sidecars; an unreadable agent file is skipped, not fatal."""
    if files.main is None:
        # No main transcript (issue 13): the session is parsed from its agent files alone.
        main = TranscriptInput(f"{files.project}/{files.session_id}.jsonl", b"", "main")
    else:
        main = TranscriptInput(files.main.rel, read_bytes(root, files.main, max_bytes), "main")
        result.transcripts_opened += 1
    agents = []
    skipped = []
    for agent in files.agents:
        try:
            data = read_bytes(root, agent.file, max_bytes)
            result.transcripts_opened += 1
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
    counter = BuildResult()
    try:
        source, skipped = load_session(root, files, max_bytes, counter)
        return ParseOutcome(parse_session(source), skipped, counter.transcripts_opened)
    except UnreadableError as exc:
        return ParseOutcome(None, [], counter.transcripts_opened, f"{exc.reason}: {exc.detail}")
    except Exception as exc:  # noqa: BLE001 - one bad session must not sink the build
        return ParseOutcome(None, [], counter.transcripts_opened, f"{type(exc).__name__}: {exc}")


# The parse task of worker processes (workers.py): the setup is (corpus root, size cap).
def start(setup: tuple[str, int]) -> tuple[str, int]:
    """Keep the corpus root and size cap (in a worker process)."""
    return setup


def run(setup: tuple[str, int], files: SessionFiles) -> ParseOutcome:
    """Read and parse one session (in a worker process)."""
    return read_and_parse(setup[0], files, setup[1])


def cancel(answer: ParseOutcome) -> None:
    """Nothing to undo: parsing writes nothing."""


def parse_all(
    todo: list[SessionFiles], root: str, config: BuildConfig, log: Callable[[str], None]
) -> Iterator[tuple[SessionFiles, ParseOutcome]]:
    """Yield each session with its ParseOutcome in order, parsed in worker processes when there are many."""
    here = functools.partial(read_and_parse, root, max_bytes=config.max_file_bytes)
    workers = None
    if config.jobs >= 2 and len(todo) >= PARSE_IN_WORKERS_MIN:
        try:
            # One process fewer than --jobs: this one is busy too, pricing and writing each session.
            workers = Workers("parse", (root, config.max_file_bytes), todo, config.jobs - 1)
        except WorkersFailed as exc:
            log(f"notice: {exc}; parsing in this process")
    if workers is None:
        yield from ((files, here(files)) for files in todo)
        return
    log(f"parsing {len(todo)} changed sessions in {workers.count} worker process{'es' if workers.count > 1 else ''}")
    try:
        yield from workers.answers(here)
        why = workers.stopped_early()
    finally:
        workers.close()
    if why is not None:
        log(f"notice: a parse worker stopped early ({why}); this process parsed its sessions")


def ingest(cache: Cache, scan: CorpusScan, config: BuildConfig, prices: PriceTable, log: Callable[[str], None]) -> BuildResult:
    """Parse and project every session whose fingerprint changed since its checkpoint."""
    result = BuildResult(sessions=len(scan.sessions))
    build_number = cache.build_number()
    checkpoints = cache.checkpoints()
    changed = [files for sid, files in scan.sessions.items() if checkpoints.get(sid) != files.fingerprint]
    todo = [files for files in changed if not cache.is_quarantined(files.session_id, files.fingerprint, build_number)]
    result.quarantined = len(changed) - len(todo)
    result.reused = len(scan.sessions) - len(changed)
    for done, (files, outcome) in enumerate(parse_all(todo, scan.root, config, log), start=1):
        if len(todo) >= 20 and (done % 50 == 0 or done == len(todo)):
            log(f"parsed {done}/{len(todo)} changed sessions")
        fingerprint = files.fingerprint
        # Sessions that shared messages with the old version may gain or lose their ownership.
        result.dirty |= cache.neighbours([files.session_id]) | {files.session_id}
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
        rows = [PricedRow(seq, row.model, row.tokens, row.timestamp, row.speed) for seq, row in enumerate(parsed.usage)]
        cache.write_session(parsed, fingerprint, price_rows(rows, prices))
        result.dirty |= cache.neighbours([files.session_id])
        result.parsed += 1
    gone = cache.missing_sessions(set(scan.sessions), set(scan.unlisted))
    result.dirty |= cache.neighbours(gone)
    cache.forget(gone)
    result.removed_sessions = len(gone)
    return result


def _scan_and_ingest(
    cache: Cache, root: str, config: BuildConfig, prices: PriceTable, log: Callable[[str], None]
) -> tuple[CorpusScan, BuildResult]:
    """Bring the cache up to date with the corpus: walk, then parse what changed."""
    if cache.rebuilt_reason:
        log(f"cache rebuilt from the corpus: {cache.rebuilt_reason}")
    if cache.invalidate_unless(code_identity()):
        log("agenthropic changed since the last build: every session is read again")
    sniffed = [0]

    def owner_of_flat_file(ref: FileRef) -> str | None:
        known, session_id = cache.flat_owner(ref)
        if not known:
            sniffed[0] += 1
            session_id = sniff_session_id(root, ref)
            cache.put_flat_owner(ref, session_id)
        return session_id

    scan = scan_corpus(root, config.max_file_bytes, config.max_depth, owner_of_flat_file)
    repriced = []
    if cache.prices_digest() != prices.digest:
        # Re-price what is cached, without opening a transcript; the digest is recorded only
        # once every session carries the new prices, so an interrupted build re-prices again.
        repriced = cache.session_ids()
        price_sessions(cache, repriced, prices)
        cache.set_prices_digest(prices.digest)
    result = ingest(cache, scan, config, prices, log)
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


def corpus_models(config: BuildConfig, log: Callable[[str], None]) -> dict[str, int]:
    """Ingest the corpus into the cache (no site) and count deduplicated requests per model id."""
    root = real_root(config.corpus)
    check_folders(config.corpus, config.out, config.cache)
    prices = load_price_table(config.pricing)

    def count(repairs: list[str]) -> dict[str, int]:
        cache = Cache(config.cache, on_wait=log, repairs=repairs)
        try:
            _scan_and_ingest(cache, root, config, prices, log)
            cache.verify_sessions(cache.session_ids(), ("token_usage",))
            return dict(cache.conn.execute("SELECT model, COUNT(*) FROM token_usage GROUP BY model ORDER BY model").fetchall())
        finally:
            cache.close()

    repairs: list[str] = []
    models = with_repairs(config, log, repairs, count)
    if repairs:
        log(repair_line(repairs))
    return models


def run_build(config: BuildConfig, log: Callable[[str], None]) -> BuildResult:
    """Build the site once. Raises CorpusRootError, ContainmentError, ConfigError (CacheError) or OutputError."""
    root = real_root(config.corpus)
    check_folders(config.corpus, config.out, config.cache)
    check_output_path(config.out)
    prices = load_price_table(config.pricing)
    try:
        prepare_output(config.out)
    except OSError as exc:  # a read-only file system, no permission, a full disk: before any page
        raise ConfigError(f"cannot prepare the output folder {config.out}: {exc.strerror or exc}") from None
    repairs: list[str] = []
    result = with_repairs(config, log, repairs, lambda notes: _build_with_cache(config, root, prices, log, notes))
    result.cache_repairs = repairs
    return result


def with_repairs(config: BuildConfig, log: Callable[[str], None], repairs: list[str], work: Callable[[list[str]], T]) -> T:
    """Run `work` on the cache; derive again whatever damage to the cache it meets, then run it again.

    The corpus is the truth and the cache only saves time. Rows that fail their checksum are
    forgotten (a session's are read again from the corpus); a file SQLite finds malformed is
    deleted under the lock. A cache that is busy, full or cannot be opened is never deleted:
    that is a one-line error (CacheError). Damage after a rebuild from nothing is not damage.
    """
    rebuilt = False
    for attempt in range(MAX_REPAIRS + 2):
        try:
            return work(repairs)
        except CacheDamaged as exc:
            damage: Exception = exc
            _note(repairs, exc.what)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.ProgrammingError):
                raise  # a misuse of SQLite is a bug, not damage
            problem = cache_problem(exc, config.cache)
            if problem is not None:
                raise problem from None
            damage = exc
            _note(repairs, f"the cache file: {exc}")
        except OSError as exc:
            # Outside SQLite the cache folder is written by the template cache (render/theme.py).
            problem = cache_os_problem(exc, config.cache)
            if problem is not None:
                raise problem from None
            raise
        if rebuilt:
            raise damage
        # Said once, in the build's last line (repair_line), not at each attempt.
        if isinstance(damage, CacheDamaged) and attempt < MAX_REPAIRS and _forget(config, log, damage, repairs):
            continue
        # The corpus is the truth and the cache only saves time: start again without it.
        Cache.discard(config.cache, on_wait=log, wait=config.wait_for_cache)
        rebuilt = True
    raise AssertionError("unreachable: the last attempt returns or raises")


def _forget(config: BuildConfig, log: Callable[[str], None], damage: CacheDamaged, repairs: list[str]) -> bool:
    """Drop the damaged rows from the cache; return False when that cannot be done (rebuild it whole)."""
    try:
        cache = Cache(config.cache, on_wait=log, wait=config.wait_for_cache, repairs=repairs)
        try:
            cache.forget_damaged(damage.forget)
        finally:
            cache.close()
    except sqlite3.DatabaseError as exc:
        problem = cache_problem(exc, config.cache)
        if problem is not None:
            raise problem from None
        return False
    return True


def _note(repairs: list[str], what: str) -> None:
    if what not in repairs:
        repairs.append(what)


def repair_line(repairs: list[str]) -> str:
    """Say in one line what damage to the cache this build found and derived again."""
    shown = "; ".join(repairs[:SHOWN_REPAIRS]) + (f"; and {len(repairs) - SHOWN_REPAIRS} more" if len(repairs) > SHOWN_REPAIRS else "")
    return f"agenthropic: the cache was damaged ({shown}); what it held was derived again from the corpus"


def _build_with_cache(
    config: BuildConfig, root: str, prices: PriceTable, log: Callable[[str], None], repairs: list[str] | None = None,
) -> BuildResult:
    cache = Cache(config.cache, on_wait=log, wait=config.wait_for_cache, repairs=repairs)
    try:
        scan, result = _scan_and_ingest(cache, root, config, prices, log)
        skips = sorted(scan.skips + result.read_skips)
        result.skips = len(skips)
        published = read_manifest(config.out)
        signature = site_signature(cache, config, prices, skips, scan.unlisted)
        if not result.dirty and cache.site_signature() == _of_folder(signature, published.digest) and _outputs_present(config, published.files):
            # Nothing that any page shows has changed since this folder's last build: no page is looked at.
            result.pages_unchanged = len(published.files)
            result.failed = len(cache.failures())
            result.excluded = cache.excluded_count()
            return result
        from agenthropic_site.render.pages import Renderer  # jinja2 and markdown-it load only to render

        summaries = refresh_views(cache, result.dirty, prices)
        failures = [Failure(*row) for row in cache.failures()]
        model = gather(summaries, failures, skips, scan.unlisted, config.now, config.watchdog_minutes)
        model.hook_events = cache.event_counts()
        model.spool_bad_lines = cache.spool_bad_lines()
        result.failed = len(model.failures)
        result.excluded = sum(1 for session in model.sessions.values() if session.excluded_reason)
        # Until this render is published, no folder is current for the cache: a build that fails
        # from here (its views are already stored) must not let the next one take the short cut.
        cache.set_site_signature("")
        # What the output folder holds is judged from its own manifest, never from the cache.
        writer = SiteWriter.begin(config.out, published, log)
        try:
            renderer = Renderer(
                model, cache, writer, config.theme, log, load_view=lambda sid: load_view(cache, sid, prices), redact=config.redact,
                jobs=config.jobs, pricing=config.pricing,
            )
            result.pages_rendered = renderer.render_all().rendered
            with site_lock(config.out, True, log):
                writer.finish(renderer.digests)
        except BaseException:
            writer.abort()
            raise
        if config.redact:
            cache.set_redaction_counts(renderer.redaction_record())
        result.pages_written = len(writer.written)
        result.pages_unchanged = len(writer.unchanged)
        result.files_removed = len(writer.removed)
        # Recorded only once every output is in place, with the manifest this folder now holds.
        cache.set_site_signature(_of_folder(signature, writer.manifest_digest))
        return result
    finally:
        cache.close()


def site_signature(cache: Cache, config: BuildConfig, prices: PriceTable, skips: list[Skip], unlisted: list[str]) -> str:
    """Digest everything besides session views that pages show: a change of any means render."""
    from agenthropic_site.render.theme import theme_digest, theme_dirs

    digest = hashlib.sha256()
    for part in (
        code_identity(),
        prices.digest,
        theme_digest(theme_dirs(config.theme)).hex(),
        str(shutil.which("dot") is not None),
        repr([(s.path, s.reason, s.detail) for s in skips]),
        repr(unlisted),
        repr(cache.failures()),
        repr(cache.stale_agents(config.now, config.watchdog_minutes)),
        repr(cache.event_counts()),
        str(cache.spool_bad_lines()),
        f"redact={config.redact}",
    ):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def _of_folder(signature: str, manifest_digest: str | None) -> str:
    """Tie a site signature to the manifest of the folder built with it."""
    # Another folder (or one whose manifest changed) built from the same cache is then rendered,
    # never taken as current.
    return hashlib.sha256(f"{signature}|{manifest_digest}".encode()).hexdigest()


def _outputs_present(config: BuildConfig, files: dict[str, str]) -> bool:
    out = str(config.out)
    return bool(files) and all(os.path.isfile(os.path.join(out, rel)) for rel in files)
