"""The no-change stamp: what the last build of an output folder saw, checked before anything heavy is imported.

A build that changes nothing still pays for imports, the cache and the corpus walk. After a build
completes, it leaves a stamp in the cache folder: the corpus's lstat listing (taken before the build
read anything), the hook spool's, the options, code, prices, theme and `dot` it built with, the
cache file and the output folder's manifest as the build left them, what its summary line said,
and the span of build clocks over which no agent's status ages. Any difference, or a stamp that is
missing or unreadable, means the whole build runs and decides again. Every process that opens the
cache for writing deletes the stamp first, so it never outlives a build that changed something.

`agenthropic build` asks before its command line is even parsed (`answer`): when the words of
the command line, the folder it runs in and the environment variables its options are resolved
with are those of the build that left the stamp, the stamp's own record of the resolved options is
what this build would resolve. Otherwise it asks once the options are parsed (`unchanged`). Either
way the check imports `os`, `stat`, `sys` and `time` and nothing else: the stamp holds listings,
not digests (hashlib, json, dataclasses and pathlib each cost more to import than the whole check).
When the stamp no longer holds for the same command line, the build that follows will walk the
folders just listed, read its output folder's manifest and keep most of the files it published:
`answer` starts a process that does the three meanwhile (`look_aside`), then renders the build's
new Markdown texts.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from agenthropic_site import adopt_code_identity, code_identity
from agenthropic_site.digits import whole_number
from agenthropic_site.places import (
    CACHE_FILES, MANIFEST_HEADER, MANIFEST_NAME, MARKER, SPOOL_FOLDER, STATE, UNKNOWN, default_cache_dir, dot_on_path, home_folder,
)

TYPE_CHECKING = False  # `typing` alone takes longer to import than the whole check (mypy reads the name)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from agenthropic_site.config import BuildConfig
    from agenthropic_site.corpus.walk import Walked
    from agenthropic_site.pipeline.result import BuildResult, NoChange
    from agenthropic_site.render.manifest import Published

STAMP_FILE = "unchanged.stamp"
STAMP_HEADER = b"agenthropic-stamp 2\n"
FORMER_STAMP_FILE = "unchanged.json"  # the JSON stamp earlier versions left: deleted with the stamp, never read
# The corpus walk looks at most this many folder levels below a session folder (--max-depth);
# root/project/session is three more. Deeper folders are listed by their own entry only.
LEVELS_ABOVE_SESSIONS = 3
THEME_LEVELS = 16  # a theme's templates/ and static/ folders, as deep as anyone nests them
# The environment variables a build's options are resolved with (commands/options.py build_config).
RESOLVED_FROM = ("AGENTHROPIC_CACHE_DIR", "CLAUDE_CONFIG_DIR", "HOME", "SOURCE_DATE_EPOCH", "XDG_CACHE_HOME")
# A NoChange's counts, as the summary line says them.
COUNTS = ("sessions", "reused", "failed", "excluded", "skips")
EARLIEST_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z in milliseconds since the epoch: the earliest cut-off (wall_cutoff)
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# How long a build waits for an answer of the process aside (look_aside); it has had the build's
# imports to walk in, and its reads and views to look at the output folder in. Without an answer the
# build does the work itself, and waits for no later one.
ASIDE_WAIT_SECONDS = 10.0
# The process aside renders the build's Markdown texts up to this many bytes, having imported
# markdown-it while the build read (21-31 ms of a one-append build of 500 sessions); a build that
# renders more imports it itself.
ASIDE_TEXT_BYTES = 1 << 18
LINK = "\0link"  # a source file or folder of the package that is a symbolic link, in the code's listing (_code)

# What the check that runs before the parser measured, for the one after it (the same process,
# moments later): a build that runs takes it as its state before.
_measured_early: list[tuple[dict[str, str], dict[str, str]]] = []
# The corpus folders the last listing of the corpus listed, by path, each entry lstat-ed on the way
# (an os.DirEntry keeps its lstat): the walk of the build that follows takes them (corpus_folders)
# instead of listing and lstat-ing the corpus a second time (~30 ms at 500 sessions).
_corpus_listed: dict[str, list[os.DirEntry[str]]] = {}
_corpus_root: list[str] = []
# The process that walks the corpus and looks at the output folder while this one imports (look_aside).
_aside: list[_Aside] = []
# What the stamp this process read last listed of the package's source files, and the code identity
# the build that left it computed from their bytes: a build that lists the same files takes that
# identity (before_build) instead of reading and hashing every source file again (5 ms a build).
_stamped_code: list[tuple[str, str]] = []


def forget(cache_folder: os.PathLike[str] | str) -> None:
    """Delete the stamp: the cache is about to change."""
    for name in (STAMP_FILE, FORMER_STAMP_FILE):
        try:
            os.unlink(os.path.join(cache_folder, name))
        except OSError:
            pass  # none there, or no cache folder yet (opening the cache says what is wrong with it)


def invocation(words: Sequence[str], environ: Mapping[str, str], cwd: str) -> str:
    """Return what a command line's options are resolved from: its words, its folder and the variables that name folders or the clock."""
    names = (f"{name}={environ[name]}" if name in environ else name for name in RESOLVED_FROM)
    return "\0".join((cwd, *names, "", *words))


