"""Measure agenthropic against claude-code-log on the same generated corpus and print the ratios.

Usage: python bench/compare_claude_code_log.py [--sessions 500] [--seed 7] [--shared] [--runs N] [--ccl-version V] [--no-watch] [--keep]
(`make bench` runs it with the project's venv; `--sessions 100` is a quick check; `--shared` builds the
shared corpora of real transcripts instead; `--runs 5` gives medians of five runs.)

1. Installs claude-code-log with pip into its own venv, bench/.work/ccl-venv/, if it is not there
   (never a project dependency), and prints its version.
2. Generates the scale corpus with `python -m fixtures.generate --sessions N --seed S --out
   bench/.work/scale-N-S` (reused when present) and copies it to a scratch folder per tool
   (bench/.work/ccl-compare-N-S/<tool>/projects), so neither tool writes near the original.
   agenthropic runs from a copy of the working tree's package taken at the start (an edit during
   the run would change the code identity that keys its cache).
3. For each tool, after an unmeasured warm-up build of the demo corpus (bytecode, OS cache), each
   build is its own process: cold (empty cache and output), no change (twice; the faster is
   shown), one append (a new assistant reply on one main transcript, the same file for both
   tools: its last reply with fresh ids, dated after every other record of the corpus, as a live
   session appends). The cold build's peak memory is given twice: the RSS of the largest single
   process (ru_maxrss from wait4) and the PSS summed over the process tree (claude-code-log
   converts projects in worker processes; agenthropic runs Graphviz's `dot`), sampled every
   0.25 s from /proc: reading a process's PSS costs milliseconds, so sampling more often would
   take CPU from the build being measured. CPU time is the process tree's: the larger of wait4's
   (the build and the children it waited for) and the sum of each process's own as last sampled
   (agenthropic's forkserver workers are not children the build waits for). Output bytes are the
   total size of the site each tool wrote; cache bytes are for information.
4. Watch latency, when the tool has a watch mode: starts it on the built scratch site, waits for
   its first build, then 5 times appends a new message (the transcript's last assistant reply
   with fresh ids) to the same transcript and times until the session's page
   (agenthropic: sessions/<id>/index.html; claude-code-log: <project>/session-<id>.html) is
   rewritten; 10 ms polls, 10 s timeout, median of 5.
5. Parse MB/s for agenthropic: bench/parse_throughput.py's measure, best of 3 processes.

claude-code-log runs with its defaults (`--all-projects`, one worker process per CPU; its watch:
one project, default poll and quiet period) with HOME and CLAUDE_CODE_LOG_CACHE_PATH pointing
into its scratch folder, so its SQLite cache (by default inside the projects folder) and anything
it writes under ~ stay there. agenthropic runs on one core, as always. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from build_bench import base_env, package_copy  # bench/ is the running script's folder, so on sys.path

TIMESTAMP_RE = re.compile(rb'"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"')

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "bench" / ".work"
CCL_VENV = WORK / "ccl-venv"
CCL_BIN = CCL_VENV / "bin" / "claude-code-log"
DEMO_CORPUS = REPO / "fixtures" / "corpus"
NOW = "2026-06-01T00:00:00Z"
POLL = 0.01
PSS_EVERY = 0.25
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
WATCH_TIMEOUT = 10.0
WATCH_APPENDS = 5

TARGETS = {  # ratio agenthropic / claude-code-log, issue 18 (issue 8 asked 0.2, 0.5 and 0.3 of the first three)
    "cold": 0.1,
    "nochange": 0.15,
    "append": 0.15,
    "output": 0.4,
    "rss": 0.5,
}


def rel(path: Path) -> str:
    """A path as shown in the output: relative to the repository when it is inside it."""
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------
# one measured process


@dataclass
class Run:
    wall: float
    cpu: float
    maxrss_mb: float  # the largest process of the tree (wait4's ru_maxrss)
    tree_mb: float  # peak of the summed PSS of the process tree, sampled
    code: int
    tree_cpu: float = 0.0  # CPU seconds of the whole process tree (a lower bound, see measured)


def _tree_sample(root: int, cpu_of: dict[int, float]) -> int:
    """Return the proportional set size summed over `root` and its descendants, and note each one's CPU seconds so far in `cpu_of` (Linux /proc; 0 elsewhere).

    PSS, not RSS: a forked child shares its parent's pages until it execs, and shared libraries
    are mapped in every worker; summing RSS would count those pages several times. CPU: the
    process's own user and system time (fields 14 and 15 of /proc/<pid>/stat), so that workers
    a forkserver starts count too (wait4 sees only the processes the build itself waits for).
    """
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            cpu_of[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (after pid and comm)
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def measured(cmd: list[str], env: dict[str, str], cwd: Path, log: Path) -> Run:
    """Run cmd to completion; wall, CPU and peak RSS are this process tree's alone."""
    with log.open("ab") as sink:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
        peak = [0]
        cpu_of: dict[int, float] = {}
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _tree_sample(proc.pid, cpu_of))
                done.wait(PSS_EVERY)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    # Two lower bounds of the tree's CPU time, the larger kept: wait4's (the root and the children
    # it waited for: claude-code-log's pool), and each process's own as last sampled (agenthropic's
    # forkserver workers are not the build's children to wait for; each may run up to PSS_EVERY after).
    waited = usage.ru_utime + usage.ru_stime
    return Run(wall, waited, usage.ru_maxrss / 1024, peak[0] / 1024, proc.returncode, max(waited, sum(cpu_of.values())))


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()) if root.exists() else 0


