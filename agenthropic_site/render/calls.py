"""Render a tool call as a card that says what it did: its gist by tool, its input (diffs for edits), its result inside."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import orjson

from agenthropic_site.parse.model import Block
from agenthropic_site.records import record_class
from agenthropic_site.render.fragments import (
    TranscriptContext,
    escaped,
    first_line,
    long_text,
    pretty_json,
    result_html,
)

SHORT_FIELD_CHARS = 200  # an unknown tool's gist is its first string field up to this size
MAX_DIFF_CELLS = 40_000  # changed lines before × after that a diff still matches line by line


# --- tool calls -----------------------------------------------------------------------------------


@record_class
class Call:
    """What a tool call's card shows besides its result: the summary's gist and sub-line, the body."""

    gist: str = ""  # HTML
    sub: str = ""  # HTML
    body: str = ""  # HTML
    used: tuple[str, ...] = ()  # input fields shown; the others are listed under the body


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _code_gist(text: str) -> tuple[str, bool]:
    line, shortened = first_line(text)
    return f'<code class="gist">{escaped(line)}</code>', shortened


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
    before, after = escaped(old).splitlines(), escaped(new).splitlines()
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
    return Call(gist=f'<code class="gist path">{escaped(path)}</code>', used=(key,))


def _bash(inputs: dict[str, Any]) -> Call | None:
    command = _str(inputs.get("command"))
    if command is None:
        return None
    gist, shortened = _code_gist(command)
    description = _str(inputs.get("description"))
    return Call(
        gist=gist,
        sub=f'<span class="sub">{escaped(description)}</span>' if description else "",
        body=f'<pre class="command">{escaped(command)}</pre>' if shortened else "",
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
        sub=f'<span class="sub">{escaped(scope)}</span>' if scope else "",
        body=f'<pre class="pattern">{escaped(pattern)}</pre>' if first_line(pattern)[1] else "",
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
        content = _str(todo.get("content")) or pretty_json(todo.get("content"))
        items.append(f'<li class="{css}"><span class="mark" title="{label}">{mark}</span> {escaped(content)}</li>')
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
    gist = f'<span class="gist">{escaped(label)}</span>'
    if agent_id is not None:
        gist = f'<a class="gist agent-link" href="{escaped(context.agent_href(agent_id))}">{escaped(label)}</a>'
    kind = _str(inputs.get("subagent_type"))
    prompt = _str(inputs.get("prompt"))
    return Call(
        gist=gist,
        sub=f'<span class="sub">{escaped(kind)}</span>' if kind else "",
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
    return Call(gist=gist, body=f'<pre class="json">{escaped(pretty_json(inputs))}</pre>')


def _other_fields(inputs: dict[str, Any], used: tuple[str, ...]) -> str:
    rest = [(key, value) for key, value in inputs.items() if key not in used]
    if not rest:
        return ""
    items = "".join(f"<dt>{escaped(key)}</dt><dd><code>{escaped(value if isinstance(value, str) else pretty_json(value))}</code></dd>" for key, value in rest)
    return f'<dl class="args">{items}</dl>'


def _tool_name(name: str) -> str:
    """Show a tool's name; an MCP tool `mcp__server__tool` as the tool and its server."""
    if name.startswith("mcp__"):
        server, _, tool = name[5:].partition("__")
        if server and tool:
            return f'<span class="tool">{escaped(tool)}</span> <span class="server">{escaped(server)}</span>'
    return f'<span class="tool">{escaped(name)}</span>'


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


def tool_call(block: Block, index: int, position: int, context: TranscriptContext) -> tuple[str, bool]:
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
        f'<details class="call{" error" if error else ""}" id="m{index}-b{position}" data-tool="{escaped(block.name or "")}">'
        f"<summary>{_tool_name(block.name or 'tool')}{' ' + call.gist if call.gist else ''}{flag}{call.sub}</summary>"
        f"{body}{result_html(result) if result is not None else ''}</details>"
    )
    return html, error
