"""`agenthropic verify`: check the tool against a corpus, working only on copies.

Four checks, on a copy of the corpus inside one temporary folder:
- deterministic: two builds under different TZ, locale, hash seed, output and cache folders
  give byte-identical sites;
- token-truth: the cache's token counts per session and file equal a re-scan written here from
  the format rules (docs/format.md "Token usage"), independent of the parser;
- dag: every session's edges in data/sessions/*.json form a forest rooted at the main agent or
  the agents listed as unlinked;
- incremental: after a copy of a main transcript's last line is appended, an incremental build
  equals a cold build.
"""

from __future__ import annotations

import errno
import logging
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator, Sequence

from agenthropic_site.audit.archive import ArchiveError, read_site
from agenthropic_site.audit.compare import TreeDelta, tree_delta
from agenthropic_site.config import ConfigError
from agenthropic_site.errors import EXIT_FAILURES, EXIT_OK, LEFT_OUT_LINE
from agenthropic_site.records import record_class

log = logging.getLogger(__name__)

DEFAULT_BUILD_COMMAND: tuple[str, ...] = (sys.executable, "-m", "agenthropic_site", "build")
# As different as two users' machines: clock zone (one at +12:45), locale, hash seed, folders.
ENVIRONMENTS = (
    {"TZ": "UTC", "LC_ALL": "C", "PYTHONHASHSEED": "0"},
    {"TZ": "Pacific/Chatham", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "4242"},
)
CATEGORIES = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
# These agents replay their parent's messages, so a message id counts for them only if nobody else has it.
REPLAY_PREFIXES = ("agent-acompact-", "agent-aside_question-", "agent-aprompt_suggestion-")
SHOWN_PATHS = 5
# The copy's device, not the corpus, refused a file: full, over quota or read-only.
TARGET_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


@record_class(frozen=True)
class Check:
    """One row of the verify table."""

    name: str
    status: str  # "pass", "fail" or "skip" (nothing to check)
    detail: str


@record_class(frozen=True)
class Build:
    """One build's folders and how it ended."""

    folder: Path
    code: int
    error: str

    @property
    def site(self) -> Path:
        """Return the site folder."""
        return self.folder / "site"

    @property
    def cache(self) -> Path:
        """Return the cache folder."""
        return self.folder / "cache"

    @property
    def ok(self) -> bool:
        """Tell whether the build finished: exit 0, or exit 1 saying only that sessions were left out."""
        # A full output or cache folder exits 1 too, having published nothing: its site was read as
        # one, the token and incremental checks failed on a KeyError and the graph check passed.
        return self.code == EXIT_OK or (self.code == EXIT_FAILURES and self.error == LEFT_OUT_LINE)

    def failure(self) -> str:
        """Describe a build that did not finish."""
        return f"the build in {self.folder.name}/ exited {self.code}: {self.error or 'no message'}"


