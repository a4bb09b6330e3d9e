"""Mask common credential shapes in text (`build --redact`, `snapshot`).

Each match is replaced by a fixed marker, `[redacted:<kind>]`, that never depends on the
secret, so a redacted site is as deterministic as any other. A `Redactor` counts masks by kind
and never keeps what it masked. For `name = value` shapes (`api_key=…`, `Bearer …`,
`aws_secret_access_key=…`) only the value is replaced, so the page still says what was there.

Text is matched as written in a transcript and also as it appears in the built site, where
quotes may be HTML entities (`&#34;`) or JSON escapes (`\\"`) and line breaks `\\n`: the
snapshot maps the site's files through the same patterns. A marker matches no pattern, so
masking twice masks nothing more.

This module imports only the standard library: `agenthropic snapshot` uses it without the
renderer.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from agenthropic_site.gather import SiteModel
    from agenthropic_site.parse.model import Message
    from agenthropic_site.views import SessionView

# An optional quote around a key name or value: plain or as Jinja and markdown-it escape it in
# HTML, either one backslash-escaped (JSON text).
_QUOTE = r"""(?:\\?(?:["'`]|&(?:\#34|\#39|\#x27|quot|apos);))?"""
# Not preceded by a letter or digit (`task-…` never starts an `sk-` key), except the `n` of a
# `\n` escape in JSON text (a tool call's input is shown as JSON).
_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"
_B64_BODY = r"(?:[A-Za-z0-9+/=\s:,.\-]|\\[nr])"

# (kind, pattern); a pattern with a group named `value` masks only that group.
# Earlier kinds win where two could start at the same place.
PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----"
        # Up to the END line; a block cut short (a stored text is capped) is masked to the end of its body.
        rf"{_B64_BODY}*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|(?!{_B64_BODY}))",
    ),
    ("anthropic-key", rf"{_START}sk-ant-[A-Za-z0-9_\-]{{20,}}"),
    ("openai-key", rf"{_START}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{{20,}}|[A-Za-z0-9]{{20,}})"),
    ("aws-access-key-id", r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"),
    ("aws-secret-key", rf"(?i:aws_secret_access_key){_QUOTE}\s*[=:]\s*{_QUOTE}(?P<value>[A-Za-z0-9/+=]{{40}})(?![A-Za-z0-9/+=])"),
    ("github-token", rf"{_START}(?:gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}})"),
    ("slack-token", rf"{_START}xox[baprs]-[A-Za-z0-9\-]{{10,}}"),
    ("bearer-token", rf"{_START}(?i:bearer)\s+(?P<value>[A-Za-z0-9._~+/\-]{{20,}}=*)"),
    ("api-key", rf"(?i:api[_\-]?key){_QUOTE}\s*[=:]\s*{_QUOTE}(?P<value>[A-Za-z0-9_\-]{{24,}})"),
)
KINDS: tuple[str, ...] = tuple(kind for kind, _ in PATTERNS)


def marker(kind: str) -> str:
    """Return what replaces a secret of this kind."""
    return f"[redacted:{kind}]"


def _compile() -> tuple[re.Pattern[str], dict[str, tuple[str, str | None]]]:
    parts = []
    groups: dict[str, tuple[str, str | None]] = {}
    for index, (kind, pattern) in enumerate(PATTERNS):
        value = f"v{index}" if "(?P<value>" in pattern else None
        parts.append(f"(?P<k{index}>{pattern.replace('(?P<value>', f'(?P<{value}>')})")
        groups[f"k{index}"] = (kind, value)
    # Every pattern starts with one of these characters: the lookahead lets the engine skip
    # other positions without trying each alternative there (several times faster).
    return re.compile("(?=[-ABabgsx])(?:" + "|".join(parts) + ")"), groups


_COMBINED, _GROUPS = _compile()
# Fixed-shape kinds, used to name the value of a `name = value` match (`API_KEY=sk-ant-…`).
_SHAPED = re.compile("|".join(f"(?P<k{i}>{p})" for i, (kind, p) in enumerate(PATTERNS) if "(?P<value>" not in p and kind != "private-key"))
# A cheap test before the regular expression: every pattern holds one of these (lower-cased).
_TRIGGERS: tuple[str, ...] = (
    "private key", "sk-", "akia", "asia", "aws_secret_access_key", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "xox", "bearer", "api_key", "api-key", "apikey",
)


class Redactor:
    """Mask credential shapes and count the masks by kind (never what they masked)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def text(self, text: str) -> str:
        """Return `text` with every credential shape replaced by its marker."""
        if not text:
            return text
        lowered = text.lower()
        if not any(trigger in lowered for trigger in _TRIGGERS):
            return text
        return _COMBINED.sub(self._replace, text)

    def optional(self, text: str | None) -> str | None:
        """Like `text`, passing None through."""
        return None if text is None else self.text(text)

    def _replace(self, match: re.Match[str]) -> str:
        group = match.lastgroup
        assert group is not None
        kind, value_group = _GROUPS[group]
        if value_group is None:
            self.counts[kind] += 1
            return marker(kind)
        value = match.group(value_group)
        shaped = _SHAPED.fullmatch(value)
        if shaped is not None and shaped.lastgroup is not None:
            kind = PATTERNS[int(shaped.lastgroup[1:])][0]
        self.counts[kind] += 1
        start, end = match.span(value_group)
        whole = match.start()
        return match.group(0)[: start - whole] + marker(kind) + match.group(0)[end - whole :]

    def file(self, rel: str, data: bytes) -> bytes:
        """Mask an HTML or JSON file of a built site; other files are returned as they are."""
        if not rel.endswith((".html", ".json")):
            return data
        text = data.decode("utf-8", "surrogateescape")
        masked = self.text(text)
        return data if masked == text else masked.encode("utf-8", "surrogateescape")

    def report(self) -> dict[str, int]:
        """Return the number of masks of every kind, zeros included, in a fixed order."""
        return {kind: self.counts.get(kind, 0) for kind in sorted(KINDS)}

    def messages(self, messages: Iterable[Message]) -> None:
        """Mask the text of transcript messages in place (images are left alone)."""
        for message in messages:
            for block in message.blocks:
                if block.kind != "image" and block.text:
                    block.text = self.text(block.text)

    def view(self, view: SessionView) -> None:
        """Mask, in place, every free text of a session's view that its pages and JSON show."""
        view.title = self.optional(view.title)
        view.cwd = self.optional(view.cwd)
        view.git_branch = self.optional(view.git_branch)
        view.prompts = [self.text(prompt) for prompt in view.prompts]
        for entry in (*view.warnings, *view.line_errors):
            entry["message"] = self.text(entry["message"])
        for agent in view.agents:
            agent.description = self.optional(agent.description)
            agent.agent_type = self.optional(agent.agent_type)

    def model(self, model: SiteModel) -> None:
        """Mask, in place, every free text of a gathered model that the index, project pages and report show.

        The model is assembled anew by every build from the cache, which keeps the original
        text. A session's texts are counted with its view (`view`), as its pages load it, so
        the copies in summaries and project names are masked here without being counted again.
        """
        from dataclasses import replace

        copies = Redactor()
        for session in model.sessions.values():
            session.title = copies.optional(session.title)
            session.cwd = copies.optional(session.cwd)
            session.prompts = [copies.text(prompt) for prompt in session.prompts]
        for project in model.projects:
            project.display_name = copies.text(project.display_name)
        for failure in model.failures:
            failure.reason = self.text(failure.reason)
        model.skips = [replace(skip, detail=self.text(skip.detail)) if skip.detail else skip for skip in model.skips]
