"""Token truth: the cache's usage rows equal an independent re-scan of the JSONL (design invariant 1).

The re-scan below is written from the format notes (§3) on purpose without the parser's code:
stdlib json, its own file discovery and its own dedupe.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path

from conftest import DEMO_CORPUS, build

CATEGORIES = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
REPLAY_PREFIXES = ("agent-acompact-", "agent-aside_question-", "agent-aprompt_suggestion-")


def records(path: Path):
    pieces = path.read_bytes().split(b"\n")[:-1]  # the unterminated tail is not a record yet
    for raw in pieces:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def counts(usage) -> tuple[int, ...] | None:
    def num(value):
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    if not isinstance(usage, dict) or num(usage.get("input_tokens")) is None or num(usage.get("output_tokens")) is None:
        return None
    split = usage.get("cache_creation")
    read = num(usage.get("cache_read_input_tokens", 0) or 0)
    total_write = num(usage.get("cache_creation_input_tokens", 0) or 0)
    if read is None or total_write is None:
        return None
    if isinstance(split, dict):
        five, hour = split.get("ephemeral_5m_input_tokens", 0), split.get("ephemeral_1h_input_tokens", 0)
    else:
        five, hour = total_write, 0
    return (usage["input_tokens"], usage["output_tokens"], read, five, hour)


def rescan_file(path: Path) -> dict[str, tuple[int, ...]]:
    """Return message key -> counts of the kept line (largest output, ties to the last)."""
    kept: dict[str, tuple[int, ...]] = {}
    for n, record in enumerate(records(path)):
        if record.get("type") != "assistant" or not isinstance(record.get("message"), dict):
            continue
        message = record["message"]
        if message.get("model") == "<synthetic>" or "usage" not in message or not isinstance(message.get("model"), str):
            continue
        value = counts(message.get("usage"))
        if value is None:
            continue
        mid = message.get("id")
        key = f"{mid}\x00{record.get('requestId')}" if isinstance(mid, str) else f"line{n}"
        if key not in kept or value[1] >= kept[key][1]:
            kept[key] = value
    return kept


def session_files(corpus: Path, project: str, sid: str) -> list[Path]:
    folder = corpus / project
    files = [folder / f"{sid}.jsonl"]
    files += sorted((folder / sid / "subagents").glob("agent-*.jsonl")) if (folder / sid / "subagents").is_dir() else []
    files += sorted((folder / sid / "subagents" / "workflows").glob("*/agent-*.jsonl")) if (folder / sid / "subagents" / "workflows").is_dir() else []
    for flat in sorted(folder.glob("agent-*.jsonl")):
        first = next(records(flat), {})
        if first.get("sessionId") == sid:
            files.append(flat)
    return files


def rescan_session(corpus: Path, project: str, sid: str) -> dict[str, list[int]]:
    """Return per-file totals after cross-file message.id dedupe (main, then agents, then replayers)."""
    files = session_files(corpus, project, sid)
    ranked = sorted(files, key=lambda p: (0 if p.name == f"{sid}.jsonl" else 2 if p.name.startswith(REPLAY_PREFIXES) else 1, str(p)))
    seen: set[str] = set()
    totals: dict[str, list[int]] = {}
    for path in ranked:
        rel = path.relative_to(corpus).as_posix()
        for key, value in rescan_file(path).items():
            mid = key.split("\x00")[0]
            if not key.startswith("line"):
                if mid in seen:
                    continue
                seen.add(mid)
            total = totals.setdefault(rel, [0] * 5)
            for index, count in enumerate(value):
                total[index] += count
    return totals


def cached_totals(cache: Path) -> dict[str, dict[str, list[int]]]:
    conn = sqlite3.connect(cache / "cache.sqlite3")
    result: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for sid, rel, *values in conn.execute(
        "SELECT session_id, file, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write_5m), SUM(cache_write_1h) FROM token_usage GROUP BY session_id, file"
    ):
        result[sid][rel] = list(values)
    conn.close()
    return result


def check_corpus(corpus: Path, tmp_path: Path) -> int:
    assert build(corpus, tmp_path / "site", tmp_path / "cache") in (0, 1)
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    cached = cached_totals(tmp_path / "cache")
    checked = 0
    for session in index["sessions"]:
        if session["excluded"] is not None:
            continue
        expected = {rel: values for rel, values in rescan_session(corpus, session["project"], session["session_id"]).items() if any(values)}
        have = {rel: values for rel, values in cached.get(session["session_id"], {}).items() if any(values)}
        assert have == expected, session["session_id"]
        checked += 1
    return checked


def test_demo_corpus_token_truth(tmp_path: Path) -> None:
    assert check_corpus(DEMO_CORPUS, tmp_path) >= 10


def test_real_corpus_token_truth(shared_dir: Path, tmp_path: Path) -> None:
    assert check_corpus(shared_dir / "corpora" / "claude-code-log-real", tmp_path) >= 20
