"""The process aside: its walk, manifest and missing files are what the build would find itself, and nothing else is taken.

`agenthropic build`, when the stamp of the same command line no longer holds, forks a process
that walks the corpus folders the check listed, reads the output folder's manifest and looks at
every file the last build published while the build imports and reads (pipeline/stamp.py
`look_aside`); the build takes the walk (`kept_walk`), the manifest (`kept_manifest`, for the same
bytes) and keeps the files on its answer (`kept_missing`). These tests fork from the test process
(one thread) the way the command does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agenthropic_site.corpus import ContainmentError, FileRef, scan_corpus
from agenthropic_site.corpus import walk as walk_module
from agenthropic_site.corpus.sniff import sniff_session_id
from agenthropic_site.pipeline import stamp
from agenthropic_site.render import folders, markdown
from agenthropic_site.render.manifest import read_manifest
from agenthropic_site.render.writer import SiteWriter
from conftest import DEMO_CORPUS, DEMO_NOW, build, build_subprocess, run_entry
from test_hostile_output import SIMPLE, append_request
from test_incremental import after_the_manifest, assert_equals_cold_build

GRAPHED = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"  # a session with agents: pages in agents/ and transcript/
PROJECT = sorted(path.name for path in DEMO_CORPUS.iterdir() if path.is_dir())[0]


@pytest.fixture(autouse=True)
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run these tests as on a machine of two processors or more, whatever this one has (on one, no process aside is started)."""
    monkeypatch.setattr(stamp, "cores", lambda: 2)


@pytest.fixture(autouse=True)
def aside_ended() -> Iterator[None]:
    """End the process aside a test started, as the build does when it ends (pipeline/build.py run_build)."""
    yield
    stamp.end_aside()


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
    after_the_manifest(out)
    (out / "search.html").write_bytes(b"<p>edited</p>\n")  # a page changed since it was published
    gone.add("search.html")
    return gone


def plain_missing(out: Path) -> set[str]:
    """Return what the writer finds missing on its own, looking at every published file."""
    published = read_manifest(out)
    writer = SiteWriter(out, previous=dict(published.files), previous_ns=published.written_ns)
    try:
        return set(writer.missing(sorted(published.files)))
    finally:
        writer.close_folders()


def wait_for_the_answer() -> None:
    """Wait until the process aside has given its last answer (the missing files), without taking it."""
    (aside,) = stamp._aside
    assert aside.answer(stamp.MISSING) is not None, "the process aside gave no answer in time"


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
    stamp.end_aside()  # each build ends its own
    stamp.look_aside(str(built))
    assert stamp.kept_missing(tmp_path / "elsewhere", digest) is None  # another output folder
    stamp.end_aside()
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


def test_on_one_processor_no_process_aside_is_started(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stamp, "cores", lambda: 1)
    stamp.look_aside(str(built))
    assert stamp._aside == []
    assert stamp.kept_missing(built, read_manifest(built).digest) is None


def test_a_process_held_to_one_processor_counts_one() -> None:
    probe = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); from agenthropic_site.pipeline import stamp; print(stamp.cores())"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "1", done.stderr


