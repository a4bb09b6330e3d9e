"""Walk the corpus with lstat only, classify artifacts, group them into sessions."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
from dataclasses import field
from collections.abc import Callable, Iterable

from agenthropic_site.ids import AGENT_ID_RE, SESSION_ID_RE
from agenthropic_site.corpus.safe_io import HARD_LINK_DETAIL, ContainmentError, FileRef, check_contained
from agenthropic_site.records import record_class
from agenthropic_site.terminal import printable

SIDECAR_MAX_BYTES = 1024 * 1024

SKIP_REASONS = (
    "oversize",
    "symlink",
    "not-regular-file",
    "unreadable",
    "empty-agent",
    "non-artifact",
    "duplicate-session",
    "too-deep",
    "non-utf8-name",
    "hard-link",
)


@record_class(frozen=True, order=True)
class Skip:
    """A corpus path that was not read, with one reason from SKIP_REASONS."""

    path: str
    reason: str
    detail: str = ""
    size: int | None = field(default=None, compare=False)  # bytes, when the file could be measured

    def __post_init__(self) -> None:
        # Shown in pages, JSON and terminals: a name's undecodable bytes and controls are written
        # out (`agent-\xff.jsonl`), so every path can be encoded, sorted and printed.
        object.__setattr__(self, "path", printable(self.path))

    @property
    def uncounted(self) -> bool:
        """Tell whether tokens may hide here that no total includes (totals are then a lower bound)."""
        if self.reason == "too-deep" or (self.reason == "non-utf8-name" and self.path.endswith("/")):
            return True  # a folder that was not walked may hold transcripts
        transcript = self.path.endswith(".jsonl") and not self.path.endswith("/journal.jsonl")
        return transcript and self.reason not in ("empty-agent", "duplicate-session")


@record_class(frozen=True)
class AgentFile:
    """One subagent transcript and where it sits."""

    agent_id: str
    file: FileRef
    layout: str  # "flat" (2.0.28–2.1.1), "subagents" (2.1.2+), "workflow" (2.1.154+)
    meta: FileRef | None = None
    run_id: str | None = None


def _by_path(ref: FileRef) -> str:
    return ref.rel  # a session's files have one path each: sorting by it alone is sorting by the whole FileRef, faster


@record_class
class SessionFiles:
    """A main transcript and every artifact that belongs to it."""

    session_id: str
    project: str
    main: FileRef | None  # None when the project folder has no `<sid>.jsonl`
    agents: list[AgentFile] = field(default_factory=list)
    extras: list[FileRef] = field(default_factory=list)  # workflow journals and snapshots: fingerprinted, not parsed

    @property
    def main_state(self) -> str:
        """Say whether the main transcript is present, empty (0 bytes) or absent."""
        if self.main is None:
            return "absent"
        return "empty" if self.main.size == 0 else "present"

    def transcript_bytes(self) -> int:
        """Return the size of the session's transcripts, as walked."""
        return (self.main.size if self.main is not None else 0) + sum(agent.file.size for agent in self.agents)

    def all_files(self) -> list[FileRef]:
        """List every file whose change means the session must be read again, sorted by path."""
        return sorted([*self.parsed_files(), *self.extras], key=_by_path)

    def transcripts(self) -> list[FileRef]:
        """List the session's transcripts: its main one (when there is one) and its agents'."""
        return [*([self.main] if self.main is not None else []), *(agent.file for agent in self.agents)]

    def parsed_files(self) -> list[FileRef]:
        """List the files a parse of the session reads: its transcripts and their sidecars, sorted."""
        sidecars = [agent.meta for agent in self.agents if agent.meta is not None]
        return sorted([*self.transcripts(), *sidecars], key=_by_path)

    @functools.cached_property
    def fingerprint(self) -> str:
        """Hash sorted (path, size, mtime_ns, inode, ctime_ns) of all the session's files; no content read.

        Taken once the walk has assembled the session (ingest, then the no-change record, ask it).
        """
        return self._digest(lambda ref: f"{ref.rel}\0{ref.size}\0{ref.mtime_ns}\0{ref.inode}\0{ref.ctime_ns}\n")

    @functools.cached_property
    def shape(self) -> str:
        """Hash what the fingerprint hashes but the times and inodes: a copy of the files with the same bytes keeps it."""
        return self._digest(lambda ref: f"{ref.rel}\0{ref.size}\n")

    def _digest(self, line: Callable[[FileRef], str]) -> str:
        # A session without a main file is told apart from one whose main file appears later. The
        # lines are hashed as one text: 500 sessions' fingerprints took 6.5 ms a line at a time, 3 ms so.
        text = self.main_state + "".join([line(ref) for ref in self.all_files()])
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@record_class
class CorpusScan:
    """What the walk found: sessions by id, every skipped path, folders it could not list."""

    root: str
    sessions: dict[str, SessionFiles]
    skips: list[Skip]
    projects: list[str]
    unlisted: list[str]  # project folders whose listing failed: their sessions are not "deleted"


