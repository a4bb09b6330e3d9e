"""The output folder is the user's; snapshots hold one whole build (issue 14, hostile-case suite).

Real builds (in-process and as subprocesses), real files, links, SQLite caches and locks.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from collections.abc import Callable

import pytest

from agenthropic_site.audit.archive import read_snapshot
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.cli import main
from agenthropic_site.config import BuildConfig, parse_instant
from agenthropic_site.render import folders, manifest
from agenthropic_site.render.folders import LinkedFolder, OpenFolders
from agenthropic_site.places import MARKER
from agenthropic_site.render.writer import MARKER_TEXT, site_lock
from conftest import DEMO_NOW, SITE_MANIFEST, build, build_subprocess, tree_bytes
from fixtures.generate import generate_scale

CHANGED = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"  # priced, with subagents
STALE = "0f13296b-a8f4-4c55-aece-834412f623c8"  # with a subagent; removed from the corpus by some tests
SIMPLE = "c0d5016d-2080-4194-b317-822e72c2d55c"  # one transcript, nothing else names it
ADDED = "5e55e55e-0000-4000-8000-000000000014"  # a copy of SIMPLE added by a test
FEW_PAGES = 40  # in place of PARALLEL_MIN_PAGES: more sessions than two batches of RENDER_BATCH, so both workers render
# Files of the user's own in the output folder: no build wrote them, so no build may remove them.
USER_FILES = {
    ".git/HEAD": b"ref: refs/heads/gh-pages\n",
    ".git/config": b"[core]\n",
    "CNAME": b"reports.example.com\n",
    "notes.md": b"my notes\n",
    "data/mine.json": b"{}\n",
    f"sessions/{STALE}/notes.txt": b"kept beside a stale page\n",
}


def config(corpus: Path, out: Path, cache: Path, jobs: int = 1) -> BuildConfig:
    return BuildConfig(corpus=corpus, out=out, cache=cache, now=parse_instant(DEMO_NOW), quiet=True, jobs=jobs)


def add_user_files(out: Path) -> None:
    for rel, data in USER_FILES.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)


def assert_user_files_kept(out: Path) -> None:
    assert {rel: (out / rel).read_bytes() for rel in USER_FILES if (out / rel).is_file()} == USER_FILES


def remove_session(corpus: Path, session_id: str) -> None:
    for path in list(corpus.rglob(f"{session_id}*")):
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def append_request(corpus: Path, session_id: str = CHANGED) -> None:
    """Append a copy of the session's last priced request under a new id (its pages change)."""
    path = next(corpus.rglob(f"{session_id}.jsonl"))
    records = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    last = [r for r in records if r.get("type") == "assistant" and "usage" in r.get("message", {})][-1]
    n = len(records)
    last["message"]["id"], last["requestId"], last["uuid"] = f"msg_hostile_{n}", f"req_hostile_{n}", f"hostile-{n}"
    with path.open("ab") as handle:
        handle.write(json.dumps(last).encode() + b"\n")


def staged(out: Path) -> list[Path]:
    """Staged files anywhere under the output folder (beside their pages, as before, or in a staging folder)."""
    return sorted(out.rglob("*.part"))