def scope_of(config: BuildConfig) -> dict[str, str]:
    """Return what the checks look at of a build's resolved options, as text a stamp keeps."""
    from agenthropic_site.render.theme import theme_dirs

    return {
        "corpus": os.fspath(config.corpus),
        "out": os.fspath(config.out),
        "cache": os.fspath(config.cache),
        "theme": "" if config.theme is None else os.fspath(config.theme),
        "themes": "\0".join(os.fspath(folder) for folder in theme_dirs(config.theme)),
        "pricing": "" if config.pricing is None else os.fspath(config.pricing),
        "options": f"{config.max_file_bytes}|{config.max_depth}|{config.watchdog_minutes}|{config.redact}|{config.tz}",
        "max_depth": str(config.max_depth),
        "watchdog_minutes": str(config.watchdog_minutes),
        "quiet": str(config.quiet),
    }


def before_build(config: BuildConfig, measured: dict[str, str] | None = None) -> dict[str, str]:
    """Return the state of the build's inputs before it reads any (a change made during the build is then seen next time).

    `measured` holds what the no-change check already measured on its way (just before the build).
    """
    scope = scope_of(config)
    state = dict(measured or {})
    for key, measure in BEFORE:
        if key not in state:
            state[key] = measure(scope)
    if _stamped_code and _stamped_code[0][0] == state["code"] and LINK not in state["code"]:
        adopt_code_identity(_stamped_code[0][1])
    _stamped_code.clear()
    return state


def record(config: BuildConfig, before: dict[str, str], facts: NoChange) -> None:
    """Write the stamp of a build that completed (its cache closed, its output published)."""
    # Its files are not looked at one by one here: the build has just published them, and the
    # check that reads the stamp looks at every one before it trusts it.
    scope = scope_of(config)
    after = _after(scope, check_files=False)
    if after is None:
        return
    fields = {**before, **after, **{key: str(getattr(facts, key)) for key in COUNTS}, "code_identity": code_identity()}
    for key in ("stale_after", "fresh_until"):
        value = getattr(facts, key)
        if value is not None:
            fields[key] = value
    _write(config, scope, fields)


