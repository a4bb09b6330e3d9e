"""Adversarial corpora (tests/adversarial.py): one test per hostile case, each with its expected outcome.

Outcomes are a containment stop (exit 3), a skip with its reason in the report, a counted
malformed line, a warning, or the correct result. Tests that take more than about two seconds
are marked `slow`; they still run by default (`make test`, `.ci/run`).
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import pytest

import adversarial as adv
from conftest import DEMO_NOW, build, session_pages, tree_bytes
from records import OTHER_SID, SID, assistant, line, usage, write

ONE_MB = 1024 * 1024
BASE = f"{adv.PROJECT}/{SID}/subagents"


def index_data(out: Path) -> dict[str, Any]:
    return json.loads((out / "data" / "index.json").read_text(encoding="utf-8"))


def session_data(out: Path, sid: str = SID) -> dict[str, Any]:
    return json.loads((out / "data" / "sessions" / f"{sid}.json").read_text(encoding="utf-8"))


def skipped(out: Path) -> dict[str, str]:
    return {entry["path"]: entry["reason"] for entry in index_data(out)["report"]["skipped"]}


def tokens(input: int, output: int) -> dict[str, int]:
    return {"input": input, "output": output, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0}


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail instead of hanging if the build ever opens a FIFO or a device (open would block)."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the build took over {seconds} s: it is blocked on a special file")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def build_case(tmp_path: Path, *extra: str) -> tuple[int, Path]:
    """Build tmp_path/corpus into tmp_path/out (cache tmp_path/cache) within a deadline."""
    with deadline(60):
        code = build(tmp_path / "corpus", tmp_path / "out", tmp_path / "cache", *extra)
    return code, tmp_path / "out"


def cold_build(corpus: Path, tmp_path: Path, name: str = "cold") -> dict[str, bytes]:
    """Build the corpus with a fresh cache and output folder and return the site's bytes."""
    assert build(corpus, tmp_path / name, tmp_path / f"{name}-cache") == 0
    return tree_bytes(tmp_path / name)


# --- the walk: links, special files, size and depth ------------------------------------------------


