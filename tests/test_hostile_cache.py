"""Hostile cases for the cache and the command line's errors (issue 14): the cache is derived data.

Damage to the cache file is found by the checksums stored with every row, reported in one line
and derived again from the corpus; a cache another process holds is busy, never damaged; a full
disk and folders that cannot be used are one-line errors. Real builds on real SQLite files; the
full disk and the read-only file system are real mounts (tmpfs) when this runs as root.
"""

from __future__ import annotations

import re

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from typing import NamedTuple
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from agenthropic_site.cache import store
from agenthropic_site.cli import main
from conftest import DEMO_CORPUS, DEMO_NOW, NEEDS_DOT, build, build_subprocess, stored_bodies, tree_bytes
from test_cache import NIMBUS_PRICES

DAMAGE_LINE = "agenthropic: the cache was damaged ("


def run(corpus: Path, out: Path, cache: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    """Build in-process with -q and return the exit code and the lines it wrote to stderr."""
    capsys.readouterr()
    code = build(corpus, out, cache, *extra)
    return code, capsys.readouterr().err.splitlines()


def one_line_error(lines: list[str]) -> str:
    """Return the only line of an error, checking there is no traceback."""
    assert len(lines) == 1 and lines[0].startswith("agenthropic: ") and "Traceback" not in lines[0], lines
    return lines[0]


def database(cache: Path) -> Path:
    """Return the cache file, with nothing of it left in a WAL file (the build closed it)."""
    assert not (cache / "cache.sqlite3-wal").exists() or (cache / "cache.sqlite3-wal").stat().st_size == 0
    return cache / "cache.sqlite3"


def rows(cache: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(cache / "cache.sqlite3")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def change(cache: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    """Change the cache file behind agenthropic's back, as another program (or bit rot) would."""
    conn = sqlite3.connect(cache / "cache.sqlite3")
    try:
        with conn:
            assert conn.execute(sql, params).rowcount == 1
    finally:
        conn.close()


def flip_a_letter(cache: Path, blob: bytes, text: str) -> None:
    """Flip the case of one letter of `text` where `blob` holds it in the cache file: one bit, as bit rot would.

    The letter is inside a JSON or XML string, so the row still decodes: only a checksum finds it.
    """
    path = database(cache)
    raw = bytearray(path.read_bytes())
    start = blob.find(text.encode())
    assert start >= 0
    for at in range(start, start + len(text.encode())):
        window = blob[max(at - 12, 0) : at + 12]
        if chr(blob[at]).isalpha() and raw.count(window) == 1:
            raw[raw.index(window) + (at - max(at - 12, 0))] ^= 0x20
            path.write_bytes(bytes(raw))
            return
    raise AssertionError(f"{text!r} has no letter in a place of its own in the cache file")


def a_stored_transcript_text(cache: Path) -> tuple[str, str, bytes, str]:
    """Return (session, agent, stored body, a text in it) for a sub-agent transcript with some text."""
    for (sid, agent), body in sorted(stored_bodies(cache).items()):
        if agent == sid:
            continue
        for message in orjson.loads(body):
            for block in message[6]:
                text = block[1]
                if isinstance(text, str) and text.isascii() and len(text) > 40 and '"' not in text and "\\" not in text:
                    return str(sid), str(agent), bytes(body), text
    raise AssertionError("no sub-agent transcript with text")


def a_stored_title(cache: Path, column: str) -> tuple[str, bytes, str]:
    """Return (session, stored view body or summary, its title) for a session with a plain title."""
    for sid, blob in rows(cache, f"SELECT session_id, {column} FROM views ORDER BY session_id"):
        title = orjson.loads(blob).get("title")
        if isinstance(title, str) and title.isascii() and len(title) > 12 and '"' not in title:
            return str(sid), bytes(blob), title
    raise AssertionError("no session with a plain title")


DAMAGE = ["view", "summary", "transcript", "truncated-transcript", "message-digest", "piece-checksum", "graph", "token-count", "agent", "blob",
          "rows-without-session"]


class Built(NamedTuple):
    """The demo built once for the module: a site and cache to damage, and clean builds to compare with."""

    base: Path
    prices: Path
    codes: dict[str, int]  # exit code of the clean build, without ("clean") and with ("clean-priced") the price file


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Build the demo once, and clean builds without and with a new price table: each damage test starts from a copy."""
    base = tmp_path_factory.mktemp("built")
    prices = base / "prices.json"
    prices.write_text(json.dumps(NIMBUS_PRICES))
    assert build(DEMO_CORPUS, base / "site", base / "cache") == 1
    codes = {"clean": build(DEMO_CORPUS, base / "clean", base / "clean-cache")}
    codes["clean-priced"] = build(DEMO_CORPUS, base / "clean-priced", base / "clean-priced-cache", "--pricing", str(prices))
    return Built(base, prices, codes)


@pytest.mark.parametrize("damage", [pytest.param(damage, marks=NEEDS_DOT) if damage == "graph" else damage for damage in DAMAGE])
def test_a_flipped_byte_in_a_stored_view_is_detected_reported_and_rebuilt(
    damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], built: Built
) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    shutil.copytree(built.base / "site", out, symlinks=True)
    shutil.copytree(built.base / "cache", cache, symlinks=True)
    extra: tuple[str, ...] = ()
    if damage == "view":  # a letter of the title inside a view: it still decodes
        sid, body, title = a_stored_title(cache, "body")
        flip_a_letter(cache, body, title)
        (out / "sessions" / sid / "index.html").unlink()  # the page that reads the view
    elif damage == "summary":  # the index shows the title from the summary
        sid, summary, title = a_stored_title(cache, "summary")
        flip_a_letter(cache, summary, title)
        (out / "index.html").unlink()
    elif damage in ("transcript", "truncated-transcript"):
        sid, agent, body, text = a_stored_transcript_text(cache)
        if damage == "transcript":
            flip_a_letter(cache, body, text)
        else:  # a row cut short: it no longer decodes
            change(cache, "UPDATE transcript_pieces SET bytes = substr(bytes, 1, length(bytes) - 9) WHERE session_id = ?1 AND agent_id = ?2 "
                   "AND piece = (SELECT max(piece) FROM transcript_pieces WHERE session_id = ?1 AND agent_id = ?2)", (sid, agent))
        (out / "sessions" / sid / "agents" / f"{agent}.html").unlink()
    elif damage == "message-digest":  # one bit of a stored message's digest: the page would key its HTML by a wrong one
        sid, agent, _, _ = a_stored_transcript_text(cache)
        ((digests,),) = rows(cache, "SELECT digests FROM transcripts WHERE session_id = ? AND agent_id = ?", (sid, agent))
        assert isinstance(digests, bytes) and len(digests) > 16
        flipped = bytearray(digests)
        flipped[len(flipped) // 2] ^= 1
        change(cache, "UPDATE transcripts SET digests = ? WHERE session_id = ? AND agent_id = ?", (bytes(flipped), sid, agent))
        (out / "sessions" / sid / "agents" / f"{agent}.html").unlink()
    elif damage == "piece-checksum":  # a piece's bytes as written, its checksum not: the body's checksum is over the pieces'
        sid, agent, _, _ = a_stored_transcript_text(cache)
        ((piece_sum,),) = rows(cache, "SELECT piece_sum FROM transcript_pieces WHERE session_id = ? AND agent_id = ? AND piece = 0", (sid, agent))
        flipped = ("1" if piece_sum[0] == "0" else "0") + piece_sum[1:]
        change(cache, "UPDATE transcript_pieces SET piece_sum = ? WHERE session_id = ? AND agent_id = ? AND piece = 0", (flipped, sid, agent))
        (out / "sessions" / sid / "agents" / f"{agent}.html").unlink()
    elif damage == "graph":
        ((digest, svg),) = rows(cache, "SELECT digest, svg FROM svg_cache ORDER BY length(svg) DESC LIMIT 1")
        # A node's tooltip names its agent, so it is in this graph alone; titles such as `n0->n1` are in every graph.
        tooltips = sorted(set(re.findall(r'xlink:title="([^"]+)"', bytes(svg).decode())), key=len, reverse=True)
        flip_a_letter(cache, bytes(svg), tooltips[0])
        for page in out.glob("sessions/*/index.html"):
            page.unlink()  # whichever page draws it
    else:
        # A flipped bit in an integer or a text of a session's rows; a new price table makes every
        # view computed again from them.
        extra = ("--pricing", str(built.prices))
        if damage == "token-count":
            change(cache, "UPDATE token_usage SET output = output + 16 WHERE rowid = (SELECT min(rowid) FROM token_usage WHERE output > 0)")
        elif damage == "blob":  # the same bytes, as a blob where a text was: SQLite keeps the type a TEXT column is given
            change(cache, "UPDATE token_usage SET model = CAST(model AS BLOB) WHERE rowid = (SELECT min(rowid) FROM token_usage)")
        elif damage == "rows-without-session":
            # A copy of a request under a session the cache does not hold, naming itself the original:
            # taken as its owner, it would take the request's cost from its session. Every session is
            # priced again, so checked, by this build: the rows' own session ids are what find it.
            columns = [name for _, name, *_ in rows(cache, "PRAGMA table_info(token_usage)")]
            others = ", ".join("'ghost'" if name in ("session_id", "origin_session") else name for name in columns)
            change(cache, f"INSERT INTO token_usage SELECT {others} FROM token_usage "
                          "WHERE rowid = (SELECT min(rowid) FROM token_usage WHERE message_id IS NOT NULL AND cost IS NOT NULL)")
        else:
            change(cache, "UPDATE agents SET description = 'X' || substr(description, 2) "
                          "WHERE rowid = (SELECT min(rowid) FROM agents WHERE description != '' AND description NOT LIKE 'X%')")
    # A clean build of the same inputs, made once for the module.
    clean = built.base / ("clean-priced" if extra else "clean")
    code = built.codes[clean.name]

    got, lines = run(DEMO_CORPUS, out, cache, capsys, *extra)
    reported = [line for line in lines if "damaged" in line]
    assert got == code and len(reported) == 1 and reported[0].startswith(DAMAGE_LINE), lines
    assert EXPECTED[damage] in reported[0] and not any("Traceback" in line for line in lines)
    assert tree_bytes(out) == tree_bytes(clean)  # never a silently different site
    # Derived again for good: the next build finds nothing to repair and changes nothing.
    got, lines = run(DEMO_CORPUS, out, cache, capsys, *extra)
    assert got == code and not any("damaged" in line for line in lines)
    assert tree_bytes(out) == tree_bytes(clean)


def test_a_damaged_file_digest_is_reported_and_its_session_parsed_not_taken_as_it_is(
    demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose lstat changed is compared with its stored digest: a row failing its checksum proves nothing."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    code = build(demo_corpus, out, cache)
    site = tree_bytes(out)
    ((rel, digest),) = rows(cache, "SELECT rel, digest FROM parsed_files WHERE rel LIKE '%.jsonl' ORDER BY rel LIMIT 1")
    change(cache, "UPDATE parsed_files SET digest = ? WHERE rel = ?", ("0" * len(digest), rel))
    path = demo_corpus / rel
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # touched: the same bytes
    got, lines = run(demo_corpus, out, cache, capsys)
    reported = [line for line in lines if "damaged" in line]
    assert got == code and len(reported) == 1 and "the stored file digests of session" in reported[0], lines
    assert tree_bytes(out) == site
    # Parsed again (a parse writes each file's digest), not taken as it is.
    assert rows(cache, "SELECT digest FROM parsed_files WHERE rel = ?", (rel,)) == [(digest,)]
    got, lines = run(demo_corpus, out, cache, capsys)
    assert got == code and not any("damaged" in line for line in lines), lines


def test_a_sidecar_kept_in_the_cache_and_changed_there_is_reported_and_read_from_the_corpus(
    demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent's description comes from its .meta.json as the corpus holds it, never from kept bytes failing their checksum."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    code = build(demo_corpus, out, cache)
    ((rel, session_id),) = rows(cache, "SELECT rel, session_id FROM parsed_files WHERE rel LIKE '%.meta.json' ORDER BY rel LIMIT 1")
    change(cache, "UPDATE parsed_files SET sidecar = ? WHERE rel = ?", (b'{"description":"Forged in the cache"}', rel))
    main = next(demo_corpus.rglob(f"{session_id}.jsonl"))
    with main.open("ab") as handle:  # the session is parsed again, its sidecars as they were
        handle.write(b'{"type":"summary","summary":"after the damage","leafUuid":"none"}\n')
    got, lines = run(demo_corpus, out, cache, capsys)
    reported = [line for line in lines if "damaged" in line]
    assert got == code and len(reported) == 1 and "the stored file digests of session" in reported[0], lines
    assert b"Forged in the cache" not in (out / "data" / "sessions" / f"{session_id}.json").read_bytes()
    cold = tmp_path / "cold"
    build(demo_corpus, cold, tmp_path / "cold-cache")
    assert tree_bytes(out) == tree_bytes(cold)


EXPECTED = {
    "view": "the stored view of session",
    "summary": "the stored summary of session",
    "transcript": "the stored transcript of an agent of session",
    "truncated-transcript": "the stored transcript of an agent of session",
    "message-digest": "the stored transcript of an agent of session",
    "piece-checksum": "the stored transcript of an agent of session",
    "graph": "a stored graph",
    "token-count": "the stored rows of session",
    "agent": "the stored rows of session",
    "blob": "the stored rows of session",
    "rows-without-session": "the stored rows of session ghost",
}


@contextlib.contextmanager
def write_lock_held_by_another_process(cache: Path) -> Iterator[subprocess.Popen[str]]:
    """Hold SQLite's write lock on the cache in another process (as the `sqlite3` shell's BEGIN IMMEDIATE would)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"conn = sqlite3.connect({str(cache / 'cache.sqlite3')!r}, isolation_level=None)\n"
         "conn.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\nsys.stdin.read()\nconn.execute('ROLLBACK')\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def test_a_cache_locked_by_another_process_is_busy_never_deleted(
    demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    assert build(demo_corpus, out, cache) == 1
    site, stored = tree_bytes(out), rows(cache, "SELECT session_id, fingerprint FROM ingest_checkpoints ORDER BY 1")
    session = next(demo_corpus.rglob("*.jsonl"))
    session.write_bytes(session.read_bytes() + b"\n")  # this build has something to write
    monkeypatch.setattr(store, "BUSY_TIMEOUT", 0.5)  # how long a build waits for SQLite's lock (30 s by default)
    with write_lock_held_by_another_process(cache) as holder:
        code, lines = run(demo_corpus, out, cache, capsys)
        assert code == 2 and "in use by another process" in one_line_error(lines) and "damaged" not in lines[0]
        assert holder.poll() is None  # the other process still holds its transaction
    # Nothing was deleted or changed: not the cache, not the site.
    assert rows(cache, "SELECT session_id, fingerprint FROM ingest_checkpoints ORDER BY 1") == stored
    assert tree_bytes(out) == site
    # Once the other process is done, the build uses the cache it left: only the changed session is read.
    capsys.readouterr()
    assert main(["build", "--corpus", str(demo_corpus), "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW]) == 1
    assert f"{len(stored)} sessions: 1 parsed, {len(stored) - 1} unchanged" in capsys.readouterr().err


@contextlib.contextmanager
def mounted(folder: Path, options: str) -> Iterator[Path]:
    """Mount a small tmpfs on `folder` (a real file system that fills up, or is read-only); skip unless allowed."""
    folder.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
    ).returncode != 0:
        pytest.skip("mounting a tmpfs needs root (or CAP_SYS_ADMIN): run as root to test a real full or read-only file system")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path, leave: int) -> Path:
    """Fill a file system until fewer than `leave` bytes are free; return the file that fills it."""
    filler = folder / "filler"
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    with open(filler, "wb") as handle:
        try:
            handle.write(b"\0" * max(free - leave, 0))
            if not leave:
                handle.write(b"\0" * 1024 * 1024)  # to the last block
            handle.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_under_the_cache_is_a_clear_error(demo_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    with mounted(tmp_path / "disk", "size=8m") as disk:
        cache = disk / "cache"
        assert build(demo_corpus, out, cache) == 1
        site, sessions = tree_bytes(out), rows(cache, "SELECT session_id FROM sessions ORDER BY 1")
        for transcript in demo_corpus.rglob("*.jsonl"):
            os.utime(transcript, ns=(transcript.stat().st_atime_ns, transcript.stat().st_mtime_ns + 10**9))  # all read again
        # No byte left (SQLite cannot even grow its shared-memory file), then a little (the disk
        # fills while sessions are written): both a one-line error, exit 1, nothing deleted.
        for leave in (0, 256 * 1024):
            filler = fill(disk, leave)
            code, lines = run(demo_corpus, out, cache, capsys)
            assert code == 1 and "no space left for the cache" in one_line_error(lines), lines
            assert tree_bytes(out) == site
            filler.unlink()  # (reading the cache needs a little space too)
            assert rows(cache, "SELECT session_id FROM sessions ORDER BY 1") == sessions
            assert rows(cache, "PRAGMA integrity_check") == [("ok",)]
        # With space again, the build goes on from the cache it left.
        code, lines = run(demo_corpus, out, cache, capsys)
        assert code == 1 and not any("damaged" in line or "Traceback" in line for line in lines)
    assert build(demo_corpus, tmp_path / "clean", tmp_path / "clean-cache") == 1
    assert tree_bytes(out) == tree_bytes(tmp_path / "clean")


def one_line_exit_2(result: subprocess.CompletedProcess[str]) -> str:
    """Check a build process ended with exit 2 and one line on stderr; return that line."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    return one_line_error(result.stderr.splitlines())


@pytest.mark.parametrize("option", ["--out", "--cache"])
def test_out_or_cache_under_a_regular_file_is_a_one_line_error(option: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("the user's notes\n")
    out, cache = tmp_path / "site", tmp_path / "cache"
    if option == "--out":
        out = notes / "site"
    else:
        cache = notes / "cache"
    line = one_line_exit_2(build_subprocess(DEMO_CORPUS, out, cache))
    assert f"{option} {notes}" in line and f"{notes} is a file, not a folder" in line
    assert notes.read_text() == "the user's notes\n"


def test_a_read_only_filesystem_for_a_new_out_is_a_one_line_error(tmp_path: Path) -> None:
    # Root ignores permission bits, so the read-only file system is a real one: a tmpfs mounted ro.
    with mounted(tmp_path / "readonly", "ro,size=1m") as readonly:
        result = build_subprocess(DEMO_CORPUS, readonly / "site", tmp_path / "cache")
        line = one_line_exit_2(result)
        assert f"cannot prepare the output folder {readonly / 'site'}" in line and "Read-only file system" in line
        assert not any(readonly.iterdir())


@pytest.mark.parametrize("name", ["cache.sqlite3", "build.lock"])
def test_a_cache_file_or_build_lock_that_is_a_folder_is_a_one_line_error(name: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / name).mkdir(parents=True)
    (cache / name / "kept.txt").write_text("not agenthropic's\n")
    line = one_line_exit_2(build_subprocess(DEMO_CORPUS, tmp_path / "site", cache))
    assert f"{cache / name} is a folder, not a file" in line
    assert (cache / name / "kept.txt").read_text() == "not agenthropic's\n"  # never deleted as "damage"


PERIOD = {"from": "2025-01-01", "input": "2", "output": "10", "cache_write_5m": "2.5", "cache_write_1h": "4", "cache_read": "0.2"}


@pytest.mark.parametrize(
    ("period", "field"),
    [
        ({key: value for key, value in PERIOD.items() if key != "output"}, "periods[0].output is missing"),
        ({**PERIOD, "from": "1st of May"}, "periods[0].from is not a date (YYYY-MM-DD): '1st of May'"),
        ({**PERIOD, "from": "2025-13-01"}, "periods[0].from is not a date (YYYY-MM-DD): '2025-13-01'"),
        ({**PERIOD, "long_context": {"threshold": 200000, "input": "4"}}, "periods[0].long_context.output is missing"),
    ],
)
def test_a_price_file_with_a_missing_field_names_file_family_and_field(
    period: dict[str, object], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"families": {"claude-nimbus-9": {"models": ["claude-nimbus-9"], "periods": [period]}}}))
    code, lines = run(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache", capsys, "--pricing", str(prices))
    assert code == 2
    assert one_line_error(lines) == f"agenthropic: {prices}: family 'claude-nimbus-9': field {field}"
