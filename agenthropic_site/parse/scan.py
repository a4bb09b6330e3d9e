"""Read one transcript's records into facts: usage, spawns, results, links, boundaries, messages."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import field
from typing import Any

from agenthropic_site.ids import AGENT_ID, SESSION_ID_RE
from agenthropic_site.parse.fields import collapsed, content_text, count_of, dict_of, instant_of, list_of, text_of
from agenthropic_site.parse.lines import Record
from agenthropic_site.parse.messages import MessageBuilder
from agenthropic_site.parse.model import Compaction, LineError, Warning
from agenthropic_site.parse.usage import SYNTHETIC_MODEL, Candidate, candidate_from
from agenthropic_site.records import record_class

# Task (≤2.1.62), Agent (≥2.1.63), Workflow (≥2.1.154) spawn agents (format §4.1).
SPAWN_TOOLS = frozenset({"Task", "Agent"})
WORKFLOW_TOOL = "Workflow"
KNOWN_TYPES = frozenset(
    {
        "user", "assistant", "system", "attachment", "progress", "summary", "queue-operation",
        "file-history-snapshot", "file-history-delta", "last-prompt", "ai-title", "custom-title",
        "agent-name", "permission-mode", "mode", "atis-latch", "pr-link", "cost-state",
    }
)
# Result tails: "agentId: a7d41f9 (for resuming…" 2.0.76–2.1.29+, "agentId: ab1e… (use SendMessage…" 2.1.114.
AGENT_ID_TAIL_RE = re.compile(rf"agentId: ({AGENT_ID})")
RUN_DIR_RE = re.compile(rf"subagents/workflows/({AGENT_ID})")
NOTIFICATION_TAG_RE = {
    tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.S) for tag in ("task-id", "tool-use-id", "status", "summary")
}
INTERRUPT_MARKER = "[Request interrupted by user"
IDE_CONTEXT_RE = re.compile(r"^\s*(?:<(ide_[a-z_]+|system-reminder)>.*?</\1>\s*)+", re.S)
BASH_INPUT_RE = re.compile(r"^<bash-input>(.*?)</bash-input>", re.S)
FIRST_CWD_RECORDS = 50
SEARCH_PROMPTS = 3
SEARCH_PROMPT_CHARS = 300


@record_class(frozen=True)
class Spawn:
    """A spawning tool_use block (Task, Agent or Workflow) in some agent's transcript."""

    tool_use_id: str
    tool: str
    owner: str
    input: dict[str, Any]
    timestamp: str | None
    order: int


@record_class(frozen=True)
class ToolResult:
    """A tool_result block, with the record's structured `toolUseResult` when present."""

    tool_use_id: str
    owner: str
    is_error: bool
    text: str
    structured: Any


@record_class(frozen=True)
class Notification:
    """A `<task-notification>` for a background task (format §4.5)."""

    task_id: str | None
    tool_use_id: str | None
    status: str | None
    summary: str
    owner: str
    via: str  # "user" line or "queue" operation


@record_class
class TranscriptFacts:
    """What one transcript says, before linking it with the session's other transcripts."""

    agent_id: str
    rel: str
    layout: str
    session_id: str = ""
    first_seen_at: str | None = None
    last_seen_at: str | None = None
    versions: set[str] = field(default_factory=set)
    cwds: list[str] = field(default_factory=list)
    git_branch: str | None = None
    candidates: list[Candidate] = field(default_factory=list)
    spawns: list[Spawn] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    progress_links: list[tuple[str, str]] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    custom_title: str | None = None
    ai_title: str | None = None
    summary_title: str | None = None
    first_prompt: str | None = None
    prompts: list[str] = field(default_factory=list)  # the first few prompts, for the site's search
    first_user_text: str | None = None
    first_parent_uuid: str | None = None
    interrupted: bool = False
    ends_with_api_error: bool = False
    unknown_types: Counter = field(default_factory=Counter)
    errors: list[LineError] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)
    # Record ids, first seen first (a dict, for its order): a long transcript's checkpoint keeps
    # them in chunks that an append leaves as they were (parse/checkpoint.py).
    uuids: dict[str, None] = field(default_factory=dict)
    builder: MessageBuilder = field(default_factory=MessageBuilder)
    scanned: int = 0  # records read so far (a spawn's order counts from its transcript's base)
    last_kind: str | None = None  # of the last record that ended a turn
    first_type: str | None = None  # the first record's `type`
    decode_errors: list[LineError] = field(default_factory=list)  # lines that are not JSON objects
    # By list name, the chunks of the checkpoint this scan carried on from (parse/checkpoint.py
    # Chunk): what of them the list still holds as it was is not encoded again.
    settled: dict[str, list[Any]] = field(default_factory=dict, compare=False, repr=False)


