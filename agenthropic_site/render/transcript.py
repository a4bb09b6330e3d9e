"""Render a transcript's messages to HTML fragments: one function per block kind, tool calls by what they did.

Every piece of transcript text is escaped here or rendered by render/markdown.py (raw HTML off);
the only URLs written are the site's own links and `data:` thumbnails of stored raster images.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson
from markupsafe import escape

from agenthropic_site.model.views import RequestFigures
from agenthropic_site.parse.messages import BASE64_RE, THUMBNAIL_TYPES
from agenthropic_site.parse.model import Block, Message, Tokens
from agenthropic_site.render.formats import PREVIEW_CHARS, fine_usd, short_time
from agenthropic_site.render.markdown import render_markdown

PREVIEW_LINES = 30  # a tool output of more lines is collapsed too
GIST_CHARS = 160  # a summary line shows this much of a command, path or pattern
SHORT_FIELD_CHARS = 200  # an unknown tool's gist is its first string field up to this size
MAX_DIFF_CELLS = 40_000  # changed lines before × after that a diff still matches line by line

FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
CLOSING_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\r?\n?")


@dataclass(frozen=True)
class TurnFigures:
    """What one user turn cost: its own requests plus every agent it spawned (whole subtree)."""

    number: int  # 1-based turn number within this transcript
    tokens: Tokens
    cost: Decimal | None


@dataclass
class TranscriptContext:
    """What a transcript's messages need from outside themselves: links, figures and where results sit."""

    spawned: dict[str, str]  # tool_use_id -> agent_id of the agent that call spawned (agents with a page)
    agent_href: Callable[[str], str]  # agent id -> URL of its page, relative to the page being rendered
    agent_labels: dict[str, str]  # agent id -> its description (or type), for link text
    session_href: Callable[[str], str]  # session id -> URL of its page (for `counted_in`)
    requests: dict[str, RequestFigures]  # message_id -> figures; a message whose id is absent shows none
    turns: dict[int, TurnFigures]  # message index -> the turn that user prompt opens
    results: dict[str, tuple[int, Block]]  # tool_use_id -> (message index, its tool_result block); from index_results()
    # message_id -> index of the one message that shows its figures (from index_requests()); a reply
    # split by tool results into several messages of one id shows them once. Empty: every message does.
    request_at: dict[str, int] = field(default_factory=dict)


# --- formatting -------------------------------------------------------------------------------


def _tokens(tokens: Tokens) -> str:
    return f"{tokens.total:,} tokens"


def _size(text: str) -> str:
    lines = _line_count(text)
    return f"{len(text):,} character{'' if len(text) == 1 else 's'} · {lines:,} line{'' if lines == 1 else 's'}"


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _e(value: object) -> str:
    return str(escape(value))


def _first_line(text: str, limit: int = GIST_CHARS) -> tuple[str, bool]:
    """Return the first line of `text`, shortened to `limit`, and whether that left anything out."""
    stripped = text.strip()
    line = stripped.split("\n", 1)[0].rstrip("\r")
    if len(line) > limit:
        return line[:limit] + "…", True
    return line, line != stripped