def _write(config: BuildConfig, scope: Mapping[str, str], fields: dict[str, str]) -> None:
    """Write a stamp of these measures and counts for the command line and options of `config` (`scope` is scope_of(config))."""
    from agenthropic_site.config import stale_cutoff

    fields = {key: value for key, value in fields.items() if not key.startswith("scope.") and key != "invocation"}
    fields.update({f"scope.{key}": value for key, value in scope.items()})
    # A build whose clock is the wall clock is answered at the clock of the check; one given
    # --now or SOURCE_DATE_EPOCH (part of its command line) at the clock it ran at.
    fields["clock"] = "wall" if config.live_clock else "fixed"
    fields["cutoff"] = stale_cutoff(config.now, config.watchdog_minutes)
    if config.invocation is not None:
        fields["invocation"] = config.invocation
    temporary = os.path.join(config.cache, f".{STAMP_FILE}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(_encode(fields))
        os.replace(temporary, os.path.join(config.cache, STAMP_FILE))
    except OSError:
        pass  # without a stamp the next build only takes longer


def read(cache_folder: os.PathLike[str] | str) -> dict[str, str] | None:
    """Return the fields of the stamp in a cache folder; None when there is none or it is not one a build wrote."""
    try:
        with open(os.path.join(cache_folder, STAMP_FILE), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not data.startswith(STAMP_HEADER):
        return None
    fields: dict[str, str] = {}
    at = len(STAMP_HEADER)
    while at < len(data):
        end = data.find(b"\n", at)
        key, _, size = data[at:end].decode("ascii", "replace").partition(" ")
        length = whole_number(size) if end >= 0 else None
        if length is None:
            return None
        start = end + 1
        stop = start + length
        if data[stop:stop + 1] != b"\n":
            return None
        fields[key] = data[start:stop].decode("utf-8", "surrogateescape")
        at = stop + 1
    return fields if all(whole_number(fields.get(key, "")) is not None for key in (*COUNTS, "pages")) else None


def _encode(fields: Mapping[str, str]) -> bytes:
    # Each field: "key length\n", its value's bytes, "\n" (values hold newlines and NULs).
    parts = [STAMP_HEADER]
    for key, value in fields.items():
        raw = value.encode("utf-8", "surrogateescape")
        parts.append(f"{key} {len(raw)}\n".encode() + raw + b"\n")
    return b"".join(parts)


def unchanged(config: BuildConfig) -> tuple[BuildResult | None, dict[str, str]]:
    """Return what a build would report when nothing changed since the stamp (else None), and what was measured on the way.

    The likeliest changes are looked at first and the check stops at the first difference; the
    build that then runs takes what was measured as its own state before it (before_build).
    """
    from agenthropic_site.config import stale_cutoff

    scope = scope_of(config)
    measured = dict(_measured_early[0][1]) if _measured_early and _measured_early[0][0] == scope else {}
    body = read(config.cache)
    _remember_code(body)
    if body is None or not _holds(body, scope, stale_cutoff(config.now, config.watchdog_minutes), measured):
        return None, measured
    if config.invocation is not None and body.get("invocation") != config.invocation:
        _write(config, scope, body)  # the next run of this command line is answered before its options are parsed
    from agenthropic_site.pipeline.result import BuildResult

    sessions, reused, failed, excluded, skips = (int(body[key]) for key in COUNTS)
    return BuildResult(sessions=sessions, reused=reused, failed=failed, excluded=excluded, skips=skips, pages_unchanged=int(body["pages"])), measured


def answer(words: Sequence[str], environ: Mapping[str, str], cwd: str) -> tuple[dict[str, int], str, bool] | None:
    """Return what `agenthropic build` with these words would say (its counts, output folder and -q) when its stamp still holds, else None."""
    body = read(_cache_named(words) or default_cache_dir(environ, home_folder(environ)))
    if body is None or body.get("invocation") != invocation(words, environ, cwd):
        return None
    _remember_code(body)
    scope = {key[len("scope."):]: value for key, value in body.items() if key.startswith("scope.")}
    measured: dict[str, str] = {}
    _measured_early[:] = [(scope, measured)]
    cutoff = body.get("cutoff", "") if body.get("clock") == "fixed" else wall_cutoff(time.time_ns(), int(scope.get("watchdog_minutes", "0")))
    if not _holds(body, scope, cutoff, measured):
        limits = scope.get("options", "").split("|")  # max file bytes, max depth, ... (scope_of)
        max_bytes, max_depth = (whole_number(limit) for limit in limits[:2]) if len(limits) > 1 else (None, None)
        look_aside(scope["out"], (_corpus_root[0], max_bytes, max_depth) if _corpus_root and max_bytes is not None and max_depth is not None else None)
        return None
    counts = {key: int(body[key]) for key in COUNTS}
    return {**counts, "parsed": 0, "pages_written": 0, "pages_unchanged": int(body["pages"]), "files_removed": 0}, scope["out"], scope["quiet"] == "True"


def _remember_code(body: Mapping[str, str] | None) -> None:
    """Keep what a stamp says of the package's source files and the identity computed from them, for the build that may follow."""
    code, identity = (None, None) if body is None else (body.get("code"), body.get("code_identity"))
    _stamped_code[:] = [] if code is None or identity is None else [(code, identity)]


def look_aside(out: str, walk: tuple[str, int, int] | None = None) -> None:
    """Start a process that walks the corpus, reads the output folder's manifest and looks at every file it lists, while this one imports.

    The build that follows walks the corpus folders the check just listed (19 ms at 500
    sessions), parses the output folder's manifest (7 ms for its 4,480 lines), renders what
    changed and keeps every other file the last build published once it has seen the file is
    still there (4,480 `fstatat` under 1,542 folders, 20 ms): a second core does the three
    meanwhile. `walk` is the real corpus root the listing was taken under and the walk's limits
    (max file bytes, max depth); None, no walk. The build takes the answers with `kept_walk`,
    `kept_manifest` and `kept_missing`, and does the work itself without them. Then the process
    aside imports markdown-it and renders the Markdown texts the build sends it (`kept_markdown`),
    up to ASIDE_TEXT_BYTES: a build that renders a few new texts, as an append does, never imports
    markdown-it itself (21-31 ms). Forked by `agenthropic build` before its pipeline is imported:
    no thread, no open cache, nothing to flush; the walk's modules are imported first (the build
    imports them anyway; imported in the process aside, they took it 38–45 ms before it could
    walk), and it only reads and writes its answers until the build stops it (`end_aside`), and
    ends with `os._exit`.
    """
    threading = sys.modules.get("threading")
    if not hasattr(os, "fork") or _aside or (threading is not None and threading.active_count() > 1):
        return  # a process with threads is never forked: a lock one of them holds would stay held in the child
    if cores() < 2:
        return  # on one core the process aside takes its time from the build's (+30 ms at 500 sessions)
    if walk is not None and _corpus_root != [walk[0]]:
        walk = None  # the listing this process took is not of this root
    import pickle  # noqa: F401 - loaded here for the process aside's _pickled

    from agenthropic_site.corpus.walk import walk_folders

    pipes: list[int] = []
    try:
        read, write = os.pipe()
        pipes += (read, write)
        texts, text = os.pipe()
        pipes += (texts, text)
        pid = os.fork()
    except OSError:
        for pipe in pipes:
            os.close(pipe)
        return
    if pid == 0:  # the process aside
        try:
            os.close(read)
            os.close(text)
            _widen(write)
            _send(write, _pickled(lambda: walk_folders(*walk, _corpus_listed)) if walk is not None else b"")
            from pathlib import Path  # the rest, once the walk is answered: it is needed first

            from agenthropic_site.render.folders import missing_answer
            from agenthropic_site.render.manifest import read_manifest

            _send(write, _pickled(lambda: read_manifest(Path(out))))
            _send(write, missing_answer(out, STATE, MANIFEST_NAME))
            from agenthropic_site.render.markdown import serve

            serve(_frames(texts), lambda html: _send(write, html))
        finally:
            os._exit(0)  # whatever happened: nothing of the build's process runs here (no atexit, no flush)
    os.close(write)
    os.close(texts)
    _widen(text)  # the texts it may be asked to render, whole: the build never waits to send one
    _aside[:] = [_Aside(out, pid, read, walk, text)]


def cores() -> int:
    """Return how many processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux: every processor the machine has
        return os.cpu_count() or 1


def _widen(pipe: int) -> None:
    """Let the pipe hold 1 MiB (Linux), so that its writer need not wait for its reader to read what it wrote."""
    try:
        import fcntl

        fcntl.fcntl(pipe, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass  # a smaller pipe: the writer waits for the reader


def _pickled(make: Callable[[], object]) -> bytes:
    """Return what `make` returns, pickled; empty when it fails (the build then does the work itself, and meets the problem)."""
    import pickle

    try:
        return pickle.dumps(make(), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a link out of the corpus, an unreadable folder: the build says so itself
        return b""


def _send(pipe: int, answer: bytes) -> None:
    """Write one answer: its length, a newline and its bytes."""
    said = memoryview(b"%d\n%s" % (len(answer), answer))
    while said:
        said = said[os.write(pipe, said):]


class _Aside:
    """The process aside of this build: what it was asked, and its answers as far as they have been read."""

    def __init__(self, out: str, pid: int, read: int, walk: tuple[str, int, int] | None, text: int) -> None:
        self.out, self.pid, self.read, self.walk, self.text = out, pid, read, walk, text
        self.owner = os.getpid()  # a worker forked from the build shares the pipes, and must not use them
        self.received = bytearray()
        self.answers: list[bytes] = []
        self.ended = False  # its pipe was closed (or what came through it was not answers): nothing more is read
        self.asked = 0  # the bytes of the texts it was asked to render
        self.missing_taken = False

    def answer(self, index: int) -> bytes | None:
        """Return its answer `index` (WALK, MANIFEST, MISSING, then one a text), waiting for it as long as ASIDE_WAIT_SECONDS; None without one."""
        import select

        deadline = time.monotonic() + ASIDE_WAIT_SECONDS
        try:
            while len(self.answers) <= index and not self.ended:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.read], [], [], left)[0]:
                    self.ended = True  # given up: `end` stops it
                    return None
                chunk = os.read(self.read, 1 << 20)
                self.ended = not chunk
                self.received += chunk
                whole, sound = _whole_frames(self.received)
                self.answers += whole
                self.ended = self.ended or not sound
        except OSError:
            self.ended = True
            return None
        return self.answers[index] if index < len(self.answers) else None

    def render(self, text: str) -> str | None:
        """Return the HTML of one Markdown text as the process aside renders it; None when it cannot (the build renders it)."""
        data = text.encode("utf-8", "surrogatepass")
        if os.getpid() != self.owner or self.ended or len(self.answers) <= MISSING or self.asked + len(data) > ASIDE_TEXT_BYTES:
            return None
        self.asked += len(data)
        try:
            _send(self.text, data)
        except OSError:
            self.ended = True
            return None
        index = len(self.answers)
        said = self.answer(index)
        if said is None:  # given up (ended): a reply that comes later is never taken for another text's
            return None
        self.answers[index] = b""
        return said[1:].decode("utf-8", "surrogatepass") if said[:1] == b"=" else None

    def end(self) -> None:
        """Close its pipes, stop it and reap it (a worker forked from the build may hold its pipe of texts open: it would not see that pipe close)."""
        import signal  # here: the stamp's check imports next to nothing

        os.close(self.text)
        os.close(self.read)
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass  # ended and reaped already


def _whole_frames(received: bytearray) -> tuple[list[bytes], bool]:
    """Take each whole frame (its length, a newline and its bytes) off the front of `received`; and whether what came before the rest is frames."""
    frames: list[bytes] = []
    while (newline := received.find(b"\n")) >= 0:
        size = bytes(received[:newline])
        if not size.isdigit():
            return frames, False
        end = newline + 1 + int(size)
        if len(received) < end:
            break
        frames.append(bytes(received[newline + 1 : end]))
        del received[:end]
    return frames, True


def _frames(pipe: int) -> Iterator[bytes]:
    """Yield each frame read from `pipe` until it closes (in the process aside: the texts the build asks it to render)."""
    received = bytearray()
    while chunk := os.read(pipe, 1 << 20):
        received += chunk
        whole, sound = _whole_frames(received)
        yield from whole
        if not sound:
            return


WALK, MANIFEST, MISSING = range(3)  # the process aside's answers, in the order it gives them


def kept_walk(root: str, max_file_bytes: int, max_depth: int) -> Walked | None:
    """Return the walk of the corpus folders the process aside made, when it walked this root with these limits; else None (the build walks)."""
    if not _aside or _aside[0].walk != (root, max_file_bytes, max_depth):
        return None
    _aside[0].walk = None  # taken once: a build that walks again (after a repair) lists the corpus again
    said = _aside[0].answer(WALK)
    if not said:
        return None
    _aside[0].answers[WALK] = b""  # its memory is the walk's now
    import pickle

    # Bytes from the process this one forked, through the pipe the two alone hold.
    walked: Walked = pickle.loads(said)
    return walked


def kept_manifest(out: os.PathLike[str] | str) -> Published | None:
    """Return the output folder's manifest as the process aside read it, for `read_manifest` to take when the bytes it reads are the same; else None."""
    if not _aside or os.fspath(out) != _aside[0].out:
        return None
    said = _aside[0].answer(MANIFEST)
    if not said:
        return None
    import pickle

    published: Published = pickle.loads(said)  # from the process this one forked, as the walk
    return published


def kept_missing(out: os.PathLike[str] | str, manifest_digest: str | None) -> frozenset[str] | None:
    """Return the published files the process aside found missing, when it looked at this output folder and this manifest; else None."""
    if not _aside or _aside[0].missing_taken:
        return None
    aside = _aside[0]
    aside.missing_taken = True  # taken once: a build that renders again (after a repair) looks for itself
    said = aside.answer(MISSING)
    lines = (said or b"").decode("ascii", "replace").split("\n")
    try:
        folder = os.stat(out)
    except OSError:
        return None
    # The same folder (not only the same path) and the same manifest: else the build looks for itself.
    if not said or os.fspath(out) != aside.out or lines[0].split(" ") != [str(folder.st_dev), str(folder.st_ino), manifest_digest or ""]:
        return None
    return frozenset(lines[1:])


def kept_markdown() -> Callable[[str], str | None] | None:
    """Return what has the process aside render a Markdown text (None when it cannot), when there is one that answered; else None."""
    return _aside[0].render if _aside and len(_aside[0].answers) > MISSING else None


def end_aside() -> None:
    """Stop and reap the process aside, if this process started one."""
    while _aside:
        _aside.pop().end()


def wall_cutoff(now_ns: int, watchdog_minutes: int) -> str:
    """Return config.stale_cutoff's instant for a clock in nanoseconds since the epoch (without importing datetime)."""
    ms = now_ns // 1_000_000 - watchdog_minutes * 60_000
    if ms < EARLIEST_MS:
        return "0001-01-01T00:00:00.000Z"  # config.EARLIEST_CUTOFF: the span reaches past the year 1
    year, month, day, hour, minute, second = time.gmtime(ms // 1000)[:6]
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{ms % 1000:03d}Z"


def _cache_named(words: Sequence[str]) -> str | None:
    # The last --cache wins, as with argparse; an abbreviated option is not looked for: the stamp
    # of the folder guessed then names another command line, and the parser decides.
    named = None
    for at, word in enumerate(words):
        if word == "--cache" and at + 1 < len(words):
            named = words[at + 1]
        elif word.startswith("--cache="):
            named = word[len("--cache="):]
    return named


def _holds(body: Mapping[str, str], scope: Mapping[str, str], cutoff: str, measured: dict[str, str]) -> bool:
    """Tell whether the stamp still holds at this clock cut-off, measuring into `measured` on the way."""
    stale_after, fresh_until = body.get("stale_after"), body.get("fresh_until")
    if (stale_after is not None and cutoff <= stale_after) or (fresh_until is not None and cutoff > fresh_until):
        return False  # some agent's status ages (or un-ages) at this clock
    for key, measure in BEFORE:
        if key not in measured:
            measured[key] = measure(scope)
        if body.get(key) != measured[key]:
            return False
    after = _after(scope)
    return after is not None and all(body.get(key) == value for key, value in after.items())


def _after(scope: Mapping[str, str], check_files: bool = True) -> dict[str, str] | None:
    """Return the state the build left: the cache file and the output folder's published files; None when they cannot be read.

    With `check_files`, None too when a published file is no longer a regular file, or was changed
    after the manifest was written (render/folders.py `missing_files`).
    """
    out = scope["out"]
    manifest = os.path.join(out, STATE, MANIFEST_NAME)
    try:
        # The manifest's lstat (any rewrite changes its ctime), and the folder's claim: without it a build refuses the folder.
        written = os.lstat(manifest)
        claim = f"{_stat_line(written)}|{_stat_line(os.lstat(os.path.join(out, MARKER)))}"
        with open(manifest, "rb") as handle:
            data = handle.read()
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
            found = os.lstat(os.path.join(out, rel))
        except OSError:
            return None
        if not regular(found.st_mode) or found.st_ctime_ns > written.st_ctime_ns:
            return None
    cache = []
    for name in CACHE_FILES:
        try:
            cache.append(f"{name} {_stat_line(os.lstat(os.path.join(scope['cache'], name)))}")
        except FileNotFoundError:
            cache.append(f"{name} -")
        except OSError:
            return None
    return {"output": claim, "pages": str(len(lines) - 1), "cache": "\n".join(cache)}


def _inputs(scope: Mapping[str, str]) -> str:
    """List what the build is told and runs with: options, prices, theme, Graphviz (the code is listed apart, `_code`)."""
    parts = [
        *(os.path.realpath(scope[key]) if scope[key] else "" for key in ("corpus", "out", "cache", "theme", "pricing")),
        scope["options"],
        # Who builds: another user (or group) may be refused folders this one could list.
        f"{os.geteuid()}|{os.getegid()}|{sorted(os.getgroups())}" if hasattr(os, "geteuid") else "",
        str(dot_on_path()),
        *(_listing(folder, THEME_LEVELS) for folder in scope["themes"].split("\0")),
    ]
    if scope["pricing"]:
        try:
            with open(scope["pricing"], "rb") as handle:
                parts.append(handle.read().decode("utf-8", "surrogateescape"))
        except OSError:
            parts.append("unreadable")
    return "\0".join(parts)


def _code(scope: Mapping[str, str] | None = None) -> str:
    """List the package's source files (lstat): an upgrade or an edit of any of them changes a line; a link is named as one."""
    # Their lstat, not their bytes: code_identity hashes the bytes for the cache; this check only
    # has to see that something changed, and a rewrite changes a file's ctime. A link's lstat does
    # not change with what it points to (code_identity reads through it): the listing names it,
    # and a build that lists one computes the identity again.
    lines = []
    for folder, subfolders, files in os.walk(PACKAGE_DIR):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        lines += [f"{os.path.join(folder, name)}{LINK}" for name in subfolders if os.path.islink(os.path.join(folder, name))]
        for name in sorted(files):
            if name.endswith((".py", ".json")):
                path = os.path.join(folder, name)
                st = os.lstat(path)
                lines.append(f"{path}{LINK}" if stat.S_ISLNK(st.st_mode) else f"{path}\0{_stat_line(st)}")
    return "\n".join(lines)


def _stat_line(st: os.stat_result) -> str:
    # ctime and links too: a chmod that makes a file readable, or a hard link, changes what the walk decides.
    return f"{st.st_mode:o} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_nlink}"


def corpus_folders(root: str) -> dict[str, list[os.DirEntry[str]]]:
    """Hand over the folders the last corpus listing of this process listed under `root` (path -> entries), once; {} for none.

    They are the folders the build's state before was measured from: the walk sees the corpus
    as that state says, and a change made since is seen by the next build.
    """
    listed = dict(_corpus_listed) if _corpus_root == [root] else {}
    _corpus_listed.clear()
    _corpus_root.clear()
    return listed


def _listing(root: str, levels: int, keep: dict[str, list[os.DirEntry[str]]] | None = None) -> str:
    """List every entry under `root` (lstat, never through a link) down to `levels` folders deep; keep each folder's entries in `keep`."""
    try:
        lines = [_stat_line(os.lstat(root))]
    except OSError as exc:
        return f"absent:{exc.errno}"
    folders = [("", 1)]
    is_folder = stat.S_ISDIR
    while folders:
        rel, depth = folders.pop()
        folder = os.path.join(root, rel) if rel else root
        try:
            # In the folder's own order: should it change with nothing else changing, the whole build
            # runs once more; it never hides a change.
            with os.scandir(folder) as listed:
                entries = list(listed)
        except OSError as exc:
            lines.append(f"{rel}\0unlisted {exc.errno}")
            continue
        if keep is not None:
            keep[folder] = entries
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
    return "\n".join(lines)


def _corpus(scope: Mapping[str, str]) -> str:
    root = os.path.realpath(scope["corpus"])
    _corpus_listed.clear()
    _corpus_root[:] = [root]
    return _listing(root, int(scope["max_depth"]) + LEVELS_ABOVE_SESSIONS, _corpus_listed)


def _spool(scope: Mapping[str, str]) -> str:
    return _listing(os.path.join(scope["cache"], SPOOL_FOLDER), 1)


# What a build's state before it is made of, the likeliest to change first (the check stops at a difference).
BEFORE: tuple[tuple[str, Callable[[Mapping[str, str]], str]], ...] = (
    ("corpus", _corpus), ("spool", _spool), ("inputs", _inputs), ("code", _code),
)
