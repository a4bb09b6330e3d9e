"""Build configuration: defaults for folders and the injected build clock."""

from __future__ import annotations

import os
import stat
from datetime import datetime, timedelta, tzinfo, UTC
from functools import cache
from pathlib import Path
from collections.abc import Mapping

from agenthropic_site import places
from agenthropic_site.errors import UserError
from agenthropic_site.records import record_class

DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH = 4
DEFAULT_WATCHDOG_MINUTES = 10
DEFAULT_TZ = "UTC"  # not the machine's zone: the same corpus builds the same site anywhere


class ConfigError(UserError):
    """A configuration problem the user must fix (exit code 2)."""


@record_class(frozen=True)
class BuildConfig:
    """Everything one build needs to know, resolved and validated."""

    corpus: Path
    out: Path
    cache: Path
    now: datetime
    theme: Path | None = None
    pricing: Path | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    watchdog_minutes: int = DEFAULT_WATCHDOG_MINUTES
    quiet: bool = False
    redact: bool = False  # mask credential shapes in pages and JSON (render/redact.py)
    wait_for_cache: bool = True  # watch passes give way to a running build instead of queueing
    live_clock: bool = False  # no --now or SOURCE_DATE_EPOCH: the clock is the wall clock (each watch pass reads it again)
    jobs: int = 1  # processes that parse and render sessions when many changed (workers.py)
    tz: str = DEFAULT_TZ  # IANA zone the usage windows are cut in and pages show times in
    invocation: str | None = None  # the command line it was resolved from (pipeline/stamp.py invocation), for the no-change stamp


def default_jobs() -> int:
    """Return the processes a build renders with by default: one a core, at most four."""
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4))


def default_corpus_dir(env: Mapping[str, str], home: Path) -> Path:
    """Return `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`."""
    config_dir = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if config_dir:
        # A comma-separated list is accepted by some tools (format §1.1); the first entry wins here.
        return Path(config_dir.split(",")[0]).expanduser() / "projects"
    return home / ".claude" / "projects"


def other_default_corpus(env: Mapping[str, str], home: Path) -> Path | None:
    """Return the folder some Claude Code 1.0 versions wrote transcripts to, when it is there and the default corpus is in use.

    Those versions moved the config folder to `$XDG_CONFIG_HOME/claude` (`~/.config/claude`), and
    later ones moved it back (format §1.1, claude-code-log issue 62): a user of both has sessions
    in each, and a build of the default corpus shows only the later ones.
    """
    if env.get("CLAUDE_CONFIG_DIR", "").strip():
        return None
    config_home = env.get("XDG_CONFIG_HOME", "").strip()
    folder = (Path(config_home) if os.path.isabs(config_home) else home / ".config") / "claude" / "projects"
    if folder == default_corpus_dir(env, home):
        return None
    try:
        with os.scandir(folder) as entries:
            return folder if any(entries) else None
    except OSError:  # not there, not a folder, not readable
        return None


def default_cache_dir(env: Mapping[str, str], home: Path) -> Path:
    """Return `$AGENTHROPIC_CACHE_DIR`, else `$XDG_CACHE_HOME/agenthropic`, else `~/.cache/agenthropic`."""
    return Path(places.default_cache_dir(env, str(home)))


def parse_instant(text: str) -> datetime:
    """Parse an ISO-8601 instant; a value without a zone is taken as UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ConfigError(f"not an ISO-8601 date and time: {text!r}") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is in the year 0 in UTC, 9999-12-31T23:59-14:00 in the year 10000
        raise ConfigError(f"not an instant of the years 1 to 9999 in UTC: {text!r}") from None


def resolve_now(now_arg: str | None, env: Mapping[str, str]) -> datetime:
    """Return the build clock: `--now`, else `SOURCE_DATE_EPOCH`, else the wall clock."""
    if now_arg:
        return parse_instant(now_arg)
    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), tz=UTC)
        except (ValueError, OverflowError, OSError) as exc:
            raise ConfigError(f"SOURCE_DATE_EPOCH is not a whole number of seconds: {epoch!r}") from exc
    return datetime.now(tz=UTC)


def check_zone(name: str) -> str:
    """Return an IANA time zone name if this machine's zone database has it; raise ConfigError otherwise."""
    # `localtime` names whatever zone the machine is set to: a site built with it would differ by machine.
    if name != DEFAULT_TZ and (name == "localtime" or name not in _zone_names()):
        raise ConfigError(f"--tz {name!r} is not an IANA time zone name (such as UTC, Europe/Paris or Asia/Kolkata)")
    return name


@cache
def _zone_names() -> frozenset[str]:
    import zoneinfo  # here: a build in UTC, the default, never loads it

    return frozenset(zoneinfo.available_timezones())


def zone_of(name: str) -> tzinfo:
    """Return the zone of a checked name (UTC needs no zone database)."""
    if name == DEFAULT_TZ:
        return UTC
    import zoneinfo

    return zoneinfo.ZoneInfo(name)


# Before every instant a transcript's time can be read as (parse/fields.py keeps the years 2 to 9998).
EARLIEST_CUTOFF = "0001-01-01T00:00:00.000Z"


def stale_cutoff(now: datetime, watchdog_minutes: int) -> str:
    """Return the instant (as transcripts write them) before which activity is stale; EARLIEST_CUTOFF when the span reaches past the year 1."""
    try:
        moment = now - timedelta(minutes=watchdog_minutes)
    except OverflowError:  # a watchdog longer than the calendar before the clock: nothing is stale
        return EARLIEST_CUTOFF
    # Every field zero-padded, as transcripts write them: strftime writes the year 500 as "500",
    # which sorts after "2025", and the cut-off is compared as text.
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}."
            f"{moment.microsecond // 1000:03d}Z")


def is_inside(path: Path, folder: Path) -> bool:
    """Tell whether `path` is `folder` or below it, comparing real paths component-wise."""
    real_path = os.path.realpath(path)
    real_folder = os.path.realpath(folder)
    try:
        return os.path.commonpath([real_path, real_folder]) == real_folder
    except ValueError:  # different drives on Windows
        return False


def check_folder_path(path: Path, option: str) -> None:
    """Refuse a folder path with a part that exists and is not a folder (`--out notes.txt/site`)."""
    for part in (path, *path.parents):
        try:
            mode = os.stat(part).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # not there yet (a file higher up is found further up)
        except OSError as exc:
            raise ConfigError(f"{option} {path}: cannot look at {part}: {exc.strerror}") from None
        if not stat.S_ISDIR(mode):
            raise ConfigError(f"{option} {path}: {part} is a file, not a folder; choose another {option}")
        return


def check_output_path(out: Path) -> None:
    """Refuse an output folder that cannot be one (a part of its path is a file)."""
    check_folder_path(out, "--out")


def check_folders(corpus: Path, out: Path, cache: Path) -> None:
    """Refuse folder combinations that would let one stage write into another's input, and a cache path through a file."""
    check_folder_path(cache, "--cache")
    if is_inside(cache, corpus):
        raise ConfigError(f"the cache folder {cache} is inside the corpus {corpus}; choose another --cache")
    if is_inside(cache, out):
        raise ConfigError(f"the cache folder {cache} is inside the output {out}; choose another --cache")
    if is_inside(out, corpus):
        raise ConfigError(f"the output folder {out} is inside the corpus {corpus}; choose another --out")
    if is_inside(corpus, out):
        raise ConfigError(f"the corpus {corpus} is inside the output folder {out}; choose another --out")
