"""The read layer: lstat-only walk, one skip reason per unread file, containment, fingerprints."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agenthropic_site.corpus import ContainmentError, CorpusRootError, UnreadableError, read_bytes, real_root, scan_corpus
from agenthropic_site.corpus import safe_io
from agenthropic_site.corpus.safe_io import FileRef
from agenthropic_site.corpus.sniff import sniff_session_id
from agenthropic_site.pipeline.stamp import STAMP_FILE
from conftest import build
from records import OTHER_SID, SID, assistant, line, usage, user, write


def scan(root: Path, max_bytes: int = 1 << 20, depth: int = 4):
    real = real_root(root)
    return scan_corpus(real, max_bytes, depth, lambda ref: sniff_session_id(real, ref))


def reasons(result) -> dict[str, str]:
    return {skip.path: skip.reason for skip in result.skips}


def minimal_session(root: Path, project: str = "-home-u-app", sid: str = SID) -> Path:
    return write(root / project / f"{sid}.jsonl", user("u1", "hello", session=sid), assistant("a1", "msg_1", "req_1", usage(1, 2), session=sid))


def test_sessions_and_artifacts_are_grouped(tmp_path: Path) -> None:
    minimal_session(tmp_path)
    write(tmp_path / "-home-u-app" / SID / "subagents" / "agent-a1b2c3d.jsonl", user("s1", "do it", session=SID))
    (tmp_path / "-home-u-app" / SID / "subagents" / "agent-a1b2c3d.meta.json").write_text('{"agentType":"Explore"}')
    write(tmp_path / "-home-u-app" / SID / "subagents" / "workflows" / "run1" / "agent-w1.jsonl", user("w1", "wf", session=SID))
    write(tmp_path / "-home-u-app" / SID / "subagents" / "workflows" / "run1" / "journal.jsonl", {"type": "started"})
    write(tmp_path / "-home-u-app" / "agent-0a1b2c3d.jsonl", user("f1", "Warmup", session=SID))
    result = scan(tmp_path)
    session = result.sessions[SID]
    layouts = {agent.agent_id: (agent.layout, agent.meta is not None, agent.run_id) for agent in session.agents}
    assert layouts == {"a1b2c3d": ("subagents", True, None), "w1": ("workflow", False, "run1"), "0a1b2c3d": ("flat", False, None)}
    assert [ref.rel for ref in session.extras] == [f"-home-u-app/{SID}/subagents/workflows/run1/journal.jsonl"]
    assert [(skip.path, skip.reason) for skip in result.skips] == [(f"-home-u-app/{SID}/subagents/workflows/run1/journal.jsonl", "non-artifact")]


def test_every_skip_reason(tmp_path: Path) -> None:
    project = tmp_path / "-home-u-app"
    minimal_session(tmp_path)
    write(project / f"{OTHER_SID}.jsonl")  # 0 bytes
    write(project / SID / "subagents" / "agent-aempty.jsonl")
    write(project / "notes.txt", b"hello\n")
    write(project / SID / "subagents" / "workflows" / "r" / "deep" / "agent-x.jsonl", user("x", "deep"))
    write(project / "agent-big1.jsonl", b"x" * 2048 + b"\n")
    os.symlink(project / "notes.txt", project / "link.jsonl")
    os.mkfifo(project / "agent-fifo.jsonl")
    minimal_session(tmp_path, project="-zzz-copy")
    result = scan(tmp_path, max_bytes=1024, depth=4)
    got = reasons(result)
    assert f"-home-u-app/{OTHER_SID}.jsonl" not in got  # a 0-byte main is a session, not a skip
    assert result.sessions[OTHER_SID].main_state == "empty"
    assert got[f"-home-u-app/{SID}/subagents/agent-aempty.jsonl"] == "empty-agent"
    assert got["-home-u-app/notes.txt"] == "non-artifact"
    assert got[f"-home-u-app/{SID}/subagents/workflows/r/deep/"] == "too-deep"
    assert got["-home-u-app/agent-big1.jsonl"] == "oversize"
    assert got["-home-u-app/link.jsonl"] == "symlink"
    assert got["-home-u-app/agent-fifo.jsonl"] == "not-regular-file"
    assert got[f"-zzz-copy/{SID}.jsonl"] == "duplicate-session"
    assert result.sessions[SID].project == "-home-u-app"


THIRD_SID = "33333333-3333-4333-8333-333333333333"


def test_sessions_without_a_main_transcript_are_built_from_their_agent_files(tmp_path: Path) -> None:
    project = tmp_path / "-home-u-app"
    write(project / f"{SID}.jsonl")  # 0 bytes, beside a flat warmup that names it (2.0.x)
    write(project / "agent-0a1b2c3d.jsonl", user("w1", "Warmup", session=SID))
    write(project / "agent-1a1b2c3d.jsonl", user("f1", "go", session=OTHER_SID))  # no main file at all
    write(project / THIRD_SID / "subagents" / "agent-a1b2c3d.jsonl", user("s1", "go", session=THIRD_SID))  # 2.1.x
    write(tmp_path / "-other" / "agent-2a1b2c3d.jsonl", user("f2", "go", session=THIRD_SID))  # filed elsewhere
    write(project / "agent-3a1b2c3d.jsonl", {"type": "user", "message": {"role": "user", "content": "no id"}})
    result = scan(tmp_path)
    states = {sid: (files.main_state, sorted(agent.agent_id for agent in files.agents)) for sid, files in result.sessions.items()}
    assert states == {
        SID: ("empty", ["0a1b2c3d"]),
        OTHER_SID: ("absent", ["1a1b2c3d"]),
        THIRD_SID: ("absent", ["2a1b2c3d", "a1b2c3d"]),
    }
    assert reasons(result) == {"-home-u-app/agent-3a1b2c3d.jsonl": "non-artifact"}
    # A finished flat file whose only record has no final newline still names its session.
    write(project / "agent-4a1b2c3d.jsonl", line(user("f4", "go", session=OTHER_SID)).rstrip(b"\n"))
    assert "4a1b2c3d" in [agent.agent_id for agent in scan(tmp_path).sessions[OTHER_SID].agents]
    # A main transcript that appears later changes the fingerprint even before it has a byte.
    before = result.sessions[OTHER_SID].fingerprint
    write(project / f"{OTHER_SID}.jsonl")
    assert scan(tmp_path).sessions[OTHER_SID].fingerprint != before


def test_file_replaced_after_the_walk_is_unreadable(tmp_path: Path) -> None:
    # Root reads any file whatever its mode, so the portable unreadable case is a file swapped
    # between the walk and the open (a different inode): it must be refused, never read.
    main = minimal_session(tmp_path)
    result = scan(tmp_path)
    ref = result.sessions[SID].main
    main.rename(tmp_path / "moved")
    minimal_session(tmp_path)
    with pytest.raises(UnreadableError) as caught:
        read_bytes(result.root, ref, 1 << 20)
    assert caught.value.reason == "unreadable"


def test_symlink_out_of_root_stops_the_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    minimal_session(corpus)
    outside = tmp_path / "secret.jsonl"
    outside.write_text("{}\n")
    os.symlink(outside, corpus / "-home-u-app" / "agent-evil.jsonl")
    with pytest.raises(ContainmentError):
        scan(corpus)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 3
    err = capsys.readouterr().err
    assert err.startswith("FATAL: corpus containment violation - ") and "agent-evil.jsonl" in err


def test_symlinked_project_folder_out_of_root_stops(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    elsewhere = tmp_path / "elsewhere"
    minimal_session(elsewhere, project="p")
    os.symlink(elsewhere / "p", corpus / "-linked")
    with pytest.raises(ContainmentError):
        scan(corpus)


def test_missing_and_file_roots_are_errors(tmp_path: Path) -> None:
    with pytest.raises(CorpusRootError):
        real_root(tmp_path / "missing")
    (tmp_path / "f").write_text("x")
    with pytest.raises(CorpusRootError):
        real_root(tmp_path / "f")


def test_fingerprint_changes_with_any_file_and_reads_no_content(tmp_path: Path) -> None:
    main = minimal_session(tmp_path)
    first = scan(tmp_path).sessions[SID].fingerprint
    assert scan(tmp_path).sessions[SID].fingerprint == first
    with main.open("ab") as handle:
        handle.write(b"\n")
    second = scan(tmp_path).sessions[SID].fingerprint
    assert second != first
    write(tmp_path / "-home-u-app" / SID / "subagents" / "agent-a2.jsonl", user("s", "x"))
    assert scan(tmp_path).sessions[SID].fingerprint != second


def test_a_project_folder_that_cannot_be_listed_keeps_its_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import os

    corpus, out, cache = tmp_path / "corpus", tmp_path / "out", tmp_path / "cache"
    minimal_session(corpus)
    minimal_session(corpus, project="-other", sid=OTHER_SID)
    assert build(corpus, out, cache) == 0
    real_scandir = os.scandir

    def flaky(path=".", *args):  # noqa: ANN001, ANN202 - os.scandir's own signature
        if isinstance(path, str) and path.endswith("-other"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path, *args)

    monkeypatch.setattr(os, "scandir", flaky)  # for the no-change check's listing and for the walk
    # The failure is simulated: a real one comes with a change of the folder's mode or owner, or of
    # the user running the build, which the no-change check sees. Here the whole build must run.
    (cache / STAMP_FILE).unlink()
    assert build(corpus, out, cache) == 0
    index = json.loads((out / "data" / "index.json").read_text())
    assert {s["session_id"] for s in index["sessions"]} == {SID, OTHER_SID}
    assert index["report"]["unlisted_projects"] == ["-other"]
    assert {"path": "-other/", "reason": "unreadable", "detail": "EACCES", "bytes": None} in index["report"]["skipped"]


@pytest.mark.parametrize("entry", ["command line", "run_build"])
def test_a_build_lists_each_corpus_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    """The walk takes the folders (and their entries' lstat) the no-change check listed for the build's state before."""
    from collections import Counter

    from agenthropic_site.pipeline.build import run_build
    from test_incremental import config

    corpus, out, cache = tmp_path / "corpus", tmp_path / "out", tmp_path / "cache"
    main = minimal_session(corpus)
    write(corpus / "-home-u-app" / SID / "subagents" / "agent-a1b2c3d.jsonl", user("s1", "do it", session=SID))
    write(corpus / "-home-u-app" / SID / "subagents" / "workflows" / "run1" / "agent-w1.jsonl", user("w1", "wf", session=SID))
    write(corpus / "-home-u-app" / "memory" / "notes.md", {"not": "a transcript"})
    minimal_session(corpus, project="-other", sid=OTHER_SID)
    assert build(corpus, out, cache) == 0
    with main.open("ab") as handle:  # a change: the build runs after the check
        handle.write(line(assistant("a2", "msg_2", "req_2", usage(1, 2))))
    folders = {os.path.normpath(folder) for folder, _, _ in os.walk(corpus)}
    assert len(folders) == 8
    listed: Counter[str] = Counter()
    real_scandir = os.scandir

    def counted(path=".", *args):  # noqa: ANN001, ANN202 - os.scandir's own signature
        if isinstance(path, str) and Path(path).is_relative_to(corpus):
            listed[os.path.normpath(path)] += 1
        return real_scandir(path, *args)

    monkeypatch.setattr(os, "scandir", counted)
    if entry == "command line":
        assert build(corpus, out, cache) == 0  # the check before the parser, then the build
    else:
        assert run_build(config(corpus, out, cache)).parsed == 1  # as --watch runs each pass
    assert listed == Counter(folders)


def test_hostile_sidecar_values_never_name_a_path(tmp_path: Path) -> None:
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    minimal_session(corpus)
    folder = corpus / "-home-u-app" / SID / "subagents"
    write(folder / "agent-a1.jsonl", user("s", "x"), assistant("s2", "msg_s", "req_s", usage(1, 1)))
    (folder / "agent-a1.meta.json").write_text(
        '{"agentType":"../../../../etc/passwd","worktreePath":"../../../../etc","toolUseId":"../../x","description":"<script>alert(1)</script>"}'
    )
    assert build(corpus, out, tmp_path / "cache") == 0
    produced = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert all(".." not in rel and "etc" not in rel for rel in produced)
    page = (out / "sessions" / SID / "agents" / "a1.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_nul_bytes_and_invalid_utf8_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    import json

    corpus, out = tmp_path / "corpus", tmp_path / "out"
    main = minimal_session(corpus)
    with main.open("ab") as handle:
        handle.write(b'{"type":"user","message":{"content":"a\x00b"}}\n\xff\xfe\xfd\n{"type":"user","x":"\\udc80"}\n')
    assert build(corpus, out, tmp_path / "cache") == 0
    data = json.loads((out / "data" / "sessions" / f"{SID}.json").read_text())
    assert data["malformed_lines"] == 3
    assert data["tokens"]["output"] == 2


@pytest.mark.parametrize("size", [0, 1, 5_000, 3 << 20])
def test_a_file_that_grows_while_it_is_read_is_read_to_its_end_or_refused_past_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                                        size: int) -> None:
    """The first read asks for the size fstat gave and one byte more; a file larger by then is read on, and past the cap refused."""
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    st = os.lstat(path)
    ref = FileRef("t.jsonl", st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    root = str(tmp_path.resolve())
    assert read_bytes(root, ref, 8 << 20) == data
    real_fstat = os.fstat

    def earlier(fd: int) -> os.stat_result:  # the size as it was a moment before: the file grew since
        found = real_fstat(fd)
        return os.stat_result((*found[:6], max(found.st_size - 4096, 0), *found[7:]))

    monkeypatch.setattr(safe_io.os, "fstat", earlier)
    assert read_bytes(root, ref, 8 << 20) == data
    if size > 4096:
        with pytest.raises(UnreadableError, match="grew past the cap"):
            read_bytes(root, ref, size - 1)