def test_a_process_aside_that_does_not_answer_in_time_is_stopped(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(*args: object) -> bytes:
        time.sleep(60)
        return b""

    monkeypatch.setattr(folders, "missing_answer", hang)  # the forked child runs this copy of the module
    monkeypatch.setattr(stamp, "ASIDE_WAIT_SECONDS", 0.5)
    stamp.look_aside(str(built))
    pid = stamp._aside[0].pid
    started = time.monotonic()
    assert stamp.kept_missing(built, read_manifest(built).digest) is None
    assert time.monotonic() - started < 30
    assert stamp.kept_markdown() is None  # no answer, so no texts asked of it
    stamp.end_aside()  # as the build does when it ends
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped and reaped


def test_a_process_aside_stuck_in_its_walk_is_waited_for_once_and_stopped(
    built: Path, demo_corpus: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def hang(*args: object) -> None:
        time.sleep(120)

    monkeypatch.setattr(walk_module, "walk_folders", hang)  # the forked child runs this copy of the module
    monkeypatch.setattr(stamp, "ASIDE_WAIT_SECONDS", 5.0)
    walk = listed_walk(demo_corpus)
    stamp.look_aside(str(built), walk)
    pid = stamp._aside[0].pid
    started = time.monotonic()
    assert stamp.kept_walk(*walk) is None
    assert stamp.kept_manifest(built) is None
    assert stamp.kept_missing(built, read_manifest(built).digest) is None
    assert time.monotonic() - started < 10  # one wait of 5 s, not one for each answer
    stamp.end_aside()
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


def listed_walk(corpus: Path) -> tuple[str, int, int]:
    """List the corpus as the no-change check does (this process keeps the listing); return the walk to ask for."""
    root = os.path.realpath(corpus)
    stamp._corpus({"corpus": str(corpus), "max_depth": "8"})
    return root, 1 << 30, 8


def sniffed(corpus: Path) -> Callable[[FileRef], str | None]:
    """Return the build's way of finding a flat agent file's session (without a cache: it reads the file)."""
    return lambda ref: sniff_session_id(os.path.realpath(corpus), ref)


def test_the_walk_made_aside_assembles_the_sessions_the_build_walks_itself(built: Path, demo_corpus: Path) -> None:
    # The demo has every layout: flat agent files (the build gives them their sessions), subagent
    # and workflow folders, sidecars, an agent folder without its main transcript, files skipped.
    walk = listed_walk(demo_corpus)
    stamp.look_aside(str(built), walk)
    walked = stamp.kept_walk(*walk)
    assert walked is not None and walked.flat and walked.skips
    assert stamp.kept_walk(*walk) is None  # taken once
    assert stamp.kept_missing(built, read_manifest(built).digest) == frozenset()
    aside = scan_corpus(walk[0], walk[1], walk[2], sniffed(demo_corpus), walked=walked)
    assert aside == scan_corpus(walk[0], walk[1], walk[2], sniffed(demo_corpus))


def test_a_walk_of_another_root_or_with_other_limits_is_never_taken(built: Path, demo_corpus: Path, tmp_path: Path) -> None:
    root, max_bytes, depth = listed_walk(demo_corpus)
    for asked in ((str(tmp_path), max_bytes, depth), (root, max_bytes - 1, depth), (root, max_bytes, depth + 1)):
        stamp.look_aside(str(built), (root, max_bytes, depth))
        assert stamp.kept_walk(*asked) is None, asked
        assert stamp.kept_missing(built, read_manifest(built).digest) == frozenset()  # the other answers stand
        stamp.end_aside()
    stamp.look_aside(str(built), (str(tmp_path), max_bytes, depth))  # not the root this process listed: no walk made
    assert stamp.kept_walk(str(tmp_path), max_bytes, depth) is None
    stamp.kept_missing(built, None)


def test_a_link_out_of_the_corpus_is_met_by_the_build_not_the_process_aside(built: Path, demo_corpus: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (demo_corpus / PROJECT / "escape").symlink_to(outside, target_is_directory=True)
    walk = listed_walk(demo_corpus)
    stamp.look_aside(str(built), walk)
    assert stamp.kept_walk(*walk) is None
    with pytest.raises(ContainmentError):
        scan_corpus(walk[0], walk[1], walk[2], sniffed(demo_corpus), stamp.corpus_folders(walk[0]))
    stamp.kept_missing(built, None)


def test_the_manifest_read_aside_is_taken_only_for_the_same_bytes(built: Path) -> None:
    stamp.look_aside(str(built))
    kept = stamp.kept_manifest(built)
    assert kept is not None and kept == read_manifest(built)
    assert read_manifest(built, kept) is kept
    assert stamp.kept_manifest(built.parent / "elsewhere") is None  # another output folder
    stamp.kept_missing(built, kept.digest)
    stamp.end_aside()
    stamp.look_aside(str(built))
    wait_for_the_answer()  # it read the manifest before the change below
    manifest = built / ".agenthropic" / "manifest"
    lines = manifest.read_bytes().splitlines(keepends=True)  # its header, then a line a file
    manifest.write_bytes(b"".join(lines[:-1]))  # one file fewer
    kept = stamp.kept_manifest(built)
    assert kept is not None and len(kept.files) == len(lines) - 1
    fresh = read_manifest(built, kept)
    assert fresh is not kept and fresh == read_manifest(built) and len(fresh.files) == len(lines) - 2
    stamp.kept_missing(built, fresh.digest)


# Notes which answers of the process aside a build took (as on a machine of two processors or more).
ANSWERS_TAKEN = (
    "from agenthropic_site.pipeline import stamp\n"
    "stamp.cores = lambda: 2\n"
    "taken = []\n"
    "def counted(name):\n"
    "    real = getattr(stamp, name)\n"
    "    def call(*args):\n"
    "        answer = real(*args)\n"
    "        taken.append(f'{name}:{answer is not None}')\n"
    "        return answer\n"
    "    setattr(stamp, name, call)\n"
    "for name in ('kept_walk', 'kept_manifest', 'kept_missing'):\n"
    "    counted(name)\n"
)


def test_a_build_run_as_a_command_takes_the_walk_and_manifest_made_aside_and_equals_a_cold_build(demo_corpus: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    words = ["build", "--corpus", str(demo_corpus), "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW, "-q"]
    said = []
    for appended in (False, True):
        if appended:
            append_request(demo_corpus)  # the stamp no longer holds: the process aside walks and looks
        said.append(run_entry(tmp_path / "probe.py", words, ANSWERS_TAKEN, "' '.join(taken)")[1])
    assert "True" not in said[0]  # a first build: no stamp, no process aside
    assert said[1] == "kept_walk:True kept_manifest:True kept_missing:True"
    assert_equals_cold_build(demo_corpus, out, tmp_path)


# Markdown the process aside renders: every kind of text the renderer treats specially, and hostile ones.
MARKDOWN_TEXTS = (
    "# A title\n\n*stressed* `code` [a web link](https://example.com) [a file](src/app.py) [mail](mailto:a@b.c)",
    "<script>alert(1)</script> <b>raw HTML</b> [js](javascript:alert(1)) ![a picture](data:image/png;base64," + "A" * 400 + ")",
    "",
    "text beyond the Basic Multilingual Plane 😀, a line separator \u2028 and a NUL \0 byte",
    "```python\nprint('<b>')\n```\n\n> a quote\n\n1. one\n2. two",
)


def test_the_process_aside_renders_markdown_as_this_process_does(built: Path) -> None:
    stamp.look_aside(str(built))
    wait_for_the_answer()
    render = stamp.kept_markdown()
    assert render is not None
    for text in MARKDOWN_TEXTS:
        assert render(text) == markdown._renderer().render(text), text
    pid = os.fork()
    if pid == 0:  # a worker forked from the build shares the pipes: it renders for itself
        os._exit(0 if render("*x*") is None else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert render("*x*") == "<p><em>x</em></p>\n"  # the build's own asking is unaffected


def test_texts_past_the_process_asides_share_are_left_to_the_build(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stamp, "ASIDE_TEXT_BYTES", 8)
    stamp.look_aside(str(built))
    wait_for_the_answer()
    render = stamp.kept_markdown()
    assert render is not None
    assert render("*abc*") == "<p><em>abc</em></p>\n"  # 5 bytes
    assert render("0123456789") is None  # 15 bytes asked in all
    assert render("*d*") == "<p><em>d</em></p>\n"  # 8


def test_a_process_aside_that_ended_renders_nothing(built: Path) -> None:
    stamp.look_aside(str(built))
    wait_for_the_answer()
    os.kill(stamp._aside[0].pid, signal.SIGKILL)
    render = stamp.kept_markdown()
    assert render is not None and render("*x*") is None
    assert render("*y*") is None  # given up: not asked again


def test_a_process_aside_that_does_not_reply_in_time_is_asked_nothing_more(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def silent(texts: Iterator[bytes], reply: Callable[[bytes], None]) -> None:
        for _ in texts:
            time.sleep(60)  # the reply would come after the build gave up on it

    monkeypatch.setattr(markdown, "serve", silent)  # the forked child runs this copy of the module
    monkeypatch.setattr(stamp, "ASIDE_WAIT_SECONDS", 0.5)
    stamp.look_aside(str(built))
    wait_for_the_answer()
    render = stamp.kept_markdown()
    assert render is not None and render("*x*") is None
    started = time.monotonic()
    assert render("*y*") is None  # not asked: a late reply must never be taken for this text's
    assert time.monotonic() - started < 0.4


def test_serve_replies_to_a_text_it_cannot_render_with_a_refusal() -> None:
    replies: list[bytes] = []
    markdown.serve(iter([b"*a*", b"\xff not UTF-8", "😀".encode()]), replies.append)
    assert replies == [b"=<p><em>a</em></p>\n", b"!", "=<p>😀</p>\n".encode()]


def test_a_refused_text_is_rendered_by_the_build_which_renders_every_later_one_itself() -> None:
    asked: list[str] = []

    def refuse(text: str) -> str | None:
        asked.append(text)
        return None

    markdown._renderer.cache_clear()  # as in a build that has not rendered a text yet
    with markdown.rendered_aside(refuse):
        assert markdown._rendered("*a*") == "<p><em>a</em></p>\n"
        assert markdown._rendered("*b*") == "<p><em>b</em></p>\n"
    assert asked == ["*a*"]


def append_reply(corpus: Path, text: str) -> None:
    """Append a new assistant reply saying `text` to a session: its page renders one new text."""
    path = next(corpus.rglob(f"{SIMPLE}.jsonl"))
    records = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    last = [r for r in records if r.get("type") == "assistant" and "usage" in r.get("message", {})][-1]
    n = len(records)
    last["parentUuid"], last["uuid"] = last["uuid"], f"aside-{n}"
    last["message"]["id"], last["requestId"] = f"msg_aside_{n}", f"req_aside_{n}"
    last["message"]["content"] = [{"type": "text", "text": text}]
    with path.open("ab") as handle:
        handle.write(json.dumps(last).encode() + b"\n")


# Counts the texts a build had its process aside render (as on a machine of two processors or more).
RENDERED_ASIDE = (
    "from agenthropic_site.pipeline import stamp\n"
    "stamp.cores = lambda: 2\n"
    "rendered = []\n"
    "asked = stamp._Aside.render\n"
    "def counted(self, text):\n"
    "    html = asked(self, text)\n"
    "    rendered.append(html is not None)\n"
    "    return html\n"
    "stamp._Aside.render = counted\n"
)


@pytest.mark.parametrize("share", [None, 0])
def test_a_build_run_as_a_command_has_its_new_texts_rendered_aside_and_equals_a_cold_build(
    demo_corpus: Path, tmp_path: Path, share: int | None,
) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    words = ["build", "--corpus", str(demo_corpus), "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW, "-q"]
    setup = RENDERED_ASIDE + ("" if share is None else f"stamp.ASIDE_TEXT_BYTES = {share}\n")
    report = "'markdown_it' in sys.modules, sum(rendered), len(rendered)"
    run_entry(tmp_path / "probe.py", words, setup, report)
    for text in MARKDOWN_TEXTS[:2]:
        append_reply(demo_corpus, text)
    imported, aside, asked = run_entry(tmp_path / "probe.py", words, setup, report)[1].split()
    if share is None:  # every new text (two, and wherever the page shows them again) rendered aside
        assert imported == "False" and int(aside) == int(asked) >= len(MARKDOWN_TEXTS[:2])
    else:  # the build asks for its first text, then renders it and every later one itself
        assert (imported, aside, asked) == ("True", "0", "1")
    assert_equals_cold_build(demo_corpus, out, tmp_path)