def file_count(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# the two tools


class Tool:
    """One tool, with its scratch folder: projects/ (its copy of the corpus), out/, cache/, home/."""

    name = ""
    ok_codes: tuple[int, ...] = (0,)

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.corpus, self.out, self.cache = scratch / "projects", scratch / "out", scratch / "cache"
        self.log = scratch / "log.txt"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.env = base_env(scratch / "home")

    def command(self, corpus: Path, out: Path, cache: Path) -> list[str]:
        raise NotImplementedError

    def env_for(self, cache: Path) -> dict[str, str]:
        return self.env

    @property
    def build(self) -> list[str]:
        return self.command(self.corpus, self.out, self.cache)

    def page(self, project: str, sid: str) -> Path:
        """The file a watch rewrites when the session's transcript grows."""
        raise NotImplementedError

    def watch(self, project: str) -> list[str] | None:
        """The watch command, or None when the tool has no watch mode."""
        return None

    def watch_ready(self, log: str) -> bool:
        """The watch has finished its first build (which had an append to read)."""
        raise NotImplementedError


class Agenthropic(Tool):
    """agenthropic as the working tree is when the run starts.

    The package and its theme are copied to <scratch>/src and run from there (PYTHONPATH): an edit
    to the checkout during the run would otherwise change the code identity that keys the cache,
    and turn a no-change build into a full one.
    """

    name = "agenthropic"
    ok_codes = (0, 1)  # 1: built, with sessions left unpriced

    def __init__(self, scratch: Path) -> None:
        super().__init__(scratch)
        self.env["PYTHONPATH"] = package_copy(scratch, self.env.get("PYTHONPATH"))

    def run_python(self, *args: str) -> str:
        done = subprocess.run([sys.executable, *args], env=self.env, cwd=self.scratch, capture_output=True, text=True)
        return done.stdout.strip()

    def version(self) -> str:
        return self.run_python("-c", "from agenthropic_site import __version__, code_identity; print(code_identity())")

    def command(self, corpus: Path, out: Path, cache: Path) -> list[str]:
        return [sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(corpus), "--out", str(out), "--cache", str(cache),
                "--now", NOW, "-q"]

    def page(self, project: str, sid: str) -> Path:
        return self.out / "sessions" / sid / "index.html"

    def watch(self, project: str) -> list[str] | None:
        if re.search(r"--watch(?![\w-])", self.run_python("-m", "agenthropic_site", "build", "--help")) is None:  # not --watchdog-minutes
            return None
        return [*self.build[:-1], "--watch"]  # without -q: it prints "updated: ..." after a build that read something

    def watch_ready(self, log: str) -> bool:
        return "updated:" in log


class ClaudeCodeLog(Tool):
    name = "claude-code-log"

    def command(self, corpus: Path, out: Path, cache: Path) -> list[str]:
        return [str(CCL_BIN), "--all-projects", "--projects-dir", str(corpus), "-o", str(out)]

    def env_for(self, cache: Path) -> dict[str, str]:
        # Its default cache is <projects>/claude-code-log-cache.db, inside the corpus: keep it apart.
        return {**self.env, "CLAUDE_CODE_LOG_CACHE_PATH": str(cache / "claude-code-log-cache.db")}

    def page(self, project: str, sid: str) -> Path:
        return self.out / project / f"session-{sid}.html"

    def watch(self, project: str) -> list[str] | None:
        shown = subprocess.run([str(CCL_BIN), "watch", "--help"], capture_output=True, text=True, env=self.env)
        if shown.returncode != 0:
            return None
        # Its default and recommended watch: one project (the one being written to), per-session pages.
        return [str(CCL_BIN), "watch", str(self.corpus / project), "-o", str(self.out / project)]

    def watch_ready(self, log: str) -> bool:
        return "converted in" in log


# ---------------------------------------------------------------------------------------------
# setup


def ensure_ccl(pinned: str | None) -> str:
    """Install claude-code-log into bench/.work/ccl-venv if needed; return its version."""
    WORK.mkdir(parents=True, exist_ok=True)
    if not (CCL_VENV / "bin" / "python").exists():
        python = shutil.which("python3") or sys.executable
        print(f"$ python3 -m venv {rel(CCL_VENV)}", flush=True)
        subprocess.run([python, "-m", "venv", str(CCL_VENV)], check=True)
    version = _ccl_version()
    if version is None or (pinned and version != pinned):
        spec = f"claude-code-log=={pinned}" if pinned else "claude-code-log"
        print(f"$ {rel(CCL_VENV)}/bin/pip install {spec}", flush=True)
        done = subprocess.run([str(CCL_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"pip install failed:\n{done.stdout}{done.stderr}")
        version = _ccl_version()
        if version is None:
            sys.exit("claude-code-log was installed but does not run")
        print(f"  installed claude-code-log {version}", flush=True)
    return version


def _ccl_version() -> str | None:
    if not CCL_BIN.exists():
        return None
    done = subprocess.run([str(CCL_BIN), "--version"], capture_output=True, text=True)
    return done.stdout.strip().split()[-1] if done.returncode == 0 and done.stdout.strip() else None


def ensure_corpus(sessions: int, seed: int) -> Path:
    corpus = WORK / f"scale-{sessions}-{seed}"
    if not corpus.is_dir():
        print(f"$ python -m fixtures.generate --sessions {sessions} --seed {seed} --out {rel(corpus)}", flush=True)
        subprocess.run([sys.executable, "-m", "fixtures.generate", "--sessions", str(sessions), "--seed", str(seed), "--out", str(corpus)],
                       cwd=REPO, check=True, capture_output=True)
    return corpus


def shared_corpus() -> Path:
    """One corpus of every project folder of the shared corpora of real transcripts, copied (never linked) into bench/.work/."""
    shared = os.environ.get("AGENTHROPIC_SHARED_DIR")
    if not shared or not (Path(shared) / "corpora").is_dir():
        sys.exit("--shared needs AGENTHROPIC_SHARED_DIR, the folder that holds corpora/")
    corpus = WORK / "shared-corpora"
    shutil.rmtree(corpus, ignore_errors=True)
    for source in sorted((Path(shared) / "corpora").iterdir()):
        for project in sorted(path for path in source.iterdir() if path.is_dir()) if source.is_dir() else []:
            shutil.copytree(project, corpus / project.name, symlinks=True)
    return corpus


def sessions_of(corpus: Path) -> list[Path]:
    """Every main transcript of a corpus (<project>/<session id>.jsonl)."""
    return sorted(p for p in corpus.glob("*/*.jsonl") if not p.name.startswith("agent-"))


def pick_transcript(corpus: Path) -> Path:
    """One main transcript (<project>/<session id>.jsonl), chosen the same way on every run."""
    mains = sorted(p for p in corpus.glob("*/*.jsonl") if not p.name.startswith("agent-") and p.stat().st_size > 0)
    if not mains:
        sys.exit(f"no main transcript in {corpus}")
    return mains[len(mains) // 2].relative_to(corpus)


def last_complete_line(path: Path) -> bytes:
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    return complete.rstrip(b"\n").rsplit(b"\n", 1)[-1]


def latest_instant(corpus: Path) -> datetime:
    """The latest record time of a corpus: a live session's next message comes after it."""
    latest = max((match.group(1) for path in corpus.rglob("*.jsonl") for match in TIMESTAMP_RE.finditer(path.read_bytes())), default=b"")
    return datetime.fromisoformat(latest.decode().replace("Z", "+00:00")) if latest else datetime(2026, 1, 1, tzinfo=UTC)


def new_message_line(path: Path, at: datetime) -> bytes:
    """A new message for a live session: the transcript's last plain assistant reply, with fresh ids, dated `at`.

    A plain copy of a line is a replay, which both tools may deduplicate into an unchanged page,
    and is dated in the past; a live session's next message is new and later than everything.
    """
    data = path.read_bytes()
    chosen = None
    for raw in reversed(data[: data.rfind(b"\n") + 1].split(b"\n")):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if (isinstance(record, dict) and record.get("type") == "assistant" and record.get("uuid") and not record.get("isSidechain")
                and isinstance(record.get("message"), dict) and record["message"].get("usage")):
            chosen = record
            break
    if chosen is None:
        return last_complete_line(path)
    chosen["parentUuid"], chosen["uuid"] = chosen["uuid"], str(uuid.uuid4())
    chosen["timestamp"] = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
    chosen["message"]["id"] = "msg_bench" + uuid.uuid4().hex
    if "requestId" in chosen:
        chosen["requestId"] = "req_bench" + uuid.uuid4().hex
    return json.dumps(chosen, separators=(",", ":"), ensure_ascii=False).encode()


def append(path: Path, line: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(line + b"\n")


# ---------------------------------------------------------------------------------------------
# scenarios


def build(tool: Tool, what: str) -> Run:
    with tool.log.open("a") as handle:
        handle.write(f"\n=== {what}\n")
    run = measured(tool.build, tool.env_for(tool.cache), tool.scratch, tool.log)
    print(f"  {tool.name:16} {what:12} {run.wall:7.2f} s  cpu {run.cpu:6.2f} s  tree cpu {run.tree_cpu:6.2f} s  rss {run.maxrss_mb:5.0f} MB  "
          f"tree PSS {run.tree_mb:5.0f} MB  exit {run.code}", flush=True)
    if run.code not in tool.ok_codes:
        sys.exit(f"{tool.name} {what} build failed with exit code {run.code}; see {rel(tool.log)}")
    return run


def warm_up(tool: Tool) -> None:
    """Build the demo corpus once, unmeasured: compiles bytecode and loads the tool's files into the OS cache."""
    folder = tool.scratch / "warm-up"
    shutil.copytree(DEMO_CORPUS, folder / "projects", symlinks=True)
    done = subprocess.run(tool.command(folder / "projects", folder / "out", folder / "cache"), env=tool.env_for(folder / "cache"),
                          cwd=tool.scratch, capture_output=True, text=True)
    if done.returncode not in tool.ok_codes:
        sys.exit(f"{tool.name} warm-up build failed with exit code {done.returncode}:\n{done.stdout}{done.stderr}")
    shutil.rmtree(folder)


def scenarios(tool: Tool, transcript: Path) -> dict[str, float]:
    warm_up(tool)
    before = {p.relative_to(tool.corpus) for p in tool.corpus.rglob("*")}
    cold = build(tool, "cold")
    written = sorted(str(p.relative_to(tool.corpus)) for p in tool.corpus.rglob("*") if p.relative_to(tool.corpus) not in before)
    if written:
        print(f"  WARNING: {tool.name} wrote into its corpus copy: {written[:5]}", flush=True)
    nochange = min(build(tool, "no change").wall, build(tool, "no change").wall)
    append(tool.corpus / transcript, new_message_line(tool.corpus / transcript, latest_instant(tool.corpus) + timedelta(seconds=1)))
    one_append = build(tool, "one append")
    return {"cold": cold.wall, "cold_cpu": cold.tree_cpu, "rss": cold.maxrss_mb, "rss_tree": cold.tree_mb, "nochange": nochange,
            "append": one_append.wall, "output": tree_bytes(tool.out) / 1e6, "cache": tree_bytes(tool.cache) / 1e6,
            "output_files": file_count(tool.out)}


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def watch_latency(tool: Tool, transcript: Path) -> list[float] | None:
    """Latencies (s) from an append to the session's page changing, or None without a watch mode.

    The watch starts on the built scratch site; a new message appended just before it starts
    makes its first build read something, so that build's end is visible in its log.
    """
    project, sid = transcript.parts[0], transcript.stem
    command = tool.watch(project)
    if command is None:
        return None
    page, target, log = tool.page(project, sid), tool.corpus / transcript, tool.scratch / "watch.txt"
    moment = latest_instant(tool.corpus)
    append(target, new_message_line(target, moment + timedelta(seconds=1)))
    with log.open("wb") as sink:
        proc = subprocess.Popen(command, env=tool.env_for(tool.cache), cwd=tool.scratch, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
    latencies: list[float] = []
    try:
        deadline = time.monotonic() + 600
        while not tool.watch_ready(log.read_text(errors="replace")):
            if proc.poll() is not None or time.monotonic() > deadline:
                print(f"  {tool.name} watch did not finish its first build; see {rel(log)}", flush=True)
                return []
            time.sleep(0.05)
        time.sleep(1.0)  # let the first build's writes and the watcher's start settle
        for number in range(WATCH_APPENDS):
            line = new_message_line(target, moment + timedelta(seconds=2 + number))
            seen = _mtime(page)
            started = time.perf_counter()
            append(target, line)
            while time.perf_counter() - started < WATCH_TIMEOUT:
                if _mtime(page) != seen:
                    latencies.append(time.perf_counter() - started)
                    break
                time.sleep(POLL)
            else:
                latencies.append(float("inf"))
            # Wait until the page has been quiet for 1.5 s, so the next append is not merged into this one.
            quiet_since, last = time.monotonic(), _mtime(page)
            while time.monotonic() - quiet_since < 1.5:
                if _mtime(page) != last:
                    last, quiet_since = _mtime(page), time.monotonic()
                time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C, as a person stops a watch
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    print(f"  {tool.name:16} watch        " + " ".join(f"{x:.2f}" for x in latencies) + " s", flush=True)
    return latencies


def parse_rate(tool: Agenthropic, corpus: Path, runs: int = 3) -> float:
    """bench/parse_throughput.py's measure (read layer + parser, one core): the best of `runs` processes."""
    script = str(REPO / "bench" / "parse_throughput.py")
    return max(float(json.loads(tool.run_python(script, "--measure", str(corpus)))["mb_per_s"]) for _ in range(runs))


# ---------------------------------------------------------------------------------------------
# report


def checkout() -> str:
    """The commit of the checkout (read-only), for the record; the run measures the working tree."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    except OSError:
        return "?"
    return done.stdout.strip() or "?"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        kb = next(int(row.split()[1]) for row in Path("/proc/meminfo").read_text().splitlines() if row.startswith("MemTotal:"))
        ram = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        ram = ""
    return f"{os.cpu_count()} cores ({cpu}){ram}, {platform.system()}, CPython {platform.python_version()}"


def row(metric: str, ours: float | None, theirs: float | None, fmt: str, target: float | None, ratio_of_runs: float | None = None) -> str:
    """One table row; `ratio_of_runs` (the median of each run's own ratio) stands for ours / theirs when given."""
    def cell(value: float | None) -> str:
        if value == float("inf"):
            return f"none in {WATCH_TIMEOUT:.0f} s"  # a watch that never rewrote the page
        return "n/a" if value is None else format(value, fmt)

    if ours is None or theirs is None or not theirs or float("inf") in (ours, theirs):
        ratio, met = "—", "—" if target is None else "n/a"
    else:
        value = ours / theirs if ratio_of_runs is None else ratio_of_runs
        ratio = f"{value:.2f}"
        met = "—" if target is None else ("yes" if value <= target else "no")
    return f"| {metric} | {cell(ours)} | {cell(theirs)} | {ratio} | {'—' if target is None else f'<= {target}'} | {met} |"


def median(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=500, help="corpus size (default 500, about 200 MB)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--ccl-version", help="install this claude-code-log version instead of the newest")
    parser.add_argument("--no-watch", action="store_true", help="skip the watch latency measurement")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies and sites under bench/.work/")
    parser.add_argument("--runs", type=int, default=1,
                        help="measure the builds N times, each run on fresh copies; the table gives medians, each ratio the median of the runs' own")
    parser.add_argument("--shared", action="store_true",
                        help="the shared corpora of real transcripts ($AGENTHROPIC_SHARED_DIR/corpora, their project folders) instead of a generated one")
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        print("note: the process tree's peak PSS is sampled from /proc and reads 0 here", flush=True)

    ccl_version = ensure_ccl(args.ccl_version)
    corpus = shared_corpus() if args.shared else ensure_corpus(args.sessions, args.seed)
    corpus_mb = tree_bytes(corpus) / 1e6
    transcript = pick_transcript(corpus)
    scratch = WORK / (f"ccl-compare-{corpus.name}" if args.shared else f"ccl-compare-{args.sessions}-{args.seed}")
    shutil.rmtree(scratch, ignore_errors=True)
    ours = Agenthropic(scratch / "agenthropic")
    ours_version = ours.version()
    tools: list[Tool] = [ours, ClaudeCodeLog(scratch / "claude-code-log")]
    shown = {tool.name: " ".join([tool.name, *tool.build[3 if tool.name == "agenthropic" else 1:]]).replace(str(tool.scratch), "<scratch>")
             for tool in tools}
    print(f"agenthropic {ours_version}: {shown['agenthropic']}")
    print(f"claude-code-log {ccl_version}: {shown['claude-code-log']}  (CLAUDE_CODE_LOG_CACHE_PATH=<scratch>/cache/claude-code-log-cache.db)")
    described = f"{len(sessions_of(corpus))} sessions" if args.shared else f"{args.sessions} sessions"
    print(f"corpus {rel(corpus)}: {described}, {corpus_mb:.1f} MB, {file_count(corpus)} files; appended transcript {transcript}", flush=True)

    runs: list[dict[str, dict[str, float]]] = []
    for number in range(1, args.runs + 1):
        if args.runs > 1:
            print(f"run {number} of {args.runs}", flush=True)
        for tool in tools:
            for folder in (tool.corpus, tool.out, tool.cache):
                shutil.rmtree(folder, ignore_errors=True)
            tool.cache.mkdir(parents=True)
            shutil.copytree(corpus, tool.corpus, symlinks=True)
        runs.append({tool.name: scenarios(tool, transcript) for tool in tools})
    results = {tool.name: {key: statistics.median(run[tool.name][key] for run in runs) for key in runs[0][tool.name]} for tool in tools}
    ratios = {key: statistics.median(run["agenthropic"][key] / run["claude-code-log"][key] for run in runs)
              for key in runs[0]["agenthropic"] if all(run["claude-code-log"][key] for run in runs)}
    latency = {tool.name: (None if args.no_watch else watch_latency(tool, transcript)) for tool in tools}
    rate = parse_rate(ours, corpus)
    print(f"  agenthropic      parse        {rate:.0f} MB/s", flush=True)
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)

    mine, theirs = results["agenthropic"], results["claude-code-log"]
    lat_ours, lat_theirs = median(latency["agenthropic"]), median(latency["claude-code-log"])
    print()
    print(f"Machine: {machine()}.")
    made = "the shared corpora of real transcripts" if args.shared else f"`fixtures.generate --sessions {args.sessions} --seed {args.seed}`"
    print(f"Corpus: {made}, {corpus_mb:.1f} MB. agenthropic {ours_version} (working tree at {checkout()}); claude-code-log {ccl_version}.")
    if args.runs > 1:
        print(f"Medians of {args.runs} runs; each ratio is the median of the {args.runs} runs' own ratios.")
    print()
    print("| metric | agenthropic | claude-code-log | ratio | target | met? |")
    print("|---|---:|---:|---:|---:|---|")
    print(row("cold build, s", mine["cold"], theirs["cold"], ".2f", TARGETS["cold"], ratios.get("cold")))
    print(row("no-change build, s", mine["nochange"], theirs["nochange"], ".2f", TARGETS["nochange"], ratios.get("nochange")))
    print(row("one-append build, s", mine["append"], theirs["append"], ".2f", TARGETS["append"], ratios.get("append")))
    line = row("watch append-to-page latency, s (median of 5)", lat_ours, lat_theirs, ".2f", None)
    if not args.no_watch:
        if latency["agenthropic"] is None:
            line = line.replace("| n/a |", "| n/a (no --watch yet) |", 1)
        if latency["claude-code-log"] is None:
            line = line.replace("| n/a |", "| n/a (no watch mode) |", 1)
    print(line)
    print(row("peak RSS of the cold build, MB (largest process)", mine["rss"], theirs["rss"], ".0f", TARGETS["rss"], ratios.get("rss")))
    print(row("peak memory of the cold build, MB (process tree PSS, sampled)", mine["rss_tree"], theirs["rss_tree"], ".0f", TARGETS["rss"],
              ratios.get("rss_tree")))
    print(row("output bytes, MB", mine["output"], theirs["output"], ".1f", TARGETS["output"], ratios.get("output")))
    print(row("output files", mine["output_files"], theirs["output_files"], ".0f", None, ratios.get("output_files")))
    print(row("cache bytes, MB", mine["cache"], theirs["cache"], ".1f", None, ratios.get("cache")))
    print(row("CPU time of the cold build, s (process tree)", mine["cold_cpu"], theirs["cold_cpu"], ".1f", None, ratios.get("cold_cpu")))
    print(row("parse throughput, MB/s (one core, best of 3)", rate, None, ".0f", None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
