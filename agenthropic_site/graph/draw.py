"""Draw a session's agent tree to SVG with Graphviz `dot`; stable bytes, escaped labels."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable

from agenthropic_site.parse.model import INFERRED_SOURCES
from agenthropic_site.records import record_class

log = logging.getLogger(__name__)

_COMMENT_RE = re.compile(rb"<!--.*?-->\s*", re.S)
_PAGE_ID_RE = re.compile(rb'id="page\d+,\d+_graph0"')
SVG_BATCH = 64
DOT_COMMAND = ("dot", "-Kdot", "-Tsvg")  # as the graphviz package ran it (DOT on stdin, SVG on stdout)


class DrawError(Exception):
    """Raise when `dot` ran and failed: the graph is shown another way."""
# Graphviz 2.42 writes URL attributes into SVG without escaping quotes: only plain relative
# paths made of validated ids may reach it.
SAFE_HREF_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._/-]{0,300}$")
# Characters that are not allowed in XML (controls, surrogates, U+FFFE/U+FFFF) or that reorder the
# text around them (bidirectional overrides and isolates): shown as U+FFFD instead.
_UNSHOWABLE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")
# DOT ids that need no quotes, and the words that do (as the graphviz package's quoting has them).
_DOT_ID_RE = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?))$")
_DOT_KEYWORDS = frozenset({"strict", "graph", "digraph", "node", "edge", "subgraph"})
_UNESCAPED_QUOTE_RE = re.compile(r'(?<!\\)(?P<backslashes>(?:\\\\)*)"')
STATUS_COLOURS = {"completed": "#2e7d32", "error": "#c62828", "working": "#1565c0", "waiting": "#6a1b9a", "unknown": "#757575"}


@record_class(frozen=True)
class DrawNode:
    """What a node shows: an id for the link, a label (lines split by newlines), a status colour, a hover text."""

    agent_id: str
    label: str
    status: str
    href: str
    critical: bool = False  # on the longest chain of durations: drawn heavier
    tooltip: str = ""  # empty: the label


@record_class(frozen=True)
class DrawEdge:
    """A link between two drawn agents and the evidence it came from (inferred evidence is drawn dashed, never named)."""

    parent: str
    child: str
    source: str
    critical: bool = False


def dot_text(text: str) -> str:
    """Return text as a DOT string Graphviz shows as written: one line per newline, nothing read as markup."""
    # `&` first: Graphviz decodes entities in labels and tooltips, and `&#1;` would put a control
    # character into the SVG; `&amp;` it keeps as is, which the browser shows as `&`.
    text = _UNSHOWABLE_RE.sub("\ufffd", text.replace("\r\n", "\n").replace("&", "&amp;"))
    # Backslashes doubled (no `\N`, `\l` or line continuation), as graphviz.escape does; lines are
    # joined with DOT's own `\n` after that, so it stays a line break. Quoted by _quote, never read as
    # an HTML-like label (those are written <...> without quotes).
    return "\\n".join(line.replace("\\", "\\\\") for line in text.split("\n"))


def _quote(value: str) -> str:
    """Write a DOT value as the graphviz package does: bare when it is a plain id or number, else in quotes."""
    if _DOT_ID_RE.match(value) and value.lower() not in _DOT_KEYWORDS:
        return value
    return '"' + _UNESCAPED_QUOTE_RE.sub(lambda found: found["backslashes"] + '\\"', value) + '"'


def _attributes(first: dict[str, str], rest: dict[str, str]) -> str:
    return " ".join(f"{key}={_quote(value)}" for key, value in [*first.items(), *sorted(rest.items())])


def dot_source(nodes: list[DrawNode], edges: list[DrawEdge]) -> str:
    """Return the DOT text for an agent tree; every data label is escaped for Graphviz.

    Written here rather than through graphviz.Digraph, in the very form that class writes: its
    per-call argument checks took a tenth of a small site's build.
    """
    lines = [
        "digraph agents {",
        "\tgraph [" + _attributes({}, {"rankdir": "LR", "bgcolor": "transparent", "fontname": "Helvetica"}) + "]",
        "\tnode [" + _attributes({}, {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff", "fontname": "Helvetica",
                                       "fontsize": "10"}) + "]",
        "\tedge [" + _attributes({}, {"color": "#607d8b"}) + "]",
    ]
    ids = {node.agent_id: f"n{index}" for index, node in enumerate(nodes)}
    for node in nodes:
        attributes = _attributes({"label": dot_text(node.label)}, {
            "color": STATUS_COLOURS.get(node.status, "#757575"),
            "penwidth": "4" if node.critical else "1.5",
            "URL": node.href if SAFE_HREF_RE.match(node.href) and ".." not in node.href else "#",
            "tooltip": dot_text(node.tooltip or node.label),
        })
        lines.append(f"\t{ids[node.agent_id]} [{attributes}]")
    for edge in edges:
        if edge.parent in ids and edge.child in ids:
            # No edge label: the evidence is said in plain words in the child's tooltip and page.
            attributes = _attributes({}, {
                "style": "dashed" if edge.source in INFERRED_SOURCES else "solid",
                "penwidth": "3" if edge.critical else "1", "color": "#b4541e" if edge.critical else "#607d8b",
            })
            lines.append(f"\t{ids[edge.parent]} -> {ids[edge.child]} [{attributes}]")
    return "\n".join(lines) + "\n}\n"


def dot_digest(source: str) -> str:
    """Return the cache key of a DOT source."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def render_svg(source: str, cached: Callable[[str], bytes | None], store: Callable[[str, bytes], None]) -> bytes | None:
    """Return the SVG for a DOT source, from the cache or `dot`; None when `dot` is not installed."""
    digest = dot_digest(source)
    svg = cached(digest)
    if svg is not None:
        return svg
    raw = _dot(source.encode("utf-8"))
    if raw is None:
        return None
    svg = _clean(raw)
    store(digest, svg)
    return svg