@record_class
class _Limits:
    max_file_bytes: int
    max_depth: int


@record_class
class Walked:
    """What the walk of the corpus folders found, before flat agent files are given to their sessions (`scan_corpus` does that)."""

    projects: list[str]
    by_project: dict[str, dict[str, SessionFiles]]  # project -> session id -> its files found so far
    flat: dict[str, list[AgentFile]]  # project -> its flat agent files (2.0.28–2.1.1), each naming its session inside
    companions: dict[str, dict[str, tuple[list[AgentFile], list[FileRef]]]]  # project -> session id -> its folder's agents and extras
    skips: list[Skip]
    unlisted: list[str]


FlatSniffer = Callable[[FileRef], "str | None"]


def _ref(rel: str, st: os.stat_result) -> FileRef:
    return FileRef(rel=rel, size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino, ctime_ns=st.st_ctime_ns)


def _is_utf8(name: str) -> bool:
    """Tell whether a listed name was valid UTF-8 (undecodable bytes arrive as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _list(path: str) -> list[os.DirEntry[str]]:
    """List a folder's entries by name; each entry's lstat is then one call without path building."""
    with os.scandir(path) as entries:
        return sorted(entries, key=lambda entry: entry.name)


class _Walker:
    def __init__(self, root: str, limits: _Limits, sniff_flat: FlatSniffer, listed: dict[str, list[os.DirEntry[str]]]) -> None:
        self.root = root
        self.limits = limits
        self.sniff_flat = sniff_flat
        self.listed = listed
        self.skips: list[Skip] = []
        self.unlisted: list[str] = []
        # project -> session id -> SessionFiles
        self.by_project: dict[str, dict[str, SessionFiles]] = {}
        self.flat: dict[str, list[AgentFile]] = {}
        self.companions: dict[str, dict[str, tuple[list[AgentFile], list[FileRef]]]] = {}

    def list_folder(self, path: str) -> list[os.DirEntry[str]]:
        """List a folder by name: as already listed for this build (taken once), else now."""
        entries = self.listed.pop(path, None)
        return _list(path) if entries is None else sorted(entries, key=lambda entry: entry.name)

    def skip(self, rel: str, reason: str, detail: str = "", size: int | None = None) -> None:
        self.skips.append(Skip(rel, reason, detail, size))

    def lstat(self, rel: str, entry: os.DirEntry[str]) -> os.stat_result | None:
        """Return lstat of a listed entry, or record why it could not be looked at."""
        path = entry.path
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            self.skip(rel, "unreadable", errno.errorcode.get(exc.errno or 0, str(exc.errno)))
            return None
        if stat.S_ISLNK(st.st_mode):
            # Following a link could read outside the root; a link that points outside is fatal.
            check_contained(self.root, path)
            self.skip(rel, "symlink", "symbolic links are never followed")
            return None
        if not _is_utf8(entry.name):
            # Such a name cannot be written into a page, JSON or the cache; Claude Code never makes
            # one (its folder names are slugs, its file names ids), so it is not walked or read.
            folder = stat.S_ISDIR(st.st_mode)
            self.skip(rel + "/" if folder else rel, "non-utf8-name", "the name is not valid UTF-8", None if folder else st.st_size)
            return None
        return st

    def regular_file(self, rel: str, st: os.stat_result, cap: int) -> FileRef | None:
        if not stat.S_ISREG(st.st_mode):
            self.skip(rel, "not-regular-file")
            return None
        if st.st_nlink > 1:
            self.skip(rel, "hard-link", HARD_LINK_DETAIL, st.st_size)
            return None
        if st.st_size > cap:
            self.skip(rel, "oversize", f"{st.st_size} bytes > cap {cap}", st.st_size)
            return None
        return _ref(rel, st)

    def walk(self) -> list[str]:
        projects = []
        for entry in self.list_folder(self.root):
            name = entry.name
            st = self.lstat(name, entry)
            if st is None:
                continue
            if stat.S_ISDIR(st.st_mode):
                projects.append(name)
                self.walk_project(name)
            else:
                self.skip(name, "non-artifact", "file at the corpus root", st.st_size)
        return projects

    def walk_project(self, project: str) -> None:
        try:
            entries = self.list_folder(os.path.join(self.root, project))
        except OSError as exc:
            self.unlisted.append(project)
            self.skip(project + "/", "unreadable", errno.errorcode.get(exc.errno or 0, str(exc.errno)))
            return
        sessions = self.by_project.setdefault(project, {})
        for entry in entries:
            name = entry.name
            rel = f"{project}/{name}"
            st = self.lstat(rel, entry)
            if st is None:
                continue
            if stat.S_ISDIR(st.st_mode):
                if SESSION_ID_RE.match(name):
                    self.walk_companion(project, name)
                else:
                    # memory/ and other folders (format §1.2): every file in them is reported.
                    for inner, _, inner_st in self.walk_tree(rel):
                        self.skip(inner, "non-artifact", "not in a session folder", inner_st.st_size)
                continue
            if name.endswith(".jsonl") and SESSION_ID_RE.match(name[: -len(".jsonl")]):
                ref = self.regular_file(rel, st, self.limits.max_file_bytes)
                if ref is None:
                    continue
                # A 0-byte main transcript is still a session: its agent files may hold spend (17 empty
                # mains in the real 1.0.x-2.0.x samples, several beside warmup agent files; issue 13).
                session_id = name[: -len(".jsonl")]
                sessions[session_id] = SessionFiles(session_id=session_id, project=project, main=ref)
            elif name.startswith("agent-") and name.endswith(".jsonl"):
                # Flat agent files, seen 2.0.28–2.1.1 (format §1.3): the session is named inside.
                agent = self.agent_file(rel, name, st, "flat")
                if agent is not None:
                    self.flat.setdefault(project, []).append(agent)
            else:
                self.skip(rel, "non-artifact", "", st.st_size)

    def agent_file(self, rel: str, name: str, st: os.stat_result, layout: str, run_id: str | None = None) -> AgentFile | None:
        agent_id = name[len("agent-") : -len(".jsonl")]
        if not AGENT_ID_RE.match(agent_id):
            self.skip(rel, "non-artifact", "agent file name of an unexpected form", st.st_size)
            return None
        ref = self.regular_file(rel, st, self.limits.max_file_bytes)
        if ref is None:
            return None
        if ref.size == 0:
            self.skip(rel, "empty-agent", "0-byte agent transcript", 0)
            return None
        return AgentFile(agent_id=agent_id, file=ref, layout=layout, run_id=run_id)

    def walk_companion(self, project: str, session_id: str) -> None:
        agents: list[AgentFile] = []
        extras: list[FileRef] = []
        metas: dict[tuple[str | None, str], FileRef] = {}
        base = f"{project}/{session_id}"
        for rel, parts, st in self.walk_tree(base):
            layout, run_id = _classify(parts)
            name = parts[-1]
            if layout in ("subagents", "workflow") and name.startswith("agent-") and name.endswith(".meta.json"):
                ref = self.regular_file(rel, st, SIDECAR_MAX_BYTES)
                if ref is not None:
                    metas[(run_id, name[len("agent-") : -len(".meta.json")])] = ref
            elif layout in ("subagents", "workflow") and name.startswith("agent-") and name.endswith(".jsonl"):
                agent = self.agent_file(rel, name, st, layout, run_id)
                if agent is not None:
                    agents.append(agent)
            elif layout == "workflow" and name == "journal.jsonl":
                # A workflow journal is not a transcript (format §1.3); it only marks the run.
                ref = self.regular_file(rel, st, self.limits.max_file_bytes)
                if ref is not None:
                    extras.append(ref)  # fingerprinted (a new run shows there first), never parsed
                    self.skip(rel, "non-artifact", "workflow journal, not a transcript", ref.size)
            elif len(parts) == 2 and parts[0] == "workflows" and name.endswith(".json"):
                # A workflow run's terminal snapshot (2.1.154+, format §4.7): fingerprinted, not parsed yet.
                ref = self.regular_file(rel, st, SIDECAR_MAX_BYTES)
                if ref is not None:
                    extras.append(ref)
                    self.skip(rel, "non-artifact", "workflow snapshot, not read", ref.size)
            else:
                self.skip(rel, "non-artifact", "", st.st_size)
        for index, agent in enumerate(agents):
            meta = metas.pop((agent.run_id, agent.agent_id), None)
            if meta is not None:
                agents[index] = AgentFile(agent.agent_id, agent.file, agent.layout, meta, agent.run_id)
        for (_, _), ref in sorted(metas.items(), key=lambda item: item[1].rel):
            self.skip(ref.rel, "non-artifact", "sidecar without its agent transcript", ref.size)
        self.companions.setdefault(project, {})[session_id] = (agents, extras)

    def walk_tree(self, base: str) -> Iterable[tuple[str, tuple[str, ...], os.stat_result]]:
        """Yield regular entries under a session folder, depth-capped, lstat only, in sorted order."""
        stack: list[tuple[str, tuple[str, ...]]] = [(base, ())]
        while stack:
            rel_dir, parts = stack.pop()
            try:
                entries = self.list_folder(os.path.join(self.root, *rel_dir.split("/")))
            except OSError as exc:
                self.skip(rel_dir + "/", "unreadable", errno.errorcode.get(exc.errno or 0, str(exc.errno)))
                continue
            subdirs = []
            for entry in entries:
                name = entry.name
                rel = f"{rel_dir}/{name}"
                st = self.lstat(rel, entry)
                if st is None:
                    continue
                child_parts = (*parts, name)
                if stat.S_ISDIR(st.st_mode):
                    if len(child_parts) >= self.limits.max_depth:
                        self.skip(rel + "/", "too-deep", f"deeper than {self.limits.max_depth} levels under the session folder")
                    else:
                        subdirs.append((rel, child_parts))
                    continue
                yield rel, child_parts, st
            stack.extend(reversed(subdirs))

    def session(self, project: str, session_id: str) -> SessionFiles:
        """Return a project's session, made without a main transcript when the folder has none."""
        sessions = self.by_project.setdefault(project, {})
        if session_id not in sessions:
            # Agent files whose main transcript is gone (deleted, never written, or copied without
            # it) still hold billed spend: the session is built from what exists (issue 13).
            sessions[session_id] = SessionFiles(session_id=session_id, project=project, main=None)
        return sessions[session_id]

    def assemble(self) -> dict[str, SessionFiles]:
        for project, companions in sorted(self.companions.items()):
            for session_id, (agents, extras) in sorted(companions.items()):
                session = self.session(project, session_id)
                session.agents.extend(agents)
                session.extras.extend(extras)
        for project, flats in sorted(self.flat.items()):
            for agent in flats:
                owner = self.sniff_flat(agent.file)
                if owner is None or not SESSION_ID_RE.match(owner):
                    self.skip(agent.file.rel, "non-artifact", "flat agent file that names no session", agent.file.size)
                    continue
                self.session(project, owner).agents.append(agent)
        return self.dedupe_sessions()

    def dedupe_sessions(self) -> dict[str, SessionFiles]:
        """Keep each session id once: in the first project folder holding its main transcript, else the first.

        Another folder's copy with its own main transcript is reported as a duplicate; agent files
        filed without one (flat files naming a session of another folder) join the kept session.
        """
        holders: dict[str, list[SessionFiles]] = {}
        for project in sorted(self.by_project):
            for session_id, session in sorted(self.by_project[project].items()):
                holders.setdefault(session_id, []).append(session)
        kept: dict[str, SessionFiles] = {}
        for session_id, copies in sorted(holders.items()):
            session = next((copy for copy in copies if copy.main is not None), copies[0])
            for other in copies:
                if other is session:
                    continue
                if other.main is None:
                    session.agents.extend(other.agents)
                    session.extras.extend(other.extras)
                    continue
                for ref in other.all_files():
                    self.skip(ref.rel, "duplicate-session", f"session also in {session.project}", ref.size)
            session.agents.sort(key=lambda agent: agent.file.rel)
            session.extras.sort()
            kept[session_id] = session
        return kept


