"""Parsing, views and rendering in worker processes (`build --jobs N`): the same site and cache as one process, and safe failures.

Render workers start only when at least pages.PARALLEL_MIN_PAGES session and agent pages are to be
rendered (parse workers from parsing.PARSE_IN_WORKERS_MIN changed sessions, views workers from
stored.VIEW_WORKERS_MIN_BATCHES batches of views). The in-process tests lower the thresholds and
the batch of views (`few_workers`, and FEW_WORKERS_BUILD for a build in its own process) and build
a corpus just above them, so workers share several batches of a small corpus. Real worker
processes; tests/test_pool.py tests the pool itself.
"""

from __future__ import annotations

import multiprocessing.process
import re
from dataclasses import replace
from pathlib import Path

import pytest

from agenthropic_site.pipeline.build import run_build
from agenthropic_site.config import BuildConfig, parse_instant
from agenthropic_site.pipeline import pool
from conftest import DEMO_NOW, dump_cache, stored_bodies, tree_bytes
from fixtures.generate import generate_scale


SMALL_BATCH = 4  # views a batch, in place of 64: three batches of sessions, shared between the workers
SMALL_MIN = 8  # pages to render, or sessions to parse, before workers start (in place of 256 and 32)
SMALL_VIEW_BATCHES = 2  # batches of views before workers compute them (in place of 4)
SMALL_SESSIONS = SMALL_MIN + 4


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("parallel-small") / "corpus"
    generate_scale(folder, sessions=SMALL_SESSIONS, seed=5, session_kb=8)
    return folder