def run_build(command: Sequence[str], corpus: Path, folder: Path, env: dict[str, str], now: str) -> Build:
    """Build `corpus` into `folder`/site with `folder`/cache, in a subprocess started in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    argv = [*command, "--corpus", str(corpus), "--out", str(folder / "site"), "--cache", str(folder / "cache"), "--now", now, "-q"]
    done = subprocess.run(argv, cwd=folder, env={**os.environ, **env}, capture_output=True, text=True, errors="replace")
    lines = done.stderr.strip().splitlines()
    return Build(folder, done.returncode, lines[-1] if lines else "")


def copy_corpus(corpus: Path, target: Path) -> list[str]:
    """Copy the corpus (links as links, no FIFOs or devices); return the paths that could not be copied."""

    def special(folder: str, names: list[str]) -> set[str]:
        # Opening a FIFO would block; the build skips these entries anyway.
        ignored = set()
        for name in names:
            try:
                mode = os.lstat(os.path.join(folder, name)).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                ignored.add(name)
        return ignored

    def copy(source: str, destination: str) -> None:
        try:
            shutil.copy2(source, destination)
        except OSError as exc:
            if exc.errno in TARGET_FULL:
                raise _no_room(target, exc) from None  # not an OSError: copytree passes it on at once
            raise  # a file of the corpus that cannot be read: left out, as the build would skip it

    try:
        shutil.copytree(corpus, target, symlinks=True, ignore=special, copy_function=copy)
    except shutil.Error as exc:
        return sorted(os.path.relpath(str(error[0]), corpus) for error in exc.args[0])
    except OSError as exc:  # a folder of the copy could not be made
        raise _no_room(target, exc) from None
    _repoint_links(corpus, target)
    return []


def _no_room(target: Path, exc: OSError) -> ConfigError:
    # Checks run on a copy that lacks files would pass on less than the corpus.
    return ConfigError(f"cannot copy the corpus into the temporary folder {target.parent.parent} ({exc.strerror or exc}); "
                       "set TMPDIR to a folder with room for a copy of the corpus and four builds")


def _repoint_links(corpus: Path, target: Path) -> None:
    """Point each absolute link of the copy that pointed into the corpus at the same place in the copy.

    Copied as it was, such a link points out of the copy: its builds stopped at a containment
    violation (exit 3) where a build of the corpus itself follows it. A relative link needs nothing.
    """
    roots = sorted({os.path.abspath(corpus), os.path.realpath(corpus)}, key=len, reverse=True)  # the longer first: it names more
    for folder, subfolders, files in os.walk(target):  # never into a link
        for name in subfolders + files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                continue
            pointed = os.readlink(path)
            if not os.path.isabs(pointed):
                continue
            inside = next((root for root in roots if pointed == root or pointed.startswith(root + os.sep)), None)
            if inside is not None:
                os.unlink(path)
                os.symlink(os.path.join(target, os.path.relpath(pointed, inside)), path)


def _shown(paths: list[str]) -> str:
    more = f" and {len(paths) - SHOWN_PATHS} more" if len(paths) > SHOWN_PATHS else ""
    return ", ".join(paths[:SHOWN_PATHS]) + more


def _delta_detail(delta: TreeDelta) -> str:
    sides = (("differ", delta.changed), ("only in the first", delta.removed), ("only in the second", delta.added))
    parts = [f"{label}: {_shown(paths)}" for label, paths in sides if paths]
    return "; ".join(parts)


def check_identical(name: str, first: Build, second: Build, what: str) -> Check:
    """Compare two builds' sites byte for byte."""
    for build in (first, second):
        if not build.ok:
            return Check(name, "fail", build.failure())
    try:
        # Compared by their digests: two whole sites were held in memory at once.
        files = read_site(first.site, lambda rel: False)
        delta = tree_delta(files, read_site(second.site, lambda rel: False))
    except ArchiveError as exc:
        return Check(name, "fail", str(exc))
    if not delta.identical:
        return Check(name, "fail", f"{what}: {_delta_detail(delta)}")
    return Check(name, "pass", f"{what}: {len(files)} files identical")


# -- token truth: an independent re-scan (docs/format.md "Token usage") --------------------------


# The only whitespace JSON allows around a value (str.strip() would also take U+2028 and more).
JSON_SPACE = " \t\r\n"
# Records glued by an append (`{...}{...}`) are read only when each seam is one of the line's
# first 64 `}{` (docs/format.md "Lines").
MAX_SEAMS = 64