def wait_for(condition: Callable[[], object], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_build_deletes_only_files_a_build_of_this_site_wrote(demo_corpus: Path, tmp_path: Path) -> None:
    """Stale pages go, the user's files stay, even after a build killed with its pages staged."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1
    add_user_files(out)
    remove_session(demo_corpus, STALE)
    append_request(demo_corpus)
    # A build killed while it waits to publish (a reader holds the site): its render was interrupted.
    command = [sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(demo_corpus), "--out", str(out),
               "--cache", str(cache), "--now", DEMO_NOW, "-q"]
    with site_lock(out, False):
        victim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: staged(out) or victim.poll() is not None, "the build never staged its pages")
            assert victim.poll() is None, "the build published under a reader"
        finally:
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=30)

    assert build(demo_corpus, out, cache) == 1
    assert_user_files_kept(out)
    assert not (out / "sessions" / STALE / "index.html").exists() and not (out / "data" / "sessions" / f"{STALE}.json").exists()
    assert staged(out) == []
    clean = tmp_path / "clean"
    assert build(demo_corpus, clean, tmp_path / "clean-cache") == 1
    assert tree_bytes(out) == {**tree_bytes(clean), **USER_FILES}
    # The manifest names only what builds published, sorted, with no path or time of this machine.
    manifest = (out / SITE_MANIFEST).read_text()
    paths = [line.split(" ", 1)[1] for line in manifest.splitlines()[1:]]
    assert paths == sorted(rel for rel in tree_bytes(clean) if rel != MARKER) == sorted(paths)
    assert str(tmp_path) not in manifest and not set(USER_FILES) & set(paths)


@pytest.mark.parametrize("damage", ["deleted", "corrupt", "other-schema"])
def test_deleting_the_cache_deletes_no_user_file(demo_corpus: Path, tmp_path: Path, damage: str) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1
    add_user_files(out)
    if damage == "deleted":
        shutil.rmtree(cache)
    elif damage == "corrupt":
        (cache / "cache.sqlite3").write_bytes(b"this is not a database\n" * 512)
    else:
        conn = sqlite3.connect(cache / "cache.sqlite3")
        with conn:
            conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
        conn.close()
    remove_session(demo_corpus, STALE)  # and the one page that is stale still goes: the folder's manifest lists it
    assert build(demo_corpus, out, cache) == 1
    assert_user_files_kept(out)
    assert not (out / "sessions" / STALE / "index.html").exists()
    clean = tmp_path / "clean"
    assert build(demo_corpus, clean, tmp_path / "clean-cache") == 1
    assert tree_bytes(out) == {**tree_bytes(clean), **USER_FILES}


def test_a_symlinked_folder_inside_out_is_never_written_through(demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1

    # Deleting: a stale session's folder is now a link to the user's folder holding files of the same names.
    theirs = tmp_path / "theirs"
    shutil.move(out / "sessions" / STALE, theirs)
    (out / "sessions" / STALE).symlink_to(theirs, target_is_directory=True)
    before = tree_bytes(theirs)
    remove_session(demo_corpus, STALE)
    assert build(demo_corpus, out, cache) == 1
    assert tree_bytes(theirs) == before and before
    assert not (out / "data" / "sessions" / f"{STALE}.json").exists()  # what is really in the folder still goes
    assert (out / "sessions" / STALE).is_symlink()  # and the user's link stays
    (out / "sessions" / STALE).unlink()

    # Writing: a changed session's folder (or the build's own bookkeeping folder) is a link elsewhere.
    for planted in (f"sessions/{CHANGED}", f"sessions/{CHANGED}/agents", ".agenthropic", ".agenthropic/staging"):
        elsewhere = tmp_path / "elsewhere" / planted.replace("/", "_")
        shutil.move(out / planted, elsewhere)
        (out / planted).symlink_to(elsewhere, target_is_directory=True)
        outside, site = tree_bytes(elsewhere), tree_bytes(out)
        append_request(demo_corpus)
        capsys.readouterr()
        assert build(demo_corpus, out, cache) == 1, planted
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "link" in err and "the previous site was left as it was" in err, err
        assert tree_bytes(elsewhere) == outside, f"{planted}: a file was written through the link"
        assert tree_bytes(out) == site and staged(tmp_path) == [], planted
        (out / planted).unlink()
        shutil.move(elsewhere, out / planted)
        assert build(demo_corpus, out, cache) == 1  # without the link, the build goes through
    clean = tmp_path / "clean"
    assert build(demo_corpus, clean, tmp_path / "clean-cache") == 1
    assert tree_bytes(out) == tree_bytes(clean)


def test_a_folder_held_open_then_replaced_by_a_link_is_never_written_through(tmp_path: Path) -> None:
    out, theirs, moved = tmp_path / "out", tmp_path / "theirs", tmp_path / "moved"
    (out / "sessions" / "s1" / "agents").mkdir(parents=True)
    theirs.mkdir()
    folders = OpenFolders(out)
    folders.open(("sessions", "s1"))
    shutil.move(out / "sessions" / "s1", moved)  # the folder it holds goes elsewhere, a link takes its place
    (out / "sessions" / "s1").symlink_to(theirs, target_is_directory=True)
    held = folders.open(("sessions", "s1", "agents"), create=True)  # below the folder it holds, not through the link
    assert os.fstat(held).st_ino == (moved / "agents").stat().st_ino
    os.mkdir("made", dir_fd=held)
    assert (moved / "agents" / "made").is_dir() and list(theirs.iterdir()) == []
    assert pickle.loads(pickle.dumps(folders))._fds == []  # a worker gets none of this process's descriptors
    folders.close()
    with pytest.raises(LinkedFolder):  # walked again, the link is refused
        OpenFolders(out).open(("sessions", "s1", "agents"))


def test_an_append_opens_each_output_folder_about_once(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    assert build(demo_corpus, out, tmp_path / "cache") == 1
    append_request(demo_corpus)
    folders_opened: list[str] = []

    class CountingOs:
        """The os module as the output folder's walker sees it, with each folder it opens noted."""

        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        def open(self, path: str, flags: int, *args: object, **kwargs: object) -> int:
            folders_opened.append(str(path))
            return os.open(path, flags, *args, **kwargs)

    monkeypatch.setattr(folders, "os", CountingOs())
    assert build(demo_corpus, out, tmp_path / "cache") == 1
    monkeypatch.undo()
    sessions = len(list((out / "sessions").iterdir()))
    # Each session's folder and its transcript and agents folders once (each session's files are
    # looked at to keep them), and a few site-wide ones: not each folder again for every file.
    assert sessions <= len(folders_opened) <= 3 * sessions + 50, sorted(folders_opened)


def test_a_build_parses_the_manifest_again_only_when_another_build_published_meanwhile(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agenthropic_site.pipeline import build as pipeline_build
    from agenthropic_site.render import writer

    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1
    parsed: list[int] = []
    real_parse = manifest.parse_manifest
    monkeypatch.setattr(manifest, "parse_manifest", lambda data: parsed.append(len(data)) or real_parse(data))
    append_request(demo_corpus)
    pipeline_build._published.clear()  # each build in a process of its own (one that built before knows its manifest)
    assert build(demo_corpus, out, cache) == 1
    assert len(parsed) == 1  # read at the start and again under the lock before publishing: the same bytes
    # Another build publishes between this one's start and its publishing: the manifest is read anew.
    real_finish = writer.SiteWriter.finish

    def after_another_build(self: writer.SiteWriter, digests: dict[str, str]) -> None:
        listed = manifest.parse_manifest((out / SITE_MANIFEST).read_bytes())
        (out / "theirs.html").write_text("published by another build of this folder")
        (out / SITE_MANIFEST).write_bytes(manifest.manifest_bytes({**listed, "theirs.html": ""}))
        real_finish(self, digests)

    monkeypatch.setattr(writer.SiteWriter, "finish", after_another_build)
    parsed.clear()
    append_request(demo_corpus)
    pipeline_build._published.clear()
    assert build(demo_corpus, out, cache) == 1
    assert len(parsed) == 3  # this build's two reads, and the other build's own
    # The other build's file is one this build did not produce: the manifest said so, so it goes.
    assert not (out / "theirs.html").exists() and "theirs.html" not in (out / SITE_MANIFEST).read_text()


def test_two_output_folders_built_from_one_cache_are_both_current(demo_corpus: Path, tmp_path: Path) -> None:
    one, two, cache = tmp_path / "one", tmp_path / "two", tmp_path / "cache"
    run_build(config(demo_corpus, one, cache))
    run_build(config(demo_corpus, two, cache))
    append_request(demo_corpus)
    first = run_build(config(demo_corpus, one, cache))
    second = run_build(config(demo_corpus, two, cache))
    assert first.parsed == 1 and second.parsed == 0  # the cache is current: only the second folder is not
    assert second.pages_written == first.pages_written > 0
    assert tree_bytes(two) == tree_bytes(one)
    assert (two / SITE_MANIFEST).read_bytes() == (one / SITE_MANIFEST).read_bytes()
    # Both current now: a rebuild of either writes and renders nothing.
    for out in (one, two, one):
        again = run_build(config(demo_corpus, out, cache))
        assert (again.pages_written, again.pages_rendered, again.files_removed) == (0, 0, 0), out


@pytest.mark.slow
def test_a_snapshot_taken_during_a_build_never_holds_staged_files(tmp_path: Path, said: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot while a build (with render workers) has staged its pages holds the last whole build only."""
    corpus, out, cache = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache"
    monkeypatch.setattr("agenthropic_site.render.site.PARALLEL_MIN_PAGES", FEW_PAGES)  # render workers for a corpus of a few sessions
    generate_scale(corpus, sessions=FEW_PAGES, seed=14, session_kb=8)
    out.mkdir()
    (out / MARKER).write_bytes(MARKER_TEXT)  # a site with no page yet: what a snapshot may hold
    results = []
    with site_lock(out, False):  # a reader: the build stages everything, then waits to publish
        builder = threading.Thread(target=lambda: results.append(run_build(config(corpus, out, cache, jobs=2))))
        builder.start()
        wait_for(lambda: not builder.is_alive() or any("waiting for it to finish before publishing" in line for line in said),
                 "the build never waited to publish")
        assert builder.is_alive(), "the build published under a reader"
        assert len(staged(out)) > FEW_PAGES  # staged by the render workers and by the build itself
        assert main(["snapshot", "--site", str(out), "--out", str(tmp_path / "during.tar.gz"), "--no-redact"]) == 0
    builder.join(300)
    assert [result.failed for result in results] == [0]
    assert any(line.startswith("rendering the pages of") and "processes" in line for line in said), said
    during = read_snapshot(tmp_path / "during.tar.gz")
    assert during == {MARKER: MARKER_TEXT}, sorted(during)[:5]
    assert staged(out) == [] and list((out / ".agenthropic" / "staging").iterdir()) == []
    assert main(["snapshot", "--site", str(out), "--out", str(tmp_path / "after.tar.gz"), "--no-redact"]) == 0
    after = read_snapshot(tmp_path / "after.tar.gz")
    assert after == tree_bytes(out) and not [rel for rel in after if rel.startswith(".agenthropic/") or rel.endswith(".part")]


def test_a_symlinked_marker_file_is_a_one_line_error(demo_corpus: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "target.txt"
    target.parent.mkdir()
    target.write_bytes(MARKER_TEXT)
    for name, points_to in (("to-a-file", target), ("dangling", tmp_path / "elsewhere" / "not-there")):
        out = tmp_path / name
        out.mkdir()
        (out / MARKER).symlink_to(points_to)
        done = build_subprocess(demo_corpus, out, tmp_path / "cache")
        assert done.returncode == 2, (name, done.stderr)
        assert done.stderr.count("\n") == 1 and MARKER in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert sorted(os.listdir(out)) == [MARKER] and (out / MARKER).is_symlink(), name
        assert target.read_bytes() == MARKER_TEXT and sorted(os.listdir(target.parent)) == ["target.txt"]
    # A site folder whose marker is a link is refused by snapshot and diff too, in one line.
    site = tmp_path / "site"
    assert build(demo_corpus, site, tmp_path / "cache") == 1
    (site / MARKER).unlink()
    (site / MARKER).symlink_to(target)
    snapshot = subprocess.run([sys.executable, "-m", "agenthropic_site", "snapshot", "--site", str(site), "--out", str(tmp_path / "s.tar.gz")],
                              capture_output=True, text=True, timeout=60)
    assert snapshot.returncode == 2 and snapshot.stderr.count("\n") == 1 and MARKER in snapshot.stderr, snapshot.stderr
    diff = subprocess.run([sys.executable, "-m", "agenthropic_site", "diff", str(site), str(site)], capture_output=True, text=True, timeout=60)
    assert diff.returncode == 2 and diff.stderr.count("\n") == 1, diff.stderr


def test_a_build_stopped_while_publishing_leaves_no_file_unlisted(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest lists every file a build may leave before it moves any, so the next build can remove them."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1
    add_user_files(out)
    source = next(demo_corpus.rglob(f"{SIMPLE}.jsonl"))
    (source.parent / f"{ADDED}.jsonl").write_bytes(source.read_bytes().replace(SIMPLE.encode(), ADDED.encode()))
    real_replace = os.replace

    def replace(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
        # The last page fails to move, as on a disk that went away.
        if os.path.basename(dst) == "report.html":
            raise OSError(5, "Input/output error")
        return real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "replace", replace)
    assert build(demo_corpus, out, cache) == 1
    monkeypatch.undo()
    assert (out / "sessions" / ADDED / "index.html").is_file()  # published before the failure
    (source.parent / f"{ADDED}.jsonl").unlink()
    assert build(demo_corpus, out, cache) == 1
    assert not (out / "sessions" / ADDED).exists() and not (out / "data" / "sessions" / f"{ADDED}.json").exists()
    assert_user_files_kept(out)
    clean = tmp_path / "clean"
    assert build(demo_corpus, clean, tmp_path / "clean-cache") == 1
    assert tree_bytes(out) == {**tree_bytes(clean), **USER_FILES}


def test_the_readme_watch_example_never_writes_into_the_demo_site() -> None:
    # Run from this checkout, `build` without --out writes to ./site, the committed demo site:
    # every documented `build --watch` example names its own output folder.
    repo = Path(__file__).resolve().parent.parent
    examples = [line for doc in ("README.md", "docs/usage.md", "hooks/README.md") if (repo / doc).is_file()
                for line in (repo / doc).read_text().splitlines() if "agenthropic build" in line and "--watch" in line]
    assert examples, "the docs show how to keep a site current"
    assert all("--out" in line for line in examples), examples
