"""The built site in a real browser: headless Chromium opens pages from file://.

The demo site must load without a console error, an uncaught exception or a failed request, and
its script (allowed by the page's Content-Security-Policy, `script-src 'self'`) must run from
file://. On the hostile corpus (tests/hostile.py) no transcript text may run script, add an
element with an event handler or a `javascript:` link, or break the page.

Chromium is the system's (Debian's `chromium` package, which .ci/run installs), driven by
Playwright with `executable_path`; `playwright install` is never needed. Without it these tests
are skipped. Its lookup, launch flags and the choice of demo pages live in docs/screenshots.py,
which takes the docs' screenshots and is tested here too.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import sys
import zlib
from pathlib import Path

import pytest

from conftest import NEEDS_DOT, REPO, build, stop_with_sigint
from hostile import AGENT, PROJECT, SID, TITLE, write_hostile_corpus


def _load_screenshots():
    """Import docs/screenshots.py (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("screenshots", REPO / "docs" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


screenshots = _load_screenshots()
CHROMIUM = screenshots.chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's `chromium` package is not installed (apt-get install chromium; .ci/run installs it)"
)

FLAGS = screenshots.FLAGS
demo_pages = screenshots.demo_pages
SITE_SCRIPT = "static/site.js"


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    corpus = write_hostile_corpus(base / "corpus")
    code = build(corpus, base / "site", base / "cache")
    assert code == 0, code
    return base / "site"


class Opened:
    """A page opened from file:// with every console error, page error and failed request it raised."""

    def __init__(self, context, path: Path) -> None:
        self.problems: list[str] = []
        self.page = page = context.new_page()
        page.on("console", lambda message: message.type == "error" and self.problems.append(f"console: {message.text}"))
        page.on("pageerror", lambda error: self.problems.append(f"pageerror: {error}"))
        page.on("requestfailed", lambda request: self.problems.append(f"requestfailed: {request.url} {request.failure}"))
        assert path.is_file(), path
        page.goto(path.as_uri(), wait_until="load")


# Each demo page's insight chart (a selector) and the marks it is made of; the transcript page has none.
INSIGHT_CHARTS = {
    "index": ("section.usage svg.chart.blocks", "rect.bar.busiest"),
    "session": ("section.context-growth svg.context-chart", "polyline.series"),
    "agent": ("svg.context-chart", "polyline.series"),
    "project": ("section.weeks svg.chart", "rect.bar"),
}


@pytest.mark.parametrize("which", ["index", "project", "session", "agent", "transcript"])
def test_demo_pages_load_cleanly_from_file_urls_and_draw_their_charts(demo_site: Path, context, which: str) -> None:
    """Each demo page loads from file:// with its script running and no console error; its insight chart shows, with its marks.

    (One test opens each page for both: opening a page costs Chromium about as much as the checks.)
    """
    opened = Opened(context, demo_pages(demo_site)[which])
    page = opened.page
    assert page.locator("h1").first.is_visible()
    # site.js ran: the Content-Security-Policy's script-src 'self' admits it under file://.
    assert page.evaluate("document.documentElement.classList.contains('js')")
    if which in INSIGHT_CHARTS:
        chart, marks = INSIGHT_CHARTS[which]
        drawn = page.locator(chart).first
        assert drawn.is_visible()
        box = drawn.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 80
        assert drawn.locator(marks).count() >= 1
    assert opened.problems == []


def test_sortable_table_reorders_rows_from_file_url(demo_site: Path, context) -> None:
    opened = Opened(context, demo_pages(demo_site)["session"])
    page = opened.page
    table = page.locator("table.sortable.agents")
    header = table.locator("thead th", has_text="Subtree tokens")
    index = header.evaluate("th => th.cellIndex")

    def column() -> list[int]:
        return [int(v) for v in table.evaluate(f"t => Array.from(t.tBodies[0].rows, r => r.cells[{index}].getAttribute('data-sort'))")]

    before = column()
    assert len(set(before)) > 1 and before != sorted(before)
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert column() == sorted(before)
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    assert column() == sorted(before, reverse=True)
    # From the keyboard: a header is reached with Tab, and Enter or Space sorts by it.
    header.focus()
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "ascending" and column() == sorted(before)
    scrolled = page.evaluate("() => window.scrollY")
    page.keyboard.press(" ")
    assert header.get_attribute("aria-sort") == "descending" and column() == sorted(before, reverse=True)
    assert page.evaluate("() => window.scrollY") == scrolled  # Space sorted; it did not scroll the page
    assert opened.problems == []



def test_times_and_durations_sort_by_their_values_with_unknown_ones_last(demo_site: Path, context) -> None:
    # The demo project with the most sessions: its durations run from seconds to days.
    pages = sorted(demo_site.glob("projects/*/index.html"), key=lambda path: (-path.read_text().count("<tr>"), path.name))
    opened = Opened(context, pages[0])
    table = opened.page.locator("table.sortable").last

    def keys(index: int) -> list[str]:
        return table.evaluate(f"t => Array.from(t.tBodies[0].rows, r => r.cells[{index}].getAttribute('data-sort'))")

    for name in ("Start", "Duration"):
        header = table.locator("thead th", has_text=name)
        index = header.evaluate("th => th.cellIndex")
        known = [int(key) for key in keys(index) if key]
        unknown = keys(index).count("")
        assert len(set(known)) > 3 and known != sorted(known), name
        header.click()
        assert keys(index) == [str(key) for key in sorted(known)] + [""] * unknown, name
        header.click()
        assert keys(index) == [str(key) for key in sorted(known, reverse=True)] + [""] * unknown, name
    assert opened.problems == []


def test_a_column_without_keys_sorts_numbers_as_numbers_then_words_then_unknown_values(demo_site: Path, context, tmp_path: Path) -> None:
    # A theme's table that gives no data-sort: the default script still orders it sensibly.
    texts = ["1,234", "abc", "\u2014", "999", "2026-07-26 12:48", "12.5", "", "2026-01-03 09:00", "-3"]
    rows = "".join(f"<tr><td>{text}</td></tr>" for text in texts)
    page_file = tmp_path / "table.html"
    page_file.write_text(
        f'<!doctype html><meta charset="utf-8"><table class="sortable"><thead><tr><th>Value</th></tr></thead><tbody>{rows}</tbody></table>'
        f'<script src="{(demo_site / "static" / "site.js").as_uri()}"></script>',
        encoding="utf-8",
    )
    opened = Opened(context, page_file)
    table = opened.page.locator("table.sortable")

    def column() -> list[str]:
        return table.evaluate("t => Array.from(t.tBodies[0].rows, r => r.cells[0].textContent)")

    table.locator("th").click()
    assert column() == ["-3", "12.5", "999", "1,234", "2026-01-03 09:00", "2026-07-26 12:48", "abc", "", "\u2014"]
    table.locator("th").click()
    assert column() == ["abc", "2026-07-26 12:48", "2026-01-03 09:00", "1,234", "999", "12.5", "-3", "\u2014", ""]
    assert opened.problems == []

def test_the_session_filter_hides_rows(demo_site: Path, context) -> None:
    opened = Opened(context, demo_site / "index.html")
    page = opened.page
    rows = page.locator("#sessions tbody tr")
    total = rows.count()
    page.locator("#search").fill("no session has this title")
    assert page.locator("#sessions tbody tr:visible").count() == 0 < total
    page.locator("#search").fill("")
    assert page.locator("#sessions tbody tr:visible").count() == total
    # A word of a session's first prompt, not of any title, finds that session through the JSON index.
    index = json.loads(page.locator("#search-index").text_content())
    titles = " ".join(entry["title"].lower() for entry in index)
    entry, word = next((e, w) for e in index for p in e["prompts"] for w in p.lower().split() if len(w) > 6 and w.isalpha() and w not in titles)
    page.locator("#search").fill(word)
    visible = page.locator("#sessions tbody tr:visible")
    assert 1 <= visible.count() < total
    assert entry["id"] in [visible.nth(i).get_attribute("data-session") for i in range(visible.count())]
    assert opened.problems == []



def png_facts(data: bytes) -> tuple[int, int, int]:
    """Width, height and number of distinct scanlines of an 8-bit RGB or RGBA PNG (zlib only, no image library)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    idat, pos = b"", 8
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos:pos + 4])
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + size]
        pos += 12 + size
    raw = zlib.decompress(idat)
    stride = 1 + width * (3 if colour == 2 else 4)
    assert len(raw) == stride * height
    return width, height, len({raw[i:i + stride] for i in range(0, len(raw), stride)})


@pytest.mark.slow
@NEEDS_DOT
def test_docs_screenshots_show_the_demo_pages(demo_site: Path, browser, tmp_path: Path) -> None:
    """docs/screenshots.py writes one PNG per page, viewport-wide and one viewport high, that shows a real page.

    Measured at 1280x900: about:blank gives 2 distinct scanlines (5 KB), Chromium's "file not found"
    page 57 (18 KB) and a page with one heading and one line of text 40; at the 1000x700 used here the
    demo pages give 237 (report) to 507 (session), so more than 150 means a real page was drawn.
    """
    width, height = 1000, 700
    written = screenshots.take_screenshots(demo_site, tmp_path / "shots", width=width, height=height, browser=browser)
    assert sorted(written) == sorted(screenshots.SHOTS) == ["agent", "context", "index", "project", "report", "session", "transcript", "usage"]
    for name, path in written.items():
        assert path == tmp_path / "shots" / f"{name}.png" and path.is_file()
        data = path.read_bytes()
        shot_width, shot_height, lines = png_facts(data)
        # Every demo page is taller than 700 pixels below its anchor, so each picture is a full viewport.
        assert (shot_width, shot_height) == (width, height), name
        assert lines > 150, f"{name}.png looks blank: {lines} distinct scanlines"
        assert len(data) < 250_000, f"{name}.png is {len(data)} bytes"


@NEEDS_DOT
def test_graph_nodes_stay_readable_in_dark_mode(demo_site: Path, browser) -> None:
    """Graphviz draws rounded boxes as white <path>s; the dark theme must recolour them like the text."""
    ctx = browser.new_context(color_scheme="dark")
    try:
        page = Opened(ctx, demo_pages(demo_site)["session"]).page
        node = page.locator("figure.dag svg g.node").first
        box = node.locator("path, polygon").first.evaluate("e => getComputedStyle(e).fill")
        text = node.locator("text").first.evaluate("e => getComputedStyle(e).fill")
        assert box != "rgb(255, 255, 255)" and box != text
    finally:
        ctx.close()

# Everything that would show that transcript text became markup.
AUDIT = """() => {
  // A JSON data block is inert (the search index); any other script element is code.
  const scripts = Array.from(document.scripts).filter(s => s.type !== 'application/json').map(s => s.getAttribute('src') || '(inline)');
  const handlers = [], links = [];
  for (const element of document.querySelectorAll('*')) {
    for (const attr of element.attributes) {
      const value = attr.value.replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase();
      if (attr.name.toLowerCase().startsWith('on')) handlers.push(element.tagName + ' ' + attr.name);
      if (value.startsWith('javascript:') || value.startsWith('vbscript:') || value.startsWith('data:text/html'))
        links.push(element.tagName + ' ' + attr.name + '=' + attr.value);
    }
  }
  return {
    pwned: typeof window.__pwned,
    scripts,
    handlers,
    links,
    frames: document.querySelectorAll('iframe, frame, object, embed').length,
    inlineSvgScripts: document.querySelectorAll('svg script').length,
  };
}"""


def hostile_pages(site: Path) -> dict[str, Path]:
    return {
        "index": site / "index.html",
        "project": site / "projects" / PROJECT / "index.html",
        "session": site / "sessions" / SID / "index.html",
        "agent": site / "sessions" / SID / "agents" / f"{AGENT}.html",
        "transcript": site / "sessions" / SID / "transcript" / "1.html",
        "report": site / "report.html",
    }


@pytest.mark.parametrize("which", ["index", "project", "session", "agent", "transcript", "report"])
def test_hostile_text_never_runs_and_pages_still_render(hostile_site: Path, context, which: str) -> None:
    path = hostile_pages(hostile_site)[which]
    assert path.stat().st_size < 1_000_000, "the 5 MB tool output must be cut"
    opened = Opened(context, path)
    page = opened.page
    root = "../" * (len(path.relative_to(hostile_site).parts) - 1)
    clean = {"pwned": "undefined", "scripts": [root + SITE_SCRIPT], "handlers": [], "links": [], "frames": 0, "inlineSvgScripts": 0}
    assert page.evaluate(AUDIT) == clean
    assert page.locator("h1").first.is_visible()

    # Open every <details> (outer ones first, so nested ones become visible), then look again.
    details = page.locator("details")
    for i in range(details.count()):
        page.locator("details").nth(i).locator(":scope > summary").click()
    assert page.locator("details:not([open])").count() == 0
    page.wait_for_timeout(50)
    assert page.evaluate(AUDIT) == clean
    assert opened.problems == []


@NEEDS_DOT
def test_hostile_session_page_shows_the_payloads_as_text(hostile_site: Path, context) -> None:
    page = Opened(context, hostile_pages(hostile_site)["session"]).page
    assert page.locator("h1").inner_text() == TITLE
    # The graph has the two real agents and no node injected through the agent type.
    nodes = page.locator("figure.dag svg g.node")
    assert nodes.count() == 2
    assert 'evil [label=<<b>html</b>>]; \\l\\N <TABLE>' in nodes.nth(1).text_content()
    assert page.locator("figure.dag svg a").evaluate_all("links => links.map(a => a.getAttribute('xlink:href'))") == [
        "index.html", f"agents/{AGENT}.html"]
    # The line with a lone surrogate is reported, not fatal.
    assert page.locator("ul.warnings", has_text="invalid-json").is_visible()
    # On the transcript's page, the 5 MB tool output is cut and says so (inside its closed <details>);
    # the NUL and U+2028 line renders.
    transcript = Opened(context, hostile_pages(hostile_site)["transcript"]).page
    assert transcript.locator("ol.transcript").get_by_text("Stored output cut at 16,000 of 5,2").count() == 1
    assert transcript.locator("ol.transcript").get_by_text("raw U+2028").count() == 1



RELOAD_SID = "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d"


@pytest.mark.slow
def test_a_served_page_reloads_itself_after_a_build(context, tmp_path: Path) -> None:
    """`build --watch --serve`: an open page reloads after the next completed build, keeps an opened call open, with no CSP error."""
    import socket
    import subprocess
    import sys
    import time

    from conftest import DEMO_CORPUS, DEMO_NOW

    corpus, out, cache = tmp_path / "corpus", tmp_path / "site", tmp_path / "cache"
    shutil.copytree(DEMO_CORPUS, corpus)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    said = (tmp_path / "stderr").open("w")
    process = subprocess.Popen([sys.executable, "-m", "agenthropic_site", "build", "--watch", "--serve", "--port", str(port),
                                "--corpus", str(corpus), "--out", str(out), "--cache", str(cache), "--now", DEMO_NOW, "-q"],
                               stdout=subprocess.DEVNULL, stderr=said)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        # A transcript page: after each reload the call opened before it is open again (site.js keeps the place).
        first_page = f"sessions/{RELOAD_SID}/transcript/1.html"
        for _ in range(300):
            if (out / first_page).is_file():
                try:
                    if page.goto(f"http://127.0.0.1:{port}/{first_page}").status == 200:
                        break
                except Exception:  # noqa: BLE001 - the server is still starting
                    pass
            time.sleep(0.1)
        # A reload is sent only to pages whose livereload client has finished its handshake (a
        # busy machine can take seconds), and the first build's own reload may still arrive: wait
        # until the page is connected and a marker survives 1.5 s.
        connected = "(window.LiveReload && window.LiveReload.connector && window.LiveReload.connector.protocol) > 0"
        for _ in range(10):
            try:
                page.wait_for_function(connected, timeout=15_000)
                page.evaluate("window.__before_reload = 1")
                time.sleep(1.5)
                if page.evaluate("typeof window.__before_reload") == "number" and page.evaluate(connected):
                    break
            except Exception:  # noqa: BLE001 - the page was reloading
                time.sleep(0.2)
        main = next(corpus.rglob(f"{RELOAD_SID}.jsonl"))
        call = page.locator("details.call").nth(2)
        call.locator("summary").first.click()
        assert call.evaluate("d => d.open")
        last = main.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        # Twice: the second build completes within a few seconds of the first reload, which
        # livereload's own throttle would have dropped.
        for round in (1, 2):
            page.wait_for_function(connected, timeout=15_000)
            page.evaluate("window.__before_reload = 1")
            started = time.monotonic()
            with main.open("ab") as handle:
                handle.write(last.replace(b'"msg_', f'"msg_reload_{round}_'.encode(), 1) + b"\n")
            reloaded = False
            while time.monotonic() - started < 15 and not reloaded:
                try:
                    reloaded = page.evaluate("typeof window.__before_reload") == "undefined"
                except Exception:  # noqa: BLE001 - the page is navigating: look again
                    pass
                time.sleep(0.05)
            assert reloaded, f"the open page did not reload after build {round}"
            page.wait_for_load_state("load")
            assert page.locator("details.call").nth(2).evaluate("d => d.open"), f"the opened call is closed after reload {round}"
        assert errors == []
    finally:
        stop_with_sigint(process)
        said.close()
    # -q prints only errors: livereload printed its own lines ("Browser Connected: <page>", "Reload 1 waiters: <the cache's stamp>").
    assert (tmp_path / "stderr").read_text() == ""


def test_demo_transcripts_read_like_what_happened(demo_site: Path, context) -> None:
    """Tool-call headers show their gist, an Edit shows removed and added lines, a result sits in its call's card."""
    pages = sorted(demo_site.glob("sessions/*/transcript/*.html")) + sorted(demo_site.glob("sessions/*/agents/*.html"))
    with_edit = next(path for path in pages if 'data-tool="Edit"' in path.read_text())
    opened = Opened(context, with_edit)
    page = opened.page
    gists = page.evaluate("""() => [...document.querySelectorAll('details.call')]
        .filter(d => ['Bash', 'Read', 'Edit', 'Grep', 'Glob'].includes(d.dataset.tool))
        .map(d => (d.querySelector('summary .gist') || {textContent: ''}).textContent.trim())""")
    assert gists and all(gists)
    edit = page.locator("details.call[data-tool=Edit]").first
    edit.locator("summary").first.click()
    assert edit.locator("del.diff-del").first.is_visible() and edit.locator("ins.diff-add").first.is_visible()
    assert page.locator("details.call div.result").count() >= 1
    assert opened.problems == []