def _not_json(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")  # NaN, Infinity and numbers that overflow a double


def _float(text: str) -> float:
    value = float(text)
    return value if abs(value) != float("inf") else _not_json(text)


DECODER = json.JSONDecoder(parse_constant=_not_json, parse_float=_float)


def line_objects(raw: bytes) -> list[Any]:
    """Return the JSON values on one line: one, or several objects glued back to back; [] when it does not decode."""
    try:
        text = raw.decode("utf-8").strip(JSON_SPACE)
        values: list[Any] = []
        end = 0
        while not values or end < len(text):
            if values and not (text[end - 1 : end + 1] == "}{" and text.count("}{", 0, end + 1) <= MAX_SEAMS):
                return []
            value, end = DECODER.raw_decode(text, end)
            values.append(value)
        if b"\\u" in raw:
            # json accepts a lone surrogate escape such as \ud800; the build's reader does not,
            # and a str holding one cannot be encoded as UTF-8.
            json.dumps(values, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):  # UnicodeError is a ValueError
        return []
    return values if len(values) == 1 or all(isinstance(value, dict) for value in values) else []


def _records(data: bytes) -> Iterator[dict[str, Any]]:
    # Every piece is read alike, the last one too: a transcript may end without a newline
    # (finished or copied files, issue 13); a half-written last line simply does not decode.
    for raw in data.split(b"\n"):
        for value in line_objects(raw):
            if isinstance(value, dict):
                yield value


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _usage(usage: Any) -> tuple[int, ...] | None:
    """Return the five counts of `message.usage`, or None when the line counts for nothing."""
    if not isinstance(usage, dict):
        return None
    counts = [_count(usage.get("input_tokens")), _count(usage.get("output_tokens"))]
    # Cache fields may be missing or null, which means 0.
    counts += [0 if usage.get(key) is None else _count(usage[key]) for key in ("cache_read_input_tokens", "cache_creation_input_tokens")]
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        # The TTL breakdown, when present, is the truth about cache writes.
        writes = [_count(split.get("ephemeral_5m_input_tokens", 0)), _count(split.get("ephemeral_1h_input_tokens", 0))]
    else:
        writes = [counts[3], 0]
    values = counts[:3] + writes
    known = [value for value in values if value is not None]
    return tuple(known) if len(known) == len(values) else None


def rescan_file(data: bytes) -> dict[str, tuple[str | None, tuple[int, ...]]]:
    """Return request key -> message id and counts of the line kept for it (largest output, ties to the last)."""
    kept: dict[str, tuple[str | None, tuple[int, ...]]] = {}
    for position, record in enumerate(_records(data)):
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict) or "usage" not in message:
            continue
        if not isinstance(message.get("model"), str) or message["model"] == "<synthetic>":
            continue
        counts = _usage(message["usage"])
        if counts is None:
            continue
        mid = message.get("id") if isinstance(message.get("id"), str) else None
        rid = record.get("requestId")
        # One requestId is one API request, whatever message ids its lines carry (issue 13).
        key = f"r\0{rid}" if isinstance(rid, str) else f"m\0{mid}" if mid is not None else f"\1record{position}"  # two glued records share a line
        if key not in kept or counts[1] >= kept[key][1][1]:
            kept[key] = (mid, counts)
    return kept


def _plain_file(corpus: Path, path: Path) -> bool:
    # The build never follows a link; neither does the re-scan.
    current = corpus
    for part in path.relative_to(corpus).parts:
        current = current / part
        if current.is_symlink():
            return False
    return path.is_file()


def flat_agent_files(corpus: Path, project: str) -> dict[str, list[Path]]:
    """Map session id -> the project's flat `agent-*.jsonl` files; each names its session in its first record."""
    owners: dict[str, list[Path]] = {}
    for path in sorted((corpus / project).glob("agent-*.jsonl")):
        if _plain_file(corpus, path):
            owner = next((record.get("sessionId") for record in _records(path.read_bytes())), None)
            if isinstance(owner, str):
                owners.setdefault(owner, []).append(path)
    return owners


def session_files(corpus: Path, project: str, session_id: str, flat: dict[str, list[Path]]) -> list[Path]:
    """Find a session's transcripts on disk: main, subagents, workflow agents, flat agent files."""
    folder = corpus / project
    found = [folder / f"{session_id}.jsonl"]
    found += sorted((folder / session_id / "subagents").glob("agent-*.jsonl"))
    found += sorted((folder / session_id / "subagents" / "workflows").glob("*/agent-*.jsonl"))
    return [path for path in found + flat.get(session_id, []) if _plain_file(corpus, path)]


def rescan_session(corpus: Path, files: list[Path], session_id: str) -> dict[str, list[int]]:
    """Return non-zero token sums per file after counting each message id once per session."""

    def rank(path: Path) -> tuple[int, str]:
        kind = 0 if path.name == f"{session_id}.jsonl" else 2 if path.name.startswith(REPLAY_PREFIXES) else 1
        return kind, path.relative_to(corpus).as_posix()

    seen: set[str] = set()
    totals: dict[str, list[int]] = {}
    for path in sorted(files, key=rank):
        rel = path.relative_to(corpus).as_posix()
        for message_id, counts in rescan_file(path.read_bytes()).values():
            if message_id is not None:
                if message_id in seen:
                    continue
                seen.add(message_id)
            total = totals.setdefault(rel, [0] * len(CATEGORIES))
            for index, count in enumerate(counts):
                total[index] += count
    return {rel: total for rel, total in totals.items() if any(total)}


