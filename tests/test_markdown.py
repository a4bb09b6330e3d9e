"""The Markdown renderer on hostile input: raw HTML shown as text, only web links, images never load.

Each check runs on markdown-it-py with the site's rules (render/markdown.py's engine) and on
render_markdown itself (the memo in front of it).
"""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser

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
