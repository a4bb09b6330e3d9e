"""One build: bring the cache up to date, then gather the site model and render what changed."""

from __future__ import annotations

import logging
import hashlib
import os
from pathlib import Path

from agenthropic_site import code_identity, heap
from agenthropic_site.cache import Cache
from agenthropic_site.config import BuildConfig, ConfigError, check_folders, check_output_path
from agenthropic_site.corpus import CorpusScan, Skip, real_root
from agenthropic_site.cost import PriceTable, load_price_table
from agenthropic_site.model.gather import Failure, gather
from agenthropic_site.model.stored import ComputedAlone, refresh_views
from agenthropic_site.model.corpus_usage import corpus_usage
from agenthropic_site.pipeline import stamp
from agenthropic_site.pipeline.ingest import scan_and_ingest
from agenthropic_site.pipeline.pool import in_a_workers_import_of_main
from agenthropic_site.pipeline.repair import with_repairs
from agenthropic_site.pipeline.result import BuildResult, NoChange
from agenthropic_site.pipeline.viewing import views_in_workers
from agenthropic_site.places import dot_on_path
from agenthropic_site.render.folders import OpenFolders, missing_files
from agenthropic_site.render.manifest import Published, read_manifest
from agenthropic_site.render.writer import OutputError, SiteWriter, prepare_output, site_lock

log = logging.getLogger(__name__)

__all__ = ["BuildResult", "run_build"]

# What this process last read or published in an output folder: a watch's next pass finds the
# manifest it wrote and does not parse it again (4,480 files: 6 ms a pass).
_published: dict[str, Published] = {}


def run_build(config: BuildConfig, measured: dict[str, str] | None = None) -> BuildResult:
    """Build the site once. Raises CorpusRootError, ContainmentError, ConfigError (CacheError) or OutputError.

    `measured`: what the no-change check measured of the inputs just before (pipeline/stamp.py).
    """
    if in_a_workers_import_of_main():
        raise ConfigError(
            "a worker process of a build ran the script that started the build, and the script builds again: "
            "put the script's build under `if __name__ == \"__main__\":` (this process stops; the build goes on without it)"
        )
    try:
        # Before anything is read: a change made from now on is seen by the next build.
        before = stamp.before_build(config, measured)
        root = real_root(config.corpus)
        listed = stamp.corpus_folders(root)  # the walk takes the corpus as the state before saw it
        check_folders(config.corpus, config.out, config.cache)
        check_output_path(config.out)
        prices = load_price_table(config.pricing)
        try:
            prepare_output(config.out)
        except OSError as exc:  # a read-only file system, no permission, a full disk: before any page
            raise ConfigError(f"cannot prepare the output folder {config.out}: {exc.strerror or exc}") from None
        repairs: list[str] = []
        result = with_repairs(config, repairs, lambda notes: _build_with_cache(config, root, prices, listed, notes))
        result.cache_repairs = repairs
        if result.no_change is not None and not repairs:
            stamp.record(config, before, result.no_change)
        return result
    finally:
        stamp.end_aside()  # the process aside, if the check before this build started one


