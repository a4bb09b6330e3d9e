"""The no-change stamp: what the last build of an output folder saw, checked before anything heavy is imported.

A build that changes nothing still pays for imports, the cache and the corpus walk. After a build
completes, it leaves a stamp in the cache folder: the corpus's lstat listing (taken before the build
read anything), the hook spool's, the options, code, prices, theme and `dot` it built with, the
cache file and the output folder's manifest as the build left them, what its summary line said,
and the span of build clocks over which no agent's status ages. `agenthropic build` compares the
stamp with the world using the standard library alone; any difference, or a stamp that is missing
or unreadable, means the whole build runs and decides again. Every process that opens the cache
for writing deletes the stamp first, so it never outlives a build that changed something.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from agenthropic_site import code_identity
from agenthropic_site.config import BuildConfig, stale_cutoff
from agenthropic_site.live.spool import SPOOL_FOLDER
from agenthropic_site.pipeline.result import BuildResult, NoChange
from agenthropic_site.render.manifest import MANIFEST_HEADER, MANIFEST_NAME, MARKER, STATE, UNKNOWN

STAMP_FILE = "unchanged.json"
STAMP_FORMAT = 1
# The corpus walk looks at most this many folder levels below a session folder (--max-depth);
# root/project/session is three more. Deeper folders are listed by their own entry only.
LEVELS_ABOVE_SESSIONS = 3
# The SQLite file and its write-ahead log (cache/store.py's CACHE_FILE): this module must not import SQLite.
CACHE_FILES = ("cache.sqlite3", "cache.sqlite3-wal")


def forget(cache_folder: Path) -> None:
    """Delete the stamp: the cache is about to change."""
    try:
        os.unlink(cache_folder / STAMP_FILE)
    except OSError:
        pass  # none there, or no cache folder yet (opening the cache says what is wrong with it)


def before_build(config: BuildConfig, measured: dict[str, str] | None = None) -> dict[str, str]:
    """Return the state of the build's inputs before it reads any (a change made during the build is then seen next time).

    `measured` holds what the no-change check already measured on its way (just before the build).
    """
    state = dict(measured or {})
    for key, measure in BEFORE:
        if key not in state:
            state[key] = measure(config)
    return state


def record(config: BuildConfig, before: dict[str, str], facts: NoChange) -> None:
    """Write the stamp of a build that completed (its cache closed, its output published)."""
    # Its files are not looked at one by one here: the build has just published them, and the
    # check that reads the stamp looks at every one before it trusts it.
    after = _after(config, check_files=False)
    if after is None:
        return
    body = {"format": STAMP_FORMAT, **before, **after, **asdict(facts)}
    temporary = config.cache / f".{STAMP_FILE}.tmp"
    try:
        temporary.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
        os.replace(temporary, config.cache / STAMP_FILE)
    except OSError:
        pass  # without a stamp the next build only takes longer


def unchanged(config: BuildConfig) -> tuple[BuildResult | None, dict[str, str]]:
    """Return what a build would report when nothing changed since the stamp (else None), and what was measured on the way.

    The likeliest changes are looked at first and the check stops at the first difference; the
    build that then runs takes what was measured as its own state before it (before_build).
    """
    measured: dict[str, str] = {}
    try:
        with open(config.cache / STAMP_FILE, encoding="utf-8") as handle:
            body = json.load(handle)
        facts = NoChange(**{key: body[key] for key in NoChange.__dataclass_fields__})
        if body.get("format") != STAMP_FORMAT:
            return None, measured
    except (OSError, ValueError, KeyError, TypeError):
        return None, measured
    cutoff = stale_cutoff(config.now, config.watchdog_minutes)
    if (facts.stale_after is not None and cutoff <= facts.stale_after) or (facts.fresh_until is not None and cutoff > facts.fresh_until):
        return None, measured  # some agent's status ages (or un-ages) at this clock
    for key, measure in BEFORE:
        measured[key] = measure(config)
        if body.get(key) != measured[key]:
            return None, measured
    after = _after(config)
    if after is None or any(body.get(key) != value for key, value in after.items()):
        return None, measured
    result = BuildResult(
        sessions=facts.sessions, reused=facts.reused, failed=facts.failed, excluded=facts.excluded, skips=facts.skips,
        pages_unchanged=int(after["pages"]),
    )
    return result, measured


def _after(config: BuildConfig, check_files: bool = True) -> dict[str, str | int] | None:
    """Return the state the build left: the cache file and the output folder's published files; None when they cannot be read.

    With `check_files`, None too when a published file is no longer a regular file.
    """
    out = os.fspath(config.out)
    manifest = os.path.join(out, STATE, MANIFEST_NAME)
    try:
        with open(manifest, "rb") as handle:
            data = handle.read()
        # The folder's claim too: without it a build refuses the folder.
        digest = hashlib.sha256(f"{_stat_line(os.lstat(manifest))}|{_stat_line(os.lstat(os.path.join(out, MARKER)))}".encode() + data)
    except OSError:
        return None
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    if not lines or lines[0] + "\n" != MANIFEST_HEADER.decode() or lines.pop() != "":
        return None
    regular = stat.S_ISREG
    for line in lines[1:]:
        published, _, rel = line.partition(" ")
        if published == UNKNOWN or rel.startswith("/") or ".." in rel.split("/"):
            return None  # a publishing cut short, or a line no build writes: the build looks at it
        if not check_files:
            continue
        try:
            if not regular(os.lstat(os.path.join(out, rel)).st_mode):
                return None
        except OSError:
            return None
    cache = hashlib.sha256()
    for name in CACHE_FILES:
        try:
            cache.update(f"{name} {_stat_line(os.lstat(config.cache / name))}\n".encode())
        except FileNotFoundError:
            cache.update(f"{name} -\n".encode())
        except OSError:
            return None
    return {"output": digest.hexdigest(), "pages": len(lines) - 1, "cache": cache.hexdigest()}


def _inputs(config: BuildConfig) -> str:
    """Digest what the build is told and runs with: options, code, prices, theme, Graphviz."""
    from agenthropic_site.render.theme import theme_digest, theme_dirs

    digest = hashlib.sha256()
    for part in (
        code_identity(),
        os.path.realpath(config.corpus), os.path.realpath(config.out), os.path.realpath(config.cache),
        str(config.theme and os.path.realpath(config.theme)), str(config.pricing and os.path.realpath(config.pricing)),
        f"{config.max_file_bytes}|{config.max_depth}|{config.watchdog_minutes}|{config.redact}|{config.tz}",
        # Who builds: another user (or group) may be refused folders this one could list.
        f"{os.geteuid()}|{os.getegid()}|{sorted(os.getgroups())}" if hasattr(os, "geteuid") else "",
        str(shutil.which("dot") is not None),
    ):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    if config.pricing is not None:
        try:
            digest.update(config.pricing.read_bytes())
        except OSError:
            digest.update(b"unreadable")
    try:
        digest.update(theme_digest(theme_dirs(config.theme)))
    except OSError:
        digest.update(b"unreadable")
    return digest.hexdigest()


def _stat_line(st: os.stat_result) -> str:
    # ctime and links too: a chmod that makes a file readable, or a hard link, changes what the walk decides.
    return f"{st.st_mode:o} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_nlink}"


def _listing(root: str, levels: int) -> str:
    """Digest every entry under `root` (lstat, never through a link) down to `levels` folders deep."""
    try:
        lines = [_stat_line(os.lstat(root))]
    except OSError as exc:
        return f"absent:{exc.errno}"
    folders = [("", 1)]
    is_folder = stat.S_ISDIR
    while folders:
        rel, depth = folders.pop()
        try:
            # In the folder's own order: should it change with nothing else changing, the whole build
            # runs once more; it never hides a change.
            with os.scandir(os.path.join(root, rel)) as listed:
                entries = list(listed)
        except OSError as exc:
            lines.append(f"{rel}\0unlisted {exc.errno}")
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                lines.append(f"{path}\0gone {exc.errno}")
                continue
            lines.append(f"{path}\0{_stat_line(st)}")
            if is_folder(st.st_mode) and depth < levels:
                folders.append((path, depth + 1))
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _corpus(config: BuildConfig) -> str:
    return _listing(os.path.realpath(config.corpus), config.max_depth + LEVELS_ABOVE_SESSIONS)


def _spool(config: BuildConfig) -> str:
    return _listing(str(config.cache / SPOOL_FOLDER), 1)


# What a build's state before it is made of, the likeliest to change first (the check stops at a difference).
BEFORE: tuple[tuple[str, Callable[[BuildConfig], str]], ...] = (("corpus", _corpus), ("spool", _spool), ("inputs", _inputs))
