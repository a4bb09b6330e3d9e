"""Change a corpus at random, step by step, and compare each incremental build with a cold build of the same files.

    .venv/bin/python tests/fuzz/incremental_differential.py --seconds 600 --seed 1 CORPUS [CORPUS ...]

A rebuild must equal a cold build of the same corpus byte for byte, whatever came before it: the
site is what people diff and archive. `agenthropic verify` checks that after one appended line, and
the tests after the changes they name; this runs long random sequences of the changes a user's
folder sees, the way `--watch` and repeated `agenthropic build` runs see them. The corpora are
copied into a work folder (their project folders side by side) and each step makes one change:

- a line appended, copied from the same transcript or from any other (a request another session
  holds, a replay), sometimes only its first bytes (a line still being written), completed later;
- a transcript cut back to an earlier line, a digit changed in place at the same length (now and
  then with its modification time set back), its time touched;
- a text changed in a JSON file beside the transcripts (an agent's .meta.json, a sessions-index.json);
- a hook event spooled for a session (the cold build reads the same spool);
- a transcript or such a file removed and later put back, an agent copied under a new id (a new
  agent of its session), a session copied under a new id (a replay of it), a session removed;
- now and then, besides, a file of the live site deleted or changed (the next build writes it
  again as it was), or the options of both builds changed: the clock moved on (statuses age), another --tz, --redact.

After each change the live site is built again on its own cache (in this process, as `--watch`
does, or in a new process, as a run of `agenthropic build`, drawn at random; one or two jobs), a cold
build of the same files is made in a new folder, and the two sites and exit statuses are compared.
With `--watch` the live site is kept instead by a real `agenthropic build --watch` process, started
again when the options change; now and then a second change follows the first within 1.5 s, while
the pass the first started may be running. A step waits until two passes have ended after its last
change (the second started after it; each pass writes the cache's stamp), and only the sites are
compared (a watch has no exit status a pass).
Each difference is printed with the step and the changes that led to it, then the live site starts
again from the cold one; the exit status is then 1. `--seed S --steps N` draws the same steps again,
and `--keep DIR` stops at the first difference, leaving the corpus and both builds in DIR.
`--keep-sessions` neither removes nor copies a session (nor removes a main transcript), and
`--long-share P` sends that share of the appends (default 0.25) to one of the three longest
transcripts: a run meant for one large session keeps it, and appends to its main transcript often.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' own helpers

from agenthropic_site.audit.archive import read_site  # noqa: E402
from agenthropic_site.ids import SESSION_ID_RE  # noqa: E402
from agenthropic_site.live.settings import HOOK_EVENTS  # noqa: E402
from agenthropic_site.live.spool import spool_path  # noqa: E402
from agenthropic_site.cli import main as cli_main  # noqa: E402
from agenthropic_site.pipeline.stamp import STAMP_FILE  # noqa: E402
from conftest import DEMO_NOW, build_subprocess, let_children_stop_on_sigint, stop_with_sigint  # noqa: E402

SESSION_ID_CHARS = "0123456789abcdef"
# How long a step waits for a watch's two passes before it says the watch stopped building.
SETTLE_SECONDS = 600.0


@dataclasses.dataclass
class Tally:
    """What a run found: steps compared and each difference said in a line."""

    compared: int = 0
    different: list[str] = field(default_factory=list)


@dataclasses.dataclass
class Corpus:
    """The work copy of the corpora, with what the changes keep between steps."""

    root: Path
    rng: random.Random
    removed: dict[Path, bytes] = field(default_factory=dict)  # files taken away, to put back
    partial: dict[Path, bytes] = field(default_factory=dict)  # the rest of a line whose first bytes were appended
    hook_env: dict[str, str] = field(default_factory=dict)  # where `agenthropic hook` spools for the live build
    keep_sessions: bool = False  # no session removed or copied, no main transcript removed
    long_share: float = 0.25  # of the appends, those that go to one of the three longest transcripts

    def transcripts(self) -> list[Path]:
        """Return every transcript of the corpus, in path order."""
        return sorted(path for path in self.root.rglob("*.jsonl") if path.is_file())

    def sidecars(self) -> list[Path]:
        """Return the JSON files beside transcripts: agents' .meta.json, a project's sessions-index.json."""
        return sorted(path for path in self.root.rglob("*.json") if path.is_file())

    def main_files(self) -> list[Path]:
        """Return the main transcripts: the .jsonl files named by a session id straight under a project folder."""
        return [path for path in self.transcripts() if path.parent.parent == self.root and SESSION_ID_RE.match(path.stem)]

    def lines_of(self, path: Path) -> list[bytes]:
        """Return a transcript's complete lines, each with its newline."""
        return [line + b"\n" for line in path.read_bytes().split(b"\n")[:-1] if line.strip()]

    def change(self) -> str:
        """Make one random change; return what it was."""
        if not self.transcripts():
            raise SystemExit("no transcript is left to change")
        while True:
            kind = self.rng.choice(CHANGES)
            said = kind(self)
            if said is not None:
                return said

    def rel(self, path: Path) -> str:
        """Name a corpus path from the corpus root."""
        return path.relative_to(self.root).as_posix()