def scan_records(facts: TranscriptFacts, records: Iterable[Record], order_base: int = 0) -> TranscriptFacts:
    """Fill `facts` from the records of one transcript, in file order (carrying on after `facts.scanned` records)."""
    last_kind = facts.last_kind
    for position, record in enumerate(records, start=facts.scanned):
        facts.scanned = position + 1
        if position == 0:
            kind = record.data.get("type")
            facts.first_type = kind if isinstance(kind, str) else None
        try:
            last_kind = _scan_record(facts, record, order_base + position) or last_kind
        except Exception as exc:
            # One odd record never fails the whole session: a 2.1.2xx Monitor notification once
            # did (issue 13). KeyboardInterrupt and SystemExit are not Exceptions, so they pass.
            facts.warnings.append(
                Warning(
                    "record_error",
                    f"{facts.rel}:{record.line}: reading this record raised {type(exc).__name__}; the rest of it was skipped",
                    facts.agent_id,
                )
            )
    facts.last_kind = last_kind
    facts.ends_with_api_error = last_kind == "api-error"
    return facts


def _scan_record(facts: TranscriptFacts, record: Record, order: int) -> str | None:
    """Read one record into `facts`; return "assistant", "api-error" or "user" for records that end a turn."""
    data = record.data
    raw_kind = data.get("type")
    kind = raw_kind if isinstance(raw_kind, str) else f"<{type(raw_kind).__name__}>"
    timestamp = instant_of(data.get("timestamp"))
    if timestamp is not None:
        if facts.first_seen_at is None or timestamp < facts.first_seen_at:
            facts.first_seen_at = timestamp
        if facts.last_seen_at is None or timestamp > facts.last_seen_at:
            facts.last_seen_at = timestamp
    uuid = text_of(data.get("uuid"))
    if uuid:
        facts.uuids[uuid] = None
    _envelope(facts, data)
    if kind == "assistant":
        return _assistant(facts, record, timestamp, order)
    if kind == "user":
        _user(facts, record, timestamp)
        return "user"
    if kind == "system":
        _system(facts, record, timestamp)
    elif kind == "progress":
        _progress(facts, data)
    elif kind == "queue-operation":
        _queue_operation(facts, data)
    elif kind == "summary":
        # Several summaries can head a file (≤ 2.0.x, format §2.7); like titles, the last one wins.
        facts.summary_title = text_of(data.get("summary")) or facts.summary_title
        facts.builder.add_summary(data)
    elif kind == "custom-title":
        facts.custom_title = text_of(data.get("customTitle")) or facts.custom_title  # last one wins
    elif kind == "ai-title":
        facts.ai_title = text_of(data.get("aiTitle")) or facts.ai_title
    elif kind not in KNOWN_TYPES:
        facts.unknown_types[kind[:80]] += 1
    return None


def _envelope(facts: TranscriptFacts, data: dict[str, Any]) -> None:
    version = text_of(data.get("version"))
    if version and len(version) <= 40:
        facts.versions.add(version)
    cwd = text_of(data.get("cwd"))
    if cwd and len(facts.cwds) < FIRST_CWD_RECORDS:
        facts.cwds.append(cwd)
    branch = text_of(data.get("gitBranch"))
    if branch and facts.git_branch is None:
        facts.git_branch = branch


def _assistant(facts: TranscriptFacts, record: Record, timestamp: str | None, order: int) -> str:
    data = record.data
    message = dict_of(data.get("message"))
    found = candidate_from(facts.agent_id, facts.rel, record.line, data, timestamp, origin_of(data, facts.session_id))
    if isinstance(found, LineError):
        facts.errors.append(found)
    elif found is not None:
        facts.candidates.append(found)
    for block in list_of(message.get("content")):
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        name = text_of(block.get("name"))
        tool_use_id = text_of(block.get("id"))
        if tool_use_id and (name in SPAWN_TOOLS or name == WORKFLOW_TOOL):
            facts.spawns.append(Spawn(tool_use_id, name or "", facts.agent_id, dict_of(block.get("input")), timestamp, order))
    facts.builder.add_assistant(data, timestamp)
    if message.get("model") == SYNTHETIC_MODEL and data.get("isApiErrorMessage") is True:
        return "api-error"
    return "assistant"


def origin_of(data: dict[str, Any], session_id: str) -> str | None:
    """Return the session a replayed record names as its origin, if it names another one."""
    # Replays usually rewrite sessionId to the new session (format §1.4); a record that kept the
    # old one, or a `forkedFrom` (newer versions, shape unconfirmed), is an explicit marker.
    for value in (dict_of(data.get("forkedFrom")).get("sessionId"), data.get("forkedFrom"), data.get("sessionId")):
        if isinstance(value, str) and value != session_id and SESSION_ID_RE.match(value):
            return value
    return None