def cached_totals(cache: Path) -> dict[str, dict[str, list[int]]]:
    """Return the cache's token sums per session and file."""
    conn = sqlite3.connect(cache / "cache.sqlite3")
    try:
        result: dict[str, dict[str, list[int]]] = {}
        for session_id, rel, *values in conn.execute(
            "SELECT session_id, file, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write_5m), SUM(cache_write_1h) "
            "FROM token_usage GROUP BY session_id, file"
        ):
            if any(values):
                result.setdefault(session_id, {})[rel] = list(values)
        return result
    finally:
        conn.close()


def check_token_truth(corpus: Path, build: Build, site: dict[str, bytes]) -> Check:
    """Compare the cache with the re-scan for every session that is not excluded."""
    index = json.loads(site["data/index.json"])
    skipped = {skip["path"] for skip in index["report"]["skipped"]}
    cached = cached_totals(build.cache)
    flat: dict[str, dict[str, list[Path]]] = {}
    wrong, files = [], 0
    sessions = [s for s in index["sessions"] if s["excluded"] is None]
    for session in sessions:
        project = session["project"]
        if project not in flat:
            flat[project] = flat_agent_files(corpus, project)
        found = session_files(corpus, project, session["session_id"], flat[project])
        # Files the build reported as skipped were not read, so they are not counted either.
        readable = [path for path in found if path.relative_to(corpus).as_posix() not in skipped]
        expected = rescan_session(corpus, readable, session["session_id"])
        have = cached.get(session["session_id"], {})
        files += len(expected)
        if have != expected:
            rel = next(rel for rel in sorted(set(have) | set(expected)) if have.get(rel) != expected.get(rel))
            wrong.append(f"{rel} cache {have.get(rel)} re-scan {expected.get(rel)}")
    if not sessions:
        return Check("token-truth", "skip", "no session that is not excluded")
    if wrong:
        return Check("token-truth", "fail", f"{len(wrong)} of {len(sessions)} sessions differ ({', '.join(CATEGORIES)}): {_shown(wrong)}")
    return Check("token-truth", "pass", f"{len(sessions)} sessions, {files} files: the cache equals an independent re-scan")


# -- DAG rebuild ----------------------------------------------------------------------------------


def forest_problems(doc: dict[str, Any]) -> list[str]:
    """Return why a session's edges are not a forest rooted at the main agent or its unlinked agents."""
    session_id = doc["session_id"]
    agents = {agent["agent_id"]: agent.get("parent_agent_id") for agent in doc["agents"]}
    roots = {session_id, *doc["unlinked_agents"]}
    problems, parent = [], {}
    for edge in doc["edges"]:
        if edge["parent"] not in agents or edge["child"] not in agents:
            problems.append(f"edge {edge['parent']} -> {edge['child']} names an agent the session does not have")
        elif edge["child"] in parent:
            problems.append(f"agent {edge['child']} has two parents")
        else:
            parent[edge["child"]] = edge["parent"]
    for agent_id, stated in sorted(agents.items()):
        if agent_id in roots and agent_id in parent:
            problems.append(f"root agent {agent_id} has a parent")
        elif agent_id not in roots and agent_id not in parent:
            problems.append(f"agent {agent_id} has no parent and is not listed as unlinked")
        if stated != parent.get(agent_id):
            problems.append(f"agent {agent_id} names parent {stated}, its edge says {parent.get(agent_id)}")
        seen, current = {agent_id}, agent_id
        while current in parent:
            current = parent[current]
            if current in seen:
                problems.append(f"agent {agent_id} is on a cycle")
                break
            seen.add(current)
    return problems


def check_dag(site: dict[str, bytes]) -> Check:
    """Check every session's agent graph in data/sessions/."""
    documents = {rel: json.loads(data) for rel, data in site.items() if rel.startswith("data/sessions/") and rel.endswith(".json")}
    found = [f"{doc['session_id']}: {problem}" for doc in documents.values() for problem in forest_problems(doc)]
    if found:
        return Check("dag", "fail", f"{len(found)} problems: {_shown(found)}")
    edges = sum(len(doc["edges"]) for doc in documents.values())
    return Check("dag", "pass", f"{len(documents)} sessions, {edges} edges: each a forest rooted at the main or an unlinked agent")


