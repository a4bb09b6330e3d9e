"""Mask common credential shapes in text (`build --redact`, `snapshot`).

Each match is replaced by a fixed marker, `[redacted:<kind>]`, that never depends on the
secret, so a redacted site is as deterministic as any other. A `Redactor` counts masks by kind
and never keeps what it masked. For `name = value` shapes (`api_key=…`, `Bearer …`,
`aws_secret_access_key=…`, `"SecretAccessKey": "…"`) only the value is replaced, so the page
still says what was there.

Text is matched as a reader gets it back, not as it is spelled: HTML entities (`&#45;`, as
Graphviz writes `-`), JSON and Markdown backslash escapes (`\\n`, `\\u002d`, `\\-`) are decoded
and ANSI colour codes (`ESC[31m`, also spelled `\\e[31m` or `\\u001b[31m`) are dropped before
matching, and each match is mapped back to the characters that spell it, which are replaced
whole. A colour code may join the two halves of a key or separate a key from the word before
it, so text holding one is matched both ways. The same `text` masks the model's text before
rendering (`build --redact`) and the bytes of a built site (`snapshot`), whose HTML, SVG and
JSON spell the same text with their own escapes. A marker matches no pattern, so masking twice
masks nothing more.

A private key is masked from its BEGIN line through its END line whatever prefixes its lines
(a Read tool's `   12→`, grep's `path-13-`, diff's `+`); a key shown without its END line
(a listing cut short) is masked through the last of the lines that follow it and look like
key text.

This module imports only the standard library: `agenthropic snapshot` uses it without the
renderer.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar
from collections.abc import Callable, Iterable

if TYPE_CHECKING:
    from agenthropic_site.model.gather import SiteModel
    from agenthropic_site.parse.model import Message
    from agenthropic_site.model.views import SessionView

# Quotes as the site's HTML writes them: these references are left as written when text is
# decoded (the matching costs less), so a quote may be one of them, or JSON's `\"` in a page.
_QUOTE_NAMES = r"(?:\#34|\#39|\#x27|quot|apos);"
# An optional quote around a key name or value.
_QUOTE = rf"""(?:\\?(?:["'`]|&{_QUOTE_NAMES}))?"""
# Not preceded by a letter or digit: `task-…` never starts an `sk-` key.
_START = r"(?<![A-Za-z0-9])"

# (kind, pattern); a pattern with a group named `value` masks only that group.
# Earlier kinds win where two could start at the same place. A private key's pattern is its
# BEGIN line: `_key_end` finds where the key ends.
PATTERNS: tuple[tuple[str, str], ...] = (
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
    ("anthropic-key", rf"{_START}sk-ant-[A-Za-z0-9_\-]{{20,}}"),
    ("openai-key", rf"{_START}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{{20,}}|[A-Za-z0-9]{{20,}})"),
    ("aws-access-key-id", r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"),
    # The secret key by its names in the CLI's files and environment (`aws_secret_access_key`),
    # its JSON (`"SecretAccessKey"`) and the SDKs (`secretAccessKey`); a session token goes with it.
    (
        "aws-secret-key",
        rf"(?i:(?:aws_?)?secret_?access_?key|aws_session_token|sessiontoken){_QUOTE}\s*[=:]\s*{_QUOTE}"
        r"(?P<value>[A-Za-z0-9/+=]{40,})(?![A-Za-z0-9/+=])",
    ),
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
    return re.compile("(?=[-ABSabgsx])(?:" + "|".join(parts) + ")"), groups


_COMBINED, _GROUPS = _compile()
# Fixed-shape kinds, used to name the value of a `name = value` match (`API_KEY=sk-ant-…`).
_SHAPED = re.compile("|".join(f"(?P<k{i}>{p})" for i, (kind, p) in enumerate(PATTERNS) if "(?P<value>" not in p and kind != "private-key"))
# A cheap test before the regular expression: every pattern holds one of these (lower-cased).
_TRIGGERS: tuple[str, ...] = (
    "private key", "sk-", "akia", "asia", "secret_access_key", "secretaccesskey", "session_token", "sessiontoken",
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "bearer", "api_key", "api-key", "apikey",
)

# --- Reading text as a reader gets it back ------------------------------------------------

# A character reference other than a quote's or markup's (`&amp;`, `&lt;`, `&gt;` stay as written:
# a `<` in decoded text is always markup).
_ENTITY_RE = re.compile(
    rf"(?P<entity>&(?!{_QUOTE_NAMES}|(?:amp|lt|gt);)(?:\#[0-9]{{1,7}}|\#[xX][0-9a-fA-F]{{1,6}}|[A-Za-z][A-Za-z0-9]{{1,31}});?)"
)
# An ANSI control sequence (CSI: colours, erase-line) after its ESC.
_CSI_TAIL = r"\[[0-?]*[ -/]*[@-~]"
# Backslash escapes: an ESC spelled in a JSON string or shell source (`\u001b`, `\e`, `\033`,
# `\x1b`) with its sequence, JSON escapes, and a backslash (Markdown's, the shell's) before a
# character keys are made of. Each pattern starts with a literal: scanning for it is fast.
_BACKSLASH_RE = re.compile(
    rf"\\(?:(?P<csi>\\?(?:e|033|x1[bB]|u001[bB]){_CSI_TAIL})|u(?P<u>[0-9a-fA-F]{{4}})|(?P<c>[bfnrt])|(?P<p>[-_+=/\\\"'`]))"
)
_RAW_CSI_RE = re.compile(rf"(?P<csi>\x1b{_CSI_TAIL})")
_CSI_STARTS = ("\x1b[", "\\e[", "\\033[", "\\x1b[", "\\x1B[", "\\u001b[", "\\u001B[")
# Escapes that can spell a character of a trigger or join two parts of one: numeric character
# references (bar the quotes'), `&lowbar;`, `\u…`, a backslash before `-` or `_`, and colour
# codes. Other escapes decode to quotes, punctuation or white space only.
_HIDING_RES = (
    re.compile(r"&\#(?!3[49];|x27;)"), re.compile(r"&(?:lowbar|UnderBar);"), re.compile(r"\\(?:u|x1|e\[|033|[-_])"),
    re.compile("\x1b"),
)
_CONTROL = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Decoded:
    """Text with one layer of escapes decoded, and the way back to the characters that spelled each."""

    def __init__(self, text: str, pattern: re.Pattern[str], csi: str = "") -> None:
        pieces: list[str] = []
        # (decoded start, decoded end, raw start, raw end) of each decoded escape, in order.
        self.segments: list[tuple[int, int, int, int]] = []
        last = out = 0
        for match in pattern.finditer(text):
            group = match.lastgroup
            if group == "csi":
                decoded = csi
            elif group == "entity":
                decoded = html.unescape(match.group())
                if decoded == match.group():
                    continue  # not a character reference: text as written
            elif group == "u":
                decoded = chr(int(match.group("u"), 16))
            elif group == "c":
                decoded = _CONTROL[match.group("c")]
            else:
                decoded = match.group("p")
            start, end = match.span()
            pieces.append(text[last:start])
            out += start - last
            self.segments.append((out, out + len(decoded), start, end))
            pieces.append(decoded)
            out += len(decoded)
            last = end
        pieces.append(text[last:])
        self.text = "".join(pieces)
        self.starts = [segment[0] for segment in self.segments]

    def spelled(self, start: int, end: int) -> tuple[int, int]:
        """Map a span of the decoded text to the span of the text that spells it (escapes whole)."""
        return self._char(start)[0], self._char(end - 1)[1]

    def _char(self, position: int) -> tuple[int, int]:
        index = bisect_right(self.starts, position) - 1
        if index < 0:
            return position, position + 1
        out_start, out_end, raw_start, raw_end = self.segments[index]
        if position < out_end:
            return raw_start, raw_end  # a character an escape decoded to
        raw = raw_end + position - out_end
        return raw, raw + 1


# --- Private keys -----------------------------------------------------------------------

_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
MAX_KEY_CHARS = 24_000  # a 16,384-bit RSA key with a 10-character prefix on each of its lines
# What may precede a key's line: a Read tool's `    12→` (or `\t`), grep's `path:12:` /
# `path-13-`, ripgrep's `13-`, then diff signs, comment marks and quotes. Possessive
# quantifiers (`*+`) never give back what they took, so a hostile line costs linear time.
_PREFIX = r"[ \t]*+(?:\d++(?:→|\t)|[^\n]{0,256}?[:\-]\d++[:\-]|\d++[:\-])?[ \t]*+[-+>#*;/\"'`]*+[ \t]*+"
_NEUTRAL_LINE = re.compile(_PREFIX + r"(?:(?:Proc-Type|DEK-Info|Comment|Version):[^\n]*+)?[ \t\r]*+")
_BODY_LINE = re.compile(_PREFIX + r"(?P<run>[A-Za-z0-9+/]++={0,2}+)[^A-Za-z0-9+/=\n]*+")
_BODY_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
MAX_BODY_LINE = 512  # longer lines are judged by their runs of key text only


def _key_end(text: str, start: int) -> int:
    """Return where a private key whose BEGIN line ends at `start` ends.

    At its END line when one follows before another BEGIN line and any markup (`<`); else at the
    last key text of the lines that follow: lines of base64 after any line prefix, with blank
    lines and PEM headers between them. Markup ends the walk, so masking a built page never
    removes a tag.
    """
    limit = min(len(text), start + MAX_KEY_CHARS)
    following = text.find("-----BEGIN ", start, limit)
    limit = following if following >= 0 else limit
    found = _KEY_END.search(text, start, limit)
    if found is not None and "<" not in text[start : found.start()]:
        return found.end()
    end = position = start
    while position <= len(text):
        newline = text.find("\n", position)
        line_end = len(text) if newline < 0 else newline
        line = text[position:line_end]
        tag = line.find("<")
        if tag >= 0:
            line = line[:tag]
        if "-----BEGIN " in line:
            break
        body = _BODY_LINE.fullmatch(line) if len(line) <= MAX_BODY_LINE else None
        if body is not None:
            end = position + body.end("run")  # a line of key text, however short (a key's last line)
        elif (runs := list(_BODY_RUN.finditer(line))):
            end = position + runs[-1].end()
        elif not _NEUTRAL_LINE.fullmatch(line):
            break
        if tag >= 0 or newline < 0:
            break
        position = newline + 1
    return end


# --- Finding and masking ------------------------------------------------------------------

Span = tuple[int, int, str]  # start, end, kind


def _find(text: str) -> list[Span]:
    """Return the spans to mask in decoded text, left to right, never overlapping."""
    found: list[Span] = []
    position = 0
    while (match := _COMBINED.search(text, position)) is not None:
        group = match.lastgroup
        assert group is not None
        kind, value_group = _GROUPS[group]
        if kind == "private-key":
            start, end = match.start(), _key_end(text, match.end())
        elif value_group is None:
            start, end = match.span()
        else:
            start, end = match.span(value_group)
            shaped = _SHAPED.fullmatch(match.group(value_group))
            if shaped is not None and shaped.lastgroup is not None:
                kind = PATTERNS[int(shaped.lastgroup[1:])][0]
        found.append((start, end, kind))
        position = max(end, match.end())
    return found


def _triggered(text: str) -> bool:
    lowered = text.lower()
    return any(trigger in lowered for trigger in _TRIGGERS)


def _spans(text: str) -> list[Span]:
    """Return the spans of raw `text` to mask: found in its decoded form, mapped back, merged."""
    if "&" not in text and "\\" not in text and "\x1b" not in text:
        return _find(text) if _triggered(text) else []
    hiding = any(pattern.search(text) for pattern in _HIDING_RES)
    if not hiding and not _triggered(text):
        return []  # no escape here can spell a trigger: decoding would find none either
    # HTML is the outer layer (a page shows JSON text as `\&#34;`), then backslash escapes, then
    # colour codes, each decoded only where the text holds one.
    outer = [_Decoded(text, _ENTITY_RE)] if "&" in text else []
    plain = outer[-1].text if outer else text
    # A colour code may join two halves of a key or part a key from the word before it.
    replacements = ("", " ") if any(start in plain for start in _CSI_STARTS) else ("",)
    spans: list[Span] = []
    for csi in replacements:
        layers = list(outer)
        decoded = plain
        for pattern, present in ((_BACKSLASH_RE, "\\"), (_RAW_CSI_RE, "\x1b")):
            if present in decoded:
                layers.append(_Decoded(decoded, pattern, csi))
                decoded = layers[-1].text
        if hiding and not _triggered(decoded):
            continue
        for start, end, kind in _find(decoded):
            for layer in reversed(layers):
                start, end = layer.spelled(start, end)
            spans.append((start, end, kind))
    merged: list[Span] = []
    for start, end, kind in sorted(spans, key=lambda span: span[0]):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, kind))
    return merged


_Key = TypeVar("_Key")


class Redactor:
    """Mask credential shapes and count the masks by kind (never what they masked)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def text(self, text: str) -> str:
        """Return `text` with every credential shape replaced by its marker."""
        if not text:
            return text
        spans = _spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        last = 0
        for start, end, kind in spans:
            pieces += (text[last:start], marker(kind))
            self.counts[kind] += 1
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def optional(self, text: str | None) -> str | None:
        """Like `text`, passing None through."""
        return None if text is None else self.text(text)

    def keys(self, mapping: dict[str, _Key], merge: Callable[[_Key, _Key], _Key]) -> dict[str, _Key]:
        """Return `mapping` with its keys masked; keys that mask alike are merged with `merge`, in order."""
        masked: dict[str, _Key] = {}
        for key, value in mapping.items():
            name = self.text(key)
            masked[name] = merge(masked[name], value) if name in masked else value
        return masked

    def file(self, rel: str, data: bytes) -> bytes:
        """Mask a file of a built site: every UTF-8 text file (HTML, SVG, JSON…); other files are returned as they are."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data  # an image or other binary file: no text of the transcripts
        masked = self.text(text)
        return data if masked is text else masked.encode("utf-8")

    def report(self) -> dict[str, int]:
        """Return the number of masks of every kind, zeros included, in a fixed order."""
        return {kind: self.counts.get(kind, 0) for kind in sorted(KINDS)}

    def messages(self, messages: Iterable[Message]) -> None:
        """Mask the text of transcript messages in place: blocks, tool names, model ids, subtypes (images are left alone)."""
        for message in messages:
            message.model = self.optional(message.model)
            message.subtype = self.optional(message.subtype)
            for block in message.blocks:
                if block.kind != "image" and block.text:
                    block.text = self.text(block.text)
                block.name = self.optional(block.name)

    def view(self, view: SessionView) -> None:
        """Mask, in place, every free text of a session's view that its pages and JSON show.

        Identifiers that name files and links (session and agent ids, the project folder) are
        not masked: they are checked against strict patterns when read.
        """
        view.title = self.optional(view.title)
        view.cwd = self.optional(view.cwd)
        view.git_branch = self.optional(view.git_branch)
        view.versions = [self.text(version) for version in view.versions]
        view.excluded_reason = self.optional(view.excluded_reason)
        view.prompts = [self.text(prompt) for prompt in view.prompts]
        for entry in (*view.warnings, *view.line_errors):
            entry["message"] = self.text(entry["message"])
        for entry in view.line_errors:
            entry["file"] = self.text(entry["file"])
        view.graph_problems = [self.text(problem) for problem in view.graph_problems]
        view.unknown_types = self.keys(view.unknown_types, _add)
        view.by_model = self.keys(view.by_model, _add_pairs)
        view.what_if = [replace(w, source=self.text(w.source), target=self.text(w.target)) for w in view.what_if]
        view.under_reported = self._under_reported(view.under_reported)
        for compaction in view.compactions:
            compaction.trigger = self.optional(compaction.trigger)
        view.context = [replace(point, model=self.text(point.model)) for point in view.context]
        view.tools = [replace(stats, name=self.text(stats.name)) for stats in view.tools]
        for agent in view.agents:
            agent.description = self.optional(agent.description)
            agent.agent_type = self.optional(agent.agent_type)
            agent.outcome_cause = self.optional(agent.outcome_cause)
            agent.notification_status = self.optional(agent.notification_status)
            agent.tools = [replace(stats, name=self.text(stats.name)) for stats in agent.tools]

    def _under_reported(self, under: dict[str, Any]) -> dict[str, Any]:
        versions = under.get("versions")
        return {**under, "versions": [self.text(v) for v in versions]} if isinstance(versions, list) else under

    def model(self, model: SiteModel) -> None:
        """Mask, in place, every free text of a gathered model that the index, project pages and report show.

        The model is assembled anew by every build from the cache, which keeps the original
        text. A session's texts are counted with its view (`view`), as its pages load it, so
        the copies in summaries and project names are masked here without being counted again.
        """
        copies = Redactor()
        for session in model.sessions.values():
            session.title = copies.optional(session.title)
            session.cwd = copies.optional(session.cwd)
            session.prompts = [copies.text(prompt) for prompt in session.prompts]
            session.excluded_reason = copies.optional(session.excluded_reason)
            session.by_model = copies.keys(session.by_model, _add_pairs)
            session.under_reported = copies._under_reported(session.under_reported)
            session.tool_calls = copies.keys(session.tool_calls, lambda a, b: [a[0] + b[0], a[1] + b[1]])
        for project in model.projects:
            project.display_name = copies.text(project.display_name)
            project.by_model = copies.keys(project.by_model, _add_pairs)
        model.by_model = copies.keys(model.by_model, _add_pairs)
        usage = model.usage
        for window in (*usage.blocks, *usage.days, *usage.weeks, *usage.months):
            window.model_tokens = copies.keys(window.model_tokens, _add)
        model.unpriced_models = copies.keys(model.unpriced_models, lambda a, b: sorted(a + b))
        model.unknown_spend = [copies.text(line) for line in model.unknown_spend]
        model.under_reported = copies._under_reported(model.under_reported)
        # Shown once, site-wide: counted here.
        for failure in model.failures:
            failure.reason = self.text(failure.reason)
        # A skipped file's path is a file name from the corpus: shown, never used as a link.
        model.skips = [replace(skip, path=self.text(skip.path), detail=self.text(skip.detail)) for skip in model.skips]
        model.hook_events = self.keys(model.hook_events, _add)


def _add(a: Any, b: Any) -> Any:
    return a + b


def _add_pairs(a: tuple[Any, Decimal], b: tuple[Any, Decimal]) -> tuple[Any, Decimal]:
    """Add two (tokens, cost) pairs."""
    return (a[0] + b[0], a[1] + b[1])
