"""Hostile cases at the live edges: the hook's stdin, the `--serve` server, and `hooks install` on a user's settings.

Real parts only: `agenthropic hook` and `agenthropic hooks` as subprocesses, a real build into a
real SQLite cache, and a real `build --watch --serve` answering real HTTP requests on 127.0.0.1.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Iterator

import pytest

from conftest import DEMO_NOW, build, stop_with_sigint
from records import SID, assistant, usage, user, write

LOOPBACK = "127.0.0.1"  # the only address these tests ever connect to


def agenthropic(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the command line as a user (or Claude Code) does: a new process."""
    return subprocess.run([sys.executable, "-m", "agenthropic_site", *args], input=stdin, capture_output=True, timeout=60,
                          env={**os.environ, **(env or {})})


def small_corpus(root: Path) -> Path:
    write(root / "p" / f"{SID}.jsonl", user("u1", "go", ts="2026-05-31T23:55:00.000Z"),
          assistant("a1", "m1", "r1", usage(1, 2), ts="2026-05-31T23:55:05.000Z"))
    write(root / "p" / SID / "subagents" / "agent-a1.jsonl",
          {**user("s1", "sub", ts="2026-05-31T23:55:01.000Z"), "isSidechain": True, "agentId": "a1"})
    return root


# --- The hook stores identifiers only -------------------------------------------------------------

HUGE_PROMPT = "SECRET-HUGE-PROMPT " * 120_000  # 2.3 MB: past the 1 MiB cap, cut inside the prompt


def hostile_payloads() -> list[bytes]:
    """Payloads Claude Code (or anything else) might send, each carrying text that must never be stored."""
    return [
        # Too large: the identifiers come first (as Claude Code writes them), the prompt is cut.
        json.dumps({"session_id": SID, "hook_event_name": "UserPromptSubmit", "prompt": HUGE_PROMPT}).encode(),
        b"SECRET-HUGE-NOT-JSON " * 100_000,  # too large and not JSON
        b"SECRET-NOT-JSON {\"session_id\": \"" + SID.encode() + b"\"",  # not JSON
        b'["SECRET-IN-AN-ARRAY", {"session_id": "x"}]',  # JSON, not an object
        b'{"prompt": "SECRET-BAD-UTF8 \xff\xfe", "session_id": "' + SID.encode() + b'"}',  # not UTF-8
        b"[" * 100_000 + b'"SECRET-DEEP"',  # nested past any parser's depth
        # JSON with secrets in fields that are not identifiers.
        json.dumps({"hook_event_name": "Stop", "session_id": SID, "prompt": "SECRET-PROMPT",
                    "last_assistant_message": "SECRET-ANSWER", "tool_input": {"command": "SECRET-TOOL-INPUT"},
                    "tool_response": "SECRET-TOOL-RESPONSE", "transcript_path": "/home/u/SECRET-PATH.jsonl",
                    "cwd": "/home/u/SECRET-CWD", "custom_instructions": "SECRET-CUSTOM", "unknown": ["SECRET-UNKNOWN"]}).encode(),
        # Identifier fields whose values are not identifier-shaped.
        json.dumps({"hook_event_name": "SubagentStop\nSECRET-EVENT", "session_id": "SECRET SESSION with spaces",
                    "agent_id": "../SECRET-AGENT/x", "agent_type": "<script>SECRET-TYPE</script>",
                    "reason": "SECRET-REASON password=hunter2", "source": "startup; SECRET-SOURCE", "trigger": "x" * 600,
                    "tool_name": 'Bash"SECRET-TOOL', "tool_use_id": "toolu SECRET", "notification_type": "SECRET-1234",
                    "stop_hook_active": "SECRET-BOOL", "prompt_id": {"SECRET-NESTED": 1}, "permission_mode": 123456789}).encode(),
        json.dumps({"hook_event_name": "SubagentStop", "session_id": SID, "agent_id": "a1", "agent_type": "Explore",
                    "reason": "SECRET-Ω", "prompt": "SECRET-LAST"}).encode(),
    ]