def _build_with_cache(
    config: BuildConfig, root: str, prices: PriceTable, listed: dict[str, list[os.DirEntry[str]]], repairs: list[str] | None = None,
) -> BuildResult:
    # A second attempt (after a repair) lists again what the first walk took from `listed`.
    cache = Cache(config.cache, wait=config.wait_for_cache, repairs=repairs)
    try:
        # The walk and the manifest the process aside made and read meanwhile (a walk after a repair lists again).
        walked = stamp.kept_walk(root, config.max_file_bytes, config.max_depth) if listed else None
        scan, result = scan_and_ingest(cache, root, config, prices, listed, walked)
        skips = sorted(scan.skips + result.read_skips)
        result.skips = len(skips)
        known = _published.get(str(config.out)) or stamp.kept_manifest(config.out)
        published = _remembered(config.out, read_manifest(config.out, known))
        signature = site_signature(cache, config, prices, skips, scan.unlisted)
        same_inputs = cache.site_signature() == _of_folder(signature, published.digest)
        # Every published file is looked at only when nothing else says to render (rendering
        # keeps each file that is still there, and writes again the ones that are not).
        if not result.dirty and same_inputs and _outputs_present(config, published):
            # Nothing that any page shows has changed since this folder's last build: no page is looked at.
            log.debug("rendered nothing: no session and nothing else any page shows changed since this folder's last build")
            result.pages_unchanged = len(published.files)
            result.failed = len(cache.failures())
            result.excluded = cache.excluded_count()
            result.no_change = _no_change(cache, scan, config, result)
            return result
        from agenthropic_site.pipeline.rendering import render_from_cache  # jinja2 and markdown-it load only to render

        heap.resume_after_imports()  # a one-shot build's imports are done (entry.py paused the collector for them)
        _explain_render(result.dirty, same_inputs)
        in_workers = views_in_workers(cache.path.parent, prices, config.jobs) if config.jobs > 1 else None
        alone = ComputedAlone()
        summaries = refresh_views(cache, result.dirty, prices, in_workers, alone)
        failures = [Failure(*row) for row in cache.failures()]
        model = gather(summaries, failures, skips, scan.unlisted, config.now, config.watchdog_minutes, corpus_usage(cache, config.tz))
        model.hook_events = cache.event_counts()
        model.spool_bad_lines = cache.spool_bad_lines()
        result.failed = len(model.failures)
        result.excluded = sum(1 for session in model.sessions.values() if session.excluded_reason)
        # Until this render is published, no folder is current for the cache: a build that fails
        # from here (its views are already stored) must not let the next one take the short cut.
        cache.set_site_signature("")
        # What the output folder holds is judged from its own manifest, never from the cache.
        seen_missing = stamp.kept_missing(config.out, published.digest)
        if seen_missing is not None:
            log.debug(f"a process aside looked at the {len(published.files)} files the last build published: {len(seen_missing)} missing")
        writer: SiteWriter | None = None
        try:
            writer = SiteWriter.begin(config.out, published, seen_missing)
            # Its pages were all made by this code and these options when this cache last built the folder as it is:
            # a page rendered again may take its unchanged messages from it (render/reader.py Layout.reuse).
            rendered = render_from_cache(model, cache, writer, config, prices, alone, reuse_published=same_inputs)
            result.pages_rendered = rendered.stats.rendered
            with site_lock(config.out, True):
                writer.finish(rendered.digests)
        except BaseException as exc:
            if writer is not None:
                writer.abort()
            if isinstance(exc, OutputError):
                # No manifest at all (not a damaged one, nor one behind a link): no build published there.
                exc.site_before = published.digest is not None or published.damaged
            raise
        if writer.published is not None:
            _remembered(config.out, writer.published)
        if config.redact:
            cache.set_redaction_counts(rendered.redactions)
        result.pages_written = len(writer.written)
        result.pages_unchanged = len(writer.unchanged)
        result.files_removed = len(writer.removed)
        # Recorded only once every output is in place, with the manifest this folder now holds.
        cache.set_site_signature(_of_folder(signature, writer.manifest_digest))
        result.no_change = _no_change(cache, scan, config, result)
        return result
    finally:
        cache.close()


def _remembered(out: Path, published: Published) -> Published:
    """Keep what an output folder's manifest says (only the folder built last) for this process's next build of it."""
    _published.clear()
    if published.digest is not None:
        _published[str(out)] = published
    return published


def _no_change(cache: Cache, scan: CorpusScan, config: BuildConfig, result: BuildResult) -> NoChange | None:
    """Say what the next build would report if no file changed, or None when it would read a session again."""
    reused = cache.settled_reuse({sid: files.fingerprint for sid, files in scan.sessions.items()})
    if reused is None:
        return None
    stale_after, fresh_until = cache.watchdog_bounds(config.now, config.watchdog_minutes)
    # The failed and unpriced counts are the build's own, taken from the cache moments ago (a
    # second count re-checked every stored view's checksum: 12 ms at 500 sessions).
    return NoChange(len(scan.sessions), reused, result.failed, result.excluded, result.skips, stale_after, fresh_until)


def _explain_render(dirty: set[str], same_inputs: bool) -> None:
    """Say (with -v) why pages are looked at this time."""
    if dirty:
        log.debug(f"rendering: {len(dirty)} session(s) changed or removed")
    if not same_inputs:
        log.debug("rendering: this folder was built from other inputs (code, prices, theme, skipped files, failures, statuses, hooks, --redact or --tz)")
    if not dirty and same_inputs:
        log.debug("rendering: files the folder's manifest lists are missing from it, or were changed there since")


def site_signature(cache: Cache, config: BuildConfig, prices: PriceTable, skips: list[Skip], unlisted: list[str]) -> str:
    """Digest everything besides session views that pages show: a change of any means render."""
    from agenthropic_site.render.theme import theme_digest, theme_dirs

    digest = hashlib.sha256()
    for part in (
        code_identity(),
        prices.digest,
        theme_digest(theme_dirs(config.theme)).hex(),
        str(dot_on_path()),
        repr([(s.path, s.reason, s.detail, s.size) for s in skips]),  # the report shows each one's size too
        repr(unlisted),
        repr(cache.failures()),
        repr(cache.stale_agents(config.now, config.watchdog_minutes)),
        repr(cache.event_counts()),
        str(cache.spool_bad_lines()),
        f"redact={config.redact}",
        f"tz={config.tz}",
    ):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def _of_folder(signature: str, manifest_digest: str | None) -> str:
    """Tie a site signature to the manifest of the folder built with it."""
    # Another folder (or one whose manifest changed) built from the same cache is then rendered,
    # never taken as current.
    return hashlib.sha256(f"{signature}|{manifest_digest}".encode()).hexdigest()


def _outputs_present(config: BuildConfig, published: Published) -> bool:
    """Tell whether every file the manifest lists is in the folder as published: a regular file not changed since (`missing_files`)."""
    if not published.files:
        return False
    folders = OpenFolders(config.out)
    try:
        return not missing_files(published.files, folders.open, lambda rel: rel.split("/"), published.written_ns)
    finally:
        folders.close()