def _append_line(corpus: Corpus) -> str | None:
    """Append a whole line copied from this transcript or another one; now and then only its first bytes."""
    files = [path for path in corpus.transcripts() if path not in corpus.partial]
    if not files:
        return None
    target = corpus.rng.choice(files)
    if corpus.rng.random() < corpus.long_share:
        # One of the longest: a transcript of many pages, whose layout and search rows a rebuild carries on.
        target = corpus.rng.choice(sorted(files, key=lambda path: (-path.stat().st_size, path))[:3])
    source = target if corpus.rng.random() < 0.6 else corpus.rng.choice(files)
    lines = corpus.lines_of(source)
    if not lines or not target.read_bytes().endswith(b"\n"):
        return None
    line = corpus.rng.choice(lines)
    if corpus.rng.random() < 0.2 and len(line) > 2:
        cut = corpus.rng.randrange(1, len(line) - 1)
        with target.open("ab") as handle:
            handle.write(line[:cut])
        corpus.partial[target] = line[cut:]
        return f"appended the first {cut} bytes of a line of {corpus.rel(source)} to {corpus.rel(target)}"
    with target.open("ab") as handle:
        handle.write(line)
    return f"appended a line of {corpus.rel(source)} to {corpus.rel(target)}"


def _complete_line(corpus: Corpus) -> str | None:
    """Write the rest of a line whose first bytes an earlier step appended."""
    waiting = sorted(path for path in corpus.partial if path.exists())
    if not waiting:
        return None
    target = corpus.rng.choice(waiting)
    with target.open("ab") as handle:
        handle.write(corpus.partial.pop(target))
    return f"completed the line appended to {corpus.rel(target)}"


def _cut_back(corpus: Corpus) -> str | None:
    """Cut a transcript back to one of its earlier line ends (a rewrite, not an append)."""
    files = [path for path in corpus.transcripts() if len(corpus.lines_of(path)) > 1]
    if not files:
        return None
    target = corpus.rng.choice(files)
    lines = corpus.lines_of(target)
    keep = corpus.rng.randrange(1, len(lines))
    target.write_bytes(b"".join(lines[:keep]))
    corpus.partial.pop(target, None)
    return f"cut {corpus.rel(target)} back to {keep} of its {len(lines)} lines"


def _edit_in_place(corpus: Corpus) -> str | None:
    """Change one digit of a transcript to another, keeping its length (a token count, a time)."""
    files = corpus.transcripts()
    target = corpus.rng.choice(files)
    data = bytearray(target.read_bytes())
    digits = [index for index, byte in enumerate(data) if 0x30 <= byte <= 0x39]
    if not digits:
        return None
    where = corpus.rng.choice(digits)
    data[where] = 0x30 + (data[where] - 0x30 + corpus.rng.randrange(1, 10)) % 10
    before = target.stat()
    target.write_bytes(bytes(data))  # in place: the same inode
    if corpus.rng.random() < 0.5:
        # Its modification time set back as well, as `touch -r` or a restoring tool does: only its ctime tells.
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        return f"changed the digit at byte {where} of {corpus.rel(target)}, its time set back"
    return f"changed the digit at byte {where} of {corpus.rel(target)}"


