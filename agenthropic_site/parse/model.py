"""The parser's input and output types: plain, immutable where it matters, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from agenthropic_site.records import record_class

TOKEN_CATEGORIES = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")

EDGE_SOURCES = (
    "meta_tool_use_id",
    "tool_result_agent_id",
    "result_text_agent_id",
    "agent_progress",
    "task_notification",
    "queue_operation",
    "workflow_directory",
    "sidechain_inline",
    "prompt_match",
)
INFERRED_SOURCES = frozenset({"prompt_match"})

AGENT_KINDS = ("main", "subagent", "warmup", "compaction", "side_question", "prompt_suggestion", "workflow", "teammate")
STATUSES = ("working", "waiting", "completed", "error", "unknown")
OUTCOME_CAUSES = (
    "terminated_early",
    "user_interrupt",
    "concurrency_limit",
    "permission_failed",
    "dispatch_unavailable",
    "unclassified",
)


@record_class(frozen=True, slots=True)
class Tokens:
    """Token counts of one request or a sum of requests, by billing category."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write_5m + other.cache_write_5m,
            self.cache_write_1h + other.cache_write_1h,
        )

    @property
    def total(self) -> int:
        """Return the sum over all categories."""
        return self.input + self.output + self.cache_read + self.cache_write_5m + self.cache_write_1h

    @staticmethod
    def sum_of(many: Iterable[Tokens]) -> Tokens:
        """Add up token counts into one Tokens, made once at the end.

        A frozen record with slots costs 0.6 µs to make: summing with `+` made one per addition
        (a one-append build of 500 sessions made about 5,000 only to add them up).
        """
        inputs = outputs = cache_reads = writes_5m = writes_1h = 0
        for tokens in many:
            inputs += tokens.input
            outputs += tokens.output
            cache_reads += tokens.cache_read
            writes_5m += tokens.cache_write_5m
            writes_1h += tokens.cache_write_1h
        return Tokens(inputs, outputs, cache_reads, writes_5m, writes_1h)

    def as_dict(self) -> dict[str, int]:
        """Return the counts keyed by category name."""
        return {name: getattr(self, name) for name in TOKEN_CATEGORIES}

    @classmethod
    def from_dict(cls, values: dict[str, int]) -> Tokens:
        """Build from a mapping keyed by category name."""
        return cls(**{name: int(values.get(name, 0)) for name in TOKEN_CATEGORIES})


@record_class(frozen=True)
class TranscriptInput:
    """One transcript's bytes with where it was found."""

    rel: str
    data: bytes
    layout: str  # main | flat | subagents | workflow
    agent_id: str | None = None  # None for the main transcript
    meta: bytes | None = None
    run_id: str | None = None
    resume: bytes | None = None  # the scan state after the bytes before `data` (parse/checkpoint.py): `data` is what follows them
    resume_chunks: tuple[tuple[str, bytes], ...] = ()  # the chunks that state names (digest, bytes)


@record_class(frozen=True)
class SessionInput:
    """Everything the parser sees of one session: bytes only."""

    session_id: str
    project: str
    main: TranscriptInput
    agents: tuple[TranscriptInput, ...] = ()
    main_state: str = "present"  # present | empty (0 bytes) | absent (no main file; `main` holds no bytes)
    checkpoint: bool = False  # return each transcript's scan state, for the next parse to carry on from


@record_class(frozen=True)
class LineError:
    """A line that could not be used, with its file and 1-based line number."""

    file: str
    line: int
    code: str
    message: str


@record_class(frozen=True)
class Warning:
    """Something a reader of the report should know; never fatal."""

    code: str
    message: str
    agent_id: str | None = None


@record_class(frozen=True)
class UsageRow:
    """One deduplicated API request, owned by one agent."""

    agent_id: str
    message_id: str | None
    request_id: str | None
    model: str
    tokens: Tokens
    timestamp: str | None
    speed: str | None
    file: str
    line: int
    under_reported: bool = False
    origin_session: str | None = None  # another session the record says it was first written in
    version: str | None = None  # Claude Code version of the kept line
    content_chars: int = 0  # text, thinking and tool input the request wrote, measured when under-reported
    segment: int = 0  # index of the session's compaction segment this request belongs to

    def in_segment(self, segment: int) -> UsageRow:
        """Return this row in another compaction segment.

        A copy of its fields, not dataclasses.replace: that runs the frozen __init__ again, field by
        field, and a 54 MB session moves 8,500 rows (0.2 s).
        """
        moved = object.__new__(UsageRow)
        moved.__dict__.update(self.__dict__, segment=segment)
        return moved


