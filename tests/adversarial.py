"""An adversarial corpus generator: each function writes one hostile case into a corpus folder.

Every case is small and self-contained, so a test builds only what it needs. Nothing here is
committed output: the tests call these functions on a temporary folder. The shapes follow the
2.1.114+ layout (format §1.3): `<project>/<sid>.jsonl` and `<project>/<sid>/subagents/agent-<id>.jsonl`
with `.meta.json` sidecars.

Cases, and what `tests/test_adversarial.py` expects of each:

| writer | expected outcome |
| --- | --- |
| `symlink_out_of_root` | containment stop: exit 3, `FATAL: corpus containment violation - …` |
| `symlink_to_device` | a link to the system's null device (outside the root): containment stop |
| `links_inside_root` | links to a FIFO, a device and a transcript inside the root: skipped `symlink` |
| `fifo_transcripts` | FIFOs named like a main, agent, flat agent and sidecar file: `not-regular-file` |
| `device_node` | a character device named like an agent transcript: `not-regular-file` |
| `oversize_agent` | a 70 MB agent transcript: `oversize`, never opened |
| `deep_folders` | 10 folder levels under a session folder: one `too-deep` skip |
| `nul_bytes_lines` … `deep_json_line` | malformed lines, counted; the other lines still count |
| `line_separators_line` | U+2028, U+2029 and U+0085 inside a string never split the record |
| `huge_line` | a 50 MB single line parses; the stored and shown text is cut |
| `big_integer_lines` | integers of 2^64 and more (and a 2^64 - 1) in usage: malformed lines |
| `cross_session_sidecar` | a sidecar naming a spawn of another session: the agent stays unlinked |
| `spawn_cycle` | two agents whose sidecars name spawns inside each other: one link dropped |
| `shared_agent_id` | two sessions with an agent `a1` each: two agents, two pages |
| `shrink` | a transcript truncated and rewritten shorter between two builds |
| `append_line` | lines appended while a build runs |
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from records import OTHER_SID, SID, assistant, line, usage, user, write

PROJECT = "-home-u-adversarial"
MB = 1024 * 1024
# The sane usage every case's main transcript carries: 1 input and 2 output tokens.
BASE_USAGE = usage(1, 2)


def session_folder(root: Path, sid: str = SID, project: str = PROJECT) -> Path:
    """Return `<project>/<sid>/subagents` (not created)."""
    return root / project / sid / "subagents"


def ts(second: int) -> str:
    """A timestamp `second` seconds after 2026-01-01T10:00:00Z."""
    return f"2026-01-01T10:{second // 60:02d}:{second % 60:02d}.000Z"


def main_transcript(root: Path, sid: str = SID, *extra: dict[str, Any] | bytes, project: str = PROJECT) -> Path:
    """Write a main transcript: one prompt, one reply of 1 input and 2 output tokens, then `extra`."""
    return write(
        root / project / f"{sid}.jsonl",
        user(f"{sid[:4]}-u1", "hello", session=sid, ts=ts(0)),
        assistant(f"{sid[:4]}-a1", f"msg_{sid[:8]}_1", f"req_{sid[:8]}_1", BASE_USAGE, session=sid, ts=ts(1)),
        *extra,
    )


def spawn(uuid: str, sid: str, tool_use_id: str, prompt: str, second: int, tokens: int = 1) -> dict[str, Any]:
    """An assistant reply that calls the Agent tool (format §4.1), with its own usage."""
    return assistant(
        uuid, f"msg_{uuid}", f"req_{uuid}", usage(tokens, tokens), session=sid, ts=ts(second), stop="tool_use",
        content=[{"type": "tool_use", "id": tool_use_id, "name": "Agent",
                  "input": {"description": f"task {uuid}", "subagent_type": "general-purpose", "prompt": prompt}}],
    )


def spawn_result(uuid: str, sid: str, tool_use_id: str, agent_id: str, second: int) -> dict[str, Any]:
    """The user line that returns a finished Agent call, naming the agent as 2.1.114 does (format §4.2)."""
    text = f"Done.\nagentId: {agent_id} (use SendMessage with to: '{agent_id}' to continue this agent)"
    return user(uuid, [{"type": "tool_result", "tool_use_id": tool_use_id, "content": [{"type": "text", "text": text}]}],
                session=sid, ts=ts(second), toolUseResult={"status": "completed", "agentId": agent_id, "content": []})


def agent_transcript(root: Path, sid: str, agent_id: str, *records: dict[str, Any] | bytes, tool_use_id: str | None = None,
                     project: str = PROJECT) -> Path:
    """Write `<sid>/subagents/agent-<id>.jsonl`, and its sidecar when `tool_use_id` is given."""
    folder = session_folder(root, sid, project)
    path = write(folder / f"agent-{agent_id}.jsonl", *records)
    if tool_use_id is not None:
        meta = {"agentType": "general-purpose", "description": f"agent {agent_id}", "toolUseId": tool_use_id}
        (folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return path


def agent_records(sid: str, agent_id: str, tokens: int, *extra: dict[str, Any]) -> list[dict[str, Any]]:
    """An agent's prompt and one reply of `tokens` input and `tokens` output tokens."""
    return [
        user(f"{agent_id}-u1", f"work of {agent_id} in {sid[:8]}", session=sid, ts=ts(10)),
        assistant(f"{agent_id}-r1", f"msg_{sid[:8]}_{agent_id}", f"req_{sid[:8]}_{agent_id}", usage(tokens, tokens), session=sid, ts=ts(11)),
        *extra,
    ]


