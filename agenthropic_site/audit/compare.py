"""`agenthropic diff`: what changed between two builds, file by file and session by session."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any
from collections.abc import Mapping

import orjson

from agenthropic_site.errors import UserError
from agenthropic_site.records import record_class
from agenthropic_site.terminal import printable

SESSION_PREFIX, SESSION_SUFFIX = "data/sessions/", ".json"
# data/ writes costs as fixed-point strings; anything else (NaN, 1e999999999) is refused.
USD_RE = re.compile(r"-?[0-9]{1,30}(\.[0-9]{1,30})?")


class DiffError(UserError):
    """A session's JSON in one of the builds cannot be read (exit code 2)."""


@record_class(frozen=True)
class TreeDelta:
    """Files only in B (added), only in A (removed), and in both with different bytes (changed)."""

    added: list[str]
    removed: list[str]
    changed: list[str]

    @property
    def identical(self) -> bool:
        """Tell whether both trees hold the same files with the same bytes."""
        return not (self.added or self.removed or self.changed)


@record_class(frozen=True)
class SessionSide:
    """The figures of one session in one build, read from `data/sessions/<id>.json`."""

    cost: Decimal | None
    tokens: dict[str, int] | None
    status: str | None
    excluded: str | None
    agents: frozenset[str]
    fields: dict[str, Any]


@record_class(frozen=True)
class SessionChange:
    """How one session differs between build A and build B (a side is None when absent)."""

    session_id: str
    a: SessionSide | None
    b: SessionSide | None

    @property
    def change(self) -> str:
        """Return "added", "removed" or "changed"."""
        return "added" if self.a is None else "removed" if self.b is None else "changed"

    @property
    def cost_delta(self) -> Decimal:
        """Return B's cost minus A's; an absent or excluded side counts as 0."""
        return _cost(self.b) - _cost(self.a)

    @property
    def token_delta(self) -> dict[str, int]:
        """Return B's tokens minus A's per category, and their total."""
        a, b = _tokens(self.a), _tokens(self.b)
        delta = {name: b.get(name, 0) - a.get(name, 0) for name in sorted(set(a) | set(b))}
        return {**delta, "total": sum(delta.values())}

    @property
    def agents_added(self) -> list[str]:
        """Return the agents only in B."""
        return sorted(_agents(self.b) - _agents(self.a))

    @property
    def agents_removed(self) -> list[str]:
        """Return the agents only in A."""
        return sorted(_agents(self.a) - _agents(self.b))

    @property
    def fields_changed(self) -> list[str]:
        """Return the top-level keys of the session JSON whose values differ."""
        a = self.a.fields if self.a else {}
        b = self.b.fields if self.b else {}
        return sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))

    def sort_key(self) -> tuple[Decimal, int, str]:
        """Most significant first: the larger cost change, then the larger token change, then the id."""
        return (-abs(self.cost_delta), -abs(self.token_delta["total"]), self.session_id)


def _cost(side: SessionSide | None) -> Decimal:
    return side.cost if side is not None and side.cost is not None else Decimal(0)


def _tokens(side: SessionSide | None) -> dict[str, int]:
    return side.tokens if side is not None and side.tokens is not None else {}


def _agents(side: SessionSide | None) -> frozenset[str]:
    return side.agents if side is not None else frozenset()


def tree_delta(a: Mapping[str, bytes], b: Mapping[str, bytes]) -> TreeDelta:
    """Compare two {path: bytes} trees."""
    return TreeDelta(
        added=sorted(set(b) - set(a)),
        removed=sorted(set(a) - set(b)),
        changed=sorted(rel for rel in set(a) & set(b) if a[rel] != b[rel]),
    )


def session_side(rel: str, data: bytes) -> SessionSide:
    """Read one session's figures; the JSON may come from an untrusted snapshot, so check every type."""
    try:
        doc = orjson.loads(data)
        if not isinstance(doc, dict):
            raise TypeError("not an object")
        cost = doc.get("cost_usd")
        tokens = doc.get("tokens")
        excluded = doc.get("excluded")
        agents = doc.get("agents") or []
        if tokens is not None and not (isinstance(tokens, dict) and all(type(v) is int for v in tokens.values())):
            raise TypeError("tokens are not whole numbers")
        if tokens is not None and "total" in tokens:  # the name the diff gives the categories' sum
            raise TypeError("tokens has a category named 'total'")
        if not (excluded is None or isinstance(excluded, dict)) or not isinstance(agents, list):
            raise TypeError("excluded or agents has the wrong type")
        status, reason = doc.get("status"), excluded.get("reason", "") if excluded else None
        if not all(isinstance(v, (str, type(None))) for v in (status, reason, cost)):
            raise TypeError("status, reason or cost is not a string")
        if cost is not None and not USD_RE.fullmatch(cost):
            raise TypeError(f"cost {cost[:40]!r} is not a decimal amount")
        named = [agent.get("agent_id") for agent in agents if isinstance(agent, dict)]
        if not all(isinstance(agent_id, str) for agent_id in named):
            raise TypeError("an agent id is not a string")
        agent_ids = frozenset(agent_id for agent_id in named if isinstance(agent_id, str))
        return SessionSide(None if cost is None else Decimal(cost), tokens, status, reason, agent_ids, doc)
    except (orjson.JSONDecodeError, TypeError) as exc:
        raise DiffError(f"{rel} is not a session's JSON ({exc})") from None


