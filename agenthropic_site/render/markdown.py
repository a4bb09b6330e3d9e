"""Markdown to HTML with raw HTML disabled: transcript text is data, never markup."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # markdown-it loads when a text is first rendered (17 ms): a build that renders no new text,
    # such as an append of tool calls or hook events only, never loads it.
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import OptionsDict

# Texts up to this size are memoised: transcripts repeat prompts, reminders and replies a lot, and
# a bound on the size as well as the count keeps the cache's memory small.
CACHED_TEXT_CHARS = 8_192
CACHED_TEXTS = 1_024
# A Markdown image's URL is shown as text; a data: URL can be huge, so only its start is kept.
SHOWN_URL_CHARS = 200

SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
WEB = "web"  # an absolute http(s) link: stays a link
REPOSITORY = "repository"  # a relative path: a file of the user's repository, not of the site
OTHER = "other"  # mailto:, fragments, protocol-relative and any other scheme: plain text


def link_kind(href: str) -> str:
    """Tell what a link in a transcript points to: the web, the user's repository, or neither."""
    lowered = href.lower()
    if lowered.startswith(("http://", "https://")):
        return WEB
    if not href or href.startswith(("#", "//")) or SCHEME_RE.match(href):
        return OTHER
    return REPOSITORY


def _matching_close(tokens: Sequence[Token], idx: int) -> Token | None:
    # Links do not nest in CommonMark: the next link_close closes this one.
    for token in tokens[idx + 1:]:
        if token.type == "link_close":
            return token
    return None


def _link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    token = tokens[idx]
    kind = link_kind(str(token.attrGet("href") or ""))
    close = _matching_close(tokens, idx)
    if close is not None:
        close.meta["kind"] = kind
    if kind == WEB:
        token.attrSet("rel", "noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)
    return "<code>" if kind == REPOSITORY else ""


def _link_close(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    kind = tokens[idx].meta.get("kind", OTHER)
    if kind == WEB:
        return self.renderToken(tokens, idx, options, env)
    return "</code>" if kind == REPOSITORY else ""


def _plain_text(tokens: Sequence[Token]) -> str:
    """Return the text of inline tokens without their markup (an image's alt text)."""
    # renderInlineAsText of markdown-it-py 4.3, which earlier releases (pyproject allows 3.0) write
    # without code spans: `![a `c`](u)` would show as "a ".
    parts = []
    for token in tokens:
        if token.type in ("text", "code_inline", "html_inline", "html_block"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif token.type == "image":
            parts.append(_plain_text(token.children or []))
    return "".join(parts)


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any) -> str:
    # Images never load (the page would fetch from wherever the text says): show what it names.
    token = tokens[idx]
    alt = _plain_text(token.children or [])
    url = str(token.attrGet("src") or "")
    if len(url) > SHOWN_URL_CHARS:
        url = url[:SHOWN_URL_CHARS] + "…"
    from markdown_it.common.utils import escapeHtml  # loaded already: this runs inside a render

    return f'<span class="md-image">[image: {escapeHtml(alt)}] <code>{escapeHtml(url)}</code></span>'


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # A bare MarkdownIt() is the commonmark preset, which passes raw HTML through; js-default with
    # html off escapes it, and keeps markdown-it's validateLink (no javascript:, vbscript:, file:, data: links).
    md = MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    return md


@lru_cache(maxsize=CACHED_TEXTS)
def _cached(text: str) -> str:
    return _rendered(text)


def render_markdown(text: str) -> str:
    """Render Markdown text to safe HTML: web links keep `rel="noopener noreferrer"`, repository paths become code, images their text."""
    return _cached(text) if len(text) <= CACHED_TEXT_CHARS else _rendered(text)


# Outside code spans, a text `plain_paragraphs` renders holds none of the characters that open another
# construct or that markdown-it's normalisation rewrites: backslash escapes, entities, autolinks,
# links, emphasis, strikethrough, table cells; tabs, carriage returns and other control characters.
_OPENS_ANOTHER_RE = re.compile(r"[\\&<\[\]*_~|\x00-\x09\x0b-\x1f\x7f]")
_PARAGRAPH_BREAK_RE = re.compile(r"\n\n+")


def plain_paragraphs(text: str) -> str | None:
    """Render a text of plain paragraphs with `code` spans as markdown-it does; None for any other text (markdown-it renders it).

    Replies are mostly prose with inline code: these take a tenth of markdown-it's time. Covered:
    paragraphs apart by blank lines, each line beginning with a letter (no block construct
    begins with one: lists, headings, quotes, fences, rules and tables never start) and ending
    in no space (no hard break, nothing trimmed), code spans of single backticks (an unpaired last
    one is text; none of spaces around other white space only, where markdown-it-py's versions
    differ), and outside them no character in _OPENS_ANOTHER_RE. Every character is escaped
    as markdown-it escapes it: the only tags written are <p> and <code>.
    """
    if "\r" in text or "\x00" in text:
        return None  # markdown-it rewrites them first, in code spans too
    paragraphs = _PARAGRAPH_BREAK_RE.split(text.strip("\n"))
    html = []
    for paragraph in paragraphs:
        if not paragraph or "``" in paragraph:
            return None
        for line in paragraph.split("\n"):
            if not line[0].isalpha() or line[-1].isspace():
                return None
        pieces = paragraph.split("`")
        if len(pieces) % 2 == 0:  # an odd count of backticks: the last has no closer and stays text
            pieces[-2:] = [pieces[-2] + "`" + pieces[-1]]
        inline = []
        for number, piece in enumerate(pieces):
            if number % 2 == 0:
                if _OPENS_ANOTHER_RE.search(piece):
                    return None
            else:
                piece = piece.replace("\n", " ")
                if piece[:1] == " " and piece[-1:] == " " and piece.strip(" "):
                    if not piece.strip():
                        return None  # spaces around other white space only: markdown-it-py 3 keeps them, 4 strips them
                    piece = piece[1:-1]  # CommonMark strips one space from each side of a code span's content
            escaped = piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            inline.append(f"<code>{escaped}</code>" if number % 2 else escaped)
        html.append(f"<p>{''.join(inline)}</p>\n")
    return "".join(html)


# What renders a text in the build's process aside (pipeline/stamp.py kept_markdown), which imported
# markdown-it while the build read: a build that renders a few new texts never imports it itself.
_aside: list[Callable[[str], str | None]] = []


@contextmanager
def rendered_aside(render: Callable[[str], str | None] | None) -> Iterator[None]:
    """Have `render` render the texts (until it returns None, or this process has its own renderer) while the block runs."""
    _aside[:] = [] if render is None else [render]
    try:
        yield
    finally:
        _aside.clear()


def _rendered(text: str) -> str:
    html = plain_paragraphs(text)
    if html is not None:
        return html
    if _aside and not _renderer.cache_info().currsize:
        html = _aside[0](text)
        if html is not None:
            return html
        _aside.clear()  # it could not: every text from now on is rendered here
    return _renderer().render(text)


def serve(texts: Iterable[bytes], reply: Callable[[bytes], None]) -> None:
    """Reply to each text (UTF-8) with `=` and its HTML, or `!` when rendering it failed (in the build's process aside)."""
    md = _renderer()  # markdown-it is imported before the build asks for anything
    for text in texts:
        try:
            html = md.render(text.decode("utf-8", "surrogatepass"))
        except Exception:  # noqa: BLE001 - the build renders the text itself, and meets the problem there
            reply(b"!")
            continue
        reply(b"=" + html.encode("utf-8", "surrogatepass"))