def _classify(parts: tuple[str, ...]) -> tuple[str | None, str | None]:
    """Name the layout of a path below a session folder: subagents, workflow, or None."""
    if len(parts) == 2 and parts[0] == "subagents":
        return "subagents", None
    if len(parts) == 4 and parts[0] == "subagents" and parts[1] == "workflows" and AGENT_ID_RE.match(parts[2]):
        return "workflow", parts[2]
    return None, None


def walk_folders(root: str, max_file_bytes: int, max_depth: int, listed: dict[str, list[os.DirEntry[str]]]) -> Walked:
    """Walk the corpus folders (taking those in `listed` as listed) and read no file; raises ContainmentError as `scan_corpus` does."""
    walker = _Walker(root, _Limits(max_file_bytes, max_depth), _reads_nothing, listed)
    projects = walker.walk()
    return Walked(projects, walker.by_project, walker.flat, walker.companions, walker.skips, walker.unlisted)


def _reads_nothing(ref: FileRef) -> str | None:
    raise AssertionError("the walk of the folders reads no file: scan_corpus sniffs flat agent files")


def scan_corpus(
    root: str, max_file_bytes: int, max_depth: int, sniff_flat: FlatSniffer, listed: dict[str, list[os.DirEntry[str]]] | None = None,
    walked: Walked | None = None,
) -> CorpusScan:
    """Walk the corpus (real root path) and return its sessions and skips.

    `listed`: folders already listed for this build, by path (pipeline/stamp.py corpus_folders);
    the walk takes each one it reaches from there, entries and their lstat, instead of listing it
    again. `walked`: the walk of the folders of that same listing, made by another process
    (pipeline/stamp.py kept_walk): only the sessions are assembled. Raises ContainmentError when a
    link points outside the root.
    """
    if walked is None:
        walked = walk_folders(root, max_file_bytes, max_depth, {} if listed is None else listed)
    walker = _Walker(root, _Limits(max_file_bytes, max_depth), sniff_flat, {})
    walker.by_project, walker.flat, walker.companions = walked.by_project, walked.flat, walked.companions
    walker.skips, walker.unlisted = walked.skips, walked.unlisted
    projects = walked.projects
    sessions = walker.assemble()
    return CorpusScan(
        root=root,
        sessions=sessions,
        skips=sorted(walker.skips),
        projects=projects,
        unlisted=sorted(walker.unlisted),
    )


__all__ = ["AgentFile", "ContainmentError", "CorpusScan", "SessionFiles", "Skip", "SKIP_REASONS", "Walked", "scan_corpus", "walk_folders"]