# -- incremental == cold --------------------------------------------------------------------------


def append_target(corpus: Path, site: dict[str, bytes]) -> tuple[Path, bytes] | None:
    """Pick the first session (by project, id) whose main transcript ends in a complete line; return it and that line."""
    index = json.loads(site["data/index.json"])
    for session in sorted(index["sessions"], key=lambda s: (s["project"], s["session_id"])):
        path = corpus / session["project"] / f"{session['session_id']}.jsonl"
        if not _plain_file(corpus, path):
            continue
        lines = [line for line in path.read_bytes().split(b"\n")[:-1] if line.strip()]
        if lines and path.read_bytes().endswith(b"\n"):
            return path, lines[-1] + b"\n"
    return None


def check_incremental(corpus: Path, first: Build, site: dict[str, bytes], work: Path, command: Sequence[str], now: str) -> Check:
    """Append a copy of a real line, build on the first build's copy, and compare with a cold build."""
    target = append_target(corpus, site)
    if target is None:
        return Check("incremental", "skip", "no main transcript ends in a complete line")
    path, line = target
    live = work / "incremental"
    shutil.copytree(first.site, live / "site", symlinks=True)
    shutil.copytree(first.cache, live / "cache", symlinks=True)
    with path.open("ab") as handle:
        handle.write(line)
    incremental = run_build(command, corpus, live, ENVIRONMENTS[0], now)
    cold = run_build(command, corpus, work / "cold", ENVIRONMENTS[0], now)
    what = f"a line appended to {path.relative_to(corpus).as_posix()}, incremental vs cold build"
    return check_identical("incremental", incremental, cold, what)


def run_checks(
    corpus: Path,
    work: Path,
    *,
    now: str,
    build_command: Sequence[str] = DEFAULT_BUILD_COMMAND,
) -> list[Check]:
    """Run every check on a copy of `corpus` inside `work`; `build_command` is the argv prefix of a build."""
    copy = work / "corpus"
    log.info("verify: copying the corpus")
    missed = copy_corpus(corpus, copy)
    if missed:
        log.info(f"verify: {len(missed)} corpus files could not be copied and are left out: {_shown(missed)}")
    log.info("verify: building twice (different TZ, locale, hash seed and folders)")
    first = run_build(build_command, copy, work / "first", ENVIRONMENTS[0], now)
    second = run_build(build_command, copy, work / "second" / "elsewhere", ENVIRONMENTS[1], now)
    checks = [check_identical("deterministic", first, second, "two builds in different environments")]
    if not first.ok:
        return checks + [Check(name, "fail", f"not run: {first.failure()}") for name in ("token-truth", "dag", "incremental")]
    try:
        # The checks read only data/ (the index and the sessions' JSON): the pages are kept as their digests.
        site = read_site(first.site, lambda rel: rel.startswith("data/"))
    except ArchiveError as exc:
        return checks + [Check(name, "fail", f"not run: {exc}") for name in ("token-truth", "dag", "incremental")]
    log.info("verify: re-scanning the transcripts")
    checks.append(_guarded("token-truth", lambda: check_token_truth(copy, first, site)))
    checks.append(_guarded("dag", lambda: check_dag(site)))
    log.info("verify: building incrementally and cold after an appended line")
    checks.append(_guarded("incremental", lambda: check_incremental(copy, first, site, work, build_command, now)))
    return checks


def _guarded(name: str, run: Callable[[], Check]) -> Check:
    # A site whose data/ cannot be read is a failed check, not a crash of verify.
    try:
        return run()
    except (KeyError, TypeError, ValueError, OSError, sqlite3.Error) as exc:
        return Check(name, "fail", f"{type(exc).__name__}: {exc}")


def exit_code(checks: Sequence[Check]) -> int:
    """Return 1 when any check failed, else 0."""
    return 1 if any(check.status == "fail" for check in checks) else 0


def table(checks: Sequence[Check]) -> str:
    """Return the pass/fail table."""
    rows = [("check", "result", "detail"), *((c.name, c.status, c.detail) for c in checks)]
    width = [max(len(row[i]) for row in rows) for i in range(2)]
    return "".join(f"{name:<{width[0]}}  {status:<{width[1]}}  {detail}\n" for name, status, detail in rows)