def is_session_json(rel: str) -> bool:
    """Tell whether a site's file is a session's JSON (`data/sessions/<session>.json`): what a diff reads of a tree besides paths."""
    return rel.startswith(SESSION_PREFIX) and rel.endswith(SESSION_SUFFIX) and "/" not in rel[len(SESSION_PREFIX):]


def session_changes(a: Mapping[str, bytes], b: Mapping[str, bytes], delta: TreeDelta) -> list[SessionChange]:
    """Return every session whose JSON was added, removed or changed, most significant first."""
    changes = []
    for rel in delta.added + delta.removed + delta.changed:
        if not is_session_json(rel):
            continue
        session_id = rel[len(SESSION_PREFIX) : -len(SESSION_SUFFIX)]
        side_a = session_side(rel, a[rel]) if rel in a else None
        side_b = session_side(rel, b[rel]) if rel in b else None
        changes.append(SessionChange(session_id, side_a, side_b))
    return sorted(changes, key=SessionChange.sort_key)


def diff_json(delta: TreeDelta, sessions: list[SessionChange]) -> dict[str, Any]:
    """Return the machine-readable diff (costs as decimal strings)."""

    def usd(value: Decimal | None) -> str | None:
        return None if value is None else format(value, "f")

    return {
        "identical": delta.identical,
        "files": {"added": delta.added, "removed": delta.removed, "changed": delta.changed},
        "sessions": [
            {
                "session_id": change.session_id,
                "change": change.change,
                "cost_usd": {"a": usd(change.a.cost if change.a else None), "b": usd(change.b.cost if change.b else None),
                             "delta": format(change.cost_delta, "+f")},
                "tokens": {"a": change.a and change.a.tokens, "b": change.b and change.b.tokens, "delta": change.token_delta},
                "status": {"a": change.a and change.a.status, "b": change.b and change.b.status},
                "excluded": {"a": change.a and change.a.excluded, "b": change.b and change.b.excluded},
                "agents_added": change.agents_added,
                "agents_removed": change.agents_removed,
                "fields_changed": change.fields_changed,
            }
            for change in sessions
        ],
    }


def _shown(value: object) -> str:
    """Return a value as text, an absent one as "-"."""
    return "-" if value is None else str(value)


def diff_text(delta: TreeDelta, sessions: list[SessionChange], files: int) -> str:
    """Return the diff as lines a person reads: files, then sessions, most significant first."""
    if delta.identical:
        return f"identical: {files} files\n"
    lines = [f"files: {len(delta.changed)} changed, {len(delta.added)} added, {len(delta.removed)} removed"]
    for label, paths in (("added", delta.added), ("removed", delta.removed), ("changed", delta.changed)):
        lines += [f"  {label:<8} {rel}" for rel in paths]
    kinds = [change.change for change in sessions]
    lines.append(
        f"sessions: {kinds.count('changed')} changed, {kinds.count('added')} added, {kinds.count('removed')} removed"
        + (" (largest cost change first)" if sessions else "")
    )
    for change in sessions:
        a, b = change.a, change.b
        lines.append(f"  {change.session_id}  {change.change}")
        tokens = change.token_delta
        lines.append(f"      cost      {_shown(a and a.cost)} -> {_shown(b and b.cost)} USD ({change.cost_delta:+f})")
        parts = ", ".join(f"{name} {count:+d}" for name, count in tokens.items() if name != "total" and count)
        lines.append(f"      tokens    {tokens['total']:+d}" + (f" ({parts})" if parts else ""))
        if (a and a.status) != (b and b.status):
            lines.append(f"      status    {_shown(a and a.status)} -> {_shown(b and b.status)}")
        if (a and a.excluded) != (b and b.excluded):
            lines.append(f"      excluded  {_shown(a and a.excluded)} -> {_shown(b and b.excluded)}")
        if change.agents_added or change.agents_removed:
            moved = [f"+{agent}" for agent in change.agents_added] + [f"-{agent}" for agent in change.agents_removed]
            lines.append(f"      agents    {' '.join(moved)}")
        lines.append(f"      fields    {', '.join(change.fields_changed)}")
    # Paths, ids, token categories and values come from an untrusted snapshot: each whole line is
    # escaped, so none of them can drive the terminal (a category named "\x1b]0;…" once did).
    return "".join(printable(line) + "\n" for line in lines)
