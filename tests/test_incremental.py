"""Incremental builds equal cold builds; work is counted, not timed."""

from __future__ import annotations

import shutil
from pathlib import Path

from agenthropic_site.build import run_build
from agenthropic_site.config import BuildConfig, parse_instant
from conftest import DEMO_NOW, tree_bytes

SESSION = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"  # main + subagents + compaction in the demo corpus


def config(corpus: Path, out: Path, cache: Path) -> BuildConfig:
    return BuildConfig(corpus=corpus, out=out, cache=cache, now=parse_instant(DEMO_NOW), quiet=True)


def quiet(message: str) -> None:
    """Swallow progress lines."""


def main_file(corpus: Path) -> Path:
    return next(corpus.rglob(f"{SESSION}.jsonl"))


def test_cut_mid_line_then_completed_equals_the_whole_file(demo_corpus: Path, tmp_path: Path) -> None:
    path = main_file(demo_corpus)
    whole = path.read_bytes()
    cut = whole.rfind(b"\n", 0, len(whole) // 2) + 40  # inside a line, as Claude Code mid-write
    path.write_bytes(whole[:cut])
    live = config(demo_corpus, tmp_path / "live", tmp_path / "cache")
    run_build(live, quiet)
    with path.open("ab") as handle:
        handle.write(whole[cut:])
    second = run_build(live, quiet)
    assert second.parsed == 1  # only the appended session is read again
    cold = tmp_path / "cold-corpus"
    shutil.copytree(demo_corpus, cold)
    run_build(config(cold, tmp_path / "cold", tmp_path / "cold-cache"), quiet)
    assert tree_bytes(tmp_path / "live") == tree_bytes(tmp_path / "cold")


def test_removing_a_session_removes_its_pages(demo_corpus: Path, tmp_path: Path) -> None:
    settings = config(demo_corpus, tmp_path / "site", tmp_path / "cache")
    run_build(settings, quiet)
    assert (tmp_path / "site" / "sessions" / SESSION / "index.html").is_file()
    main_file(demo_corpus).unlink()
    shutil.rmtree(main_file_folder(demo_corpus))
    result = run_build(settings, quiet)
    assert result.removed_sessions == 1 and result.parsed == 0
    assert not (tmp_path / "site" / "sessions" / SESSION).exists()
    assert not (tmp_path / "site" / "data" / "sessions" / f"{SESSION}.json").exists()


def main_file_folder(corpus: Path) -> Path:
    return next(p for p in corpus.rglob(SESSION) if p.is_dir())