@record_class(frozen=True, order=True)
class Edge:
    """A parent -> child spawn link with the evidence that established it."""

    parent: str
    child: str
    source: str
    tool_use_id: str | None = None


@record_class(frozen=True)
class Compaction:
    """A compaction boundary in one agent's transcript."""

    agent_id: str
    uuid: str | None
    timestamp: str | None
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    compaction_agent_id: str | None = None


# Blocks and messages are built per record on the parser's hot path: slotted, not frozen
# (frozen dataclasses construct several times slower).
@record_class(slots=True)
class Block:
    """One displayable piece of a message."""

    kind: str  # text | thinking | tool_use | tool_result | image | notice
    text: str = ""
    name: str | None = None
    tool_use_id: str | None = None
    is_error: bool = False
    truncated_from: int | None = None  # original length when `text` was cut for storage


@record_class(slots=True)
class Message:
    """One record as shown in a transcript; multi-line assistant messages are merged."""

    role: str  # user | assistant | system | summary | notification
    uuid: str | None
    timestamp: str | None
    blocks: tuple[Block, ...]
    model: str | None = None
    is_meta: bool = False
    subtype: str | None = None
    message_id: str | None = None  # an assistant message's API id: its request's figures are shown on it


def message_row(message: Message) -> list[Any]:
    """Return a message as the JSON list it is stored as (the cache's transcripts, a scan's checkpoint)."""
    m = message
    return [m.role, m.uuid, m.timestamp, m.model, m.is_meta, m.subtype,
            [[b.kind, b.text, b.name, b.tool_use_id, b.is_error, b.truncated_from] for b in m.blocks], m.message_id]


def message_from_row(row: list[Any]) -> Message:
    """Rebuild a message from `message_row`'s list."""
    role, uuid, at, model, is_meta, subtype, blocks, message_id = row
    # By position: a block's list is its fields in order. Half the time of keywords and a generator
    # (the 60 MB session's 11,479 messages: 21.6 against 12.2 ms).
    return Message(role, uuid, at, tuple([Block(*block) for block in blocks]), model, is_meta, subtype, message_id)


@record_class
class Agent:
    """One agent of a session and what the transcripts say about it."""

    agent_id: str
    kind: str
    file: str | None
    parent_agent_id: str | None = None
    edge_source: str | None = None
    agent_type: str | None = None
    description: str | None = None
    status: str = "working"
    outcome_cause: str | None = None
    notification_status: str | None = None
    first_seen_at: str | None = None
    last_seen_at: str | None = None
    spawn_tool_use_id: str | None = None
    has_transcript: bool = True  # False: only a spawn result in another transcript names this agent
    reported: dict[str, Any] | None = None  # what the spawner's tool result says of it; never counted


@record_class
class ParsedSession:
    """The parser's whole answer for one session."""

    session_id: str
    project: str
    main_state: str = "present"
    title: str | None = None
    title_source: str | None = None
    prompts: list[str] = field(default_factory=list)
    cwd: str | None = None
    git_branch: str | None = None
    versions: list[str] = field(default_factory=list)
    started_at: str | None = None
    ended_at: str | None = None
    main_ended_at: str | None = None
    agents: list[Agent] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    unlinked_agents: list[str] = field(default_factory=list)
    usage: list[UsageRow] = field(default_factory=list)
    # Each usage row's key (parse/usage.py usage_key): ordered as `usage`, and kept by an append,
    # so that the cache rewrites only the rows that changed (its `seq`).
    usage_keys: list[int] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)
    line_errors: list[LineError] = field(default_factory=list)
    pending_lines: list[str] = field(default_factory=list)  # files whose last line is unterminated
    unknown_types: dict[str, int] = field(default_factory=dict)
    under_reported: dict[str, Any] = field(default_factory=dict)  # placeholder output counts: requests, estimate
    transcripts: dict[str, list[Message]] = field(default_factory=dict)
    tool_calls: dict[str, list[list[str | int | None]]] = field(default_factory=dict)  # each agent's tool calls (parse/tools.py ToolCall)
    # Agents whose transcript was scanned from a checkpoint: their `transcripts` messages follow
    # those stored before, the first replacing the last stored one when True (its reply went on).
    tails: dict[str, bool] = field(default_factory=dict)
    scan_states: dict[str, bytes] = field(default_factory=dict)  # agent -> its transcript's checkpoint, when asked for
    scan_chunks: dict[str, dict[str, bytes]] = field(default_factory=dict)  # agent -> the chunks its checkpoint names, by digest
