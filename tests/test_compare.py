"""`agenthropic diff`: the files and sessions an appended line changes; identical builds are identical."""

from __future__ import annotations

import json
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from agenthropic_site.cli import main
from agenthropic_site.audit.compare import DiffError, session_side
from conftest import DEMO_CORPUS, build, tree_bytes

SESSION = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"  # priced, with subagents, in the demo corpus


def test_identical_builds_are_reported_identical(demo_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build(DEMO_CORPUS, tmp_path / "again", tmp_path / "cache") in (0, 1)
    assert main(["diff", str(demo_site), str(tmp_path / "again")]) == 0
    assert capsys.readouterr().out == f"identical: {len(tree_bytes(demo_site))} files\n"
    assert main(["snapshot", "--site", str(demo_site), "--out", str(tmp_path / "s.tar.gz")]) == 0
    capsys.readouterr()
    assert main(["diff", "--json", str(tmp_path / "s.tar.gz"), str(tmp_path / "again")]) == 0
    assert json.loads(capsys.readouterr().out) == {"files": {"added": [], "changed": [], "removed": []}, "identical": True, "sessions": []}


def append_new_request(corpus: Path) -> tuple[int, ...]:
    """Append a copy of the session's last priced request under a new id; return its token counts."""
    path = next(corpus.rglob(f"{SESSION}.jsonl"))
    records = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    last = [r for r in records if r.get("type") == "assistant" and "usage" in r.get("message", {})][-1]
    last["message"]["id"], last["requestId"], last["uuid"] = "msg_appended_by_test", "req_appended_by_test", "appended-by-test"
    with path.open("ab") as handle:
        handle.write(json.dumps(last).encode() + b"\n")
    usage = last["message"]["usage"]
    split = usage["cache_creation"]
    return (usage["cache_read_input_tokens"], split["ephemeral_1h_input_tokens"], split["ephemeral_5m_input_tokens"],
            usage["input_tokens"], usage["output_tokens"])


def test_diff_finds_exactly_what_an_appended_line_changed(demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    assert build(demo_corpus, site, tmp_path / "cache") in (0, 1)
    assert main(["snapshot", "--site", str(site), "--out", str(tmp_path / "before.tar.gz")]) == 0
    before = tree_bytes(site)
    added = append_new_request(demo_corpus)
    assert build(demo_corpus, site, tmp_path / "cache") in (0, 1)
    after = tree_bytes(site)
    capsys.readouterr()

    assert main(["diff", "--json", str(tmp_path / "before.tar.gz"), str(site)]) == 1
    report = json.loads(capsys.readouterr().out)
    changed = sorted(rel for rel in before if before[rel] != after[rel])
    assert report["files"] == {"added": [], "removed": [], "changed": changed}
    assert {f"sessions/{SESSION}/index.html", f"data/sessions/{SESSION}.json", "index.html"} <= set(changed)
    assert not [rel for rel in changed if rel.startswith(("sessions/", "data/sessions/")) and SESSION not in rel]
    [session] = report["sessions"]
    assert session["session_id"] == SESSION and session["change"] == "changed"
    assert session["agents_added"] == session["agents_removed"] == []
    delta = session["tokens"]["delta"]
    assert tuple(delta[name] for name in sorted(name for name in delta if name != "total")) == added
    assert delta["total"] == sum(added)
    assert Decimal(session["cost_usd"]["delta"]) == Decimal(session["cost_usd"]["b"]) - Decimal(session["cost_usd"]["a"]) > 0

    assert main(["diff", str(tmp_path / "before.tar.gz"), str(site)]) == 1
    text = capsys.readouterr().out
    assert f"changed  sessions/{SESSION}/index.html" in text and f"tokens    +{sum(added)}" in text


def test_sessions_are_ordered_by_cost_change_and_agents_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def site(folder: Path, sessions: dict[str, tuple[str, list[str]]]) -> Path:
        (folder / "data" / "sessions").mkdir(parents=True)
        (folder / ".agenthropic-site").write_text("marker")
        for sid, (cost, agents) in sessions.items():
            doc = {"session_id": sid, "cost_usd": cost, "tokens": {"input": 1}, "status": "completed", "excluded": None,
                   "agents": [{"agent_id": a} for a in agents]}
            (folder / "data" / "sessions" / f"{sid}.json").write_text(json.dumps(doc))
        return folder

    a = site(tmp_path / "a", {"small": ("1.0", ["main"]), "big": ("1.0", ["main", "old"]), "gone": ("0.5", ["main"])})
    b = site(tmp_path / "b", {"small": ("1.1", ["main"]), "big": ("3.0", ["main", "new"]), "fresh": ("0.2", ["main"])})
    assert main(["diff", "--json", str(a), str(b)]) == 1
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    assert [(s["session_id"], s["change"], s["cost_usd"]["delta"]) for s in sessions] == [
        ("big", "changed", "+2.0"), ("gone", "removed", "-0.5"), ("fresh", "added", "+0.2"), ("small", "changed", "+0.1"),
    ]
    assert (sessions[0]["agents_added"], sessions[0]["agents_removed"]) == (["new"], ["old"])


@pytest.mark.parametrize("body", [b"[1]", b"{not json", b'{"cost_usd": "NaN"}', b'{"cost_usd": "1e999999"}', b'{"tokens": {"input": "1"}}',
                                  b'{"tokens": {"input": 1, "total": 5}}'])
def test_malformed_session_json_is_an_error(body: bytes) -> None:
    with pytest.raises(DiffError):
        session_side("data/sessions/x.json", body)


def test_a_missing_build_is_an_error(demo_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(demo_site), str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_text_from_a_build_cannot_drive_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A token category, status, agent id or field name in a session's JSON is the snapshot's text,
    # untrusted: a category named with an escape sequence reached the terminal as it was, and
    # `--json` wrote the characters that reorder text raw.
    def site(folder: Path, doc: dict[str, object]) -> Path:
        (folder / "data" / "sessions").mkdir(parents=True)
        (folder / ".agenthropic-site").write_text("marker")
        (folder / "data" / "sessions" / "s.json").write_text(json.dumps(doc))
        return folder

    hostile = "\x1b]0;title\x07\x1b[31m\u202e"
    a = site(tmp_path / "a", {"cost_usd": "1.0", "tokens": {"input": 1}, "status": "completed", "agents": []})
    b = site(tmp_path / "b", {"cost_usd": "1.0", "tokens": {"input": 1, hostile: 5}, "status": hostile,
                              "agents": [{"agent_id": hostile}], hostile: 1})
    assert main(["diff", str(a), str(b)]) == 1
    text = capsys.readouterr().out
    assert not any(ch in text for ch in "\x1b\x07\u202e"), text
    assert text.count("\\x1b]0;title\\x07\\x1b[31m\\u202e") == 4  # the category, the status, the agent, the field
    assert main(["diff", "--json", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\x07\u202e"), out
    assert json.loads(out)["sessions"][0]["status"]["b"] == hostile  # escaped, not changed


def test_a_file_name_a_snapshot_cannot_hold_is_named(demo_site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A name that is not UTF-8 reached JSON, which cannot hold it: `diff --json` and `snapshot` were exit 4.
    site = tmp_path / "site"
    shutil.copytree(demo_site, site)
    (site / "data").joinpath(os.fsdecode(b"notes-\xff.txt")).write_bytes(b"x")
    assert main(["diff", "--json", str(demo_site), str(site)]) == 2
    assert main(["snapshot", "--site", str(site), "--out", str(tmp_path / "s.tar.gz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.count("data/notes-\\udcff.txt") == 2, err
    assert not (tmp_path / "s.tar.gz").exists()