def _pretty(value: Any, indent: str = "") -> str:
    """Format a JSON value indented by two spaces, strings with their real line breaks (never `\\n`)."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{_json_scalar(str(key))}: {_pretty(item, inner)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + _pretty(item, inner) for item in value) + "\n" + indent + "]"
    return _json_scalar(value)


def _json_scalar(value: Any) -> str:
    if isinstance(value, str) and "\n" in value:
        return '"' + "\n".join(orjson.dumps(part).decode()[1:-1] for part in value.split("\n")) + '"'
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


# --- text ---------------------------------------------------------------------------------------


def _split_plain(text: str, limit: int) -> tuple[str, str]:
    cut = text.rfind("\n", 0, limit + 1)
    cut = cut + 1 if cut >= limit // 2 else limit
    return text[:cut], text[cut:]


def _split_markdown(text: str, limit: int) -> tuple[str, str]:
    """Split Markdown near `limit`: at a blank line when one is near, else at a line break, closing and reopening an open code fence."""
    offset, fence, opener = 0, "", ""
    blank_at, line_at, line_fence, line_opener = 0, 0, "", ""
    for line in text.splitlines(keepends=True):
        end = offset + len(line)
        if end > limit:
            break
        if not fence:
            match = FENCE_RE.match(line)
            if match:
                fence, opener = match.group(1), line
        else:
            match = CLOSING_FENCE_RE.fullmatch(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
        if not fence and not line.strip():
            blank_at = end
        line_at, line_fence, line_opener = end, fence, opener
        offset = end
    if blank_at >= limit // 2:
        return text[:blank_at], text[blank_at:]
    if line_at >= limit // 2:
        head, tail = text[:line_at], text[line_at:]
        if line_fence:
            head += line_fence + "\n"
            tail = line_opener + tail
        return head, tail
    cut = text.rfind(" ", 0, limit + 1)
    cut = cut + 1 if cut >= limit // 2 else limit
    return text[:cut], text[cut:]


def _text_html(text: str, markdown_on: bool) -> str:
    return f'<div class="md">{render_markdown(text)}</div>' if markdown_on else f"<pre>{_e(text)}</pre>"


def _stored_cut_note(text: str, truncated_from: int | None) -> str:
    if not truncated_from:
        return ""
    return f'<p class="note">Stored output cut at {len(text):,} of {truncated_from:,} characters.</p>'


def long_text(text: str, truncated_from: int | None, markdown_on: bool) -> str:
    """Render text whole, or a preview and the rest in a collapsed `<details>` (each part printed once)."""
    if len(text) <= PREVIEW_CHARS:
        body = _text_html(text, markdown_on)
    else:
        head, tail = (_split_markdown if markdown_on else _split_plain)(text, PREVIEW_CHARS)
        body = (
            f'{_text_html(head, markdown_on)}<details class="long more-text"><summary>show the remaining {len(tail):,} characters</summary>'
            f"{_text_html(tail, markdown_on)}</details>"
        )
    return body + _stored_cut_note(text, truncated_from)


def _thinking(block: Block, anchor: str) -> str:
    if not block.text:
        return f'<details class="thinking" id="{anchor}"><summary>Thinking (not recorded)</summary></details>'
    return (
        f'<details class="thinking" id="{anchor}"><summary>Thinking · {len(block.text):,} characters</summary><pre>{_e(block.text)}</pre>'
        f"{_stored_cut_note(block.text, block.truncated_from)}</details>"
    )


def _image(block: Block) -> str:
    # Only base64 text of a raster type is put in a data: URL; the parser keeps nothing else, and
    # this check keeps a cache written by older code to the same rule.
    if block.text and block.name in THUMBNAIL_TYPES and BASE64_RE.match(block.text):
        return f'<img class="thumb" src="data:{_e(block.name)};base64,{_e(block.text)}" alt="pasted image ({_e(block.name)})">'
    size = f", {block.truncated_from:,} characters: too large to show" if block.truncated_from else ""
    return f'<p class="image">[image: {_e(block.name)}{size}]</p>'


# --- results --------------------------------------------------------------------------------------


def _result(block: Block, standalone: bool = False) -> str:
    """Render a tool result: its label and size, the output whole or collapsed once when long."""
    label = "Error" if block.is_error else "Output"
    classes = "result" + (" error" if block.is_error else "") + (" standalone" if standalone else "")
    text = block.text
    note = _stored_cut_note(text, block.truncated_from)
    if not text:
        return f'<div class="{classes}"><p class="result-head"><span class="label">{label}</span> · empty</p>{note}</div>'
    head = f'<span class="label">{label}</span> · <span class="size">{_size(text)}</span>'
    if len(text) > PREVIEW_CHARS or _line_count(text) > PREVIEW_LINES:
        return f'<div class="{classes}"><details class="output"><summary>{head}</summary><pre>{_e(text)}</pre></details>{note}</div>'
    return f'<div class="{classes}"><p class="result-head">{head}</p><pre>{_e(text)}</pre>{note}</div>'


def index_results(messages: list[Message]) -> dict[str, tuple[int, Block]]:
    """Map each tool call's id to its first result in this transcript (calls without a result, results without a call: left out)."""
    calls = {block.tool_use_id for message in messages for block in message.blocks if block.kind == "tool_use" and block.tool_use_id}
    results: dict[str, tuple[int, Block]] = {}
    for index, message in enumerate(messages):
        for block in message.blocks:
            if block.kind == "tool_result" and block.tool_use_id in calls and block.tool_use_id not in results:
                results[block.tool_use_id] = (index, block)
    return results


