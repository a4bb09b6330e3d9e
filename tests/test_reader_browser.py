"""The transcript reader in a real browser: tools, find, live-reload state, full-text search, small screens.

A small static site is written here (transcript pages that follow the DOM contract of the session
pages, the real base.html and search.html, the theme's static files and search data made by
render/search.py) and opened from file:// in the system's Chromium, as tests/test_browser.py does.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from markupsafe import escape

from agenthropic_site.parse.model import Block, Message
from agenthropic_site.render.search import entries_of, parts_js, sessions_js, shard_js
from agenthropic_site.render.theme import default_theme_dir, environment, theme_dirs
from test_browser import CHROMIUM, Opened

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's `chromium` package is not installed (apt-get install chromium)")

PER_PAGE = 30
FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 6
# Records every Content-Security-Policy violation the page reports.
CSP_WATCH = "window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"


@pytest.fixture
def context(browser) -> Iterator[object]:
    ctx = browser.new_context(java_script_enabled=True, viewport={"width": 1000, "height": 700})
    ctx.set_default_timeout(15_000)
    ctx.add_init_script(CSP_WATCH)
    try:
        yield ctx
    finally:
        ctx.close()


def session_messages(marker: str) -> list[Message]:
    """Forty messages: a prompt every ten, calls with results, an error every seventh call, thinking every fourth answer."""
    messages = []
    for i in range(40):
        if i % 10 == 0:
            messages.append(Message("user", None, None, (Block("text", f"Prompt {i} {FILLER}"),)))
            continue
        blocks = [Block("tool_use", f'{{"command": "step {i}"}}', name="Bash", tool_use_id=f"t{i}")]
        if i % 4 == 1:
            blocks.append(Block("thinking", f"pondering {i}"))
        messages.append(Message("assistant", None, None, (*blocks, Block("text", f"Answer {i} {FILLER}"))))
    # Words only one entry has: one on page 1, inside a closed call card, and one on page 2.
    messages[15] = Message("assistant", None, None, (Block("tool_use", '{"command": "ls"}', name="Bash", tool_use_id="t15"),
                                                     Block("text", f"Answer 15 zanzibar {FILLER}")))
    messages[33] = Message("assistant", None, None, (Block("tool_use", '{"command": "ls"}', name="Bash", tool_use_id="t33"),
                                                     Block("text", "Answer 33 zanzibar")))
    messages[34] = Message("user", None, None, (Block("tool_result", f"{marker} in one output only", tool_use_id="t33"),))
    return messages


def has_of(index: int, message: Message) -> list[str]:
    """The data-has tokens of a message in this fixture."""
    kinds = {block.kind for block in message.blocks}
    tokens = []
    if message.role == "user" and "text" in kinds:
        tokens.append("prompt")
    if "tool_use" in kinds or "tool_result" in kinds:
        tokens.append("tool")
    if index % 7 == 0 and "tool_use" in kinds:
        tokens.append("error")
    if "thinking" in kinds:
        tokens.append("thinking")
    return sorted(tokens)


def message_html(index: int, message: Message) -> str:
    """One message as the DOM contract shows it: calls and thinking in <details> with stable ids."""
    has = has_of(index, message)
    classes = " ".join(["msg", message.role, *(["prompt"] if "prompt" in has else [])])
    parts = []
    for number, block in enumerate(message.blocks):
        text = escape(block.text)
        if block.kind == "tool_use":
            error = ' <div class="result error">Error: it failed</div>' if "error" in has else ""
            parts.append(f'<details class="call" id="m{index}-b{number}" data-tool="Bash"><summary>Bash</summary><pre>{text}</pre>{error}</details>')
        elif block.kind == "thinking":
            parts.append(f'<details class="thinking" id="m{index}-b{number}"><summary>Thinking</summary><pre>{text}</pre></details>')
        elif block.kind == "tool_result":
            parts.append(f"<pre>{text}</pre>")
        else:
            parts.append(f"<p>{text}</p>")
    return f'<li class="{classes}" id="m{index}" data-has="{" ".join(has)}">{"".join(parts)}</li>'


def write_site(site: Path, marker: str, split: frozenset[str] = frozenset()) -> dict[str, list[Message]]:
    """Write the fixture site: two sessions of two transcript pages each, their search data, the search page and the static files.

    The shard of a session in `split` lists files of ten rows each, as a large session's does (render/search.py parts_js).
    """
    shutil.copytree(default_theme_dir() / "static", site / "static")
    env = environment(theme_dirs(None))
    base = {"model": SimpleNamespace(lower_bound=False, usage=SimpleNamespace(tz="UTC")), "version": "test"}
    contents = {"s1": session_messages("quokka-not-this-one"), "s2": session_messages(marker)}
    listed = []
    for sid, messages in contents.items():
        pages = [messages[start:start + PER_PAGE] for start in range(0, len(messages), PER_PAGE)]
        for number, page in enumerate(pages, start=1):
            first = (number - 1) * PER_PAGE
            body = "".join(message_html(first + i, m) for i, m in enumerate(page))
            pager = " ".join(f'<a href="{n}.html">{n}</a>' for n in range(1, len(pages) + 1))
            content = (f'<nav class="transcript-tools" id="transcript-tools" data-search="../../../search/s/{sid}.js" data-session="{sid}"></nav>'
                       f'<ol class="transcript">{body}</ol><nav class="pager">{pager} <span>Page {number} of {len(pages)}</span></nav>')
            template = env.from_string('{% extends "base.html" %}{% block content %}' + content + "{% endblock %}")
            path = site / "sessions" / sid / "transcript" / f"{number}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(template.render(root="../../../", **base))
        entries = entries_of(messages, lambda index, sid=sid: f"sessions/{sid}/transcript/{index // PER_PAGE + 1}.html")
        (site / "search" / "s").mkdir(parents=True, exist_ok=True)
        if sid in split:
            files = [f"search/s/{sid}/{start // 10}.js" for start in range(0, len(entries), 10)]
            (site / "search" / "s" / sid).mkdir()
            for number, file in enumerate(files):
                (site / file).write_bytes(shard_js(sid, entries[number * 10 : number * 10 + 10]))
            (site / "search" / "s" / f"{sid}.js").write_bytes(parts_js(sid, files))
        else:
            (site / "search" / "s" / f"{sid}.js").write_bytes(shard_js(sid, entries))
        listed.append({"id": sid, "title": f"Session <b>{sid}</b>", "project": "demo", "started": "2026-01-01T00:00:00Z", "shard": f"search/s/{sid}.js"})
    (site / "search" / "sessions.js").write_bytes(sessions_js(listed))
    (site / "search.html").write_text(env.get_template("search.html").render(root="", **base))
    return contents


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reader") / "site"
    write_site(folder, "wombatfeathers")
    return folder


def open_page(context, path: Path) -> Opened:
    opened = Opened(context, path)
    opened.page.wait_for_selector("#transcript-tools button", state="attached")
    return opened


def wait_until(page, expression: str, seconds: float = 15) -> None:
    """Poll a JavaScript expression until it is true (wait_for_function would evaluate a string, which the page's CSP forbids)."""
    from playwright.sync_api import Error

    deadline = time.monotonic() + seconds
    while True:
        try:
            if page.evaluate(expression):
                return
        except Error:
            pass  # the page is navigating: look again
        assert time.monotonic() < deadline, f"still false: {expression}"
        time.sleep(0.05)


def clean(opened: Opened) -> None:
    """Assert that the page logged no error and broke no rule of its Content-Security-Policy."""
    assert opened.problems == []
    assert opened.page.evaluate("window.__csp") == []


def page_one(site: Path) -> Path:
    return site / "sessions" / "s1" / "transcript" / "1.html"


def test_expand_and_collapse_all(site: Path, context) -> None:
    opened = open_page(context, page_one(site))
    page = opened.page
    details = page.locator("ol.transcript details")
    assert details.count() > 30 and page.locator("ol.transcript details[open]").count() == 0
    page.get_by_role("button", name="Expand all").click()
    assert page.locator("ol.transcript details:not([open])").count() == 0
    page.get_by_role("button", name="Collapse all").click()
    assert page.locator("ol.transcript details[open]").count() == 0
    clean(opened)


def test_next_and_previous_prompt_scroll_to_the_prompts(site: Path, context) -> None:
    opened = open_page(context, page_one(site))
    page = opened.page

    # Prompts land just below the toolbar, which sticks to the top of the window.
    bar = page.locator("#transcript-tools").evaluate("b => b.offsetHeight")
    assert 0 < bar < 100

    def top(anchor: str) -> float:
        return page.locator(f"#{anchor}").evaluate("e => e.getBoundingClientRect().top") - bar

    # The first prompt sits below the page's head: it is the next one down.
    assert top("m0") > 50
    page.get_by_role("button", name="Next prompt").click()
    assert abs(top("m0")) < 2
    page.keyboard.press("]")
    assert abs(top("m10")) < 2
    page.get_by_role("button", name="Next prompt").click()
    assert abs(top("m20")) < 2
    page.get_by_role("button", name="Previous prompt").click()
    assert abs(top("m10")) < 2
    page.keyboard.press("[")
    assert abs(top("m0")) < 2
    page.evaluate("window.scrollTo(0, 0)")
    # Typing in the find box is typing, not navigation.
    page.locator("#transcript-find").press("]")
    assert page.evaluate("window.scrollY") < 50
    clean(opened)


@pytest.mark.parametrize("token", ["prompt", "tool", "error", "thinking", ""])
def test_each_filter_hides_the_messages_lacking_its_token(site: Path, context, token: str) -> None:
    opened = open_page(context, page_one(site))
    page = opened.page
    page.locator("#transcript-filter").select_option(token)
    shown = page.locator("ol.transcript > li.msg").evaluate_all("items => items.filter(i => i.getClientRects().length).map(i => i.id)")
    expected = page.locator("ol.transcript > li.msg").evaluate_all(
        "(items, token) => items.filter(i => !token || i.dataset.has.split(' ').includes(token)).map(i => i.id)", token)
    assert shown == expected
    assert 0 < len(shown) <= PER_PAGE and (token == "" or len(shown) < PER_PAGE)
    clean(opened)


def test_find_jumps_to_a_match_on_this_page_and_lists_the_other_pages(site: Path, context) -> None:
    opened = open_page(context, page_one(site))
    page = opened.page
    find = page.locator("#transcript-find")
    find.fill("ZANZIBAR")
    find.press("Enter")
    assert page.locator(".find-status").text_content() == "1 of 1 on this page"
    assert page.locator("li.find-current").get_attribute("id") == "m15"
    assert page.locator("#m15").is_visible()
    # The other page's hit comes from the session's shard, loaded by a <script src> from file://.
    link = page.locator("ul.find-elsewhere a")
    link.wait_for()
    assert link.count() == 1 and link.text_content() == "page 2"
    assert link.get_attribute("href") == "../../../sessions/s1/transcript/2.html#m33"
    assert "zanzibar" in page.locator("ul.find-elsewhere mark").first.text_content().lower()

    # A word inside a closed call card: the card opens.
    find.fill("step 9")
    find.press("Enter")
    assert page.locator(".find-status").text_content() == "1 of 1 on this page"
    assert page.locator("#m9-b0").evaluate("d => d.open")
    # Following a link to a card on another page opens it there.
    find.fill("step 31")
    find.press("Enter")
    assert page.locator(".find-status").text_content() == "0 on this page"
    page.locator("ul.find-elsewhere a").click()
    page.wait_for_url("**/transcript/2.html#m31-b0")
    wait_until(page, "document.getElementById('m31-b0').open")
    clean(opened)


def test_a_reload_keeps_open_details_and_the_scroll_position(site: Path, context) -> None:
    opened = open_page(context, page_one(site))
    page = opened.page
    page.locator("#m25-b0 > summary").click()
    page.evaluate("window.scrollTo(0, 1500)")
    page.reload(wait_until="load")
    wait_until(page, "window.scrollY > 0")
    assert page.locator("#m25-b0").evaluate("d => d.open")
    assert abs(page.evaluate("window.scrollY") - 1500) < 2
    # Only a reload restores: opening the page again starts afresh.
    page.goto(page_one(site).as_uri(), wait_until="load")
    assert not page.locator("#m25-b0").evaluate("d => d.open")
    assert page.evaluate("window.scrollY") == 0
    clean(opened)


def searched(context, site: Path, query: str, status: str = "startsWith('Searched 2 of 2 sessions')") -> Opened:
    """Open the site's search page, search for `query`, and wait until its status says so (a JavaScript test of the status text)."""
    opened = Opened(context, site / "search.html")
    opened.page.locator("#q").fill(query)
    opened.page.locator("#q").press("Enter")
    wait_until(opened.page, f"document.getElementById('search-status').textContent.{status}")
    return opened


def test_the_search_page_finds_a_word_of_one_tool_output_from_file_urls(site: Path, context) -> None:
    opened = searched(context, site, "wombatfeathers output")
    page = opened.page
    assert page.locator("#search-status").text_content() == "Searched 2 of 2 sessions: 1 match."
    hit = page.locator("li.hit")
    assert hit.count() == 1
    assert hit.locator("a").get_attribute("href") == "sessions/s2/transcript/2.html#m33-b0"
    # Titles are text: the <b> in the data stays visible as characters.
    assert hit.locator("a").text_content() == "Session <b>s2</b>"
    assert hit.locator(".hit-kind").text_content() == "tool output"
    assert [m.lower() for m in hit.locator("mark").all_text_contents()] == ["wombatfeathers", "output"]
    # Every word must occur in the same entry.
    page.locator("#q").fill("wombatfeathers zanzibar")
    page.locator("#q").press("Enter")
    wait_until(page, "document.getElementById('search-status').textContent.startsWith('Searched 2 of 2 sessions: 0')")
    assert page.locator("li.hit").count() == 0
    hit_link = "sessions/s2/transcript/2.html#m33-b0"
    page.goto((site / "search.html").as_uri() + "?q=WOMBATFEATHERS", wait_until="load")
    page.wait_for_selector("li.hit a")
    assert page.locator("li.hit a").get_attribute("href") == hit_link
    page.locator("li.hit a").click()
    wait_until(page, "document.getElementById('m33-b0') && document.getElementById('m33-b0').open")
    clean(opened)


def test_a_large_sessions_shard_in_several_files_is_searched_from_both_pages(tmp_path: Path, context) -> None:
    """A shard that lists files of rows (a large session's) is searched whole: by the search page, and by a transcript page's find."""
    site = tmp_path / "site"
    write_site(site, "wombatfeathers", split=frozenset({"s1", "s2"}))
    assert len(list((site / "search" / "s" / "s2").iterdir())) > 3
    opened = searched(context, site, "wombatfeathers output")
    assert opened.page.locator("#search-status").text_content() == "Searched 2 of 2 sessions: 1 match."
    assert opened.page.locator("li.hit a").get_attribute("href") == "sessions/s2/transcript/2.html#m33-b0"
    clean(opened)
    opened = open_page(context, page_one(site))
    find = opened.page.locator("#transcript-find")
    find.fill("ZANZIBAR")
    find.press("Enter")
    link = opened.page.locator("ul.find-elsewhere a")
    link.wait_for()
    assert link.count() == 1 and link.get_attribute("href") == "../../../sessions/s1/transcript/2.html#m33"
    clean(opened)


def test_a_shard_listing_files_outside_the_site_loads_none_of_them(tmp_path: Path, context) -> None:
    site = tmp_path / "site"
    write_site(site, "wombatfeathers")
    (tmp_path / "outside.js").write_text("window.__pwned = 1;\n")
    (site / "search" / "s" / "s1.js").write_bytes(parts_js("s1", ["../outside.js", "search/s/s2.js"]))
    opened = searched(context, site, "wombatfeathers", "endsWith('.')")
    page = opened.page
    assert page.locator("ol.search-results li.note").text_content() == "Could not load the search data of session Session <b>s1</b>."
    assert page.locator("li.hit").count() == 1 and page.evaluate("typeof window.__pwned") == "undefined"
    clean(opened)


def test_the_search_page_says_which_shard_failed_and_goes_on(tmp_path: Path, context) -> None:
    site = tmp_path / "site"
    write_site(site, "wombatfeathers")
    (site / "search" / "s" / "s1.js").unlink()
    opened = Opened(context, site / "search.html")
    page = opened.page
    page.locator("#q").fill("wombatfeathers")
    page.locator("#q").press("Enter")
    wait_until(page, "document.getElementById('search-status').textContent.endsWith('.')")
    assert page.locator("#search-status").text_content() == "Searched 2 of 2 sessions: 1 match."
    assert page.locator("ol.search-results li.note").text_content() == "Could not load the search data of session Session <b>s1</b>."
    assert page.locator("li.hit").count() == 1
    # The missing file is the only problem.
    assert len(opened.problems) >= 1 and all("s1.js" in p or "ERR_FILE_NOT_FOUND" in p for p in opened.problems)


def test_hostile_shard_rows_never_become_links_outside_the_site(tmp_path: Path, context) -> None:
    site = tmp_path / "site"
    write_site(site, "wombatfeathers")
    rows = [["javascript:alert(1)//x.html", "m1", "answer", "wombatfeathers a"], ["//evil.example/x.html", "m1", "answer", "wombatfeathers b"],
            ["sessions/../../x.html", "m1", "answer", "wombatfeathers c"], ["sessions/s2/transcript/1.html", 'm1" onclick="x', "answer", "wombatfeathers d"],
            ["sessions/s2/transcript/1.html", "m2", "answer", "<img src=x onerror=window.__pwned=1> wombatfeathers e"]]
    (site / "search" / "s" / "s1.js").write_text(f'agenthropicSearch.shard("s1", {json.dumps(rows)});\n')
    opened = Opened(context, site / "search.html")
    page = opened.page
    page.locator("#q").fill("wombatfeathers")
    page.locator("#q").press("Enter")
    wait_until(page, "document.getElementById('search-status').textContent.endsWith('.')")
    assert page.locator("li.hit a").evaluate_all("links => links.map(a => a.getAttribute('href'))") == [
        "sessions/s2/transcript/1.html#m2", "sessions/s2/transcript/2.html#m33-b0"]
    assert page.locator("li.hit img").count() == 0 and page.evaluate("typeof window.__pwned") == "undefined"
    clean(opened)


@pytest.mark.parametrize("which", ["index", "project", "session"])
def test_small_screens_show_no_horizontal_page_scroll(demo_site: Path, browser, which: str) -> None:
    from test_browser import demo_pages

    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        opened = Opened(ctx, demo_pages(demo_site)[which])
        page = opened.page
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        if which != "session":
            # The session table keeps its title, date, cost and status; the other columns are hidden by class.
            table = page.locator("table.sortable").last
            shown = table.locator("thead th").evaluate_all("cells => cells.filter(c => c.getClientRects().length).map(c => c.className.replace('num ', ''))")
            expected = ["col-title", "col-date", "col-status", "col-cost"] if which == "index" else ["col-title", "col-date", "col-cost", "col-status"]
            assert shown == expected
        assert opened.problems == []
    finally:
        ctx.close()
