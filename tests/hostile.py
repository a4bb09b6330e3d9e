"""A small hostile corpus: transcript text that tries to run script or break out of its markup.

One project, one session in the 2.1.114 layout (format §1.3) with one subagent under
`<sid>/subagents/` whose `.meta.json` sidecar carries a `toolUseId`. Every piece of text a page
shows carries a payload that sets `window.__pwned` if it ever runs: raw HTML, `on*` attributes,
`javascript:` and `data:` links, `</script>` inside text and tool input, inline SVG with script,
Graphviz label injection in the agent type and description, a 5 MB tool output, and lines with
a lone surrogate, a NUL and U+2028.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from records import assistant, usage, user, write

PROJECT = "-home-u-hostile"
SID = "0badc0de-0000-4000-8000-00000000dead"
AGENT = "a0123456789abcdef"
SPAWN_ID = "toolu_01HostileSpawn0000000000"
BASH_ID = "toolu_01HostileBash00000000000"
VERSION = "2.1.114"
BIG_OUTPUT_CHARS = 5 * 1024 * 1024

PWN = "window.__pwned=1"
SCRIPT = f"<script>{PWN}</script>"
IMG = f'<img src=x onerror="{PWN}">'
BREAKOUT = f"</script><script>{PWN}</script>"
SVG = f'<svg onload="{PWN}"><script>{PWN}</script></svg>'
LINKS = (f"[x](javascript:{PWN}) and ![y](data:text/html,<script>{PWN}</script>) and <javascript:{PWN}> and "
         f"[a](JaVaScRiPt:{PWN}) and [b](java&#115;cript:{PWN}) and [c](%20javascript:{PWN}) and [d](vbscript:{PWN}) and "
         f"![e](data:image/svg+xml,<svg onload='{PWN}'/>) and [f][ref]\n\n[ref]: javascript:{PWN}")
# Graphviz: close the quoted label and add a node; html-like labels; escString sequences (\l, \N).
DOT_TYPE = 'x"]; evil [label=<<b>html</b>>]; \\l\\N <TABLE><TR><TD>t</TD></TR></TABLE>'
DOT_SPAWN_TYPE = "<<TABLE><TR><TD>spawn</TD></TR></TABLE>>"
DESCRIPTION = f'<TABLE><TR><TD>desc</TD></TR></TABLE> {SCRIPT} "]; evil2 [URL="javascript:{PWN}"];'
TITLE = f"{SCRIPT} hostile {IMG}"

HOSTILE_TEXT = "\n\n".join([
    f"Raw HTML: {SCRIPT} {IMG}",
    f"Links: {LINKS}",
    f"Breakout: {BREAKOUT}",
    f"Inline SVG: {SVG}",
    f'<a href="javascript:{PWN}">anchor</a> <iframe src="javascript:{PWN}"></iframe>',
    f"```html\n{BREAKOUT}\n```",
])


def _stamp(record: dict[str, Any], second: int, **extra: Any) -> dict[str, Any]:
    """Give a record this corpus's version, a timestamp, and any extra envelope fields."""
    record.update(version=VERSION, sessionId=SID, timestamp=f"2026-04-18T13:{second // 60:02d}:{second % 60:02d}.000Z", **extra)
    return record


def write_hostile_corpus(folder: Path) -> Path:
    """Write the hostile corpus under `folder` (which becomes the corpus root) and return it."""
    project = folder / PROJECT
    sub = project / SID / "subagents"
    u = usage(10, 20, 30, 40)

    title = {"type": "custom-title", "customTitle": TITLE, "sessionId": SID}
    prompt = _stamp(user("u1", f"Please help. {HOSTILE_TEXT}"), 0)
    reply = _stamp(assistant("a1", "msg_h1", "req_h1", u, stop="tool_use", content=[
        {"type": "text", "text": f"Sure. {HOSTILE_TEXT}"},
        {"type": "tool_use", "id": SPAWN_ID, "name": "Agent",
         "input": {"description": DESCRIPTION, "subagent_type": DOT_SPAWN_TYPE, "prompt": f"Investigate {BREAKOUT} {SVG}"}},
    ], parent="u1"), 1)
    tail = f"agentId: {AGENT} (use SendMessage with to: '{AGENT}' to continue this agent)\n<usage>total_tokens: 100\ntool_uses: 0\nduration_ms: 10</usage>"
    spawn_result = _stamp(user("u2", [{"type": "tool_result", "tool_use_id": SPAWN_ID, "content": [
        {"type": "text", "text": f"Done. {SCRIPT} {IMG}"}, {"type": "text", "text": tail}]}], parent="a1"), 30,
        toolUseResult={"status": "completed", "agentId": AGENT, "agentType": DOT_TYPE, "content": [], "totalTokens": 100},
        sourceToolAssistantUUID="a1")
    bash = _stamp(assistant("a2", "msg_h2", "req_h2", u, stop="tool_use", content=[
        {"type": "tool_use", "id": BASH_ID, "name": "Bash", "input": {"command": f"echo '{BREAKOUT}'", "description": SVG}},
    ], parent="u2"), 31)
    big = ("A" * 1023 + "\n") * (BIG_OUTPUT_CHARS // 1024)
    big_result = _stamp(user("u3", [{"type": "tool_result", "tool_use_id": BASH_ID, "content": f"{BREAKOUT}\n{big}"}], parent="a2"), 32,
                        sourceToolAssistantUUID="a2")
    final = _stamp(assistant("a3", "msg_h3", "req_h3", u, content=[{"type": "text", "text": f"All done {SCRIPT}"}], parent="u3"), 40)

    # Written by hand: json.dumps would escape U+2028 and cannot write a lone surrogate as an escape.
    envelope = f'"sessionId":"{SID}","version":"{VERSION}","timestamp":"2026-04-18T13:00:35.000Z","cwd":"/home/u/hostile"'
    lone = ('{"type":"user","uuid":"u4","parentUuid":"a2",' + envelope +
            ',"message":{"role":"user","content":"lone \\ud800 surrogate, NUL \\u0000 and \u2028 separator"}}\n').encode()
    odd = ('{"type":"user","uuid":"u5","parentUuid":"a2",' + envelope +
           ',"message":{"role":"user","content":"NUL \\u0000 here, raw U+2028 [\u2028] and escaped [\\u2028] and U+2029 [\u2029]' +
           ' </script><script>window.__pwned=1</script>"}}\n').encode()
    write(project / f"{SID}.jsonl", title, prompt, reply, spawn_result, bash, big_result, lone, odd, final)

    side = {"isSidechain": True, "agentId": AGENT}
    write(sub / f"agent-{AGENT}.jsonl",
          _stamp(user("s1", f"Investigate {BREAKOUT} {SVG}"), 2, **side),
          _stamp(assistant("s2", "msg_hs1", "req_hs1", u, content=[{"type": "text", "text": f"Found it. {HOSTILE_TEXT}"}], parent="s1"), 20, **side))
    (sub / f"agent-{AGENT}.meta.json").write_text(
        json.dumps({"agentType": DOT_TYPE, "description": DESCRIPTION, "toolUseId": SPAWN_ID}), encoding="utf-8")
    return folder