def _edit_sidecar(corpus: Corpus) -> str | None:
    """Change one text of a JSON file beside the transcripts (an agent's description, a session's summary)."""
    files = corpus.sidecars()
    if not files:
        return None
    target = corpus.rng.choice(files)
    try:
        document = json.loads(target.read_bytes())
    except ValueError:
        return None
    texts: list[tuple[Any, Any]] = []  # (container, key) of each string

    def find(node: Any) -> None:
        for key, value in (node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()):
            if isinstance(value, str):
                texts.append((node, key))
            else:
                find(value)

    find(document)
    if not texts:
        return None
    container, key = corpus.rng.choice(texts)
    container[key] += " (edited)"
    target.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return f"edited the text at {key!r} of {corpus.rel(target)}"


def _new_agent(corpus: Corpus) -> str | None:
    """Copy an agent transcript (and its sidecar) beside itself under a new agent id, as a newly spawned agent."""
    agents = [path for path in corpus.transcripts() if path.parent.name == "subagents" and path.name.startswith("agent-")]
    if not agents:
        return None
    source = corpus.rng.choice(agents)
    old_id = source.stem.removeprefix("agent-")
    new_id = "a" + "".join(corpus.rng.choice(SESSION_ID_CHARS) for _ in range(16))
    target = source.with_name(f"agent-{new_id}.jsonl")
    target.write_bytes(source.read_bytes().replace(old_id.encode(), new_id.encode()))
    sidecar = source.with_name(f"agent-{old_id}.meta.json")
    if sidecar.is_file():
        shutil.copyfile(sidecar, source.with_name(f"agent-{new_id}.meta.json"))
    return f"copied agent {corpus.rel(source)} to {target.name}"


def _hook_event(corpus: Corpus) -> str | None:
    """Spool a hook event for a session, as Claude Code's hooks do (`agenthropic hook`, its payload on stdin)."""
    mains = corpus.main_files()
    if not mains or not corpus.hook_env:
        return None
    main = corpus.rng.choice(mains)
    payload: dict[str, str] = {"hook_event_name": corpus.rng.choice(HOOK_EVENTS), "session_id": main.stem}
    if payload["hook_event_name"] == "SubagentStop":
        agents = sorted(path.stem.removeprefix("agent-") for path in main.with_suffix("").glob("subagents/agent-*.jsonl"))
        payload["agent_id"] = corpus.rng.choice([*agents, main.stem, "ghost"])
    subprocess.run([sys.executable, "-m", "agenthropic_site", "hook"], input=json.dumps(payload).encode(), env={**os.environ, **corpus.hook_env},
                   check=True, timeout=60)
    return f"spooled {payload}"


def _touch(corpus: Corpus) -> str | None:
    """Give a transcript a new modification time, its bytes unchanged."""
    target = corpus.rng.choice(corpus.transcripts())
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    return f"touched {corpus.rel(target)}"


def _remove_file(corpus: Corpus) -> str | None:
    """Take a transcript or a JSON file beside them away (kept, to be put back)."""
    files = corpus.transcripts() + corpus.sidecars()
    if corpus.keep_sessions:
        mains = set(corpus.main_files())
        files = [path for path in files if path not in mains]
    if len(files) < 2:
        return None
    target = corpus.rng.choice(files)
    corpus.removed[target] = target.read_bytes()
    target.unlink()
    corpus.partial.pop(target, None)
    return f"removed {corpus.rel(target)}"


def _put_back(corpus: Corpus) -> str | None:
    """Put back a file an earlier step took away."""
    if not corpus.removed:
        return None
    target = corpus.rng.choice(sorted(corpus.removed))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(corpus.removed.pop(target))
    return f"put back {corpus.rel(target)}"


def _copy_session(corpus: Corpus) -> str | None:
    """Copy a session's main transcript and its folder under a new id, in its project or another (a replay of it)."""
    mains = corpus.main_files()
    if not mains or corpus.keep_sessions:
        return None
    source = corpus.rng.choice(mains)
    projects = sorted(path for path in corpus.root.iterdir() if path.is_dir())
    project = corpus.rng.choice(projects)
    new_id = "".join(corpus.rng.choice(SESSION_ID_CHARS) for _ in range(8)) + source.stem[8:]
    target = project / f"{new_id}.jsonl"
    if target.exists():
        return None
    shutil.copyfile(source, target)
    folder = source.with_suffix("")
    if folder.is_dir():
        shutil.copytree(folder, project / new_id)
    return f"copied session {corpus.rel(source)} to {corpus.rel(target)}"


