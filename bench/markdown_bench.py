"""Time Markdown renderers on the texts the site renders, and count where each one's HTML differs from today's.

Usage: python bench/markdown_bench.py [CORPUS ...] [--diffs N] [--whole] [--random N]

With no corpus, fixtures/corpus and (when it is set) each folder of $AGENTHROPIC_SHARED_DIR/corpora are
measured. The texts are those the site renders as Markdown: the "text" blocks and string contents of
user and assistant lines (meta and compact-summary lines left out), cut as the parser cuts them and split
as a long text's preview is split; each distinct text is rendered once (the site memoises by text).
--whole also compares every text uncut and unsplit, --random N as many made-up Markdown texts (not timed).

"Reference" is markdown-it-py with the site's link and image rules, with its memo bypassed; the site
renders with it the texts render/markdown.py's `plain_paragraphs` does not write itself (the first
candidate: the site's renderer, memo bypassed; the texts that function takes are counted). Every
candidate is timed in the same process, one run, and compared byte for byte with the reference
("failed": the engine raised, as markdown-it-pyrs panics on some texts). "markdown-it-pyrs + site
rules" is the adapter below (its HTML rewritten to the site's rules and to markdown-it-py's output). The
other candidates are measured bare: none of them gives markdown-it's HTML. Candidates are not project
dependencies: install them into the venv to measure them (pip install markdown-it-pyrs cmarkgfm comrak
pyromark mistune); one that is not installed is reported and skipped.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agenthropic_site.parse.messages import _cut  # noqa: E402
from agenthropic_site.render.formats import PREVIEW_CHARS  # noqa: E402
from agenthropic_site.render.fragments import _split_markdown  # noqa: E402
from agenthropic_site.render.markdown import OTHER, REPOSITORY, SHOWN_URL_CHARS, WEB, link_kind  # noqa: E402
from markdown_it.common.utils import escapeHtml  # noqa: E402


def default_corpora() -> list[Path]:
    """The demo corpus, and every folder of $AGENTHROPIC_SHARED_DIR/corpora when it is set."""
    found = [REPO / "fixtures" / "corpus"]
    shared = os.environ.get("AGENTHROPIC_SHARED_DIR")
    if shared and (Path(shared) / "corpora").is_dir():
        found += sorted(path for path in (Path(shared) / "corpora").iterdir() if path.is_dir())
    return found


def texts_of_line(data: object) -> Iterable[str]:
    if not isinstance(data, dict) or data.get("type") not in ("user", "assistant"):
        return
    if data.get("isMeta") is True or data.get("isCompactSummary") is True:
        return
    message = data.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                yield item["text"]


def raw_texts(corpus: Path) -> list[str]:
    texts: list[str] = []
    for path in sorted(corpus.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                data = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            texts.extend(texts_of_line(data))
    return texts


def rendered_pieces(text: str) -> list[str]:
    """The strings the site hands to render_markdown for one text block (fragments.long_text)."""
    stored, _ = _cut(text)
    if len(stored) <= PREVIEW_CHARS:
        return [stored]
    return list(_split_markdown(stored, PREVIEW_CHARS))


# --- the markdown-it-pyrs adapter -----------------------------------------------------------------
# Measured for issue 18, not used by the site (docs/benchmarks.md "Markdown rendering" says why):
# markdown-it-pyrs with markdown-it's default rules, its HTML rewritten to the site's link and image
# rules and to markdown-it-py's output where the two engines part on the corpora's texts.

# js-default's rules, named one by one on the "zero" preset: pyrs's "commonmark" preset has html_block
# and html_inline on, which would pass raw HTML through.
PYRS_RULES = (
    "blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph", "reference",
    "autolink", "backticks", "emphasis", "entity", "escape", "image", "link", "newline", "strikethrough", "table",
)
# A line that opens a block 100 levels deep starts with its containers' markers and indentation, at
# least 25 characters (a tab is up to four columns of list indentation): a text with a line that starts
# with 24 such characters, a marker among them, goes to markdown-it-py.
# Inline nesting (an image in an image's text, a link's label) costs an open "[" a level: markdown-it-py
# stops at 100 levels, so a text with "[" this deep goes to markdown-it-py as well. The count ignores
# code spans and escapes, so a made-up text can slip past: the two engines then part only in how its
# deepest levels read (pyrs's inline parsing does not recurse on the stack: no overflow there).
DEEP_BRACKETS = 90
BRACKET_RE = re.compile(r"[\[\]]")
DEEP_LINE_RE = re.compile(r"^(?=[ \t>*+\-0-9.)]{24})[ \t]*[>*+\-0-9]", re.MULTILINE)
# Every "<a"/"<img" in pyrs's HTML is its own tag (text and code are escaped); values are escapeHtml'd.
TAG_RE = re.compile(r'<a href="([^"]*)"(?: title="[^"]*")?>|</a>|<img src="([^"]*)" alt="([^"]*)"(?: title="[^"]*")?>')
# markdown-it-py's fence rule writes no line break between a tight list item's text and its <pre>;
# pyrs does. What ends inline text here is a character that is not ">" (text escapes it) or an inline tag.
TIGHT_FENCE_RE = re.compile(r"(</code>|</strong>|</em>|</s>|</a>|<img [^>]*>|[^>])\n<pre>")
LINE_BREAK_RE = re.compile(r"\r\n?|\n")
# HTML that ends with a code block (and the closing tags of the blocks around it).
ENDS_IN_CODE_RE = re.compile(r"\n</code></pre>\n(?:</li>\n|</ul>\n|</ol>\n|</blockquote>\n)*\Z")


def _deep(text: str) -> bool:
    """Tell whether a text could nest 100 levels deep, where markdown-it-py stops and markdown-it-pyrs does not."""
    if text.count("[") >= DEEP_BRACKETS:
        depth = deepest = 0
        for bracket in BRACKET_RE.findall(text):
            depth = depth + 1 if bracket == "[" else max(depth - 1, 0)
            deepest = max(deepest, depth)
        if deepest >= DEEP_BRACKETS:
            return True
    return DEEP_LINE_RE.search(text) is not None


def _unescape(value: str) -> str:
    # The inverse of escapeHtml, which is all that pyrs applies to an attribute value.
    return value.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _shown_url(url: str) -> str:
    return url[:SHOWN_URL_CHARS] + "…" if len(url) > SHOWN_URL_CHARS else url


def _site_tags(html: str) -> str:
    """Apply the site's link and image rules to pyrs's HTML, as _link_open, _link_close and _image do."""
    pending = [OTHER]  # the kind of the last link opened and not yet closed, as _matching_close marks it

    def swap(match: re.Match[str]) -> str:
        tag = match.group(0)
        if tag == "</a>":
            kind, pending[0] = pending[0], OTHER
            return tag if kind == WEB else "</code>" if kind == REPOSITORY else ""
        if match.group(1) is not None:
            kind = pending[0] = link_kind(_unescape(match.group(1)))
            return tag[:-1] + ' rel="noopener noreferrer">' if kind == WEB else "<code>" if kind == REPOSITORY else ""
        url = escapeHtml(_shown_url(_unescape(match.group(2))))
        return f'<span class="md-image">[image: {match.group(3)}] <code>{url}</code></span>'

    return TAG_RE.sub(swap, html)


def _open_fence_at_end(md: Any, text: str) -> bool:
    """Tell whether the text's last block is a fence left open, its last line ending the text with no line break."""
    last = None
    for node in md.tree(text).walk():
        if node.name in ("fence", "code_block"):
            last = node
    if last is None or last.name != "fence" or last.srcmap is None:
        return False
    data = text.encode()
    start, end = last.srcmap  # byte offsets into the text as given
    if end < len(data):
        return False
    breaks = len(LINE_BREAK_RE.findall(data[start:end].decode(errors="replace")))
    # A fence is its opening line, a line per line of content and, when closed, the closing line.
    return breaks + 1 == 1 + str(last.meta.get("content", "")).count("\n")