def test_a_payload_too_large_or_not_json_leaves_no_payload_text(tmp_path: Path) -> None:
    corpus, out, cache = small_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    assert build(corpus, out, cache) == 0
    payloads = hostile_payloads()
    for payload in payloads:
        result = agenthropic("hook", stdin=payload, env={"AGENTHROPIC_CACHE_DIR": str(cache)})
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    spool = cache / "hooks" / "spool.jsonl"
    lines = spool.read_bytes().splitlines()
    assert len(lines) == len(payloads)  # every payload left an event...
    assert b"SECRET" not in spool.read_bytes().upper() and b"hunter2" not in spool.read_bytes()  # ...and no text of it
    records = [json.loads(line) for line in lines]
    # Identifier-shaped values are kept, even from the front of a payload that was cut.
    assert records[0]["error"] == "truncated" and records[0]["payload"] == {"session_id": SID, "hook_event_name": "UserPromptSubmit"}
    assert [record.get("error") for record in records[1:6]] == ["truncated", "not-json", "not-an-object", "not-json", "not-json"]
    assert records[6]["payload"] == {"hook_event_name": "Stop", "session_id": SID}
    assert records[7]["payload"] == {}
    assert records[8]["payload"] == {"hook_event_name": "SubagentStop", "session_id": SID, "agent_id": "a1", "agent_type": "Explore"}
    # A spool line an older hook wrote with a raw excerpt is stored without it.
    with spool.open("ab") as handle:
        handle.write(b'{"delivery_id":"0123456789abcdef0123456789abcdef","error":"not-json","raw":"SECRET-OLD-RAW",'
                     b'"raw_bytes":14,"received_at":"2026-05-31T23:56:00.000Z","payload":{"prompt":"SECRET-OLD-PROMPT"}}\n')
    assert build(corpus, out, cache) == 0
    conn = sqlite3.connect(cache / "cache.sqlite3")
    try:
        rows = conn.execute("SELECT * FROM events_raw").fetchall()
        events = conn.execute("SELECT * FROM events").fetchall()
    finally:
        conn.close()
    assert len(rows) == len(events) == len(payloads) + 1
    stored = json.dumps([rows, events]).upper()
    assert "SECRET" not in stored and "HUNTER2" not in stored
    agents = json.loads((out / "data" / "sessions" / f"{SID}.json").read_text())["agents"]
    assert {agent["agent_id"]: agent["status"] for agent in agents}["a1"] == "completed"  # the identifiers still count


# --- The server serves the site to this machine only ---------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