def _remove_session(corpus: Corpus) -> str | None:
    """Remove a session: its main transcript and its folder."""
    mains = corpus.main_files()
    if len(mains) < 2 or corpus.keep_sessions:
        return None
    source = corpus.rng.choice(mains)
    source.unlink()
    shutil.rmtree(source.with_suffix(""), ignore_errors=True)
    for path in [*corpus.partial, *corpus.removed]:
        if path == source or source.with_suffix("") in path.parents:
            corpus.partial.pop(path, None)
            corpus.removed.pop(path, None)
    return f"removed session {corpus.rel(source)}"


# Appends are what a corpus mostly sees: they come more often.
CHANGES = [_append_line] * 6 + [_complete_line] * 2 + [_cut_back, _edit_in_place, _edit_sidecar, _hook_event, _touch, _remove_file, _put_back, _new_agent,
                                                    _copy_session, _remove_session]


def _a_site_file(site: Path, rng: random.Random) -> Path | None:
    """Pick one file a build published in the live site; None when it has none (the cold build it was started again from failed)."""
    # Not the folder's claim (.agenthropic-site) nor the builds' bookkeeping: without them the folder is a user's, left alone.
    files = sorted(path for path in site.rglob("*") if path.is_file() and not path.relative_to(site).parts[0].startswith(".agenthropic"))
    return rng.choice(files) if files else None


def _remove_a_page(site: Path, rng: random.Random) -> str:
    """Delete one file of the live site, as a user tidying the output folder might: the next build writes it again."""
    target = _a_site_file(site, rng)
    if target is None:
        return "found no page to delete in the live site"
    target.unlink()
    return f"deleted {target.relative_to(site).as_posix()} from the live site"


def _edit_a_page(site: Path, rng: random.Random) -> str:
    """Change one file of the live site, as an editor or a `git checkout` there might: the next build writes it back."""
    target = _a_site_file(site, rng)
    if target is None:
        return "found no page to edit in the live site"
    edited = target.read_bytes() + b"\n<!-- edited -->\n"
    written = (site / ".agenthropic" / "manifest").stat().st_ctime_ns
    while True:  # a change within the file system clock's tick of the manifest's writing is not seen (docs/usage.md)
        target.write_bytes(edited)
        if target.stat().st_ctime_ns > written:
            return f"edited {target.relative_to(site).as_posix()} in the live site"


@dataclasses.dataclass
class Options:
    """The options both builds of a step are given: the clock moves on between builds, as it does for users."""

    now: datetime.datetime = datetime.datetime.fromisoformat(DEMO_NOW.replace("Z", "+00:00"))
    tz: str = "UTC"
    redact: bool = False

    def change(self, rng: random.Random) -> str:
        """Move the clock on (a minute to three days), or change the zone, or turn --redact on or off; say which."""
        which = rng.choice(("now", "now", "tz", "redact"))
        if which == "now":
            self.now += datetime.timedelta(minutes=rng.randrange(1, 3 * 24 * 60))
        elif which == "tz":
            self.tz = rng.choice(["UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham"])
        else:
            self.redact = not self.redact
        return f"builds from now on with {' '.join(self.words())}"

    def words(self) -> list[str]:
        """Return the options on a command line."""
        return ["--now", self.now.strftime("%Y-%m-%dT%H:%M:%SZ"), "--tz", self.tz, *(["--redact"] if self.redact else [])]


def build_live(corpus: Path, out: Path, cache: Path, rng: random.Random, options: Options) -> tuple[int, str]:
    """Build the live site again, in this process or a new one, with one or two jobs; return the exit status and how it ran."""
    jobs = str(rng.choice((1, 2)))
    if rng.random() < 0.5:
        code = cli_main(["build", "--corpus", str(corpus), "--out", str(out), "--cache", str(cache), "-q", "--jobs", jobs, *options.words()])
        return code, f"in this process, --jobs {jobs}"
    done = build_subprocess(corpus, out, cache, options=("-q", "--jobs", jobs, *options.words()))  # its --now is the last one given
    return done.returncode, f"in a new process, --jobs {jobs}"


