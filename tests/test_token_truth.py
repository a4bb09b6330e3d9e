"""Token truth: the cache's usage rows equal an independent re-scan of the JSONL (design invariant 1).

The re-scan below is written from the format notes (§1.3, §3) on purpose without the parser's
code: stdlib json, its own file discovery and its own dedupe. It checks three levels:
- per file: the cache's token_usage rows (before cross-session ownership) equal the re-scan;
- per session: data/sessions/<sid>.json `tokens` equal the re-scan, less at most the requests
  the session shares with another one (a shared request counts in one session only);
- globally: the index's tokens equal the re-scan after deduping requests across sessions by
  message id and by requestId (resume/fork copies, copies with a replaced message id).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from collections.abc import Iterator

import pytest

from conftest import DEMO_CORPUS, build, plain_copy

CATEGORIES = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
REPLAY_PREFIXES = ("agent-acompact-", "agent-aside_question-", "agent-aprompt_suggestion-")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def shared_corpus_names() -> list[str]:
    """The folders of $AGENTHROPIC_SHARED_DIR/corpora at collection time.

    Unset: one placeholder, so each test still runs once and skips through the `shared_dir` fixture.
    """
    value = os.environ.get("AGENTHROPIC_SHARED_DIR")
    folder = Path(value, "corpora") if value else None
    if folder is None or not folder.is_dir():
        return ["no-shared-dir"]
    return sorted(path.name for path in folder.iterdir() if path.is_dir())


# ---------------------------------------------------------------------------------------------
# the re-scan


def objects_of(raw: bytes) -> list[dict]:
    """The JSON objects one line holds: one, or several written back to back (`{...}{...}`).

    A piece that does not decode whole holds none (a cut line, or garbage). Glued objects touch:
    an append that lands right after an unterminated line adds no space between them.
    """
    try:
        value = json.loads(raw)
    except ValueError:
        pass
    else:
        return [value] if isinstance(value, dict) else []
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return []
    decoder = json.JSONDecoder()
    found: list[dict] = []
    at = 0
    while at < len(text):
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return []
        if not isinstance(value, dict):
            return []
        found.append(value)
    return found


def records(path: Path) -> Iterator[dict]:
    pieces = path.read_bytes().split(b"\n")
    for raw in pieces[:-1]:
        yield from objects_of(raw)
    # The piece after the last newline is a record when it decodes (Claude Code finished it but
    # the newline is missing); a cut piece is still being written and decodes to nothing.
    yield from objects_of(pieces[-1])


def first_session_id(path: Path) -> str | None:
    """The session a flat agent file belongs to: the first record that names one (format §1.3)."""
    for record in records(path):
        value = record.get("sessionId")
        if isinstance(value, str) and value:
            return value
    return None


def named_sessions(corpus: Path) -> set[tuple[str, str]]:
    """Every (project folder, session id) that a file names (format §1.3).

    A main transcript `<sid>.jsonl` (0 bytes too), a session folder `<sid>/` holding agent
    transcripts, a flat `agent-*.jsonl` by the first record naming a session.
    """
    found: set[tuple[str, str]] = set()
    for project in sorted(path for path in corpus.iterdir() if path.is_dir()):
        for path in sorted(project.iterdir()):
            if path.is_file() and path.name.endswith(".jsonl") and UUID_RE.match(path.name[: -len(".jsonl")]):
                found.add((project.name, path.name[: -len(".jsonl")]))
            elif path.is_dir() and UUID_RE.match(path.name) and any((path / "subagents").rglob("agent-*.jsonl")):
                found.add((project.name, path.name))
            elif path.is_file() and path.name.startswith("agent-") and path.name.endswith(".jsonl"):
                # Session ids are uuids (format §1.3): a flat file naming anything else names no session.
                sid = first_session_id(path)
                if sid is not None and UUID_RE.match(sid):
                    found.add((project.name, sid))
    return found


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


class Request(NamedTuple):
    file: str
    message_id: str | None
    request_id: str | None
    tokens: tuple[int, ...]


def rescan_file(path: Path, rel: str) -> dict[str, Request]:
    """Return message key -> the kept line's request (largest output, ties to the last)."""
    kept: dict[str, Request] = {}
    for n, record in enumerate(records(path)):
        if record.get("type") != "assistant" or not isinstance(record.get("message"), dict):
            continue
        message = record["message"]
        if message.get("model") == "<synthetic>" or "usage" not in message or not isinstance(message.get("model"), str):
            continue
        value = counts(message.get("usage"))
        if value is None:
            continue
        mid = message.get("id") if isinstance(message.get("id"), str) else None
        rid = record.get("requestId") if isinstance(record.get("requestId"), str) else None
        # A request is its requestId, else its message id (copies replace message.id, issue 13).
        key = f"r\x00{rid}" if rid is not None else f"m\x00{mid}" if mid is not None else f"line{n}"
        if key not in kept or value[1] >= kept[key].tokens[1]:
            kept[key] = Request(rel, mid, rid, value)
    return kept