def _dot(source: bytes) -> bytes | None:
    """Run `dot` on DOT text and return its SVG; None when it cannot be run, DrawError when it fails.

    Run directly (no graphviz package to import: a build that draws one graph saves its import).
    What `dot` says on stderr (warnings about a large graph) is shown with -v.
    """
    import subprocess  # here: a build whose graphs are all drawn already never loads it

    try:
        done = subprocess.run(DOT_COMMAND, input=source, capture_output=True, check=False)
    except OSError:
        return None  # not installed, or not runnable
    if done.stderr:
        log.debug(f"dot: {done.stderr.decode('utf-8', 'replace').strip()[:500]}")
    if done.returncode != 0:
        raise DrawError(f"`dot` exited with {done.returncode}")
    return done.stdout


def _clean(raw: bytes) -> bytes:
    # Graphviz writes its version in a comment: drop comments so output does not depend on it.
    svg = _COMMENT_RE.sub(b"", raw)
    # Several graphs drawn by one `dot` name their groups page0,N_graph0: make it the single form.
    svg = _PAGE_ID_RE.sub(b'id="graph0"', svg)
    start = svg.find(b"<svg")
    return svg[start:] if start >= 0 else svg


def uncached_sources(sources: list[str], cached: Callable[[str], bytes | None]) -> list[tuple[str, str]]:
    """Return the (digest, DOT source) of every source no SVG is cached for, by digest."""
    return sorted({dot_digest(source): source for source in sources if cached(dot_digest(source)) is None}.items())


def prerender_svgs(todo: list[tuple[str, str]], store: Callable[[str, bytes], None]) -> None:
    """Draw uncached DOT sources (from `uncached_sources`) with one `dot` process per batch, filling the SVG cache.

    Starting `dot` costs tens of milliseconds; a cold build of many sessions pays it once per
    batch instead of once per graph. Anything not drawn here is drawn later, one by one.
    """
    for start in range(0, len(todo), SVG_BATCH):
        batch = todo[start : start + SVG_BATCH]
        try:
            raw = _dot("\n".join(source for _, source in batch).encode("utf-8"))
        except DrawError:
            return  # one graph of the batch failed: each is drawn on its own later
        if raw is None:
            return
        documents = raw.split(b"<?xml")[1:]
        if len(documents) != len(batch):
            return  # an unexpected shape: leave these to the one-by-one path
        for (digest, _), document in zip(batch, documents):
            store(digest, _clean(b"<?xml" + document))