def index_requests(messages: list[Message]) -> dict[str, int]:
    """Map each API message id to the index of the first message carrying it, the one that shows its figures."""
    first: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.message_id is not None and message.message_id not in first:
            first[message.message_id] = index
    return first


def _paired(block: Block, index: int, context: TranscriptContext) -> bool:
    """Tell whether a result block is shown inside its call's card."""
    found = context.results.get(block.tool_use_id or "")
    return found is not None and found[0] == index and (found[1] is block or found[1] == block)


# --- tool calls -----------------------------------------------------------------------------------


@dataclass
class Call:
    """What a tool call's card shows besides its result: the summary's gist and sub-line, the body."""

    gist: str = ""  # HTML
    sub: str = ""  # HTML
    body: str = ""  # HTML
    used: tuple[str, ...] = ()  # input fields shown; the others are listed under the body


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _code_gist(text: str) -> tuple[str, bool]:
    line, shortened = _first_line(text)
    return f'<code class="gist">{_e(line)}</code>', shortened


def _line_ops(before: list[str], after: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Return difflib's opcodes, matching only between the common first and last lines, and not at all when that is too costly."""
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    middle_before, middle_after = before[head:len(before) - tail], after[head:len(after) - tail]
    ops: list[tuple[str, int, int, int, int]] = [("equal", 0, head, 0, head)] if head else []
    if len(middle_before) * len(middle_after) <= MAX_DIFF_CELLS:
        # Matching within the changed lines is quadratic at worst: past the bound they show as replaced whole.
        matcher = difflib.SequenceMatcher(None, middle_before, middle_after)
        ops += [(op, i1 + head, i2 + head, j1 + head, j2 + head) for op, i1, i2, j1, j2 in matcher.get_opcodes()]
    elif middle_before or middle_after:
        ops.append(("replace", head, len(before) - tail, head, len(after) - tail))
    if tail:
        ops.append(("equal", len(before) - tail, len(before), len(after) - tail, len(after)))
    return ops


def _diff_lines(old: str, new: str) -> str:
    """Render a line diff: removed lines as `<del class="diff-del">`, added ones as `<ins class="diff-add">`, the rest as context."""
    # Escaping keeps line breaks and maps distinct lines to distinct lines: escape once, then diff.
    before, after = _e(old).splitlines(), _e(new).splitlines()
    out: list[str] = []
    for op, i1, i2, j1, j2 in _line_ops(before, after):
        if op == "equal":
            out.extend(f'<span class="diff-ctx">{line}\n</span>' for line in before[i1:i2])
            continue
        out.extend(f'<del class="diff-del">{line}\n</del>' for line in before[i1:i2])
        out.extend(f'<ins class="diff-add">{line}\n</ins>' for line in after[j1:j2])
    return '<pre class="diff">' + "".join(out) + "</pre>"


def _edit_diff(edit: dict[str, Any]) -> str | None:
    old, new = _str(edit.get("old_string")), _str(edit.get("new_string"))
    if old is None or new is None:
        return None
    note = '<p class="note">Replaces every occurrence.</p>' if edit.get("replace_all") is True else ""
    return note + _diff_lines(old, new)


def _path_call(inputs: dict[str, Any], key: str = "file_path") -> Call | None:
    path = _str(inputs.get(key))
    if path is None:
        return None
    return Call(gist=f'<code class="gist path">{_e(path)}</code>', used=(key,))


def _bash(inputs: dict[str, Any]) -> Call | None:
    command = _str(inputs.get("command"))
    if command is None:
        return None
    gist, shortened = _code_gist(command)
    description = _str(inputs.get("description"))
    return Call(
        gist=gist,
        sub=f'<span class="sub">{_e(description)}</span>' if description else "",
        body=f'<pre class="command">{_e(command)}</pre>' if shortened else "",
        used=("command", "description"),
    )


def _read(inputs: dict[str, Any]) -> Call | None:
    call = _path_call(inputs)
    if call is None:
        return None
    window = tuple(key for key in ("offset", "limit") if isinstance(inputs.get(key), int) and not isinstance(inputs.get(key), bool))
    if window:
        call.gist += f' <span class="range">{" · ".join(f"{key} {inputs[key]:,}" for key in window)}</span>'
    call.used = ("file_path", *window)
    return call


def _write(inputs: dict[str, Any]) -> Call | None:
    call = _path_call(inputs)
    content = _str(inputs.get("content"))
    if call is None or content is None:
        return None
    call.body, call.used = _diff_lines("", content), ("file_path", "content")
    return call


def _edit(inputs: dict[str, Any]) -> Call | None:
    call = _path_call(inputs)
    diff = _edit_diff(inputs)
    if call is None or diff is None:
        return None
    call.body, call.used = diff, ("file_path", "old_string", "new_string", "replace_all")
    return call


def _multi_edit(inputs: dict[str, Any]) -> Call | None:
    call = _path_call(inputs)
    edits = inputs.get("edits")
    if call is None or not isinstance(edits, list) or not all(isinstance(edit, dict) for edit in edits):
        return None
    diffs = [_edit_diff(edit) for edit in edits]
    if any(diff is None for diff in diffs):
        return None
    call.sub = f'<span class="sub">{len(edits):,} edit{"" if len(edits) == 1 else "s"}</span>'
    call.body = "".join(f'<div class="edit"><p class="edit-head">Edit {number}</p>{diff}</div>' for number, diff in enumerate(diffs, 1))
    call.used = ("file_path", "edits")
    return call


def _notebook_edit(inputs: dict[str, Any]) -> Call | None:
    call = _path_call(inputs, "notebook_path")
    if call is None:
        return None
    source = _str(inputs.get("new_source"))
    if source is not None:
        call.body, call.used = _diff_lines("", source), ("notebook_path", "new_source")
    return call


def _search(inputs: dict[str, Any], scopes: tuple[str, ...]) -> Call | None:
    pattern = _str(inputs.get("pattern"))
    if pattern is None:
        return None
    gist, _ = _code_gist(pattern)
    shown = [key for key in scopes if isinstance(inputs.get(key), str)]
    scope = " · ".join(f"{'in' if key == 'path' else key} {inputs[key]}" for key in shown)
    return Call(
        gist=gist,
        sub=f'<span class="sub">{_e(scope)}</span>' if scope else "",
        body=f'<pre class="pattern">{_e(pattern)}</pre>' if _first_line(pattern)[1] else "",
        used=("pattern", *shown),
    )


def _single(inputs: dict[str, Any], key: str, extra: str | None = None) -> Call | None:
    """Show one field as the gist (a URL, a query), and another, when given, as text in the body."""
    value = _str(inputs.get(key))
    if value is None:
        return None
    gist, shortened = _code_gist(value)
    body = long_text(value, None, False) if shortened else ""
    text = _str(inputs.get(extra)) if extra else None
    if text is not None:
        body += long_text(text, None, False)
    return Call(gist=gist, body=body, used=(key, *((extra,) if text is not None else ())))


# Status -> (class, marker, title); any other status is shown as pending.
CHECKLIST_STATUS = {
    "completed": ("todo-done", "✓", "completed"),
    "in_progress": ("todo-active", "▸", "in progress"),
    "pending": ("todo-pending", "○", "pending"),
}


def _todo_write(inputs: dict[str, Any]) -> Call | None:
    todos = inputs.get("todos")
    if not isinstance(todos, list) or not all(isinstance(todo, dict) for todo in todos):
        return None
    done = sum(1 for todo in todos if todo.get("status") == "completed")
    items = []
    for todo in todos:
        css, mark, label = CHECKLIST_STATUS.get(str(todo.get("status")), ("todo-pending", "○", "pending"))
        content = _str(todo.get("content")) or _pretty(todo.get("content"))
        items.append(f'<li class="{css}"><span class="mark" title="{label}">{mark}</span> {_e(content)}</li>')
    return Call(
        gist=f'<span class="gist">Todos: {done:,} of {len(todos):,} done</span>',
        body='<ul class="todos">' + "".join(items) + "</ul>",
        used=("todos",),
    )


def _spawn(inputs: dict[str, Any], block: Block, context: TranscriptContext) -> Call | None:
    description = _str(inputs.get("description"))
    agent_id = context.spawned.get(block.tool_use_id or "")
    if description is None and agent_id is None:
        return None
    label = description or (context.agent_labels.get(agent_id, agent_id) if agent_id else "")
    gist = f'<span class="gist">{_e(label)}</span>'
    if agent_id is not None:
        gist = f'<a class="gist agent-link" href="{_e(context.agent_href(agent_id))}">{_e(label)}</a>'
    kind = _str(inputs.get("subagent_type"))
    prompt = _str(inputs.get("prompt"))
    return Call(
        gist=gist,
        sub=f'<span class="sub">{_e(kind)}</span>' if kind else "",
        body=long_text(prompt, None, False) if prompt is not None else "",
        used=("description", "subagent_type", *(("prompt",) if prompt is not None else ())),
    )


SIMPLE_TOOLS: dict[str, Callable[[dict[str, Any]], Call | None]] = {
    "Bash": _bash,
    "Read": _read,
    "Write": _write,
    "Edit": _edit,
    "MultiEdit": _multi_edit,
    "NotebookEdit": _notebook_edit,
    "Grep": lambda inputs: _search(inputs, ("path", "glob", "type")),
    "Glob": lambda inputs: _search(inputs, ("path",)),
    "WebFetch": lambda inputs: _single(inputs, "url", "prompt"),
    "WebSearch": lambda inputs: _single(inputs, "query"),
    "TodoWrite": _todo_write,
}
SPAWN_TOOLS = frozenset({"Task", "Agent"})


def _generic(inputs: Any) -> Call:
    """Show an unknown tool's first short string field as its gist, and its whole input as indented JSON."""
    gist = ""
    if isinstance(inputs, dict):
        for value in inputs.values():
            if isinstance(value, str) and value.strip() and "\n" not in value and len(value) <= SHORT_FIELD_CHARS:
                gist = _code_gist(value)[0]
                break
    return Call(gist=gist, body=f'<pre class="json">{_e(_pretty(inputs))}</pre>')


def _other_fields(inputs: dict[str, Any], used: tuple[str, ...]) -> str:
    rest = [(key, value) for key, value in inputs.items() if key not in used]
    if not rest:
        return ""
    items = "".join(f"<dt>{_e(key)}</dt><dd><code>{_e(value if isinstance(value, str) else _pretty(value))}</code></dd>" for key, value in rest)
    return f'<dl class="args">{items}</dl>'


def _tool_name(name: str) -> str:
    """Show a tool's name; an MCP tool `mcp__server__tool` as the tool and its server."""
    if name.startswith("mcp__"):
        server, _, tool = name[5:].partition("__")
        if server and tool:
            return f'<span class="tool">{_e(tool)}</span> <span class="server">{_e(server)}</span>'
    return f'<span class="tool">{_e(name)}</span>'


def _describe(block: Block, context: TranscriptContext) -> Call:
    """Read a call's input and choose how to show it; input that is not JSON (older caches cut it) is shown as text."""
    name = block.name or ""
    try:
        inputs = orjson.loads(block.text)
    except orjson.JSONDecodeError:
        return Call(body=long_text(block.text, None, False))
    if isinstance(inputs, dict):
        if name in SPAWN_TOOLS:
            call = _spawn(inputs, block, context)
        else:
            handler = SIMPLE_TOOLS.get(name)
            call = handler(inputs) if handler else None
        if call is not None:
            call.body += _other_fields(inputs, call.used)
            return call
    return _generic(inputs)


def _tool_call(block: Block, index: int, position: int, context: TranscriptContext) -> tuple[str, bool]:
    """Render a call as a card with its result inside; return the HTML and whether the result is an error."""
    call = _describe(block, context)
    found = context.results.get(block.tool_use_id or "")
    result = found[1] if found is not None else None
    error = result is not None and result.is_error
    note = ""
    if block.truncated_from:
        note = f'<p class="note">Input shortened for storage: long values end in “…” ({block.truncated_from:,} characters in all).</p>'
    flag = ' <span class="flag-error">Error</span>' if error else ""
    body = f'<div class="call-body">{call.body}{note}</div>' if call.body or note else ""
    html = (
        f'<details class="call{" error" if error else ""}" id="m{index}-b{position}" data-tool="{_e(block.name or "")}">'
        f"<summary>{_tool_name(block.name or 'tool')}{' ' + call.gist if call.gist else ''}{flag}{call.sub}</summary>"
        f"{body}{_result(result) if result is not None else ''}</details>"
    )
    return html, error


# --- messages -------------------------------------------------------------------------------------


def is_prompt(message: Message) -> bool:
    """Tell whether a message is one the person typed: a user message with text, not injected, not only tool results."""
    return message.role == "user" and not message.is_meta and any(block.kind == "text" for block in message.blocks)


def _request(message: Message, index: int, context: TranscriptContext) -> str:
    if message.message_id is None or message.message_id not in context.requests:
        return ""
    if context.request_at.get(message.message_id, index) != index:
        return ""
    figures = context.requests[message.message_id]
    if figures.counted_in is not None:
        owner = figures.counted_in
        link = f'<a href="{_e(context.session_href(owner))}">session {_e(owner[:8])}</a>'
        return f'<span class="figures copy">{_tokens(figures.tokens)} · copy, counted in {link}</span>'
    cost = f" · {fine_usd(figures.cost)}" if figures.cost is not None else ""
    return f'<span class="figures">{_tokens(figures.tokens)}{cost}</span>'


def _turn(index: int, context: TranscriptContext) -> str:
    turn = context.turns.get(index)
    if turn is None:
        return ""
    cost = f" · {fine_usd(turn.cost)}" if turn.cost is not None else ""
    return f'<span class="turn">turn {turn.number:,} · {_tokens(turn.tokens)}{cost} incl. subagents</span>'


def _head(message: Message, index: int, prompt: bool, context: TranscriptContext) -> str:
    role = "You" if prompt else message.role + (f" · {message.subtype}" if message.subtype else "")
    model = f'<span class="model">{_e(message.model)}</span>' if message.model else ""
    figures = _turn(index, context) if prompt else _request(message, index, context)
    return f'<div class="msg-head"><span class="role">{_e(role)}</span>{model}{figures}<time>{_e(short_time(message.timestamp))}</time></div>'


def render_message(message: Message, index: int, context: TranscriptContext) -> str:
    """Render one message as an `<li>`, or "" when all it holds is shown elsewhere (results inside their calls)."""
    prompt = is_prompt(message)
    markdown_on = message.role in ("assistant", "user") and not message.is_meta
    has = {"prompt"} if prompt else set()
    parts: list[str] = []
    for position, block in enumerate(message.blocks):
        kind = block.kind
        if kind == "text":
            parts.append(long_text(block.text, block.truncated_from, markdown_on))
        elif kind == "tool_use":
            html, error = _tool_call(block, index, position, context)
            parts.append(html)
            has.update(("tool", "error") if error else ("tool",))
        elif kind == "tool_result":
            if _paired(block, index, context):
                continue
            parts.append(_result(block, standalone=True))
            has.update(("tool", "error") if block.is_error else ("tool",))
        elif kind == "thinking":
            parts.append(_thinking(block, f"m{index}-b{position}"))
            has.add("thinking")
        elif kind == "image":
            parts.append(_image(block))
        else:
            parts.append(f'<p class="note">{_e(block.text)}</p>')
    if not parts and any(block.kind == "tool_result" for block in message.blocks):
        return ""
    classes = "msg " + message.role + (" prompt" if prompt else "") + (" meta" if message.is_meta else "")
    return (
        f'<li class="{_e(classes)}" id="m{index}" data-has="{" ".join(sorted(has))}">'
        f"{_head(message, index, prompt, context)}{''.join(parts)}</li>\n"
    )