@pytest.mark.parametrize("case", ["file-outside", "null-device"])
def test_a_link_out_of_the_root_stops_the_build(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    link = adv.symlink_out_of_root(corpus, tmp_path / "outside") if case == "file-outside" else adv.symlink_to_device(corpus)
    code, out = build_case(tmp_path)
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("FATAL: corpus containment violation - ") and link.name in err
    assert not (out / "index.html").exists()  # nothing is published from a corpus that escapes its root


def test_links_inside_the_root_are_skipped_never_followed(tmp_path: Path) -> None:
    expected = adv.links_inside_root(tmp_path / "corpus")
    code, out = build_case(tmp_path)
    assert code == 0
    assert {path: reason for path, reason in skipped(out).items() if path in expected} == expected
    assert set(skipped(out)) == set(expected)
    # The link named like a main transcript is not a second session; the real one counts once.
    assert [s["session_id"] for s in index_data(out)["sessions"]] == [SID]
    assert session_data(out)["tokens"] == tokens(1, 2)


def test_fifos_named_like_transcripts_are_never_opened(tmp_path: Path) -> None:
    expected = adv.fifo_transcripts(tmp_path / "corpus")
    code, out = build_case(tmp_path)  # opening a FIFO for reading would block: the deadline fails the test
    assert code == 0
    assert skipped(out) == expected
    assert [s["session_id"] for s in index_data(out)["sessions"]] == [SID]
    assert session_data(out)["tokens"] == tokens(1, 2)


def test_a_device_node_is_not_a_regular_file(tmp_path: Path) -> None:
    rel, why = adv.device_node(tmp_path / "corpus")
    if why is not None:
        pytest.skip(f"no device node in this environment ({why}); the walk treats it like the FIFO case")
    code, out = build_case(tmp_path)
    assert code == 0
    assert skipped(out) == {rel: "not-regular-file"}
    assert session_data(out)["tokens"] == tokens(1, 2)


def test_a_70_mb_transcript_is_skipped_as_oversize_and_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agenthropic_site.corpus.safe_io as safe_io

    big = adv.oversize_agent(tmp_path / "corpus", mb=70)
    assert big.stat().st_size > 70 * ONE_MB
    opened: list[str] = []
    real_read = safe_io._read

    def spy(root: str, ref: Any, max_bytes: int | None, limit: int) -> bytes:
        opened.append(ref.rel)
        return real_read(root, ref, max_bytes, limit)

    monkeypatch.setattr(safe_io, "_read", spy)
    code, out = build_case(tmp_path)
    rel = f"{BASE}/agent-abig.jsonl"
    assert code == 0
    assert opened == [f"{adv.PROJECT}/{SID}.jsonl"]  # the main transcript only: the big file is never opened
    entry = next(e for e in index_data(out)["report"]["skipped"] if e["path"] == rel)
    assert entry["reason"] == "oversize" and entry["detail"] == f"{big.stat().st_size} bytes > cap {64 * ONE_MB}"
    data = session_data(out)
    assert data["tokens"] == tokens(1, 2) and [a["agent_id"] for a in data["agents"]] == [SID]
    totals = index_data(out)["totals"]
    assert totals["tokens"] == tokens(1, 2) and totals["cost_lower_bound"] is True  # tokens may hide in the skipped file


def test_ten_folder_levels_stop_at_the_depth_cap(tmp_path: Path) -> None:
    adv.deep_folders(tmp_path / "corpus", levels=10)
    code, out = build_case(tmp_path)
    assert code == 0
    # One entry at the first folder past the cap (4 levels under the session folder); nothing below it is listed.
    assert skipped(out) == {f"{BASE}/level1/level2/level3/": "too-deep"}
    assert [a["agent_id"] for a in session_data(out)["agents"]] == [SID]
    assert index_data(out)["totals"]["cost_lower_bound"] is True


# --- hostile bytes inside transcripts -------------------------------------------------------------


@pytest.mark.parametrize(
    "case, lines",
    [
        ("nul-bytes", adv.nul_bytes_lines),
        ("invalid-utf8", adv.invalid_utf8_lines),
        ("lone-surrogates", adv.lone_surrogate_lines),
        ("100000-deep-json", lambda: [adv.deep_json_line(100_000)]),
    ],
)
def test_hostile_bytes_are_malformed_lines_and_the_rest_still_counts(tmp_path: Path, case: str, lines: Any) -> None:
    bad = b"".join(lines())
    after = line(assistant("after", "msg_after", "req_after", usage(5, 7), ts=adv.ts(90)))
    adv.with_lines(tmp_path / "corpus", bad, after)
    code, out = build_case(tmp_path)
    assert code == 0
    data = session_data(out)
    assert data["malformed_lines"] == bad.count(b"\n") == 2
    assert data["tokens"] == tokens(1 + 5, 2 + 7)  # lines before and after the bad ones count
    page = (out / "sessions" / SID / "index.html").read_text(encoding="utf-8")
    assert "invalid-json" in page  # the line errors are shown, with their type


def test_line_separators_inside_a_string_never_split_the_record(tmp_path: Path) -> None:
    adv.with_lines(tmp_path / "corpus", adv.line_separators_line("one\u2028two\u2029three\u0085four"))
    code, out = build_case(tmp_path)
    assert code == 0
    data = session_data(out)
    assert data["malformed_lines"] == 0 and data["warnings"] == []
    assert data["tokens"] == tokens(1 + 3, 2 + 4)
    page = session_pages(out, SID)
    assert "one\u2028two\u2029three\u0085four" in page  # one message, its text whole


@pytest.mark.slow
def test_a_50_mb_line_is_parsed_and_its_text_cut(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    path = write(corpus / adv.PROJECT / f"{SID}.jsonl", adv.huge_line(50),
                     assistant("r1", "msg_r1", "req_r1", usage(3, 4), ts=adv.ts(51)))
    assert path.stat().st_size > 50 * ONE_MB and path.read_bytes().count(b"\n") == 2
    code, out = build_case(tmp_path)
    assert code == 0
    data = session_data(out)
    assert data["malformed_lines"] == 0 and data["tokens"] == tokens(3, 4)
    assert data["title_source"] == "first-prompt" and data["title"].startswith("huge prompt text ") and data["title"].endswith("…")
    assert len(data["title"]) <= 120
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in out.rglob("*") if p.is_file()}
    assert max(sizes.values()) < ONE_MB, max(sizes.items(), key=lambda item: item[1])
    page = session_pages(out, SID)
    kept = re.search(r"Stored output cut at ([\d,]+) of", page)
    assert kept is not None and 16_000 - 256 <= int(kept.group(1).replace(",", "")) <= 16_000  # at a word's start near the cap
    assert (tmp_path / "cache" / "cache.sqlite3").stat().st_size < 4 * ONE_MB  # the cache keeps the cut text only
    # Parsing it must not multiply it: splitting the whole prompt into words once took ~15 times its
    # size (about 850 MB here). Measured in a fresh process, whose peak is its own.
    probe = (
        "import resource, sys\n"
        "from agenthropic_site.parse import SessionInput, TranscriptInput, parse_session\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "parse_session(SessionInput(sys.argv[2], 'p', TranscriptInput('main.jsonl', data, 'main'), ()))\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(peak // 1024 if sys.platform != 'darwin' else peak // (1024 * 1024))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(path), SID], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 8 * 50, f"parsing a 50 MB line peaked at {done.stdout.strip()} MB"


def test_integers_beyond_64_bits_are_malformed_never_guessed(tmp_path: Path) -> None:
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "cb1", "sessionId": SID, "timestamp": adv.ts(70),
                "compactMetadata": {"trigger": "auto", "preTokens": 0}}
    huge_pre = line(boundary).replace(b'"preTokens":0', b'"preTokens":18446744073709551615')
    adv.with_lines(tmp_path / "corpus", *adv.big_integer_lines(), huge_pre)
    code, out = build_case(tmp_path)
    assert code == 0  # before the fix: OverflowError from SQLite, exit 4
    data = session_data(out)
    assert data["malformed_lines"] == 3  # 2^64 + 1 (a float to orjson), 10^400 (rejected), 2^64 - 1 (above any count)
    assert data["tokens"] == tokens(1, 2)
    assert [c["pre_tokens"] for c in data["compactions"]] == [None]  # not a count: unknown, never a guess


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Pacific/Kiritimati"])
def test_instants_at_the_ends_of_the_calendar_are_untimed_and_every_request_still_counts(tmp_path: Path, zone: str) -> None:
    """Year 1 and year 9999 are valid ISO instants: shown in a zone, or as the 5-hour block they open, they leave datetime's range.

    Before the fix every build of this corpus failed (OverflowError in the usage windows, exit 4).
    """
    adv.with_lines(
        tmp_path / "corpus",
        line(assistant("a-first", "m-first", "r-first", usage(3, 4), ts="0001-01-01T00:20:00.000Z")),
        line(assistant("a-last", "m-last", "r-last", usage(5, 6), ts="9999-12-31T23:55:00.000Z")),
        line(assistant("a-offset", "m-offset", "r-offset", usage(7, 8), ts="0001-01-01T03:00:00+05:30")),
    )
    code, out = build_case(tmp_path, "--tz", zone)
    assert code == 0
    data = session_data(out)
    assert data["tokens"] == tokens(1 + 3 + 5 + 7, 2 + 4 + 6 + 8)  # the sane reply's and the three out of range
    usage_windows = json.loads((out / "data" / "usage.json").read_text(encoding="utf-8"))
    assert usage_windows["untimed"]["requests"] == 3


# --- agent links across and within sessions -------------------------------------------------------


def test_a_sidecar_naming_another_sessions_spawn_stays_unlinked(tmp_path: Path) -> None:
    agent_id = adv.cross_session_sidecar(tmp_path / "corpus")
    code, out = build_case(tmp_path)
    assert code == 0
    owner, spawner = session_data(out, OTHER_SID), session_data(out, SID)
    assert owner["unlinked_agents"] == [agent_id] and owner["edges"] == []
    agent = next(a for a in owner["agents"] if a["agent_id"] == agent_id)
    assert agent["parent_agent_id"] is None and agent["tokens"] == tokens(7, 7)
    assert {"code": "unlinked_agent", "message": f"no evidence names the spawner of {agent_id}"} in owner["warnings"]
    # The spawning session never counts nor pages an agent whose file lives in another session:
    # it shows only what its spawn result reports, as an agent without a transcript here (issue 13).
    shown = {a["agent_id"]: a for a in spawner["agents"]}
    assert sorted(shown) == sorted([SID, agent_id]) and shown[agent_id]["transcript"] is False
    assert shown[agent_id]["tokens"] == tokens(0, 0) and spawner["tokens"] == shown[SID]["tokens"]
    assert (out / "sessions" / OTHER_SID / "agents" / f"{agent_id}.html").is_file()
    assert not (out / "sessions" / SID / "agents").exists()


def test_a_spawn_cycle_keeps_the_graph_acyclic(tmp_path: Path) -> None:
    one, two = adv.spawn_cycle(tmp_path / "corpus")
    code, out = build_case(tmp_path)
    assert code == 0
    data = session_data(out)
    codes = [w["code"] for w in data["warnings"]]
    assert codes.count("spawn_cycle") == 1 and "graph_check" not in codes
    assert len(data["edges"]) == 1 and {data["edges"][0]["parent"], data["edges"][0]["child"]} == {one, two}
    parents = {a["agent_id"]: a["parent_agent_id"] for a in data["agents"]}
    for agent_id in (one, two):
        seen, node = set(), agent_id
        while parents[node] is not None:
            assert node not in seen, f"cycle through {node}"
            seen.add(node)
            node = parents[node]
        assert node == SID or node in data["unlinked_agents"]
    assert len([a for a in (one, two) if a in data["unlinked_agents"]]) == 1


def test_two_sessions_with_the_same_agent_id_keep_their_own(tmp_path: Path) -> None:
    counts = adv.shared_agent_id(tmp_path / "corpus")
    code, out = build_case(tmp_path)
    assert code == 0
    for sid, count in counts.items():
        data = session_data(out, sid)
        agent = next(a for a in data["agents"] if a["agent_id"] == "a1")
        assert agent["parent_agent_id"] == sid and agent["tokens"] == tokens(count, count) and agent["status"] == "completed"
        assert data["tokens"] == tokens(1 + 1 + count, 2 + 1 + count)  # main reply, spawn reply, the agent
        page = (out / "sessions" / sid / "agents" / "a1.html").read_text(encoding="utf-8")
        others = [other[:8] for other in counts if other != sid]
        assert f"work of a1 in {sid[:8]}" in page and not any(f"in {other}" in page for other in others)
        assert f'<tr><th>Input</th><td class="num">{count}</td></tr>' in page
    totals = index_data(out)["totals"]["tokens"]
    assert totals == tokens(sum(2 + c for c in counts.values()), sum(3 + c for c in counts.values()))
    assert index_data(out)["report"]["collisions"] == 0  # distinct message ids: nothing is shared between the two


# --- files that change under the build ------------------------------------------------------------


def test_a_transcript_rewritten_shorter_equals_a_cold_build(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    path = adv.growing_session(corpus)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    before = path.stat()
    # Cut to the first 4 lines (prompt, reply, spawn, the agent's result), then a new last reply.
    adv.shrink(path, 4, line(assistant("new", "msg_new", "req_new", usage(2, 3), ts=adv.ts(42))))
    assert path.stat().st_ino == before.st_ino and path.stat().st_size < before.st_size
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    assert session_data(tmp_path / "out")["tokens"] == tokens(1 + 1 + 6 + 2, 2 + 1 + 6 + 3)
    assert tree_bytes(tmp_path / "out") == cold_build(corpus, tmp_path)


def test_a_rewrite_that_drops_a_completion_equals_a_cold_build(tmp_path: Path) -> None:
    """A re-read replaces what the transcripts said before (cache/store.py Cache._write_rows): a file
    rewritten shorter loses the completion and the later activity it no longer shows, as a cold
    build would; only hook events, replayed after every re-read, outlive the transcript."""
    corpus = tmp_path / "corpus"
    path = adv.growing_session(corpus)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    grown = {a["agent_id"]: (a["status"], a["last_seen_at"]) for a in session_data(tmp_path / "out")["agents"]}
    assert grown == {SID: ("unknown", adv.ts(42)), "agrow": ("completed", adv.ts(11))}
    adv.shrink(path, 2)  # the prompt and first reply only: no spawn, no result, nothing after 10:00:01
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    shrunk = {a["agent_id"]: (a["status"], a["last_seen_at"]) for a in session_data(tmp_path / "out")["agents"]}
    assert shrunk == {SID: ("unknown", adv.ts(1)), "agrow": ("unknown", adv.ts(11))}
    assert tree_bytes(tmp_path / "out") == cold_build(corpus, tmp_path)


def test_a_file_that_grows_between_the_walk_and_the_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic race: a whole line lands after the walk fingerprinted the file, half a line after the read."""
    import agenthropic_site.pipeline.parsing as parsing_module

    corpus = tmp_path / "corpus"
    path = adv.main_transcript(corpus)
    rel = f"{adv.PROJECT}/{SID}.jsonl"
    late = line(assistant("late", "msg_late", "req_late", usage(20, 30), ts=adv.ts(80)))
    real_read = parsing_module.read_bytes

    def racing(root: str, ref: Any, max_bytes: int) -> bytes:
        if ref.rel != rel:
            return real_read(root, ref, max_bytes)
        adv.append_line(path, 7)
        data = real_read(root, ref, max_bytes)
        with path.open("ab") as handle:
            handle.write(late[:40])  # Claude Code is writing this line right now
        return data

    monkeypatch.setattr(parsing_module, "read_bytes", racing)
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    monkeypatch.undo()
    first = session_data(tmp_path / "out")
    assert first["tokens"] == tokens(1 + 7, 2 + 1)  # the read saw the grown file, not the walk's size
    with path.open("ab") as handle:
        handle.write(late[40:])
    assert build(corpus, tmp_path / "out", tmp_path / "cache") == 0
    assert session_data(tmp_path / "out")["tokens"] == tokens(1 + 7 + 20, 2 + 1 + 30)
    assert tree_bytes(tmp_path / "out") == cold_build(corpus, tmp_path)


@pytest.mark.slow
def test_lines_appended_while_a_build_process_runs(tmp_path: Path) -> None:
    corpus, out, cache = tmp_path / "corpus", tmp_path / "out", tmp_path / "cache"
    paths = adv.many_sessions(corpus, 20)
    initial = len(paths) * (2 + sum(range(1, 40)))  # output tokens: each session's first reply, then 1 … 39
    command = [sys.executable, "-m", "agenthropic_site", "build", "--corpus", str(corpus), "--out", str(out),
               "--cache", str(cache), "--now", DEMO_NOW, "-q"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    appended = 0
    started = time.monotonic()
    try:
        while process.poll() is None and time.monotonic() - started < 60:
            appended += 1
            adv.append_line(paths[appended % len(paths)], appended)
            time.sleep(0.002)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert appended > 0
    seen = index_data(out)["totals"]["tokens"]["output"]
    assert initial <= seen < initial + appended  # the build ran while lines were being appended
    assert build(corpus, out, cache) == 0
    assert index_data(out)["totals"]["tokens"]["output"] == initial + appended
    assert tree_bytes(out) == cold_build(corpus, tmp_path)


# --- every kind of hostile line at once, across many sessions --------------------------------------


@pytest.mark.slow
def test_hostile_lines_mixed_across_three_hundred_sessions_count_exactly(tmp_path: Path) -> None:
    """Each session gets a different mix of hostile lines between sane requests: one build of all
    of them counts every bad line against its own session and every sane token, and nothing else."""
    kinds = [adv.nul_bytes_lines, adv.invalid_utf8_lines, adv.lone_surrogate_lines]
    corpus = tmp_path / "corpus"
    expected: dict[str, tuple[int, dict[str, int]]] = {}
    for index in range(300):
        sid = f"{index:08x}-0000-4000-8000-{index:012x}"
        bad = b"".join(b"".join(kinds[k]()) for k in range(len(kinds)) if (index >> k) & 1)
        if index % 50 == 0:
            bad += adv.deep_json_line(100_000)
        sane_out = index % 7 + 1
        separators = assistant(f"sep-{index}", f"msg_sep_{sid}", f"req_sep_{sid}", usage(3, 4), session=sid, ts=adv.ts(40),
                               content=[{"type": "text", "text": "one\u2028two\u2029three\u0085four"}])
        after = assistant(f"after-{index}", f"msg_after_{sid}", f"req_after_{sid}", usage(5, sane_out), session=sid, ts=adv.ts(90))
        adv.main_transcript(corpus, sid, bad, json.dumps(separators, ensure_ascii=False).encode() + b"\n", after)
        expected[sid] = (bad.count(b"\n"), tokens(1 + 3 + 5, 2 + 4 + sane_out))
    code, out = build_case(tmp_path)
    assert code == 0
    index = index_data(out)
    assert len(index["sessions"]) == 300 and index["report"]["failed_sessions"] == [] and index["report"]["collisions"] == 0
    seen = {sid: (session_data(out, sid)["malformed_lines"], session_data(out, sid)["tokens"]) for sid in expected}
    assert seen == expected
    assert sum(bad for bad, _ in expected.values()) > 600  # the mix really holds hundreds of bad lines
