"""Make untrusted text safe to print to a terminal: control and bidirectional characters shown, never obeyed; say it a line at a time."""

from __future__ import annotations

import codecs
import re
import sys

# C0 controls (ESC and CR among them), DEL, C1 controls (U+009B is an 8-bit CSI) and lone
# surrogates. A file name the OS could not decode reaches Python as U+DC80–U+DCFF
# (surrogateescape): those are shown as the byte they stand for. And the characters that reorder
# or hide text where a terminal applies the bidirectional algorithm ("Trojan Source",
# CVE-2021-42574): the Arabic letter mark, zero-width spaces and joiners, the marks, embeddings,
# overrides and isolates, the line and paragraph separators, the byte-order mark.
REORDERING = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"  # as a regular expression's class ranges
_UNSAFE_RE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{REORDERING}\\ud800-\\udfff]")
# JSON leaves DEL and C1 controls (U+009B is an 8-bit CSI) and those characters raw; they can
# only stand inside its strings, where \uNNNN reads back as the same character.
_RAW_IN_JSON_RE = re.compile(f"[\\x7f-\\x9f{REORDERING}]")
# Written where standard output cannot hold every character (a non-UTF-8 locale): the escape
# reads back as the same character, where Python's own "\\U0001f600" would not be JSON.
_PAST_ASCII_RE = re.compile("[\\x7f-\\U0010ffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """Return `text` with control, bidirectional and invisible format characters and lone surrogates written as \\xNN or \\uNNNN."""
    return _UNSAFE_RE.sub(_escape, text)


def printable_json(text: str, ascii_only: bool = False) -> str:
    """Return JSON text with DEL, C1 controls and the characters that reorder or hide text (with `ascii_only`, every
    character past ASCII) written as \\uNNNN escapes (JSON escapes C0 itself)."""
    return (_PAST_ASCII_RE if ascii_only else _RAW_IN_JSON_RE).sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON writes a character past the first plane as its UTF-16 pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def stdout_is_unicode() -> bool:
    """Tell whether standard output's encoding holds every character (UTF-8, UTF-16 or UTF-32)."""
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        return codecs.lookup(encoding).name.startswith("utf-")
    except LookupError:
        return False


def say(line: str) -> None:
    """Write one line to the current stderr in one piece: a build's worker processes share it, and print() writes the newline apart."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


__all__ = ["printable", "printable_json", "say", "stdout_is_unicode"]