class Watch:
    """A real `agenthropic build --watch` process keeping the live site, its stderr kept in a log."""

    def __init__(self, corpus: Path, out: Path, cache: Path, log: Path) -> None:
        self.command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--corpus", str(corpus), "--out", str(out),
                        "--cache", str(cache), "-q"]
        self.stamp = cache / STAMP_FILE
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, options: Options) -> str:
        """Start the watch with these options and wait for its first build; return how it ran, or what went wrong."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen([*self.command, *options.words()], stdout=subprocess.DEVNULL, stderr=log)
        return self.settle()

    def settle(self) -> str:
        """Wait until two passes have ended from now (the second saw everything done before this call); return how it ran, or what went wrong."""
        assert self.process is not None
        ends, last = 0, self._stamped()
        deadline = time.monotonic() + SETTLE_SECONDS
        while ends < 2:
            if self.process.poll() is not None:
                return f"by --watch, which ended with status {self.process.returncode}: {self._tail()}"
            if time.monotonic() > deadline:
                return f"by --watch, which wrote no stamp for {SETTLE_SECONDS:.0f} s: {self._tail()}"
            time.sleep(0.05)
            now = self._stamped()
            if now != last:
                ends, last = ends + 1, now
        return "by --watch"

    def stop(self) -> str | None:
        """Stop the watch as Ctrl-C would; return what went wrong, if it did not end cleanly."""
        if self.process is None:
            return None
        try:
            code, self.process = stop_with_sigint(self.process), None
        except subprocess.TimeoutExpired as exc:
            self.process = None  # killed by stop_with_sigint
            return f"--watch did not end within {exc.timeout:.0f} s of Ctrl-C and was killed: {self._tail()}"
        return None if code == 0 else f"--watch ended with status {code} on Ctrl-C: {self._tail()}"

    def _stamped(self) -> tuple[int, int, int] | None:
        """Return the identity of the cache's stamp, which each completed pass writes anew."""
        try:
            stat = self.stamp.stat()
        except OSError:
            return None
        return stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns

    def _tail(self) -> str:
        lines = self.log.read_text(errors="replace").splitlines()
        return " | ".join(lines[-5:]) or "nothing on stderr"


def compare(corpora: list[Path], work: Path, seconds: float, seed: int, steps: int | None = None, keep: bool = False,
            watching: bool = False, keep_sessions: bool = False, long_share: float = 0.25) -> Tally:
    """Run steps on a copy of `corpora` in `work` until `seconds` have passed or `steps` were run.

    `keep`: or until the first difference, left as it is. `watching`: the live site is kept by `agenthropic build --watch`.
    `keep_sessions` and `long_share`: as the Corpus has them.
    """
    watch = Watch(work / "corpus", work / "live" / "site", work / "live" / "cache", work / "watch.log") if watching else None
    try:
        tally = _steps(corpora, work, seconds, seed, steps, keep, watch, keep_sessions, long_share)
    finally:
        stopped = watch.stop() if watch is not None else None
    if stopped is not None:
        tally.different.append(f"at the end: {stopped}")
    return tally