@lru_cache(maxsize=1)
def _pyrs() -> Callable[[str], str] | None:
    try:
        import markdown_it_pyrs
    except ImportError:
        return None
    rules: list[Any] = list(PYRS_RULES)  # the stubs name each rule as a Literal
    md = markdown_it_pyrs.MarkdownIt("zero").enable_many(rules)

    def render(text: str) -> str:
        html: str = md.render(text, xhtml=False)
        if "\n<pre>" in html:
            html = TIGHT_FENCE_RE.sub(r"\1<pre>", html)
        # A fence left open at the end: markdown-it-py keeps no line break after its last line when the
        # text has none there; pyrs always adds one.
        if not text.endswith(("\n", "\r")) and ENDS_IN_CODE_RE.search(html) and _open_fence_at_end(md, text):
            cut = html.rindex("\n</code></pre>\n")
            html = html[:cut] + html[cut + 1:]
        if "<a " in html or "<img " in html:
            html = _site_tags(html)
        return html

    return render



# --- candidates ----------------------------------------------------------------------------------


def optional(name: str) -> Any:
    """Import a candidate that may not be installed (ImportError then: the candidate is skipped)."""
    return importlib.import_module(name)


def reference() -> Callable[[str], str]:
    from agenthropic_site.render import markdown

    return markdown._renderer().render  # markdown-it-py + the site's rules, memo bypassed


