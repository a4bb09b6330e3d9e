"""A failing session is an outcome, retried, then quarantined on a schedule counted in builds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import agenthropic_site.pipeline.parsing as parsing_module
from agenthropic_site.pipeline.build import run_build
from agenthropic_site.pipeline.ingest import sanitize_reason
from conftest import DEMO_CORPUS
from test_incremental import config

VICTIM = "bc8b436e-8b0c-4396-8e0c-47e3d508d83e"


def failing_parser(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    real = parsing_module.parse_session

    def parse(source):
        if source.session_id == VICTIM:
            calls.append(source.session_id)
            raise RuntimeError(f"boom while reading {DEMO_CORPUS}/secret/path.jsonl")
        return real(source)

    monkeypatch.setattr(parsing_module, "parse_session", parse)


def touch(corpus: Path) -> None:
    """Append a blank line to the victim's transcript: its bytes (and fingerprint) change."""
    with next(corpus.rglob(f"{VICTIM}.jsonl")).open("ab") as handle:
        handle.write(b"\n")


def test_a_failure_is_reported_with_a_sanitized_reason_and_does_not_sink_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    failing_parser(monkeypatch, calls)
    result = run_build(config(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache"))
    assert result.failed == 1 and result.exit_code == 1 and result.parsed == result.sessions - 1
    report = json.loads((tmp_path / "site" / "data" / "index.json").read_text())["report"]
    [failure] = report["failed_sessions"]
    assert failure["session_id"] == VICTIM and failure["reason"] == "RuntimeError: boom while reading <path>"
    assert str(DEMO_CORPUS) not in (tmp_path / "site" / "report.html").read_text()
    assert not (tmp_path / "site" / "sessions" / VICTIM).exists()


def test_quarantine_after_three_failures_then_backoff_in_builds(demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    failing_parser(monkeypatch, calls)
    settings = config(demo_corpus, tmp_path / "site", tmp_path / "cache")
    for _ in range(3):  # three builds, three tries: retried every build while not quarantined
        run_build(settings)
    assert len(calls) == 3
    run_build(settings)  # quarantined, bytes unchanged: not read
    assert len(calls) == 3
    tried_at = []
    for build in range(5, 41):  # builds 1-4 ran above
        touch(demo_corpus)  # the bytes change before every build
        before = len(calls)
        result = run_build(settings)
        if len(calls) > before:
            tried_at.append(build)
        else:
            assert result.quarantined == 1
    # The 3rd failure (build 3) allows a try 1 build later, but build 4 saw no change, so the 4th
    # try is build 5; then each failure doubles the wait: 2, 4, 8, 16 builds (32 after build 35).
    assert tried_at == [5, 7, 11, 19, 35]
    report = json.loads((tmp_path / "site" / "data" / "index.json").read_text())["report"]
    assert report["failed_sessions"][0]["quarantined"] is True


def test_a_price_change_gives_a_quarantined_session_a_fresh_budget(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    failing_parser(monkeypatch, calls)
    settings = config(demo_corpus, tmp_path / "site", tmp_path / "cache")
    for _ in range(4):
        run_build(settings)
    assert len(calls) == 3
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"families": {"claude-nimbus": {"models": ["claude-nimbus-9"], "periods": [
        {"from": "2025-01-01", "input": "2", "output": "10", "cache_write_5m": "2.5", "cache_write_1h": "4", "cache_read": "0.2"}]}}}))
    run_build(replace(settings, pricing=prices))
    assert len(calls) == 4


def test_sanitize_reason_strips_paths_and_caps_length() -> None:
    assert sanitize_reason("x /home/user/.claude/projects/p/a.jsonl y") == "x <path> y"
    assert sanitize_reason("OSError at C:\\Users\\me\\file.txt\n\n  more") == "OSError at <path> more"
    assert len(sanitize_reason("word " * 500)) == 300