@pytest.fixture
def few_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start workers for a few sessions, in batches of a few: the thresholds are the only difference."""
    from agenthropic_site.model import stored, views
    from agenthropic_site.pipeline import parsing
    from agenthropic_site.render import site

    monkeypatch.setattr(views, "VIEW_BATCH", SMALL_BATCH)
    monkeypatch.setattr(stored, "VIEW_WORKERS_MIN_BATCHES", SMALL_VIEW_BATCHES)
    monkeypatch.setattr(parsing, "PARSE_IN_WORKERS_MIN", SMALL_MIN)
    monkeypatch.setattr(site, "PARALLEL_MIN_PAGES", SMALL_MIN)


# `agenthropic build` in a process of its own, with the thresholds of `few_workers`.
FEW_WORKERS_BUILD = f"""
import sys
from agenthropic_site.cli import main
from agenthropic_site.model import stored, views
from agenthropic_site.pipeline import parsing
from agenthropic_site.render import site
views.VIEW_BATCH = {SMALL_BATCH}
stored.VIEW_WORKERS_MIN_BATCHES = {SMALL_VIEW_BATCHES}
parsing.PARSE_IN_WORKERS_MIN = site.PARALLEL_MIN_PAGES = {SMALL_MIN}
sys.exit(main(sys.argv[1:]))
"""


def settings(corpus: Path, base: Path, jobs: int) -> BuildConfig:
    return BuildConfig(corpus=corpus, out=base / "site", cache=base / "cache", now=parse_instant(DEMO_NOW), quiet=True, jobs=jobs)


def test_two_processes_build_the_same_site_and_cache_as_one(small_corpus: Path, few_workers: None, tmp_path: Path, said: list[str]) -> None:
    one = run_build(settings(small_corpus, tmp_path / "one", 1))
    assert not any("processes" in line for line in said)
    two = run_build(settings(small_corpus, tmp_path / "two", 2))
    assert f"parsing {SMALL_SESSIONS} changed sessions in 1 worker process" in said  # beside this one, which writes
    assert f"computing the views of {SMALL_SESSIONS} sessions in 2 processes" in said
    assert f"rendering the pages of {SMALL_SESSIONS} sessions in 2 processes" in said
    assert (one.parsed, one.transcripts_opened, one.failed) == (two.parsed, two.transcripts_opened, two.failed)
    assert (one.pages_rendered, one.pages_written) == (two.pages_rendered, two.pages_written)
    assert tree_bytes(tmp_path / "one" / "site") == tree_bytes(tmp_path / "two" / "site")
    assert dump_cache(tmp_path / "one" / "cache") == dump_cache(tmp_path / "two" / "cache")
    # The same writes in the same order: the cache files are equal byte for byte.
    assert (tmp_path / "one" / "cache" / "cache.sqlite3").read_bytes() == (tmp_path / "two" / "cache" / "cache.sqlite3").read_bytes()
    again = run_build(settings(small_corpus, tmp_path / "two", 2))  # nothing changed: nothing rendered, no workers
    assert (again.pages_rendered, again.pages_written) == (0, 0)


def test_pages_rendered_in_workers_are_told_as_they_come_back(small_corpus: Path, few_workers: None, tmp_path: Path, said: list[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthropic_site.render import site

    monkeypatch.setattr(site, "PROGRESS_EVERY", 2)  # a line every 2 sessions rendered at least (a tenth of 12 is 2)
    run_build(settings(small_corpus, tmp_path, 2))
    assert f"rendering the pages of {SMALL_SESSIONS} sessions in 2 processes" in said
    told = [re.fullmatch(r"rendered the pages of (\d+) sessions \((\d+)/(\d+) looked at\)", line) for line in said if line.startswith("rendered the")]
    counts = [(int(match[1]), int(match[2]), int(match[3])) for match in told if match]
    assert len(counts) == len(told) >= SMALL_SESSIONS // SMALL_BATCH  # a line for each batch of 4 (each crosses a step of 2)
    assert [rendered for rendered, _, _ in counts] == sorted({rendered for rendered, _, _ in counts})
    assert all(rendered <= looked and total == SMALL_SESSIONS for rendered, looked, total in counts)
    assert counts[-1][:2] == (SMALL_SESSIONS, SMALL_SESSIONS)  # a first build renders every session


def test_workers_that_cannot_start_leave_the_build_to_this_process(
    small_corpus: Path, few_workers: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: list[str]
) -> None:

    def no_process(self: object) -> None:
        raise OSError("Resource temporarily unavailable")

    with monkeypatch.context() as patch:
        patch.setattr(multiprocessing.process.BaseProcess, "start", no_process)
        run_build(settings(small_corpus, tmp_path / "failed", 2))
    assert "notice: cannot start a worker process: Resource temporarily unavailable; this process parsed the remaining sessions" in said, said
    assert "notice: cannot start a worker process: Resource temporarily unavailable; this process computed the remaining views" in said, said
    assert "notice: cannot start a worker process: Resource temporarily unavailable; this process rendered the remaining sessions" in said, said
    said.clear()
    with monkeypatch.context() as patch:
        # Workers that run another copy of the package (a forkserver that preloaded it) start, and do nothing.
        patch.setattr(pool, "__file__", str(tmp_path / "elsewhere" / "pool.py"))
        run_build(settings(small_corpus, tmp_path / "elsewhere", 2))
    assert sum(line.startswith("notice: a worker process runs ") for line in said) == 3, said
    run_build(settings(small_corpus, tmp_path / "one", 1))
    assert tree_bytes(tmp_path / "failed" / "site") == tree_bytes(tmp_path / "one" / "site") == tree_bytes(tmp_path / "elsewhere" / "site")
    assert dump_cache(tmp_path / "failed" / "cache") == dump_cache(tmp_path / "one" / "cache") == dump_cache(tmp_path / "elsewhere" / "cache")


RATES = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")


def test_workers_price_with_the_table_the_build_read_though_the_file_changes_meanwhile(
    small_corpus: Path, few_workers: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The build reads its price file once: an edit while it runs never reaches the views and pages its workers make."""
    import json
    from decimal import Decimal

    from agenthropic_site.cost.prices import builtin_families
    from agenthropic_site.pipeline import build

    families = builtin_families()["families"]
    doubled = {name: {**family, "periods": [{**period, **{rate: str(Decimal(period[rate]) * 2) for rate in RATES if rate in period}}
                                              for period in family["periods"]]}
               for name, family in families.items()}
    pricing = tmp_path / "prices.json"
    pricing.write_text(json.dumps({"families": families}))
    views_of = build.refresh_views

    def edited_meanwhile(*args: object, **kwargs: object) -> object:
        pricing.write_text(json.dumps({"families": doubled}))  # the rows are priced, the views and pages are not
        return views_of(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(build, "refresh_views", edited_meanwhile)
        run_build(replace(settings(small_corpus, tmp_path / "two", 2), pricing=pricing))
    pricing.write_text(json.dumps({"families": families}))
    run_build(replace(settings(small_corpus, tmp_path / "one", 1), pricing=pricing))
    assert tree_bytes(tmp_path / "two" / "site") == tree_bytes(tmp_path / "one" / "site")


def test_sessions_parsed_in_workers_are_priced_and_encoded_there_as_the_build_would_do_it(
    small_corpus: Path, few_workers: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The build's process, which writes every session, neither prices nor encodes the transcripts of those the parse stage gives it ready."""
    from agenthropic_site.cache import store
    from agenthropic_site.pipeline import ingest

    run_build(settings(small_corpus, tmp_path / "one", 1))

    def not_here(*args: object) -> None:
        raise AssertionError("done again by the build's process")

    monkeypatch.setattr(ingest, "price_rows", not_here)
    monkeypatch.setattr(store, "encode_messages", not_here)
    run_build(settings(small_corpus, tmp_path / "two", 2))
    assert dump_cache(tmp_path / "one" / "cache") == dump_cache(tmp_path / "two" / "cache")


def test_heavy_sessions_go_to_workers_alone_and_build_the_same_site_and_cache(
    small_corpus: Path, few_workers: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: list[str], chunks_given: list[list[object]],
) -> None:
    """With every session heavier than a chunk's bytes and a batch's requests and view bytes, each travels alone.

    What waits in memory is then one session's, not a chunk's.
    """
    from agenthropic_site.model import views
    from agenthropic_site.pipeline import parsing

    run_build(settings(small_corpus, tmp_path / "one", 1))
    monkeypatch.setattr(parsing, "PARSE_CHUNK_BYTES", 1)
    monkeypatch.setattr(views, "VIEW_BATCH_REQUESTS", 1)
    monkeypatch.setattr(views, "VIEW_BATCH_BYTES", 1)
    run_build(settings(small_corpus, tmp_path / "two", 2))
    assert f"computing the views of {SMALL_SESSIONS} sessions in 2 processes" in said
    assert f"rendering the pages of {SMALL_SESSIONS} sessions in 2 processes" in said
    parse_chunks = [chunk for chunk in chunks_given if isinstance(chunk[0], tuple)]  # parse tasks
    batches = [chunk[0] for chunk in chunks_given if isinstance(chunk[0], list)]  # views and pages: a batch of session ids a chunk
    assert len(parse_chunks) > 1 and len(batches) > 1
    assert all(len(chunk) == 1 for chunk in chunks_given) and all(len(batch) == 1 for batch in batches)  # type: ignore[arg-type]
    assert tree_bytes(tmp_path / "one" / "site") == tree_bytes(tmp_path / "two" / "site")
    assert dump_cache(tmp_path / "one" / "cache") == dump_cache(tmp_path / "two" / "cache")


def test_sessions_changed_and_parsed_again_in_workers_keep_their_unchanged_transcripts(small_corpus: Path, few_workers: None, tmp_path: Path) -> None:
    """A reply appended to every session's main transcript, parsed in workers: each agent's stored transcript stays, as a cold build stores it."""
    import json
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(small_corpus, corpus)
    run_build(settings(corpus, tmp_path / "warm", 2))
    mains = [path for path in sorted(corpus.glob("*/*.jsonl")) if not path.name.startswith("agent-")]  # not the old layout's agent files
    assert len(mains) == SMALL_SESSIONS
    for number, path in enumerate(mains):
        records = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        last = [record for record in records if record.get("type") == "assistant" and "usage" in record.get("message", {})][-1]
        last["parentUuid"], last["uuid"] = last["uuid"], f"appended-{number}"
        last["message"]["id"], last["requestId"] = f"msg_appended_{number}", f"req_appended_{number}"
        with path.open("ab") as handle:
            handle.write(json.dumps(last).encode() + b"\n")
    warm = run_build(settings(corpus, tmp_path / "warm", 2))
    assert warm.parsed == len(mains)
    run_build(settings(corpus, tmp_path / "cold", 1))
    bodies = stored_bodies(tmp_path / "warm" / "cache")
    assert len({agent for _, agent in bodies}) > len(mains)  # agents' transcripts too, which the appends left as they were
    assert bodies == stored_bodies(tmp_path / "cold" / "cache")
    assert tree_bytes(tmp_path / "warm" / "site") == tree_bytes(tmp_path / "cold" / "site")


def test_an_error_in_a_worker_fails_the_build_and_keeps_the_previous_site(small_corpus: Path, few_workers: None, tmp_path: Path, said: list[str]) -> None:
    from agenthropic_site.render.theme import ThemeError

    base = settings(small_corpus, tmp_path, 2)
    run_build(base)
    before = tree_bytes(tmp_path / "site")
    theme = tmp_path / "theme" / "templates"
    theme.mkdir(parents=True)
    (theme / "session.html").write_text("{{ no_such_name }}")  # fails in the workers, which render session pages
    with pytest.raises(ThemeError, match="session.html, line 1: UndefinedError: 'no_such_name' is undefined"):  # the theme's, named
        run_build(replace(base, theme=theme.parent))
    assert any("in 2 processes" in line for line in said), said
    assert tree_bytes(tmp_path / "site") == before  # nothing published, no staged file left behind


def test_a_script_without_a_main_guard_builds_without_its_workers_instead_of_waiting_for_them(small_corpus: Path, tmp_path: Path) -> None:
    """Each worker runs the unguarded script again, whose build would wait for the cache its own build holds: it is refused."""
    import subprocess
    import sys

    run_build(settings(small_corpus, tmp_path / "clean", 1))
    script = tmp_path / "unguarded.py"
    script.write_text(FEW_WORKERS_BUILD)  # builds at its top level, as any run of it does
    command = [sys.executable, str(script), "build", "--corpus", str(small_corpus), "--out", str(tmp_path / "site"),
               "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "--jobs", "2"]
    # Before the refusal, this build never ended: its workers waited for its cache, it for them.
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "put the script's build under `if __name__ == \"__main__\":`" in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    for stage in ("parsed the remaining sessions", "computed the remaining views", "rendered the remaining sessions"):
        assert any(line.startswith("notice: a worker process stopped early") and line.endswith(stage) for line in lines), lines
    assert tree_bytes(tmp_path / "site") == tree_bytes(tmp_path / "clean" / "site")
    assert dump_cache(tmp_path / "cache") == dump_cache(tmp_path / "clean" / "cache")


PROBE = """
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from agenthropic_site.pipeline.pool import in_a_workers_import_of_main
print("top level:", __name__, in_a_workers_import_of_main(), flush=True)
def task():
    return in_a_workers_import_of_main()
if __name__ == "__main__":
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as executor:
        print("task:", executor.submit(task).result(), flush=True)
"""


def test_only_the_scripts_top_level_run_again_by_a_worker_is_taken_for_it(tmp_path: Path) -> None:
    """Not the script run by the user, and not a task in a worker: a task of the caller's own pool may build."""
    import subprocess
    import sys

    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The user's run, then the worker's run of the same top level, then the task in that worker.
    assert done.stdout.splitlines() == ["top level: __main__ False", "top level: __mp_main__ True", "task: False"], done.stdout


@pytest.mark.parametrize("phase", ["parsing", "computing the views", "rendering the pages"])
def test_a_build_killed_while_workers_work_then_rebuilt_equals_a_clean_build(small_corpus: Path, tmp_path: Path, phase: str) -> None:
    """SIGKILL reaches the build, not its workers: they exit at once, and whatever they staged goes with the next build."""
    import signal
    import subprocess
    import sys
    import time

    run_build(settings(small_corpus, tmp_path / "clean", 1))
    command = [sys.executable, "-c", FEW_WORKERS_BUILD, "build", "--corpus", str(small_corpus), "--out", str(tmp_path / "site"),
               "--cache", str(tmp_path / "cache"), "--now", DEMO_NOW, "--jobs", "2"]
    victim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert victim.stderr is not None
    deadline = time.monotonic() + 120
    line = ""
    while not line.startswith(phase) and time.monotonic() < deadline and victim.poll() is None:
        line = victim.stderr.readline()
    assert line.startswith(phase) and "process" in line, f"the build never started its workers for {phase}"
    if phase.startswith("rendering"):
        staging = tmp_path / "site" / ".agenthropic" / "staging"
        while time.monotonic() < deadline and not any(staging.glob("*/*.part")):
            time.sleep(0.01)  # killed once pages are staged
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert run_build(settings(small_corpus, tmp_path, 2)).failed == 0
    assert tree_bytes(tmp_path / "site") == tree_bytes(tmp_path / "clean" / "site")
