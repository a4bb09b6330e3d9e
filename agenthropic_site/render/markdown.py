"""Markdown to HTML with raw HTML disabled: transcript text is data, never markup."""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    # A bare MarkdownIt() is the commonmark preset, which passes raw HTML through; js-default with
    # html off escapes it, and keeps markdown-it's validateLink (no javascript:, vbscript:, file:, data: links).
    return MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})


def render_markdown(text: str) -> str:
    """Render Markdown text to safe HTML."""
    return _renderer().render(text)