def session_files(corpus: Path, project: str, sid: str) -> list[Path]:
    """The main transcript when there is one (it may be 0 bytes or absent), its agents, and flat agent files naming it."""
    folder = corpus / project
    main = folder / f"{sid}.jsonl"
    files = [main] if main.is_file() else []
    companion = folder / sid / "subagents"
    files += sorted(companion.glob("agent-*.jsonl")) + sorted(companion.glob("workflows/*/agent-*.jsonl"))
    files += [flat for flat in sorted(folder.glob("agent-*.jsonl")) if first_session_id(flat) == sid]
    return files


def rescan_session(corpus: Path, project: str, sid: str) -> list[Request]:
    """Return the session's requests after cross-file message.id dedupe (main, then agents, then replayers)."""
    files = session_files(corpus, project, sid)
    ranked = sorted(files, key=lambda p: (0 if p.name == f"{sid}.jsonl" else 2 if p.name.startswith(REPLAY_PREFIXES) else 1, str(p)))
    seen: set[str] = set()
    kept: list[Request] = []
    for path in ranked:
        for request in rescan_file(path, path.relative_to(corpus).as_posix()).values():
            if request.message_id is not None:
                if request.message_id in seen:
                    continue
                seen.add(request.message_id)
            kept.append(request)
    return kept


def per_file(requests: list[Request]) -> dict[str, list[int]]:
    totals: dict[str, list[int]] = {}
    for request in requests:
        total = totals.setdefault(request.file, [0] * 5)
        for index, count in enumerate(request.tokens):
            total[index] += count
    return {rel: values for rel, values in totals.items() if any(values)}


def add(a: list[int], b: tuple[int, ...] | list[int]) -> list[int]:
    return [x + y for x, y in zip(a, b)]


@dataclass
class Shared:
    """Requests that several sessions hold, as connected groups (by message id or requestId)."""

    in_session: dict[tuple[str, str], list[int]]  # (project, session) -> tokens of its requests that another session also holds
    low: list[int]  # global total if each group counted its cheapest copy, per category
    high: list[int]  # ... its dearest copy
    groups: int  # groups held by several sessions
    copies: int  # requests in those groups
    simple: bool  # every such group holds one request per session (then copies - groups are dropped)


