"""Hooks: the spool command, its ingestion, the status rules, and settings install/uninstall."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agenthropic_site.live.settings import HOOK_EVENTS, SettingsError, install, read_settings, uninstall
from agenthropic_site.live.spool import MAX_PAYLOAD_BYTES, run_hook
from conftest import build
from records import SID, assistant, usage, user, write


def hook(cache: Path, payload: bytes) -> subprocess.CompletedProcess[bytes]:
    """Run `agenthropic hook` as Claude Code does: a new process, the payload on stdin."""
    env = {**os.environ, "AGENTHROPIC_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "agenthropic_site", "hook"], input=payload, env=env, capture_output=True, timeout=30)


def spool_lines(cache: Path) -> list[dict]:
    return [json.loads(line) for line in (cache / "hooks" / "spool.jsonl").read_text().splitlines()]


def test_hook_keeps_identifiers_and_drops_content(tmp_path: Path) -> None:
    payload = {"hook_event_name": "SubagentStop", "session_id": SID, "agent_id": "a1", "agent_type": "Explore",
               "prompt": "SECRET PROMPT", "last_assistant_message": "SECRET ANSWER", "tool_input": {"x": "SECRET"},
               "tool_response": "SECRET", "transcript_path": "/home/u/.claude/projects/p/x.jsonl"}
    result = hook(tmp_path / "cache", json.dumps(payload).encode())
    assert result.returncode == 0 and result.stdout == b"" and result.stderr == b""
    [record] = spool_lines(tmp_path / "cache")
    assert record["payload"] == {"hook_event_name": "SubagentStop", "session_id": SID, "agent_id": "a1", "agent_type": "Explore"}
    assert len(record["delivery_id"]) == 32 and record["received_at"].endswith("Z")
    assert "SECRET" not in (tmp_path / "cache" / "hooks" / "spool.jsonl").read_text()
    assert stat.S_IMODE((tmp_path / "cache" / "hooks" / "spool.jsonl").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "cache" / "hooks").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("payload", "error"),
    [(b"not json at all", "not-json"), (b"", "not-json"), (b"[1, 2]", "not-an-object"), (b"{" * (MAX_PAYLOAD_BYTES + 10), "truncated")],
)
def test_bad_payloads_are_stored_marked_and_exit_0(tmp_path: Path, payload: bytes, error: str) -> None:
    assert hook(tmp_path / "cache", payload).returncode == 0
    [record] = spool_lines(tmp_path / "cache")
    assert record["error"] == error and record["raw_bytes"] == min(len(payload), MAX_PAYLOAD_BYTES) and "raw" not in record


def test_hook_never_fails_even_when_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    assert hook(blocker, b"{}").returncode == 0


def test_hook_in_process_reads_a_pipe(tmp_path: Path) -> None:
    read, write_end = os.pipe()
    os.write(write_end, b'{"hook_event_name": "Stop", "session_id": "s"}')
    os.close(write_end)
    with os.fdopen(read, "rb") as stream:
        assert run_hook(stream, {"AGENTHROPIC_CACHE_DIR": str(tmp_path / "c")}) == 0
    assert spool_lines(tmp_path / "c")[0]["payload"]["hook_event_name"] == "Stop"


def session_corpus(root: Path, *, with_agent: bool = True) -> Path:
    records = [user("u1", "go", ts="2026-05-31T23:55:00.000Z"),
               assistant("a1", "m1", "r1", usage(1, 2), ts="2026-05-31T23:55:05.000Z", stop="end_turn")]
    write(root / "p" / f"{SID}.jsonl", *records)
    if with_agent:
        write(root / "p" / SID / "subagents" / "agent-a1.jsonl", {**user("s1", "sub", ts="2026-05-31T23:55:01.000Z"), "isSidechain": True, "agentId": "a1"})
    return root


def statuses(out: Path) -> dict[str, str]:
    data = json.loads((out / "data" / "sessions" / f"{SID}.json").read_text())
    return {agent["agent_id"]: agent["status"] for agent in data["agents"]}


def send(cache: Path, event: str, agent: str | None = None) -> None:
    payload = {"hook_event_name": event, "session_id": SID, **({"agent_id": agent} if agent else {})}
    assert hook(cache, json.dumps(payload).encode()).returncode == 0


def test_hook_statuses_follow_the_rules(tmp_path: Path) -> None:
    corpus, out, cache = session_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    assert build(corpus, out, cache) == 0
    assert statuses(out) == {SID: "working", "a1": "working"}  # activity within the watchdog window
    send(cache, "SubagentStop", "a1")
    send(cache, "SubagentStop", SID)  # refused: the main agent never "completes"
    send(cache, "SubagentStop", "ghost")  # an agent not parsed: no row changes
    send(cache, "Stop")
    assert build(corpus, out, cache) == 0
    assert statuses(out) == {SID: "waiting", "a1": "completed"}
    send(cache, "UserPromptSubmit")
    assert build(corpus, out, cache) == 0
    assert statuses(out)[SID] == "working"
    index = json.loads((out / "data" / "index.json").read_text())
    assert index["report"]["hook_events"] == {"Stop": 1, "SubagentStop": 3, "UserPromptSubmit": 1}


def test_a_stop_older_than_transcript_activity_changes_nothing(tmp_path: Path) -> None:
    corpus, out, cache = session_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    send(cache, "Stop")  # received now, in real time: later than the transcript's 2026-05-31 lines
    spool = cache / "hooks" / "spool.jsonl"
    record = json.loads(spool.read_text())
    record["received_at"] = "2026-05-31T23:50:00.000Z"  # before the transcript's last line
    spool.write_text(json.dumps(record) + "\n")
    assert build(corpus, out, cache) == 0
    assert statuses(out)[SID] == "working"


@pytest.mark.parametrize("received_at", ["2026-13-45T99:99:99.999Z", "2026-02-30T10:00:00.000Z", "0000-01-01T00:00:00.000Z",
                                         "9999-12-31T23:59:59.999Z"])
def test_a_spool_time_of_our_form_that_is_no_real_instant_is_a_bad_line(tmp_path: Path, received_at: str) -> None:
    corpus, out, cache = session_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    send(cache, "Stop")
    spool = cache / "hooks" / "spool.jsonl"
    record = json.loads(spool.read_text())
    record["received_at"] = received_at  # the spool is a file anyone can edit
    spool.write_text(json.dumps(record) + "\n")
    for _ in range(2):  # a month 13 once stored failed every later build (exit 4); the year 9999 held "waiting" for ever
        assert build(corpus, out, cache) == 0
        assert statuses(out)[SID] == "working"
    report = json.loads((out / "data" / "index.json").read_text())["report"]
    assert report["hook_spool_bad_lines"] == 1 and report["hook_events"] == {}


def test_a_subagent_stop_before_its_transcript_is_replayed_when_it_appears(tmp_path: Path) -> None:
    corpus, out, cache = session_corpus(tmp_path / "corpus", with_agent=False), tmp_path / "out", tmp_path / "cache"
    assert build(corpus, out, cache) == 0
    send(cache, "SubagentStop", "a1")  # the agent started and finished between two builds
    assert build(corpus, out, cache) == 0
    assert "a1" not in statuses(out)
    session_corpus(corpus)  # now its transcript is there
    assert build(corpus, out, cache) == 0
    assert statuses(out)["a1"] == "completed"


def test_hook_statuses_outlive_a_re_read_of_the_transcripts(tmp_path: Path) -> None:
    corpus, out, cache = session_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    send(cache, "SubagentStop", "a1")
    send(cache, "Stop")
    assert build(corpus, out, cache) == 0
    assert statuses(out) == {SID: "waiting", "a1": "completed"}
    # The subagent's transcript grows (its last lines land after its SubagentStop): the session is
    # read again, its rows replaced, and the stored events replayed onto them.
    with (corpus / "p" / SID / "subagents" / "agent-a1.jsonl").open("ab") as handle:
        handle.write(json.dumps({**assistant("s2", "m2", "r2", usage(1, 1), ts="2026-05-31T23:55:09.000Z"), "isSidechain": True,
                                 "agentId": "a1"}).encode() + b"\n")
    assert build(corpus, out, cache) == 0
    assert statuses(out) == {SID: "waiting", "a1": "completed"}


def test_the_spool_is_ingested_once_and_events_raw_is_append_only(tmp_path: Path) -> None:
    corpus, out, cache = session_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    send(cache, "Stop")
    with (cache / "hooks" / "spool.jsonl").open("ab") as handle:
        handle.write(b'{"delivery_id": "cut sho')  # a hook killed mid-write...
    send(cache, "Stop")  # ...and the next line lands right after it: read, the cut part a bad line
    assert build(corpus, out, cache) == 0
    conn = sqlite3.connect(cache / "cache.sqlite3")
    try:
        assert conn.execute("SELECT COUNT(*) FROM events_raw").fetchone()[0] == 2
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'spool_offset'")  # read the whole spool again
        conn.commit()
    finally:
        conn.close()
    assert build(corpus, out, cache) == 0
    conn = sqlite3.connect(cache / "cache.sqlite3")
    try:
        assert conn.execute("SELECT COUNT(*) FROM events_raw").fetchone()[0] == 2  # re-ingesting adds 0 rows
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM events_raw")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE events_raw SET body = 'x'")
    finally:
        conn.close()
    report = json.loads((out / "data" / "index.json").read_text())["report"]
    assert report["hook_spool_bad_lines"] == 1


def test_install_is_idempotent_and_keeps_other_hooks(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    other = {"type": "command", "command": "python3 record.py", "timeout": 30}
    hooks = {"Stop": [{"matcher": "", "hooks": [other]}], "PreToolUse": [{"matcher": "Bash", "hooks": [other]}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": hooks}))
    from agenthropic_site.cli import main

    assert main(["hooks", "install", "--settings", str(settings)]) == 0
    first = json.loads(settings.read_text())
    assert main(["hooks", "install", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == first  # installing twice adds nothing
    assert first["model"] == "opus" and first["hooks"]["PreToolUse"] == [{"matcher": "Bash", "hooks": [other]}]
    assert first["hooks"]["Stop"][0] == {"matcher": "", "hooks": [other]}
    for event in HOOK_EVENTS:
        ours = [h for g in first["hooks"][event] for h in g["hooks"] if h["command"].endswith("agenthropic_site hook")]
        assert len(ours) == 1 and ours[0]["async"] is True and ours[0]["timeout"] <= 10
    assert (tmp_path / "settings.json.agenthropic-backup").is_file()
    assert main(["hooks", "uninstall", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == {"model": "opus", "hooks": {"Stop": [{"matcher": "", "hooks": [other]}],
                                                                         "PreToolUse": [{"matcher": "Bash", "hooks": [other]}]}}


def test_install_into_a_missing_file_and_uninstall_leaves_no_trace(tmp_path: Path) -> None:
    settings = tmp_path / "claude" / "settings.json"
    settings.parent.mkdir()  # a missing file in a folder that exists (a missing folder is an error)
    settings_value, added = install({}, "/venv/bin/python -m agenthropic_site hook")
    assert added == len(HOOK_EVENTS)
    assert uninstall(settings_value) == ({}, len(HOOK_EVENTS))
    from agenthropic_site.cli import main

    assert main(["hooks", "install", "--settings", str(settings), "--cache", str(tmp_path / "c")]) == 0
    text = settings.read_text()
    assert "AGENTHROPIC_CACHE_DIR=" in text and str(tmp_path / "c") in text
    assert main(["hooks", "uninstall", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == {}


OTHER_HOOK = {"type": "command", "command": "say done"}


@pytest.mark.parametrize("original", [
    {"model": "opus"},
    {"hooks": {}},
    {"hooks": {"Stop": []}},
    {"hooks": {"Stop": [], "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}]}},
    {"hooks": {"Stop": [{"matcher": "", "hooks": [OTHER_HOOK]}], "PreCompact": []}},
], ids=["no-hooks", "empty-hooks", "empty-event", "empty-event-and-other", "other-and-empty-event"])
def test_uninstall_gives_back_the_file_as_the_user_wrote_it(tmp_path: Path, original: dict) -> None:
    from agenthropic_site.cli import main

    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(original))
    assert main(["hooks", "install", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) != original
    assert main(["hooks", "uninstall", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == original  # empty containers the user had are kept


@pytest.mark.parametrize("odd", [7, "python -m agenthropic_site hook", {"command": "x"}, None], ids=["number", "string", "object", "null"])
def test_an_event_group_whose_hooks_is_not_a_list_is_kept_as_it_is(tmp_path: Path, odd: object) -> None:
    """Claude Code's schema has a list there; another value is the user's, kept, and holds nothing of ours (a number raised TypeError)."""
    from agenthropic_site.cli import main

    original = {"hooks": {"Stop": [{"matcher": "", "hooks": odd}]}}
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(original))
    assert main(["hooks", "install", "--settings", str(settings)]) == 0
    installed = json.loads(settings.read_text())
    assert installed["hooks"]["Stop"][0] == original["hooks"]["Stop"][0] and len(installed["hooks"]["Stop"]) == 2
    assert main(["hooks", "uninstall", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == original


def test_without_its_backup_uninstall_removes_what_it_emptied(tmp_path: Path) -> None:
    installed, _ = install({"hooks": {}}, "/venv/bin/python -m agenthropic_site hook")
    assert uninstall(json.loads(json.dumps(installed))) == ({}, len(HOOK_EVENTS))
    assert uninstall(json.loads(json.dumps(installed)), {"hooks": {}}) == ({"hooks": {}}, len(HOOK_EVENTS))
    assert uninstall({"hooks": {}}) == ({"hooks": {}}, 0)  # nothing of ours: nothing changes
    from agenthropic_site.cli import main

    settings = tmp_path / "settings.json"
    settings.write_text('{"hooks": {}}')
    assert main(["hooks", "install", "--settings", str(settings)]) == 0
    (tmp_path / "settings.json.agenthropic-backup").unlink()  # the user removed it: what was theirs is unknown
    assert main(["hooks", "uninstall", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == {}
    assert main(["hooks", "install", "--settings", str(settings)]) == 0  # backs up {} now
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"hooks": {}}')
    (tmp_path / "settings.json.agenthropic-backup").unlink()
    (tmp_path / "settings.json.agenthropic-backup").symlink_to(elsewhere)  # a link in its place is never read
    assert main(["hooks", "uninstall", "--settings", str(settings)]) == 0
    assert json.loads(settings.read_text()) == {}


def test_invalid_settings_are_refused_and_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{not json")
    from agenthropic_site.cli import main

    assert main(["hooks", "install", "--settings", str(settings)]) == 2
    assert settings.read_text() == "{not json" and "not valid JSON" in capsys.readouterr().err
    with pytest.raises(SettingsError):
        read_settings(settings)


def _file_size_limit(limit: int):
    """Return a preexec_fn making writes past `limit` bytes fail with EFBIG, as on a full disk (SIGXFSZ ignored)."""
    import resource
    import signal

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_an_install_that_cannot_write_leaves_no_backup_and_says_what(tmp_path: Path) -> None:
    # A backup cut short (a full disk) was left, and every later install kept it as "the file
    # before agenthropic first changed it": uninstall then had nothing to give the file back from.
    settings = tmp_path / "settings.json"
    original = json.dumps({"model": "x", "note": "y" * 64 * 1024})
    settings.write_text(original)
    command = [sys.executable, "-m", "agenthropic_site", "hooks", "install", "--settings", str(settings)]
    # No bytecode written under the limit: Python would leave a cut .pyc in the package's __pycache__.
    limited = {**{k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=limited, preexec_fn=_file_size_limit(16 * 1024))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"cannot change {settings}: File too large; nothing was changed" in done.stderr
    assert settings.read_text() == original and sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    assert subprocess.run(command, capture_output=True, timeout=60).returncode == 0  # room again: the backup is the file as it was
    assert (tmp_path / "settings.json.agenthropic-backup").read_text() == original
    assert subprocess.run([*command[:4], "uninstall", *command[5:]], capture_output=True, timeout=60).returncode == 0
    assert json.loads(settings.read_text()) == json.loads(original)


def test_a_bad_spool_line_of_many_objects_is_tried_a_bounded_number_of_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The glued-record search parses the rest of the line from each `{"` it tries: at most MAX_GLUED_TRIES of them."""
    from agenthropic_site.live import events

    corpus, out, cache = session_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    send(cache, "Stop")
    with (cache / "hooks" / "spool.jsonl").open("ab") as handle:
        handle.write(b'{"' * 200_000 + b"\n")  # 400 KB, under the line cap: 199,999 places a record could start
    parsed = []
    original = events._record
    monkeypatch.setattr(events, "_record", lambda line: parsed.append(len(line)) or original(line))
    assert build(corpus, out, cache) == 0
    assert len(parsed) == 2 + events.MAX_GLUED_TRIES  # the good line, the bad line whole, then the bounded tries
    report = json.loads((out / "data" / "index.json").read_text())["report"]
    assert report["hook_spool_bad_lines"] == 1