def plain_first() -> Callable[[str], str]:
    from agenthropic_site.render import markdown

    md = markdown._renderer()
    return lambda text: markdown.plain_paragraphs(text) or md.render(text)  # the site's renderer, memo bypassed


def pyrs_plain() -> Callable[[str], str]:
    md = optional("markdown_it_pyrs").MarkdownIt("zero").enable_many(list(PYRS_RULES))
    return lambda text: md.render(text, xhtml=False)


def pyrs_adapted() -> Callable[[str], str]:
    fast = _pyrs()
    if fast is None:
        raise ImportError("markdown_it_pyrs", name="markdown_it_pyrs")
    return fast


def cmarkgfm_safe() -> Callable[[str], str]:
    cmarkgfm = optional("cmarkgfm")
    Options = optional("cmarkgfm.cmark").Options

    # Safe mode (the default) drops raw HTML (an "<!-- raw HTML omitted -->" comment) and unsafe link schemes.
    return lambda text: cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_DEFAULT)


def comrak_escape() -> Callable[[str], str]:
    comrak = optional("comrak")
    extension, parse, render = comrak.ExtensionOptions(), comrak.ParseOptions(), comrak.RenderOptions()
    extension.table = True
    extension.strikethrough = True
    render.escape = True  # raw HTML escaped as text, like html=False in markdown-it
    return lambda text: comrak.render_markdown(text, extension_options=extension, parse_options=parse, render_options=render)


def pyromark_plain() -> Callable[[str], str]:
    pyromark = optional("pyromark")
    # pulldown-cmark has no "escape raw HTML" switch: its Html events pass through. Measured for speed only.
    options = pyromark.Options.ENABLE_TABLES | pyromark.Options.ENABLE_STRIKETHROUGH
    return lambda text: pyromark.html(text, options=options)


def mistune_escape() -> Callable[[str], str]:
    render: Callable[[str], str] = optional("mistune").create_markdown(escape=True, plugins=["table", "strikethrough"])
    return render


CANDIDATES: dict[str, Callable[[], Callable[[str], str]]] = {
    "plain paragraphs, else the reference (site)": plain_first,
    "markdown-it-pyrs + site rules, no fallback": pyrs_adapted,
    "markdown-it-pyrs bare (no site rules)": pyrs_plain,
    "cmarkgfm (safe: drops raw HTML)": cmarkgfm_safe,
    "comrak (escape raw HTML)": comrak_escape,
    "pyromark (passes raw HTML: unsafe)": pyromark_plain,
    "mistune (escape=True)": mistune_escape,
}


# --- measuring -----------------------------------------------------------------------------------

WARM_UP = 50  # texts rendered before the clock starts: imports, compiled patterns and small caches warm up
# Made-up Markdown for --random: each text joins up to 30 of these, drawn with a fixed seed.
PIECES = ["\n", "\n\n", " ", "    ", "\t", "a", "é", "😀", "✅", "\u00a0", "-", "- ", "1. ", "> ", "#", "```", "~~~", "`", "*", "_", "~~",
          "[", "]", "(", ")", "![", "](", "<", ">", "&", "&#65;", "\\", "|", "| a | b |\n|---|:-:|\n", "---", "https://e.example/x",
          "<https://a.example>", "javascript:alert(1)", "src/a.py", '"t"', "[r]: /u\n", "[r]", "<script>", "</div>", "\r\n", "\x00"]


def guarded(render: Callable[[str], str]) -> Callable[[str], str]:
    """A renderer that returns "<failed: ...>" where the engine raises (markdown-it-pyrs panics on some texts)."""

    def call(text: str) -> str:
        try:
            return render(text)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # pyo3's PanicException is a BaseException
            return f"<failed: {type(error).__name__}: {error}>"

    return call


