"""The no-change check (pipeline/stamp.py): it answers only when the whole build would change nothing."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from agenthropic_site.config import BuildConfig, parse_instant
from agenthropic_site.corpus import UnreadableError
from agenthropic_site.pipeline import build as build_module
from agenthropic_site.pipeline import parsing, stamp
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.cli import main
from conftest import DEMO_CORPUS, DEMO_NOW
from test_incremental import SESSION, config

PROJECT = "-home-user-projects-api-server"  # SESSION's project: its sessions, subagents and flat agent files


@pytest.fixture
def one_project(tmp_path: Path) -> Path:
    """A corpus of one demo project (a few sessions, subagent folders, flat agent files)."""
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS / PROJECT, corpus / PROJECT)
    return corpus


def _append(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(path.read_bytes().splitlines(keepends=True)[-1])


def _theme(tmp_path: Path) -> Path:
    static = tmp_path / "theme" / "static"
    static.mkdir(parents=True, exist_ok=True)
    (static / "extra.css").write_text("body { margin: 0 }\n")
    return tmp_path / "theme"


# Each change, made after a build: the check must then say "build", and the build that follows
# must leave a stamp the check accepts again. A change returns the config the next build runs with.
CHANGES: dict[str, Callable[[BuildConfig, Path], object]] = {
    "a line appended to a main transcript": lambda c, t: _append(c.corpus / PROJECT / f"{SESSION}.jsonl"),
    "an agent file's time changed": lambda c, t: os.utime(next((c.corpus / PROJECT).glob("agent-*.jsonl")), (1, 1)),
    "an agent file's mode changed": lambda c, t: next((c.corpus / PROJECT).glob("agent-*.jsonl")).chmod(0o600),
    "a file added beside the sessions": lambda c, t: (c.corpus / PROJECT / "notes.txt").write_text("x"),
    "a folder added deep in a session folder": lambda c, t: (c.corpus / PROJECT / SESSION / "a" / "b").mkdir(parents=True),
    "a project folder added": lambda c, t: (c.corpus / "-home-user-new").mkdir(),
    "a hook event spooled": lambda c, t: (c.cache / "hooks").mkdir(exist_ok=True) or (c.cache / "hooks" / "spool.jsonl").write_text("{}\n"),
    "a page deleted from the site": lambda c, t: (c.out / "sessions" / SESSION / "index.html").unlink(),
    "the manifest rewritten": lambda c, t: (c.out / ".agenthropic" / "manifest").write_bytes((c.out / ".agenthropic" / "manifest").read_bytes()),
    "the cache file touched": lambda c, t: os.utime(c.cache / "cache.sqlite3", (2, 2)),
    "the folder's claim touched": lambda c, t: os.utime(c.out / ".agenthropic-site", (3, 3)),
    "another zone": lambda c, t: dataclasses.replace(c, tz="Europe/Paris"),
    "--redact": lambda c, t: dataclasses.replace(c, redact=True),
    "another watchdog": lambda c, t: dataclasses.replace(c, watchdog_minutes=c.watchdog_minutes + 5),
    "another --max-depth": lambda c, t: dataclasses.replace(c, max_depth=c.max_depth + 1),
    "a theme": lambda c, t: dataclasses.replace(c, theme=_theme(t)),
    "a theme file changed": lambda c, t: (_theme(t) / "static" / "extra.css").write_text("body { margin: 1px }\n"),
}


def test_every_kind_of_change_makes_the_build_run_and_nothing_else_does(one_project: Path, tmp_path: Path) -> None:
    settings = config(one_project, tmp_path / "site", tmp_path / "cache")
    run_build(settings)
    assert stamp.unchanged(settings)[0] is not None  # a build was just made: nothing changed since
    for name, change in CHANGES.items():
        changed = change(settings, tmp_path)
        settings = changed if isinstance(changed, BuildConfig) else settings
        assert stamp.unchanged(settings)[0] is None, name
        run_build(settings)
        assert stamp.unchanged(settings)[0] is not None, f"after the build that followed: {name}"


def test_another_output_folder_built_from_the_same_cache_is_a_change(one_project: Path, tmp_path: Path) -> None:
    first = config(one_project, tmp_path / "one", tmp_path / "cache")
    second = dataclasses.replace(first, out=tmp_path / "two")
    run_build(first)
    run_build(second)
    assert stamp.unchanged(second)[0] is not None
    assert stamp.unchanged(first)[0] is None


def test_the_clock_ages_statuses_only_past_the_span_the_stamp_records(demo_corpus: Path, tmp_path: Path) -> None:
    settings = config(demo_corpus, tmp_path / "site", tmp_path / "cache")
    run_build(settings)
    body = json.loads((settings.cache / stamp.STAMP_FILE).read_text())
    # The demo has agents without an ending both before and after its clock's cut-off.
    assert body["stale_after"] is not None and body["fresh_until"] is not None
    watchdog = timedelta(minutes=settings.watchdog_minutes)
    fresh_until = parse_instant(body["fresh_until"]) + watchdog
    stale_after = parse_instant(body["stale_after"]) + watchdog
    for now, same in ((fresh_until, True), (fresh_until + timedelta(milliseconds=1), False), (stale_after + timedelta(milliseconds=1), True),
                      (stale_after, False)):
        assert (stamp.unchanged(dataclasses.replace(settings, now=now))[0] is not None) is same, now


def test_what_it_says_is_what_the_whole_build_says(demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW]
    main(arguments)
    capsys.readouterr()
    runs = []
    for _ in range(2):
        # A whole build that finds nothing to do (and leaves the stamp), then the check alone.
        (tmp_path / "cache" / stamp.STAMP_FILE).unlink()
        for _ in range(2):
            code = main(arguments)
            runs.append((code, *capsys.readouterr()))
            assert (tmp_path / "cache" / stamp.STAMP_FILE).is_file()
    assert runs[0][0] == 1  # the demo has sessions it cannot price
    assert " 0 parsed, " in runs[0][2] and " 0 files written, " in runs[0][2], runs[0]
    assert all(run == runs[0] for run in runs), runs


def test_the_check_loads_nothing_of_the_pipeline(demo_corpus: Path, tmp_path: Path) -> None:
    arguments = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-q"]
    probe = ("import sys; from agenthropic_site.cli import main; code = main(sys.argv[1:]); "
             "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'markdown_it', 'networkx', 'sqlite3', 'orjson') "
             "or m.startswith(('agenthropic_site.pipeline.build', 'agenthropic_site.cache', 'agenthropic_site.parse'))))")
    first = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, timeout=120)
    again = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, timeout=60)
    assert "agenthropic_site.pipeline.build" in first.stdout  # the first build ran the pipeline
    assert again.stdout.strip() == "1 []", again.stdout + again.stderr


def test_a_build_that_would_read_a_session_again_leaves_no_stamp(one_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = config(one_project, tmp_path / "site", tmp_path / "cache")
    real_read = parsing.read_bytes

    def flaky(root: str, ref, max_bytes: int) -> bytes:
        if "agent-" in ref.rel and "/subagents/" in ref.rel:
            raise UnreadableError("unreadable", "planted")
        return real_read(root, ref, max_bytes)

    monkeypatch.setattr(parsing, "read_bytes", flaky)
    result = run_build(settings)
    assert result.read_skips and result.no_change is None
    assert not (settings.cache / stamp.STAMP_FILE).exists()
    assert stamp.unchanged(settings)[0] is None


def test_a_change_made_while_a_build_runs_is_read_by_the_next(one_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = config(one_project, tmp_path / "site", tmp_path / "cache")
    real_ingest = build_module.scan_and_ingest

    def ingest_then_append(*args, **kwargs):
        answer = real_ingest(*args, **kwargs)
        _append(one_project / PROJECT / f"{SESSION}.jsonl")  # after the walk and the parse: this build never sees it
        return answer

    monkeypatch.setattr(build_module, "scan_and_ingest", ingest_then_append)
    run_build(settings)
    monkeypatch.undo()
    assert stamp.unchanged(settings)[0] is None
    assert run_build(settings).parsed == 1
