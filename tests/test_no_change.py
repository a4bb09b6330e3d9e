"""The no-change check (pipeline/stamp.py): it answers only when the whole build would change nothing."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import agenthropic_site
from agenthropic_site import code_identity
from agenthropic_site.config import EARLIEST_CUTOFF, BuildConfig, parse_instant, stale_cutoff
from agenthropic_site.corpus import UnreadableError
from agenthropic_site.pipeline import build as build_module
from agenthropic_site.pipeline import parsing, stamp
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.cli import main
from conftest import DEMO_CORPUS, DEMO_NOW, run_entry
from test_incremental import SESSION, after_the_manifest, config

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
    "a page edited in the site": lambda c, t: after_the_manifest(c.out) or (c.out / "index.html").write_bytes(b"<p>edited</p>\n"),
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
    body = stamp.read(settings.cache)
    assert body is not None
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


# What a run loaded of the package, and of the standard library's slower modules, printed with its
# exit code: the console entry point runs as `agenthropic` does, in a process of its own.
ENTRY_PROBE = (
    "import sys; from agenthropic_site.entry import main; sys.argv[0] = 'agenthropic'; code = main(); "
    "print(code, sorted(m for m in sys.modules if m.startswith('agenthropic_site') or m in "
    "('argparse', 'dataclasses', 'datetime', 'hashlib', 'json', 'pathlib', 'typing')), file=sys.stderr); sys.exit(code)"
)
# All that a build answered from the stamp before its options are parsed may load.
ANSWERED_EARLY = "['agenthropic_site', 'agenthropic_site.commands', 'agenthropic_site.commands.summary', 'agenthropic_site.digits', " \
                 "'agenthropic_site.entry', 'agenthropic_site.errors', 'agenthropic_site.heap', 'agenthropic_site.pipeline', " \
                 "'agenthropic_site.pipeline.stamp', 'agenthropic_site.places']"


def _entry(words: list[str], cwd: Path, **env: str | None) -> tuple[int, str, str, bool]:
    """Run `agenthropic WORDS` in a process of its own.

    Return its exit code, stdout, stderr (less the probe's line) and whether the stamp answered it before the parser loaded.
    """
    environ = {key: value for key, value in {**os.environ, **env}.items() if value is not None}
    done = subprocess.run([sys.executable, "-c", ENTRY_PROBE, *words], capture_output=True, text=True, timeout=120, cwd=cwd, env=environ)
    *said, probe = done.stderr.splitlines()
    code, loaded = probe.split(" ", 1)
    assert int(code) == done.returncode, done.stderr
    return done.returncode, done.stdout, "\n".join(said), loaded == ANSWERED_EARLY


def test_the_same_command_line_is_answered_before_its_options_are_parsed_and_says_what_the_build_says(demo_corpus: Path, tmp_path: Path) -> None:
    words = ["build", "--corpus", str(demo_corpus), "--out", "site", "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW]
    first = _entry(words, tmp_path)
    assert first[0] == 1 and not first[3]  # a first build: the demo has sessions it cannot price
    parsed = _entry(words, tmp_path)  # the stamp the first build left has its command line: answered early
    assert parsed[3] and parsed[:3] == _entry(words, tmp_path)[:3]
    (tmp_path / "cache" / stamp.STAMP_FILE).unlink()
    whole = _entry(words, tmp_path)  # nothing changed, no stamp: the whole build runs and says the same
    assert not whole[3] and whole[:3] == parsed[:3]
    assert " 0 parsed, " in whole[2] and str(tmp_path / "site" / "index.html") in whole[1]


def test_another_command_line_folder_or_environment_is_answered_only_after_its_options_are_parsed(demo_corpus: Path, tmp_path: Path) -> None:
    words = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-q"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _entry(words, tmp_path)
    assert _entry(words, tmp_path)[3]
    for name, (run_words, cwd, env) in {
        "another word": (words + ["--jobs", "1"], tmp_path, {}),
        "another folder": (words, elsewhere, {}),
        "another XDG_CACHE_HOME": (words, tmp_path, {"XDG_CACHE_HOME": str(elsewhere)}),
        "SOURCE_DATE_EPOCH set": (words, tmp_path, {"SOURCE_DATE_EPOCH": "0"}),
    }.items():
        code, _, said, early = _entry(run_words, cwd, **env)
        assert (code, said, early) == (1, "agenthropic: some sessions are left out of the cost totals; see report.html", False), name
        # That answer, from the stamp once the options were parsed, left the stamp keyed on this command line.
        assert _entry(run_words, cwd, **env)[3], name
        assert not _entry(words, tmp_path)[3] and _entry(words, tmp_path)[3], name
    verbose = [*words[:-1], "-v"]  # -v runs the build, to explain each decision
    for _ in range(2):
        code, _, said, early = _entry(verbose, tmp_path)
        assert not early and " 0 parsed, " in said, said


def test_a_wall_clock_build_is_answered_at_the_clock_of_the_check(demo_corpus: Path, tmp_path: Path) -> None:
    words = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "-q"]
    _entry(words, tmp_path, SOURCE_DATE_EPOCH=None)
    assert _entry(words, tmp_path, SOURCE_DATE_EPOCH=None)[3]
    body = stamp.read(tmp_path / "cache")
    assert body is not None and body["clock"] == "wall"
    # A stamp that holds only until a clock cut-off already past (an agent's status would age since).
    (tmp_path / "cache" / stamp.STAMP_FILE).write_bytes(stamp._encode({**body, "fresh_until": body["cutoff"]}))
    assert not _entry(words, tmp_path, SOURCE_DATE_EPOCH=None)[3]


# "²" is a digit to str.isdigit() that int() refuses, and int() refuses more than 4,300 digits: either,
# let through to int(), ended the build with a traceback.
@pytest.mark.parametrize("damage", ["truncated", "a length too long", "a count not a number", "not a stamp", "a length of 5,000 digits",
                                    "a count in other digits"])
def test_a_damaged_stamp_is_never_trusted(demo_corpus: Path, tmp_path: Path, damage: str) -> None:
    words = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-q"]
    _entry(words, tmp_path)
    path = tmp_path / "cache" / stamp.STAMP_FILE
    data = path.read_bytes()
    damaged = {
        "truncated": data[: len(data) // 2],
        "a length too long": data.replace(b"\nsessions ", b"\nsessions 9", 1),
        "a count not a number": data.replace(b"\nsessions 2\n21\n", b"\nsessions 2\n2x\n", 1),  # the demo's 21 sessions
        "not a stamp": b"{}" + data,
        "a length of 5,000 digits": data.replace(b"\nsessions 2\n", b"\nsessions " + b"9" * 5000 + b"\n", 1),
        "a count in other digits": data.replace(b"\nsessions 2\n21\n", "\nsessions 2\n\u00b2\n".encode(), 1),
    }[damage]
    assert damaged != data
    path.write_bytes(damaged)
    assert stamp.read(tmp_path / "cache") is None
    code, _, said, early = _entry(words, tmp_path)
    assert (code, early) == (1, False) and "Traceback" not in said


# Watchdog spans that reach back before the year 1000 (the year then written with its zeros) and past the year 1
# (the earliest cut-off), as well as ordinary ones: `--watchdog-minutes` takes any positive number.
@given(st.integers(min_value=100_000 * 60 * 10**9, max_value=250_000_000_000 * 10**9),
       st.one_of(st.integers(min_value=1, max_value=100_000), st.integers(min_value=100_000, max_value=10**20)))
@example(now_ns=1_780_000_000 * 10**9, minutes=1_000_000_000)
@example(now_ns=1_780_000_000 * 10**9, minutes=99_999_999_999_999_999)
def test_the_wall_cut_off_is_the_config_cut_off(now_ns: int, minutes: int) -> None:
    now = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=now_ns // 1000)
    cutoff = stale_cutoff(now, minutes)
    assert stamp.wall_cutoff(now_ns // 1000 * 1000, minutes) == cutoff
    # As transcripts write instants (parse/fields.py), so that comparing them as text compares the instants.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", cutoff)
    assert cutoff == EARLIEST_CUTOFF or parse_instant(cutoff) == (now - timedelta(minutes=minutes)).replace(microsecond=now.microsecond // 1000 * 1000)


def test_a_build_run_from_a_deleted_folder_builds_and_keys_no_stamp_on_it(demo_corpus: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    words = ["build", "--corpus", str(demo_corpus), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "-q"]
    script = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); from agenthropic_site.entry import main; sys.exit(main())"
    for _ in range(2):  # a first build, then one with nothing to do: neither answered from the stamp
        done = subprocess.run([sys.executable, "-c", script, *words], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        gone.mkdir()
    body = stamp.read(tmp_path / "cache")
    assert body is not None and "invocation" not in body


# Counts the package's source files a build reads (code_identity reads them with Path.read_bytes).
SOURCE_READS = (
    "import pathlib\n"
    "read = pathlib.Path.read_bytes\n"
    "sources = []\n"
    "def counted(path):\n"
    "    sources.append(path.suffix == '.py')\n"
    "    return read(path)\n"
    "pathlib.Path.read_bytes = counted\n"
)


def test_a_build_whose_source_files_the_stamp_listed_takes_the_code_identity_it_recorded(one_project: Path, tmp_path: Path) -> None:
    words = ["build", "--corpus", str(one_project), "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW,
             "-q", "--jobs", "1"]
    runs = []
    for _ in range(2):
        _, said = run_entry(tmp_path / "probe.py", words, SOURCE_READS, "sum(sources), __import__('agenthropic_site').code_identity()")
        runs.append(said.split(" "))
        _append(one_project / PROJECT / f"{SESSION}.jsonl")
    (first_reads, first_identity), (then_reads, then_identity) = runs
    assert int(first_reads) > 10  # no stamp yet: every source file is read and hashed
    assert (then_reads, then_identity) == ("0", code_identity())  # the stamp's listing holds: none is read
    body = stamp.read(tmp_path / "cache")
    assert body is not None and body["code_identity"] == code_identity()


def test_the_recorded_code_identity_is_taken_only_for_the_same_source_listing_without_links(
    one_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = config(one_project, tmp_path / "site", tmp_path / "cache")
    run_build(settings)
    body = stamp.read(settings.cache)
    assert body is not None
    recorded = f"{agenthropic_site.__version__}+0123456789abcdef"  # not this code's: shows which identity a build took

    def taken(stamped: dict[str, str]) -> list[str]:
        monkeypatch.setattr(agenthropic_site, "_identity", [])
        stamp._remember_code(stamped)
        stamp.before_build(settings)
        return list(agenthropic_site._identity)

    assert taken({**body, "code_identity": recorded}) == [recorded]
    edited = body["code"].replace(" ", "  ", 1)  # one source file's lstat is not what the stamp listed
    assert taken({**body, "code": edited, "code_identity": recorded}) == []
    assert taken({**body, "code_identity": "1.0+0123456789abcdef"}) == []  # not one this version makes
    assert taken({**body, "code_identity": f"{agenthropic_site.__version__}+0123456789ABCDEF"}) == []
    # A package with a link among its sources: what the link points to can change while its lstat does not.
    package = tmp_path / "package"
    package.mkdir()
    (package / "a.py").write_text("A = 1\n")
    (package / "b.py").symlink_to(package / "a.py")
    monkeypatch.setattr(stamp, "PACKAGE_DIR", str(package))
    linked = stamp._code()
    assert stamp.LINK in linked
    assert taken({**body, "code": linked, "code_identity": recorded}) == []
    monkeypatch.setattr(agenthropic_site, "_identity", [])
    assert code_identity() != recorded