# --- the walk: links, special files, size and depth ------------------------------------------------


def symlink_out_of_root(root: Path, outside: Path) -> Path:
    """A session whose subagents folder holds a link to a transcript outside the corpus root."""
    main_transcript(root)
    target = write(outside / "secret.jsonl", user("x1", "secret"))
    link = session_folder(root) / "agent-aevil.jsonl"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    return link


def symlink_to_device(root: Path) -> Path:
    """A link named like an agent transcript that points at the system's null device (outside the root)."""
    main_transcript(root)
    link = session_folder(root) / "agent-adevnull.jsonl"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.devnull, link)
    return link


def make_device(path: Path) -> str | None:
    """Create a character device (the null device's numbers) at `path`; return why not, or None."""
    if not hasattr(os, "mknod") or os.geteuid() != 0:
        return "creating a device node needs root"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError as exc:
        return f"mknod failed: {exc.strerror}"
    return None


def links_inside_root(root: Path) -> dict[str, str]:
    """Links that stay inside the root: to a FIFO, to a device (when one can be made), to a transcript.

    Returns {relative path: expected skip reason} for every special entry written.
    """
    main = main_transcript(root)
    folder = session_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "agent-afifo.jsonl")
    os.symlink(folder / "agent-afifo.jsonl", folder / "agent-alinkfifo.jsonl")
    os.symlink(main, root / PROJECT / f"{OTHER_SID}.jsonl")  # a link named like a main transcript
    base = f"{PROJECT}/{SID}/subagents"
    expected = {
        f"{base}/agent-afifo.jsonl": "not-regular-file",
        f"{base}/agent-alinkfifo.jsonl": "symlink",
        f"{PROJECT}/{OTHER_SID}.jsonl": "symlink",
    }
    if make_device(folder / "agent-adev.jsonl") is None:
        os.symlink(folder / "agent-adev.jsonl", folder / "agent-alinkdev.jsonl")
        expected[f"{base}/agent-adev.jsonl"] = "not-regular-file"
        expected[f"{base}/agent-alinkdev.jsonl"] = "symlink"
    return expected


def fifo_transcripts(root: Path) -> dict[str, str]:
    """FIFOs named like a main transcript, an agent transcript, a flat agent file and a sidecar.

    Opening any of them for reading would block until a writer comes: the walk must never open
    them. Returns {relative path: expected skip reason}.
    """
    main_transcript(root)
    folder = session_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / PROJECT / f"{OTHER_SID}.jsonl")
    os.mkfifo(root / PROJECT / "agent-aflatfifo.jsonl")
    os.mkfifo(folder / "agent-afifo.jsonl")
    os.mkfifo(folder / "agent-afifo.meta.json")
    base = f"{PROJECT}/{SID}/subagents"
    return {
        f"{PROJECT}/{OTHER_SID}.jsonl": "not-regular-file",
        f"{PROJECT}/agent-aflatfifo.jsonl": "not-regular-file",
        f"{base}/agent-afifo.jsonl": "not-regular-file",
        f"{base}/agent-afifo.meta.json": "not-regular-file",
    }