def _steps(corpora: list[Path], work: Path, seconds: float, seed: int, steps: int | None, keep: bool, watch: Watch | None,
           keep_sessions: bool, long_share: float) -> Tally:
    """Run the steps `compare` describes, the live site built by `watch` when there is one."""
    root = work / "corpus"
    for source in corpora:
        for project in sorted(path for path in source.iterdir() if path.is_dir()):
            shutil.copytree(project, root / project.name, symlinks=True, dirs_exist_ok=True)
    rng = random.Random(seed)
    live_out, live_cache = work / "live" / "site", work / "live" / "cache"
    corpus = Corpus(root, rng, hook_env={"AGENTHROPIC_CACHE_DIR": str(live_cache)}, keep_sessions=keep_sessions, long_share=long_share)
    options = Options()
    tally = Tally()
    if watch is None:
        build_live(root, live_out, live_cache, rng, options)
    elif (how := watch.start(options)) != "by --watch":
        tally.different.append(f"the first build: {how}")
        return tally
    said: list[str] = []
    deadline = time.monotonic() + seconds
    step = 0
    while time.monotonic() < deadline and (steps is None or step < steps):
        step += 1
        said.append(corpus.change())
        if watch is not None and rng.random() < 0.3:
            # A live session writes on while the watch builds: a second change lands during the pass the first started, or just before.
            time.sleep(rng.uniform(0.0, 1.5))
            said.append(corpus.change())
        if rng.random() < 0.05:
            said.append(_remove_a_page(live_out, rng))
        if rng.random() < 0.05:
            said.append(_edit_a_page(live_out, rng))
        restart = rng.random() < 0.1
        if restart:
            said.append(options.change(rng))
        code: int | None
        if watch is None:
            code, how = build_live(root, live_out, live_cache, rng, options)
        else:
            # A watch is started with its options: a user changing them stops it and starts another.
            code, how = None, (watch.stop() or watch.start(options)) if restart else watch.settle()
        cold_out, cold_cache = work / "cold" / "site", work / "cold" / "cache"
        shutil.rmtree(work / "cold", ignore_errors=True)
        spooled = Path(spool_path(corpus.hook_env))
        if spooled.is_file():  # the same hook events, read by a new cache
            cold_spool = Path(spool_path({"AGENTHROPIC_CACHE_DIR": str(cold_cache)}))
            cold_spool.parent.mkdir(parents=True)
            shutil.copyfile(spooled, cold_spool)
        cold = build_subprocess(root, cold_out, cold_cache, options=("-q", *options.words()))
        tally.compared += 1
        live, fresh = read_site(live_out), read_site(cold_out)
        differing = sorted(rel for rel in live.keys() | fresh.keys() if live.get(rel) != fresh.get(rel))
        if differing or (code is not None and code != cold.returncode) or (watch is not None and how != "by --watch"):
            shown = ", ".join(differing[:5]) + (f" and {len(differing) - 5} more" if len(differing) > 5 else "")
            exits = f"; exit {code} against {cold.returncode} cold" if code is not None else ""
            if cold.returncode not in (0, 1):  # the cold build failed: what it said, to act on
                exits += f" ({' | '.join(cold.stderr.strip().splitlines()[-3:]) or 'nothing on stderr'})"
            tally.different.append(f"step {step} (built {how}{exits}): {_files(len(differing))}: {shown}; after: " + "; ".join(said[-8:]))
            if keep:
                break
            # Start again from the cold build, so that the next steps are not judged by this one.
            if watch is not None and (stopped := watch.stop()) is not None:
                tally.different.append(f"step {step}, stopped to start again: {stopped}")
            shutil.rmtree(work / "live")
            shutil.copytree(work / "cold", work / "live", symlinks=True)
            if watch is not None and (how := watch.start(options)) != "by --watch":
                tally.different.append(f"step {step}, started again: {how}")
                break
    return tally


def _files(count: int) -> str:
    return "1 file differs" if count == 1 else f"{count} files differ"


def main(argv: list[str]) -> int:
    """Run the comparison on copies of the corpora named; return 1 when a step differed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpora", nargs="+", type=Path, help="folders laid out as ~/.claude/projects/ (their project folders are copied side by side)")
    parser.add_argument("--seconds", type=float, default=None, help="how long to run (default 60, or until --steps were run)")
    parser.add_argument("--seed", type=int, default=1, help="the seed the steps are drawn from (default 1)")
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps (to draw a reported one again)")
    parser.add_argument("--watch", action="store_true",
                        help="keep the live site with a real `agenthropic build --watch` process (only the sites are compared)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="work in this new folder and stop at the first difference, leaving its corpus, live/ and cold/ builds there")
    parser.add_argument("--keep-sessions", action="store_true",
                        help="never remove or copy a session, nor remove a main transcript (a run on one large session keeps it)")
    parser.add_argument("--long-share", type=float, default=0.25, metavar="P",
                        help="the share of appends that go to one of the three longest transcripts (default 0.25)")
    args = parser.parse_args(argv)
    let_children_stop_on_sigint()  # run from a script in the background, the watches would ignore Ctrl-C
    if not 0 <= args.long_share <= 1:
        parser.error("--long-share is a share: from 0 to 1")
    if args.seconds is None:
        args.seconds = 60.0 if args.steps is None else float("inf")
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        tally = compare(args.corpora, args.keep, args.seconds, args.seed, args.steps, keep=True, watching=args.watch,
                        keep_sessions=args.keep_sessions, long_share=args.long_share)
    else:
        with tempfile.TemporaryDirectory(prefix="incremental-differential-") as folder:
            tally = compare(args.corpora, Path(folder), args.seconds, args.seed, args.steps, watching=args.watch,
                            keep_sessions=args.keep_sessions, long_share=args.long_share)
    for line in tally.different:
        print(line)
    print(f"{tally.compared} steps compared, {len(tally.different)} different")
    return 1 if tally.different else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
