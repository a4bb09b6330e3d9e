"""The Markdown renderer on hostile input: raw HTML shown as text, only web links, images never load.

Each check runs on markdown-it-py with the site's rules (render/markdown.py's engine) and on
render_markdown itself (the memo in front of it).
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import markdown_it
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenthropic_site.render import markdown
from agenthropic_site.render.markdown import render_markdown

ENGINES: dict[str, Callable[[str], str]] = {"markdown-it-py": markdown._renderer().render, "render_markdown": render_markdown}

# What the renderer may write, and the attributes each tag may carry.
ALLOWED = {
    "p": set(), "em": set(), "strong": set(), "s": set(), "code": {"class"}, "pre": set(), "blockquote": set(), "br": set(), "hr": set(),
    "h1": set(), "h2": set(), "h3": set(), "h4": set(), "h5": set(), "h6": set(), "ul": set(), "ol": {"start"}, "li": set(),
    "table": set(), "thead": set(), "tbody": set(), "tr": set(), "th": {"style"}, "td": {"style"},
    "a": {"href", "title", "rel"}, "span": {"class"},
}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        raise AssertionError(f"a comment in the output: {data!r}")


def parsed(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    tags.close()
    return tags


def assert_safe(html: str) -> Tags:
    tags = parsed(html)
    for tag, attrs in tags.tags:
        assert tag in ALLOWED, (tag, html)
        assert set(attrs) <= ALLOWED[tag], (tag, attrs, html)
        assert not any(name.startswith("on") for name in attrs)
        if tag == "a":
            assert attrs["href"].lower().startswith(("http://", "https://")), html
            assert attrs["rel"] == "noopener noreferrer", html
        if tag == "code" and "class" in attrs:
            assert attrs["class"].startswith("language-")
        if tag == "span":
            assert attrs["class"] == "md-image"
        if tag in ("th", "td") and "style" in attrs:
            assert attrs["style"] in ("text-align:left", "text-align:right", "text-align:center")
    return tags


HOSTILE = [
    '<script>alert(1)</script>',
    '<img src=x onerror="alert(1)">',
    '<iframe src="https://evil.example"></iframe>',
    '<div style="position:fixed">x</div>\n\n<style>body{display:none}</style>',
    '<!-- a comment --> <?php echo 1; ?> <![CDATA[x]]>',
    '<a href="javascript:alert(1)">x</a>',
    '[click](javascript:alert(1)) [v](vbscript:msgbox) [d](data:text/html;base64,PHNjcmlwdD4=) [f](file:///etc/passwd)',
    '[JaVaScRiPt](JAVASCRIPT:alert(1)) [tab](java\tscript:alert(1)) [ent](&#106;avascript:alert(1))',
    '<javascript:alert(1)> <http://ok.example/"onmouseover="alert(1)>',
    '[x](https://e.example/"><script>alert(1)</script>) [y](<https://e.example/a b> "t\\"itle")',
    '![x](https://evil.example/track.png) ![y](data:image/png;base64,AAAA) ![z](javascript:alert(1))',
    '[![nested](https://evil.example/i.png)](https://ok.example)',
    '[a <https://inner.example> b](https://outer.example)',
    '[ref]\n\n[ref]: javascript:alert(1)\n\n[ok]\n\n[ok]: https://ok.example "T"',
    '```html\n<script>alert(1)</script>\n```\n\n    <img src=x onerror=alert(1)>',
    '```"><script>alert(1)</script>\nx\n```',
    '| <b>a</b> | b |\n|:-|-:|\n| <script>x</script> | [l](javascript:x) |',
    '- item <b>x</b>\n  ```\n  <script>\n  ```\n- [p](src/main.py)',
    '> <blockquote onmouseover=alert(1)>\n> > **<u>x</u>**',
    '&lt;script&gt; &#60;script&#62; &#x3C;img src=x&#x3E; \\<script>',
    'see [the `foo',  # markdown-it-pyrs 0.4 panics here (bench/markdown_bench.py measured it)
    '>' * 300 + ' deep',
    '- ' * 300 + 'deep',
    '![' * 150 + 'x' + '](u)' * 150,
    '\x00<script>\x00</script>\u2028<img\x0bsrc=x>',
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_markdown_renders_safe_html(engine: str, source: str) -> None:
    html = ENGINES[engine](source)
    assert_safe(html)
    assert "<script" not in html and "<img" not in html and "<iframe" not in html and "<style" not in html


@pytest.mark.parametrize("engine", ENGINES)
def test_raw_html_is_escaped_not_dropped(engine: str) -> None:
    source = '<script>alert(1)</script> and <img src=x onerror=alert(2)>'
    tags = assert_safe(ENGINES[engine](source))
    assert "".join(tags.text).strip() == source


@pytest.mark.parametrize("engine", ENGINES)
def test_web_links_keep_rel_and_other_links_are_not_links(engine: str) -> None:
    html = ENGINES[engine]('[w](https://example.com/a?b=1&c="2" "T") [r](src/a.py#L3) [m](mailto:a@b.example) [f](#top)')
    tags = assert_safe(html)
    links = [attrs for tag, attrs in tags.tags if tag == "a"]
    assert links == [{"href": "https://example.com/a?b=1&c=%222%22", "title": "T", "rel": "noopener noreferrer"}]
    assert "<code>r</code>" in html
    assert " m " in html and " f</p>" in html


@pytest.mark.parametrize("engine", ENGINES)
def test_images_show_their_text_and_a_cut_url(engine: str) -> None:
    url = "https://evil.example/" + "a" * 400
    html = ENGINES[engine](f"![a *b* `c`]({url} \"t\")")
    assert_safe(html)
    assert html == f'<p><span class="md-image">[image: a b c] <code>{url[:200]}…</code></span></p>\n'


@pytest.mark.skipif(tuple(int(part) for part in markdown_it.__version__.split(".")[:2]) < (4, 3),
                    reason="markdown-it-py before 4.3 writes alt text without code spans; the site's rule is the 4.3 one")
@settings(max_examples=300, deadline=None)
@given(alt=st.lists(st.sampled_from(["a", " ", "`c`", "*b*", "_d_", "**e**", "[f](g)", "![h](i)", "\n", "<x>", "&amp;", "\\", "``", "~~s~~"]),
                    max_size=12))
def test_image_alt_text_is_markdown_its_own(alt: list[str]) -> None:
    # The site's rule reads alt text itself (render/markdown.py `_plain_text`): it must be markdown-it's renderInlineAsText.
    text = f"![{''.join(alt)}](u)"
    tokens = markdown._renderer().parseInline(text)
    images = [child for token in tokens for child in token.children or [] if child.type == "image"]
    renderer = markdown._renderer().renderer
    assert images or any(mark in text[2:-4] for mark in "[]\\")  # brackets or an escape can make it no image
    for image in images:
        assert markdown._plain_text(image.children or []) == renderer.renderInlineAsText(image.children, {}, {})


PIECES = ["\n", "\n\n", " ", "    ", "\t", "a", "é", "😀", "-", "- ", "1. ", "> ", "#", "```", "~~~", "`", "*", "_", "~~", "[", "]", "(", ")",
          "![", "](", "<", ">", "&", "&#65;", "\\", "|", "| a | b |\n|---|:-:|\n", "---", "https://e.example/x", "<https://a.example>",
          "javascript:alert(1)", "src/a.py", '"t"', "[r]: /u\n", "[r]", "<script>", "<img src=x onerror=alert(1)>", "</div>", "<!-- c -->",
          "\r\n", "\x00"]


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(PIECES), max_size=30))
def test_any_markdown_renders_safe_html(engine: str, parts: list[str]) -> None:
    html = ENGINES[engine]("".join(parts))
    assert_safe(html)
    assert "<script" not in html and "<img" not in html


# Texts of plain paragraphs with code spans, which render/markdown.py renders without markdown-it,
# and texts one construct away from them, which it must leave to markdown-it.
COVERED = [
    "Plain words.",
    "Run `make test`, then `git status`.",
    "Two lines\nin one paragraph.",
    "First paragraph.\n\n\nSecond, with `a_b*c<d>&e|f~g[h]\\i`.",
    "An unpaired ` backtick stays text, as does a last `one.",
    "Spans keep ` one space ` less on each side, `  two  ` too, and `   ` when all are spaces.",
    'Quotes " and > are escaped, and \' is not; é, ß and 中文 are letters.',
    "\nLeading and trailing newlines go.\n\n",
    "A span `across\nlines` joins them with a space.",
    "Web text https://example.com/a?b=1 (no linkify), #hash, 50% off, a@b.example, x = y + z - 1: {ok}!",
]
DECLINED = [
    "", "\n\n", "*emphasis*", "a *b*", "a_b", "[link](https://e.example)", "a <b>", "a <https://e.example>", "a &amp; b", "a \\* b",
    "~~struck~~", "a | b", "- item", "* item", "1. one", "# heading", "> quote", "    indented", " leading space", "trailing spaces  ",
    "ends in a space ", "a\tb", "a\r\nb", "a\x00b", "a ``b`` c", "```\nfence\n```", "Setext\n===", "text\n---", "😀 first",
    "a\n \nb", "text\n- item", "a ` \t ` b", "a ` \u3000 ` b",
]


@pytest.mark.parametrize("text", COVERED)
def test_plain_paragraphs_render_prose_with_code_spans_as_markdown_it_does(text: str) -> None:
    assert markdown.plain_paragraphs(text) == markdown._renderer().render(text)


@pytest.mark.parametrize("text", DECLINED)
def test_plain_paragraphs_leave_every_other_text_to_markdown_it(text: str) -> None:
    assert markdown.plain_paragraphs(text) is None


LINE_STARTS = ["A", "b", "é", "中", "Ω", "1", "-", " ", "`", "\u00a0"]
WORDS = ["word", "x", "中文", "İi", "a1", "b.c", "d-e", "f:g", "h=i", "j!k", "l#m", "p{q}", 'v"w', "x'y", "z>q", "a@b", "$5", "😀", "\u0301",
         "https://e.example", "\u00a0", "\u2028", "\u3000", "\x0c", "\x85", "*", "_", "&", "<", "[", "\\", "|", "~", "\t", "\r", "\x00"]
CODE = ["a", "_", "*", "**", "\\", "&", "&lt;", "<", ">", "[", "]", "|", "~", '"', " ", "  ", "\t", "\n", "#", "-", "\u00a0", "`", "\x00", "\r"]


def _near_plain_text(rng: random.Random) -> str:
    """Return a random text of paragraphs of lines with words and code spans, often just outside what plain_paragraphs covers."""
    def line() -> str:
        parts = [rng.choice(LINE_STARTS) if rng.random() < 0.05 else rng.choice(LINE_STARTS[:5])]
        for _ in range(rng.randint(0, 6)):
            roll = rng.random()
            if roll < 0.5:
                parts.append(rng.choice([" ", ""]) + (rng.choice(WORDS) if rng.random() < 0.05 else rng.choice(WORDS[:17])))
            elif roll < 0.85:
                parts.append(" `" + "".join(rng.choice(CODE) if rng.random() < 0.05 else rng.choice(CODE[:-3]) for _ in range(rng.randint(1, 4))) + "`")
            elif roll < 0.95:
                parts.append("`")
            elif rng.random() < 0.3:
                parts.append(rng.choice([" ", "  ", "``"]))
        return "".join(parts)

    paragraphs = ["\n".join(line() for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
    return rng.choice(["", "\n"]) + rng.choice(["\n\n"] * 4 + ["\n\n\n", "\n \n"]).join(paragraphs) + rng.choice(["", "\n"] * 4 + [" "])


def test_plain_paragraphs_equal_markdown_it_on_every_text_they_take() -> None:
    rng = random.Random(18)
    render = markdown._renderer().render
    taken = 0
    for _ in range(20_000):
        text = _near_plain_text(rng)
        html = markdown.plain_paragraphs(text)
        if html is not None:
            taken += 1
            assert html == render(text), text
    assert 3_000 < taken < 15_000  # thousands are taken, and most, a step outside the shape, are not


def test_a_text_of_plain_paragraphs_is_rendered_without_loading_markdown_it() -> None:
    probe = ("import sys; from agenthropic_site.render.markdown import render_markdown; "
             "html = render_markdown('Run `make test`.'); print(html.strip(), 'markdown_it' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent)
    assert done.stdout.split() == ["<p>Run", "<code>make", "test</code>.</p>", "False"]
