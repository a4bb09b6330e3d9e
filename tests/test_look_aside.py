"""The output folder looked at by a process aside: what it finds missing is what the build would find, and nothing else is taken.

`agenthropic build`, when the stamp of the same command line no longer holds, forks a process
that looks at every file the last build published while the build imports and reads
(pipeline/stamp.py `look_aside`); the build keeps those files on its answer (`kept_missing`).
These tests fork from the test process (one thread) the way the command does.
"""

from __future__ import annotations

import os
import select
import shutil
import threading
import time
from pathlib import Path

import pytest

from agenthropic_site.pipeline import stamp
from agenthropic_site.render import folders
from agenthropic_site.render.manifest import read_manifest
from agenthropic_site.render.writer import SiteWriter
from conftest import build, build_subprocess
from test_hostile_output import SIMPLE, append_request

GRAPHED = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"  # a session with agents: pages in agents/ and transcript/


@pytest.fixture
def built(demo_corpus: Path, tmp_path: Path) -> Path:
    """The demo corpus built once into tmp_path/site; returns the output folder."""
    assert build(demo_corpus, tmp_path / "site", tmp_path / "cache") in (0, 1)
    return tmp_path / "site"


def spoil(out: Path, elsewhere: Path) -> set[str]:
    """Take published files away in every way a folder can lose them; return their output paths (what the test did)."""
    gone = {f"data/sessions/{SIMPLE}.json", f"sessions/{SIMPLE}/index.html"}
    (out / f"data/sessions/{SIMPLE}.json").unlink()
    (out / f"sessions/{SIMPLE}/index.html").unlink()
    (out / f"sessions/{SIMPLE}/index.html").symlink_to(out / "index.html")  # a link in a page's place is no page
    agents = out / "sessions" / GRAPHED / "agents"
    gone |= {path.relative_to(out).as_posix() for path in agents.rglob("*") if path.is_file()}
    shutil.move(agents, elsewhere)
    agents.symlink_to(elsewhere, target_is_directory=True)  # a linked folder: every file under it is gone
    page = out / "report.html"
    page.unlink()
    page.mkdir()  # a folder in a page's place
    gone.add("report.html")
    return gone


def plain_missing(out: Path) -> set[str]:
    """Return what the writer finds missing on its own, looking at every published file."""
    published = read_manifest(out)
    writer = SiteWriter(out, previous=dict(published.files))
    try:
        return set(writer.missing(sorted(published.files)))
    finally:
        writer.close_folders()


def wait_for_the_answer() -> None:
    """Wait until the process aside has written its answer (it writes it whole, at its end), without taking it."""
    ((_, _, read),) = stamp._aside
    assert select.select([read], [], [], 60)[0], "the process aside gave no answer in a minute"


def test_the_process_aside_finds_missing_exactly_what_the_writer_finds(built: Path, tmp_path: Path) -> None:
    gone = spoil(built, tmp_path / "moved-agents")
    stamp.look_aside(str(built))
    seen = stamp.kept_missing(built, read_manifest(built).digest)
    assert seen == gone == plain_missing(built)


def test_the_writer_takes_the_answer_for_published_files_and_looks_at_others_itself(built: Path, tmp_path: Path) -> None:
    assert f"sessions/{SIMPLE}/index.html" in spoil(built, tmp_path / "moved-agents")  # gone from the folder...
    published = read_manifest(built)
    told = frozenset({f"sessions/{GRAPHED}/index.html"})  # ...yet an answer that says otherwise is taken as said
    writer = SiteWriter(built, previous=dict(published.files), seen_missing=told)
    try:
        assert writer.missing([f"sessions/{GRAPHED}/index.html", f"sessions/{SIMPLE}/index.html"]) == [f"sessions/{GRAPHED}/index.html"]
        assert writer.missing(["not/published.html", "index.html"]) == ["not/published.html"]  # not in the manifest: looked for
    finally:
        writer.close_folders()


def test_an_answer_about_another_manifest_or_folder_is_never_taken(built: Path, demo_corpus: Path, tmp_path: Path) -> None:
    digest = read_manifest(built).digest
    stamp.look_aside(str(built))
    assert stamp.kept_missing(built, "0" * 64) is None  # the build read another manifest
    stamp.look_aside(str(built))
    assert stamp.kept_missing(tmp_path / "elsewhere", digest) is None  # another output folder
    copy = tmp_path / "copy"
    shutil.copytree(built, copy, symlinks=True)
    stamp.look_aside(str(built))
    wait_for_the_answer()  # it looked at the first folder: what happens to the path afterwards is not in it
    shutil.rmtree(built)
    copy.rename(built)  # the same path, now another folder with the same manifest
    assert read_manifest(built).digest == digest
    assert stamp.kept_missing(built, digest) is None
    assert stamp.kept_missing(built, digest) is None  # taken once: nothing is left to take


def test_an_unreadable_folder_gets_no_answer(tmp_path: Path) -> None:
    stamp.look_aside(str(tmp_path / "never-built"))
    assert stamp.kept_missing(tmp_path / "never-built", None) is None
    assert folders.missing_answer(str(tmp_path / "never-built"), ".agenthropic", "manifest") == b""


def test_a_manifest_that_names_a_path_outside_the_folder_gets_no_answer(built: Path) -> None:
    manifest = built / ".agenthropic" / "manifest"
    manifest.write_bytes(manifest.read_bytes() + b"0" * 64 + b" ../../etc/passwd\n")
    assert folders.missing_answer(str(built), ".agenthropic", "manifest") == b""


def test_a_process_with_threads_is_never_forked(built: Path) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        stamp.look_aside(str(built))
        assert stamp.kept_missing(built, read_manifest(built).digest) is None
    finally:
        release.set()
        other.join()


def test_a_process_aside_that_does_not_answer_in_time_is_stopped(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(*args: object) -> bytes:
        time.sleep(60)
        return b""

    monkeypatch.setattr(folders, "missing_answer", hang)  # the forked child runs this copy of the module
    monkeypatch.setattr(stamp, "ASIDE_WAIT_SECONDS", 0.5)
    stamp.look_aside(str(built))
    ((_, pid, _),) = stamp._aside
    started = time.monotonic()
    assert stamp.kept_missing(built, read_manifest(built).digest) is None
    assert time.monotonic() - started < 30
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped and reaped


def test_a_build_run_as_a_command_restores_what_left_the_folder_after_its_last_build(demo_corpus: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    first = build_subprocess(demo_corpus, out, cache)
    assert first.returncode in (0, 1), first.stderr
    before = {path.relative_to(out).as_posix(): path.read_bytes() for path in out.rglob("*") if path.is_file() and ".agenthropic" not in path.parts}
    gone = spoil(out, tmp_path / "moved-agents")
    (out / "sessions" / GRAPHED / "agents").unlink()  # the user removes the link they made: the folder is gone too
    (out / "report.html").rmdir()  # and the folder (a build never removes a folder it did not make: it stops instead)
    append_request(demo_corpus)  # the stamp no longer holds: the process aside looks
    second = build_subprocess(demo_corpus, out, cache)
    assert second.returncode in (0, 1), second.stderr
    after = {path.relative_to(out).as_posix(): path.read_bytes() for path in out.rglob("*") if path.is_file() and ".agenthropic" not in path.parts}
    assert set(after) == set(before)
    assert all(after[rel] == before[rel] for rel in gone)  # each is back as it was (the appended session's pages changed)