class Served:
    """A running `agenthropic build --watch --serve` and what it serves."""

    def __init__(self, out: Path, port: int, stderr: Path) -> None:
        self.out, self.port, self.stderr = out, port, stderr

    def request(self, method: str, path: str, host: str | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """Make one request to 127.0.0.1; `host` replaces the Host header ("" sends none)."""
        connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=10)
        try:
            connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            host = f"{LOOPBACK}:{self.port}" if host is None else host
            if host:
                connection.putheader("Host", host)
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            connection.endheaders()
            response = connection.getresponse()
            return response.status, {name.lower(): value for name, value in response.getheaders()}, response.read()
        finally:
            connection.close()

    def raw(self, data: bytes) -> bytes:
        """Send raw bytes and read until the server closes the connection."""
        with socket.create_connection((LOOPBACK, self.port), timeout=10) as connection:
            connection.sendall(data)
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("served")
    corpus, out, cache, stderr = small_corpus(base / "corpus"), base / "site", base / "cache", base / "stderr.txt"
    port = free_port()
    command = [sys.executable, "-m", "agenthropic_site", "build", "--watch", "--serve", "--port", str(port), "--corpus", str(corpus),
               "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW]
    with stderr.open("wb") as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
    server = Served(out, port, stderr)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, stderr.read_text()
            try:
                if server.request("GET", "/")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield server
    finally:
        code = stop_with_sigint(process)
    assert code == 0, stderr.read_text()
    assert "Traceback" not in stderr.read_text()


def test_the_server_rejects_a_foreign_host_header(served: Served) -> None:
    port = served.port
    for host in (f"{LOOPBACK}:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert served.request("GET", "/", host=host)[0] == 200, host
    foreign = [f"attacker.example:{port}", "attacker.example", f"{LOOPBACK}.attacker.example:{port}", f"{LOOPBACK}:{port + 1}",
               LOOPBACK, f"localhost:{port}.attacker.example", f"{LOOPBACK}:{port}@attacker.example", ""]
    for host in foreign:
        for path in ("/", "/index.html", "/data/index.json", "/livereload.js", "/livereload"):
            status, _, body = served.request("GET", path, host=host)
            assert status in (400, 403), (host, path, status)
            assert b"<!DOCTYPE html>" not in body and b"tokens" not in body
    # A request without any Host header (HTTP/1.0) is not addressed to this server either.
    assert served.raw(b"GET /index.html HTTP/1.0\r\n\r\n").split(b" ", 2)[1] in (b"400", b"403")
    # A page of another site may open a WebSocket to 127.0.0.1 with the right Host: its Origin gives it away.
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    assert served.request("GET", "/livereload", headers={**upgrade, "Origin": f"http://{LOOPBACK}:{port}"})[0] == 101
    for origin in ("http://attacker.example", f"http://attacker.example:{port}", "null"):
        assert served.request("GET", "/livereload", headers={**upgrade, "Origin": origin})[0] in (400, 403), origin


def test_the_server_serves_nothing_under_a_dot_folder(served: Served) -> None:
    out = served.out
    (out / ".git").mkdir(exist_ok=True)
    (out / ".git" / "config").write_text("[remote] url = SECRET-GIT\n")
    (out / ".hidden.html").write_text("SECRET-HIDDEN")
    (out / "sessions" / ".notes").mkdir(exist_ok=True)
    (out / "sessions" / ".notes" / "index.html").write_text("SECRET-NOTES")
    if not (out / "dotlink").is_symlink():
        (out / "dotlink").symlink_to(".git")  # a plain name that leads into a dot-folder
    paths = ["/.git/config", "/.git/", "/.git", "/.agenthropic-site", "/.hidden.html", "/sessions/.notes/index.html",
             "/sessions/.notes/", "/%2egit/config", "/sessions/%2enotes/index.html", "/dotlink/config", "/./.git/config",
             "/sessions/../.git/config"]
    for path in paths:
        for method in ("GET", "HEAD"):
            status, _, body = served.request(method, path)
            assert status in (403, 404), (method, path, status)
            assert b"SECRET" not in body and b"agenthropic build" not in body
    assert (out / ".git" / "config").is_file() and (out / ".agenthropic-site").is_file()  # they were there to be refused


def test_the_server_answers_head(served: Served) -> None:
    for path in ("/", "/index.html", f"/sessions/{SID}/index.html", "/data/index.json"):
        status, headers, body = served.request("GET", path)
        assert status == 200, path
        head = served.raw(f"HEAD {path} HTTP/1.1\r\nHost: {LOOPBACK}:{served.port}\r\nConnection: close\r\n\r\n".encode())
        status_line, _, rest = head.partition(b"\r\n")
        fields, _, after = rest.partition(b"\r\n\r\n")
        assert status_line.startswith(b"HTTP/1.1 200"), (path, head[:200])
        assert after == b"", f"HEAD {path} sent a body"
        head_headers = dict(line.decode().lower().split(": ", 1) for line in fields.split(b"\r\n"))
        assert head_headers["content-length"] == str(len(body)) == headers["content-length"], path
        assert head_headers["content-type"] == headers["content-type"]
    status, _, body = served.request("HEAD", "/no-such-page.html")
    assert (status, body) == (404, b"")


def test_the_server_answers_bad_paths_with_4xx_and_no_traceback(served: Served) -> None:
    bad = ["/%00", "/index.html%00", "/index.html%00.txt", "/%00/../index.html", "/..", "/../", "/../../../../etc/passwd",
           "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/sessions/..%2f..%2f..%2fetc%2fpasswd", "/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",
           "/%e0%80%ae%e0%80%ae/etc/passwd", "/%c0%af", "/%zz", "/%", "/%e2%82", "/%ff%fe", "/%1b%5b31m", "/%0d%0aSet-Cookie:%20x=y",
           "/" + "a" * 5000, "/" + "a/" * 3000, "/" + "%41" * 10000, "/" + "x" * 300 + "/index.html", "//etc/passwd",
           "/\\..\\..\\etc\\passwd"]
    for path in bad:
        for method in ("GET", "HEAD"):
            status, headers, body = served.request(method, path)
            assert status in (400, 404), (method, path[:80], status)
            assert b"Traceback" not in body and b'File "' not in body and b"root:" not in body
            assert "set-cookie" not in headers
    assert served.request("POST", "/index.html")[0] == 405
    assert served.request("GET", "/index.html")[0] == 200  # the server is still up
    errors = served.stderr.read_text(errors="replace")
    assert "Traceback" not in errors and "passwd" not in errors
    assert not [line for line in errors.splitlines() if line.startswith(("[E ", "[W "))]  # no error or warning logged


def test_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    corpus, out, cache = small_corpus(tmp_path / "corpus"), tmp_path / "out", tmp_path / "cache"
    with socket.socket() as taken:
        taken.bind((LOOPBACK, 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = agenthropic("build", "--watch", "--serve", "--port", str(port), "--corpus", str(corpus), "--out", str(out),
                             "--cache", str(cache), "--now", DEMO_NOW)
    assert result.returncode == 2
    assert result.stderr.decode() == f"agenthropic: port {port} is in use; try --port\n"
    assert not out.exists()  # refused before building anything
    result = agenthropic("build", "--watch", "--serve", "--port", "70000", "--corpus", str(corpus), "--out", str(out),
                         "--cache", str(cache), "--now", DEMO_NOW)
    assert result.returncode == 2 and result.stderr.decode().count("\n") == 1 and "try --port" in result.stderr.decode()


# --- Settings are edited safely -------------------------------------------------------------------

USER_SETTINGS = (
    '{\n  "model": "opus",\n  "cleanupPeriodDays": 1e400,\n  "ratio": 1.0,\n  "tiny": 5e-324,\n  "exp": 1E2,\n  "neg": -0,\n'
    '  "money": 2.50,\n  "big": 123456789012345678901234567890,\n  "huge": ' + "9" * 5000 + ',\n'
    '  "env": {"MAX_THINKING_TOKENS": 31999, "FLOAT": 0.1000000000000000055511151231257827},\n'
    '  "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done", "timeout": 30.0}]}]}\n}\n'
)
NUMBERS = ['"cleanupPeriodDays": 1e400', '"ratio": 1.0', '"tiny": 5e-324', '"exp": 1E2', '"neg": -0', '"money": 2.50',
           '"big": 123456789012345678901234567890', '"huge": ' + "9" * 5000, '"MAX_THINKING_TOKENS": 31999',
           '"FLOAT": 0.1000000000000000055511151231257827', '"timeout": 30.0']


def hooks(action: str, settings: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return agenthropic("hooks", action, "--settings", str(settings), *extra)


def parsed(text: str) -> dict:
    """Read settings as a test sees them: numbers as their text (Python refuses 5,000-digit integers)."""
    return json.loads(text, parse_int=str, parse_float=str)


def ours(settings: dict) -> int:
    return sum(hook["command"].endswith("agenthropic_site hook") for groups in settings.get("hooks", {}).values()
               for group in groups for hook in group["hooks"])


def test_hooks_install_edits_a_symlinked_settings_target_and_keeps_the_link(tmp_path: Path) -> None:
    dotfiles, claude = tmp_path / "dotfiles", tmp_path / ".claude"
    dotfiles.mkdir()
    claude.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text('{"model": "opus"}\n')
    (dotfiles / "current.json").symlink_to("claude-settings.json")  # a chain of two links
    link = claude / "settings.json"
    link.symlink_to(os.path.relpath(dotfiles / "current.json", claude))
    text_of_link = os.readlink(link)
    result = hooks("install", link)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == text_of_link and (dotfiles / "current.json").is_symlink()
    assert ours(json.loads(real.read_text())) == 4 and json.loads(real.read_text())["model"] == "opus"
    assert sorted(path.name for path in dotfiles.iterdir()) == ["claude-settings.json", "current.json"]  # no temp file left
    assert (claude / "settings.json.agenthropic-backup").read_text() == '{"model": "opus"}\n'  # next to the path the user named
    result = hooks("uninstall", link)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == text_of_link
    assert json.loads(real.read_text()) == {"model": "opus"}


def test_hooks_install_never_rewrites_numbers(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(USER_SETTINGS)
    assert hooks("install", settings).returncode == 0
    installed = settings.read_text()
    assert ours(parsed(installed)) == 4
    for number in NUMBERS:
        assert number in installed, number
    assert "Infinity" not in installed and "NaN" not in installed
    assert hooks("uninstall", settings).returncode == 0
    uninstalled = settings.read_text()
    for number in NUMBERS:
        assert number in uninstalled, number
    assert ours(parsed(uninstalled)) == 0 and parsed(uninstalled)["hooks"]["Stop"][0]["hooks"][0]["command"] == "say done"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_hooks_install_refuses_nan_and_infinity(tmp_path: Path, literal: str) -> None:
    settings = tmp_path / "settings.json"
    text = '{"model": "opus", "limit": ' + literal + "}\n"
    settings.write_text(text)
    for action in ("install", "uninstall"):
        result = hooks(action, settings)
        assert result.returncode == 2
        error = result.stderr.decode()
        assert error.count("\n") == 1 and "not valid JSON" in error and literal in error
        assert settings.read_text() == text
    assert sorted(path.name for path in tmp_path.iterdir()) == ["settings.json"]  # no backup, no temp file


def test_a_second_install_keeps_the_first_backup(tmp_path: Path) -> None:
    original = '{"model":"opus","permissions":{"allow":["Bash(ls)"]}}'  # the user's own text, as they wrote it
    settings = tmp_path / "settings.json"
    settings.write_text(original)
    backup = tmp_path / "settings.json.agenthropic-backup"
    assert hooks("install", settings).returncode == 0
    assert backup.read_text() == original
    assert hooks("uninstall", settings).returncode == 0
    assert hooks("install", settings).returncode == 0  # the second install: the file it backs up is one we edited
    assert hooks("install", settings).returncode == 0
    assert backup.read_text() == original
    assert ours(parsed(settings.read_text())) == 4
    assert sorted(path.name for path in tmp_path.iterdir()) == ["settings.json", "settings.json.agenthropic-backup"]


def test_a_settings_path_in_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    for action in ("install", "uninstall"):
        result = hooks(action, tmp_path / "no-such-folder" / "deeper" / "settings.json")
        assert result.returncode == 2
        assert result.stderr.decode().count("\n") == 1 and "does not exist" in result.stderr.decode()
        assert result.stdout == b""
    # A link to a file in a folder that does not exist is the same error, not a new folder tree.
    (tmp_path / "settings.json").symlink_to(tmp_path / "gone" / "settings.json")
    assert hooks("install", tmp_path / "settings.json").returncode == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["settings.json"]