def _user(facts: TranscriptFacts, record: Record, timestamp: str | None) -> None:
    data = record.data
    message = dict_of(data.get("message"))
    content = message.get("content")
    structured = data.get("toolUseResult")
    if facts.first_parent_uuid is None and facts.first_user_text is None:
        facts.first_parent_uuid = text_of(data.get("parentUuid"))
    has_result = False
    for block in list_of(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            has_result = True
            tool_use_id = text_of(block.get("tool_use_id"))
            if tool_use_id:
                facts.results.append(
                    ToolResult(tool_use_id, facts.agent_id, block.get("is_error") is True, content_text(block.get("content")), structured)
                )
    text = "" if has_result else content_text(content)
    if facts.first_user_text is None and text:
        facts.first_user_text = text
    if INTERRUPT_MARKER in text or (isinstance(structured, str) and INTERRUPT_MARKER in structured[:200]):
        facts.interrupted = True
    if text.lstrip().startswith("<task-notification>"):
        facts.notifications.append(parse_notification(text, facts.agent_id, "user"))
        facts.builder.add_notification(data, timestamp, text)
        return
    if len(facts.prompts) < SEARCH_PROMPTS and data.get("isMeta") is not True and data.get("isCompactSummary") is not True:
        prompt = prompt_text(text)
        if prompt:
            facts.prompts.append(collapsed(prompt, SEARCH_PROMPT_CHARS))
            if facts.first_prompt is None:
                facts.first_prompt = prompt
    facts.builder.add_user(data, timestamp)


def prompt_text(text: str) -> str | None:
    """Return what a person typed, without IDE context blocks; None for echoes and markers."""
    # IDE integrations prepend <ide_opened_file>…</ide_opened_file> / <ide_selection> blocks (1.0.x–2.0.x).
    stripped = IDE_CONTEXT_RE.sub("", text).strip()
    bash = BASH_INPUT_RE.match(stripped)
    if bash:
        return "! " + bash.group(1).strip()  # a `!` shell command typed at the prompt
    if not stripped or stripped.startswith(("<command-", "<local-command", "<bash-", "Caveat:", "<system-reminder>", INTERRUPT_MARKER)):
        return None
    return stripped


def _system(facts: TranscriptFacts, record: Record, timestamp: str | None) -> None:
    data = record.data
    if data.get("subtype") == "compact_boundary":
        meta = dict_of(data.get("compactMetadata"))
        trigger = text_of(meta.get("trigger"))
        facts.compactions.append(
            Compaction(
                agent_id=facts.agent_id,
                uuid=text_of(data.get("uuid")),
                timestamp=timestamp,
                trigger=trigger if trigger in ("auto", "manual") else None,
                pre_tokens=count_of(meta.get("preTokens")),
                post_tokens=count_of(meta.get("postTokens")),  # from ~2.1.11x (format §6)
            )
        )
    facts.builder.add_system(data, timestamp)


def _progress(facts: TranscriptFacts, data: dict[str, Any]) -> None:
    # agent_progress mirrors a subagent's messages into the parent file (2.1.x ≤ ~2.1.7x, format §2.6);
    # its embedded usage duplicates the subagent file and is never counted.
    payload = dict_of(data.get("data"))
    if payload.get("type") != "agent_progress":
        return
    tool_use_id = text_of(data.get("parentToolUseID"))
    agent_id = text_of(payload.get("agentId"))
    if tool_use_id and agent_id:
        facts.progress_links.append((tool_use_id, agent_id))


def _queue_operation(facts: TranscriptFacts, data: dict[str, Any]) -> None:
    content = text_of(data.get("content"))
    if data.get("operation") == "enqueue" and content and content.lstrip().startswith("<task-notification>"):
        facts.notifications.append(parse_notification(content, facts.agent_id, "queue"))


def parse_notification(text: str, owner: str, via: str) -> Notification:
    """Read the tags of a `<task-notification>` block (2.1.37–2.1.2xx shapes, format §4.5)."""
    values = {}
    for tag, pattern in NOTIFICATION_TAG_RE.items():
        match = pattern.search(text[:20000])
        values[tag] = match.group(1).strip() if match else None
    status = values["status"]
    return Notification(
        task_id=values["task-id"],
        tool_use_id=values["tool-use-id"],
        status=status if status in ("completed", "failed", "killed") else None,
        summary=values["summary"] or "",
        owner=owner,
        via=via,
    )