def share_across_sessions(by_session: dict[tuple[str, str], list[Request]]) -> Shared:
    """Group the requests that sessions share by message id or by requestId (union-find)."""
    nodes = [(key, request) for key, requests in sorted(by_session.items()) for request in requests]
    parent = list(range(len(nodes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of: dict[tuple[str, str], int] = {}
    for index, (_, request) in enumerate(nodes):
        for kind, value in (("id", request.message_id), ("req", request.request_id)):
            if value is None:
                continue
            other = first_of.setdefault((kind, value), index)
            parent[find(index)] = find(other)
    members: dict[int, list[int]] = defaultdict(list)
    for index in range(len(nodes)):
        members[find(index)].append(index)
    shared = Shared(defaultdict(lambda: [0] * 5), [0] * 5, [0] * 5, 0, 0, True)
    for group in members.values():
        per_session: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * 5)
        for index in group:
            key, request = nodes[index]
            per_session[key] = add(per_session[key], request.tokens)
        if len(per_session) > 1:
            shared.groups += 1
            shared.copies += len(group)
            shared.simple &= len(group) == len(per_session)
            for key, tokens in per_session.items():
                shared.in_session[key] = add(shared.in_session[key], tokens)
        # One copy counts: its tokens are those of one session's copy (the owner's, unknown here).
        versions = list(per_session.values())
        shared.low = add(shared.low, [min(v[i] for v in versions) for i in range(5)])
        shared.high = add(shared.high, [max(v[i] for v in versions) for i in range(5)])
    return shared


# ---------------------------------------------------------------------------------------------
# the build's figures


def cached_totals(cache: Path) -> dict[str, dict[str, list[int]]]:
    conn = sqlite3.connect(cache / "cache.sqlite3")
    result: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for sid, rel, *values in conn.execute(
        "SELECT session_id, file, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write_5m), SUM(cache_write_1h) FROM token_usage GROUP BY session_id, file"
    ):
        result[sid][rel] = list(values)
    conn.close()
    return result


def as_list(tokens: dict) -> list[int]:
    return [tokens[name] for name in CATEGORIES]


@dataclass
class Built:
    corpus: Path
    site: Path
    cache: Path
    code: int
    index: dict


def build_once(corpus: Path, base: Path) -> Built:
    code = build(corpus, base / "site", base / "cache")
    index = json.loads((base / "site" / "data" / "index.json").read_text())
    return Built(corpus, base / "site", base / "cache", code, index)


def check_corpus(built: Built) -> int:
    """Run the three levels of checks; return how many sessions have usage."""
    assert built.code in (0, 1)
    cached = cached_totals(built.cache)
    # Every session a file names, found here, plus any the build reports: a session the build
    # lost still counts in the re-scan's global total.
    keys = named_sessions(built.corpus) | {(s["project"], s["session_id"]) for s in built.index["sessions"]}
    by_session = {key: rescan_session(built.corpus, *key) for key in sorted(keys)}
    everywhere = share_across_sessions(by_session)
    # Ownership is between the sessions of the build (a duplicate-session copy is not one).
    shared = share_across_sessions({(s["project"], s["session_id"]): by_session[(s["project"], s["session_id"])] for s in built.index["sessions"]})
    with_usage = 0
    global_tokens = [0] * 5
    for entry in built.index["sessions"]:
        key = (entry["project"], entry["session_id"])
        sid = entry["session_id"]
        # Per file, before ownership: the cache holds every copy.
        have = {rel: values for rel, values in cached.get(sid, {}).items() if any(values)}
        assert have == per_file(by_session[key]), sid
        # Per session, after ownership: exact ints even when unpriced (halt gate), never null.
        data = json.loads((built.site / "data" / "sessions" / f"{sid}.json").read_text())
        assert data["tokens"] is not None and entry["tokens"] is not None, sid
        tokens = as_list(data["tokens"])
        assert as_list(entry["tokens"]) == tokens, sid
        everything = [sum(r.tokens[i] for r in by_session[key]) for i in range(5)]
        own_only = [a - b for a, b in zip(everything, shared.in_session.get(key, [0] * 5))]
        if key in shared.in_session:
            assert all(lo <= t <= hi for lo, t, hi in zip(own_only, tokens, everything)), (sid, own_only, tokens, everything)
        else:
            assert tokens == everything and data["collisions"] == 0, sid
        global_tokens = add(global_tokens, tokens)
        with_usage += any(everything)
    # Globally: each request of the corpus counted once. Copies are verbatim in practice (low == high).
    assert all(lo <= t <= hi for lo, t, hi in zip(everywhere.low, global_tokens, everywhere.high)), (everywhere.low, global_tokens, everywhere.high)
    if everywhere.low == everywhere.high:
        assert global_tokens == everywhere.low
    assert as_list(built.index["totals"]["tokens"]) == global_tokens
    # The copies a session holds but does not own are its `collisions`.
    if shared.simple:
        assert built.index["report"]["collisions"] == shared.copies - shared.groups
    return with_usage


def test_demo_corpus_token_truth(tmp_path: Path) -> None:
    assert check_corpus(build_once(DEMO_CORPUS, tmp_path)) >= 10


@pytest.fixture(scope="module", params=shared_corpus_names())
def shared_build(request: pytest.FixtureRequest, shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Each shared corpus, built once for this module."""
    base = tmp_path_factory.mktemp(f"truth-{request.param}")
    return build_once(plain_copy(shared_dir / "corpora" / request.param, base / "corpus"), base)


def test_real_corpus_token_truth(shared_build: Built) -> None:
    assert check_corpus(shared_build) > 0


def _assistant_like(template: dict, message_id: str, request_id: str, output: int, uuid: str) -> bytes:
    record = json.loads(json.dumps(template))
    record["message"]["id"] = message_id
    record["message"]["usage"]["output_tokens"] = output
    record["requestId"] = request_id
    record["parentUuid"], record["uuid"] = template["uuid"], uuid
    return json.dumps(record, separators=(",", ":")).encode()


def test_token_truth_counts_unterminated_concatenated_and_copied_requests(demo_corpus: Path, demo_site: Path, tmp_path: Path) -> None:
    """A complete last line without newline and `{...}{...}` lines count; a copy under a new message id does not."""
    webapp = demo_corpus / "-home-user-projects-webapp" / "6b5dddf1-5fac-46d5-b559-71636b674b68.jsonl"
    tools = demo_corpus / "-home-user-src-data-tools-v2" / "773384de-d313-4220-8f45-87db1f33d88d.jsonl"
    template = [r for r in records(webapp) if r.get("type") == "assistant"][-1]
    one = _assistant_like(template, "msg_truth_concat_1", "req_truth_concat_1", 11, "truth-0001")
    two = _assistant_like(template, "msg_truth_concat_2", "req_truth_concat_2", 22, "truth-0002")
    tail = _assistant_like(template, "msg_truth_tail", "req_truth_tail", 33, "truth-0003")
    webapp.write_bytes(webapp.read_bytes() + one + two + b"\n" + tail)
    # Another session holds the template's request again, under a replaced message id.
    copy = json.loads(_assistant_like(template, "msg_truth_copy", template["requestId"], template["message"]["usage"]["output_tokens"], "truth-0004"))
    copy["sessionId"] = "773384de-d313-4220-8f45-87db1f33d88d"
    tools.write_bytes(tools.read_bytes() + json.dumps(copy, separators=(",", ":")).encode() + b"\n")

    built = build_once(demo_corpus, tmp_path)
    check_corpus(built)
    before = json.loads((demo_site / "data" / "index.json").read_text())
    base = as_list(before["totals"]["tokens"])
    added = counts(template["message"]["usage"])
    assert added is not None
    # Three new requests with the template's input and cache counts and outputs 11, 22, 33; the copy adds nothing.
    expected = [t + 3 * a for t, a in zip(base, added)]
    expected[1] = base[1] + 11 + 22 + 33
    assert as_list(built.index["totals"]["tokens"]) == expected
    assert built.index["report"]["collisions"] == before["report"]["collisions"] + 1