def device_node(root: Path) -> tuple[str, str | None]:
    """A character device named like an agent transcript; returns (relative path, why it could not be made)."""
    main_transcript(root)
    why = make_device(session_folder(root) / "agent-adev.jsonl")
    return f"{PROJECT}/{SID}/subagents/agent-adev.jsonl", why


def oversize_agent(root: Path, mb: int = 70) -> Path:
    """A session whose agent transcript is over `mb` MiB: a valid, countable first line, then a hole.

    The walk judges a file by its size alone and never opens one over the cap, so the file is
    sparse: it takes no disk and no time to write, whatever `mb` is.
    """
    main_transcript(root)
    record = line(assistant("big", "msg_big", "req_big", usage(1000, 1000), ts=ts(20)))
    path = agent_transcript(root, SID, "abig", record)
    os.truncate(path, mb * MB + len(record))
    return path


def deep_folders(root: Path, levels: int = 10) -> Path:
    """`levels` nested folders under a session's subagents folder, with a transcript at the bottom."""
    main_transcript(root)
    folder = session_folder(root)
    for level in range(1, levels + 1):
        folder = folder / f"level{level}"
    return write(folder / "agent-adeep.jsonl", *agent_records(SID, "adeep", 5))


# --- hostile bytes inside transcripts -------------------------------------------------------------


def _user_bytes(uuid: str, content: bytes) -> bytes:
    """A user record whose `message.content` is the given raw JSON bytes (which may be invalid)."""
    head = f'{{"type":"user","uuid":"{uuid}","sessionId":"{SID}","timestamp":"{ts(30)}","message":{{"role":"user","content":'
    return head.encode() + content + b"}}\n"


def nul_bytes_lines() -> list[bytes]:
    """A raw NUL inside a string, and a run of NULs (what a crash leaves of a preallocated block)."""
    return [_user_bytes("nul1", b'"a\x00b"'), b"\x00" * 4096 + b"\n"]


def invalid_utf8_lines() -> list[bytes]:
    """Invalid UTF-8 inside a string: stray continuation bytes, and an overlong encoding of '/'."""
    return [_user_bytes("utf1", b'"\xff\xfe\xfd"'), _user_bytes("utf2", b'"\xc0\xaf"')]


def lone_surrogate_lines() -> list[bytes]:
    """A lone surrogate as a JSON escape, and one encoded raw (CESU-8 bytes, not UTF-8)."""
    return [_user_bytes("sur1", b'"lone \\ud800 here"'), _user_bytes("sur2", b'"raw \xed\xa0\x80 here"')]


def deep_json_line(depth: int = 100_000) -> bytes:
    """A record whose content nests `depth` arrays, then one whose content nests `depth` objects."""
    arrays = _user_bytes("deep1", b"[" * depth + b"]" * depth)
    objects = _user_bytes("deep2", b'{"a":' * depth + b"0" + b"}" * depth)
    return arrays + objects


def line_separators_line(text: str = "one\u2028two\u2029three\u0085four") -> bytes:
    """An assistant reply whose text holds U+2028, U+2029 and U+0085 raw (as Claude Code may write them)."""
    record = assistant("sep1", "msg_sep", "req_sep", usage(3, 4), ts=ts(40), content=[{"type": "text", "text": text}])
    raw = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    assert "\u2028".encode() in raw
    return raw


