"""The shapes of the ids Claude Code names sessions and agents by, which the corpus walk and the parser both check."""

from __future__ import annotations

import re

# Session ids are UUIDs in lower-case hex: a main transcript's name, a session folder's (format §1.3).
SESSION_ID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# Agent ids: `a` + 6 or 16 hex (2.1.x), 8 hex (2.0.x flat), `acompact-…`, `aside_question-…` (format §1.3),
# and the uuid an inline subagent's turns are grouped by; never a path (no `/`, no leading `.`).
AGENT_ID = r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}"
AGENT_ID_RE = re.compile(rf"^{AGENT_ID}$")