def timed(render: Callable[[str], str], texts: list[str]) -> tuple[list[str], float]:
    for text in texts[:WARM_UP]:
        render(text)
    gc.collect()
    started = time.perf_counter()
    out = [render(text) for text in texts]
    return out, time.perf_counter() - started


def failures(differ: list[tuple[str, str, str]]) -> int:
    return sum(got.startswith("<failed: ") for _, _, got in differ)


def made_up(count: int) -> list[str]:
    rng = random.Random(20260601)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30))) for _ in range(count)]


def show_diff(text: str, want: str, got: str) -> None:
    print(f"    --- text ({len(text)} chars): {text[:160]!r}")
    lines = difflib.unified_diff(want.splitlines(), got.splitlines(), "reference", "candidate", lineterm="", n=0)
    for number, line in enumerate(lines):
        if number >= 12:
            print("    ...")
            break
        print("    " + line[:200])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="*", type=Path, help="corpus folders (default: fixtures/corpus and each shared corpus)")
    parser.add_argument("--diffs", type=int, default=3, help="differences to print per candidate (default 3)")
    parser.add_argument("--whole", action="store_true", help="also compare every text uncut and unsplit (not timed)")
    parser.add_argument("--random", type=int, default=0, metavar="N", help="also compare N made-up Markdown texts (not timed)")
    args = parser.parse_args()

    corpora = args.corpora or default_corpora()
    raw: list[str] = []
    for corpus in corpora:
        found = raw_texts(corpus)
        print(f"{corpus}: {len(found):,} texts")
        raw += found
    texts = list(dict.fromkeys(piece for text in raw for piece in rendered_pieces(text)))
    size = sum(len(text.encode()) for text in texts)
    deep = [text for text in texts if _deep(text)]
    print(f"distinct rendered texts: {len(texts):,}, {size / 1e6:.2f} MB (UTF-8); "
          f"{len(deep)} of them ({sum(len(text.encode()) for text in deep) / 1e3:.1f} kB) possibly too deep for markdown-it-pyrs\n")

    from agenthropic_site.render.markdown import plain_paragraphs

    taken = [text for text in texts if plain_paragraphs(text) is not None]
    print(f"taken by plain_paragraphs: {len(taken):,} texts, {sum(len(text.encode()) for text in taken) / 1e6:.2f} MB\n")
    reference_render = reference()
    want, base = timed(reference_render, texts)
    sets = {"whole": list(dict.fromkeys(raw)) if args.whole else [], "made-up": made_up(args.random)}
    wanted = {name: [reference_render(text) for text in items] for name, items in sets.items()}
    head = f"{'renderer':44} {'seconds':>8} {'MB/s':>7} {'speed-up':>8} {'differ':>7} {'failed':>7}"
    head += "".join(f" {name:>8} {'failed':>7}" for name, items in sets.items() if items)
    print(head)
    print(f"{'reference: markdown-it-py + site rules':44} {base:8.3f} {size / 1e6 / base:7.2f} {1.0:7.2f}x {0:7} {0:7}"
          + "".join(f" {0:8} {0:7}" for items in sets.values() if items))
    differences: dict[str, list[tuple[str, str, str]]] = {}
    for name, make in CANDIDATES.items():
        try:
            render = guarded(make())
        except ImportError as error:
            print(f"{name:44} not installed ({error.name or error})")
            continue
        got, seconds = timed(render, texts)
        differ = [(text, a, b) for text, a, b in zip(texts, want, got) if a != b]
        line = f"{name:44} {seconds:8.3f} {size / 1e6 / seconds:7.2f} {base / seconds:7.2f}x {len(differ):7} {failures(differ):7}"
        for set_name, items in sets.items():
            if items:
                parted = [(text, a, b) for text, a, b in zip(items, wanted[set_name], map(render, items)) if a != b]
                line += f" {len(parted):8} {failures(parted):7}"
                differ += parted
        differences[name] = differ
        print(line)
    print("\ndiffer/failed: of the timed texts" + "".join(f"; {name}: of {len(items):,} {name} texts (not timed)" for name, items in sets.items() if items))
    for name, differ in differences.items():
        if differ and args.diffs:
            print(f"\n== {name}: {len(differ)} differ; the first {min(args.diffs, len(differ))}:")
            for text, a, b in differ[: args.diffs]:
                show_diff(text, a, b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