def huge_line(mb: int = 50) -> bytes:
    """One valid record of `mb` MiB: a prompt whose text is one long run of a short phrase."""
    head = f'{{"type":"user","uuid":"huge1","sessionId":"{SID}","timestamp":"{ts(50)}","message":{{"role":"user","content":"'
    phrase = b"huge prompt text "
    return head.encode() + phrase * (mb * MB // len(phrase) + 1) + b'"}}\n'


def big_integer_lines() -> list[bytes]:
    """Usage counts no request can have: 2^64 + 1, 10^400, and 2^64 - 1 (the largest unsigned 64-bit value)."""
    lines = []
    for index, value in enumerate(("18446744073709551617", "1" + "0" * 400, "18446744073709551615")):
        record = assistant(f"int{index}", f"msg_int{index}", f"req_int{index}", usage(1, 1), ts=ts(60 + index))
        text = json.dumps(record, separators=(",", ":")).replace('"output_tokens":1', f'"output_tokens":{value}')
        lines.append(text.encode() + b"\n")
    return lines


def with_lines(root: Path, *lines: bytes) -> Path:
    """A main transcript with raw lines appended after its sane prompt and reply."""
    return main_transcript(root, SID, *lines)


# --- agent links across and within sessions -------------------------------------------------------


def cross_session_sidecar(root: Path) -> str:
    """Session A spawns an agent; session B has an agent file whose sidecar names A's spawn.

    A's result text even names B's agent id. The agent id is returned.
    """
    agent_id, tool_use_id = "ashared", "toolu_A_spawn"
    main_transcript(root, SID, spawn("a-sp", SID, tool_use_id, "do the thing", 2),
                    spawn_result("a-res", SID, tool_use_id, agent_id, 3))
    main_transcript(root, OTHER_SID)
    agent_transcript(root, OTHER_SID, agent_id, *agent_records(OTHER_SID, agent_id, 7), tool_use_id=tool_use_id)
    return agent_id


def spawn_cycle(root: Path) -> tuple[str, str]:
    """Agents `acyc1` and `acyc2`: each one's sidecar names a spawn inside the other's transcript."""
    one, two = "acyc1", "acyc2"
    main_transcript(root)
    agent_transcript(root, SID, one, *agent_records(SID, one, 3, spawn("c1-sp", SID, "toolu_in_one", "child", 12)), tool_use_id="toolu_in_two")
    agent_transcript(root, SID, two, *agent_records(SID, two, 4, spawn("c2-sp", SID, "toolu_in_two", "child", 13)), tool_use_id="toolu_in_one")
    return one, two


def shared_agent_id(root: Path, tokens: tuple[int, int] = (5, 9)) -> dict[str, int]:
    """Two sessions of one project, each spawning and holding its own `subagents/agent-a1.jsonl`.

    Returns {session id: the agent's input (= output) tokens}.
    """
    result = {}
    for sid, count in zip((SID, OTHER_SID), tokens):
        tool_use_id = f"toolu_{sid[:8]}_a1"
        main_transcript(root, sid, spawn(f"{sid[:4]}-sp", sid, tool_use_id, "same prompt", 2),
                        spawn_result(f"{sid[:4]}-res", sid, tool_use_id, "a1", 20))
        agent_transcript(root, sid, "a1", *agent_records(sid, "a1", count), tool_use_id=tool_use_id)
        result[sid] = count
    return result


# --- files that change under the build ------------------------------------------------------------


def growing_session(root: Path) -> Path:
    """A session with a completed agent (lines 3-4) and three more replies: the starting point of `shrink`."""
    tool_use_id = "toolu_grow"
    extra: list[dict[str, Any]] = [spawn("g-sp", SID, tool_use_id, "grow", 2), spawn_result("g-res", SID, tool_use_id, "agrow", 30)]
    for index in range(3):
        extra.append(assistant(f"g-r{index}", f"msg_g{index}", f"req_g{index}", usage(10, 10), ts=ts(40 + index)))
    path = main_transcript(root, SID, *extra)
    agent_transcript(root, SID, "agrow", *agent_records(SID, "agrow", 6), tool_use_id=tool_use_id)
    return path


def shrink(path: Path, keep_lines: int, tail: bytes = b"") -> None:
    """Truncate a transcript in place (same inode) to its first `keep_lines` lines, then write `tail`."""
    lines = path.read_bytes().split(b"\n")[:keep_lines]
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(b"".join(piece + b"\n" for piece in lines) + tail)


def append_line(path: Path, index: int) -> None:
    """Append one complete assistant line with its own message id (one write, as Claude Code does)."""
    record = line(assistant(f"app{index}", f"msg_app{index}", f"req_app{index}", usage(index, 1), ts=ts(100 + index % 3000)))
    with path.open("ab") as handle:
        handle.write(record)


def many_sessions(root: Path, count: int) -> list[Path]:
    """`count` sessions of a few lines each, in one project (enough work for a build to take a while)."""
    paths = []
    for index in range(count):
        sid = f"{index:08x}-0000-4000-8000-{index:012x}"
        paths.append(main_transcript(root, sid, *(assistant(f"m{index}-{k}", f"msg_{sid}_{k}", f"req_{sid}_{k}", usage(k, k),
                                                             session=sid, ts=ts(2 + k)) for k in range(1, 40))))
    return paths

