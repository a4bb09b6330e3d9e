"""The reader on a generated session of more than 50 MB, in a real browser: bounded pages that still read whole.

One session (a long main transcript and some 270 agents, fixtures/scale.py) is generated, a tool
call whose result alone holds a rare word is appended, and the corpus is built once; one test then
checks each promise in turn, so the 54 MB build is made once whichever worker runs it. Chromium
opens the pages from file:// (tests/test_browser.py says how).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agenthropic_site.pipeline.build import run_build
from agenthropic_site.render.reader import PAGE_BOUND
from fixtures.generate import generate_scale
from records import line
from test_browser import CHROMIUM, Opened
from test_reader_browser import wait_until
from test_incremental import config

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason="Debian's `chromium` package is not installed")]

NEEDLE = "quokkafluxion"  # in one tool result of the whole corpus, and nowhere else
SESSION_KB = 140_000  # about 54 MB on disk with its agents


def _append_needle(main: Path, session_id: str) -> None:
    """Append a Bash call whose output alone holds NEEDLE."""
    call = {"type": "assistant", "uuid": "needle-call", "sessionId": session_id, "timestamp": "2030-01-01T00:00:00.000Z", "requestId": "req_needle",
            "message": {"id": "msg_needle", "model": "claude-sonnet-4-5-20250929", "role": "assistant", "stop_reason": "tool_use",
                        "content": [{"type": "tool_use", "id": "toolu_needle", "name": "Bash", "input": {"command": "cat notes.txt"}}],
                        "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}
    result = {"type": "user", "uuid": "needle-result", "sessionId": session_id, "timestamp": "2030-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_needle", "content": f"the {NEEDLE} is here"}]}}
    with main.open("ab") as handle:
        handle.write(line(call) + line(result))


def test_a_50_mb_session_reads_in_bounded_pages(tmp_path: Path, context) -> None:
    corpus = tmp_path / "corpus"
    generate_scale(corpus, sessions=1, seed=5, session_kb=SESSION_KB)
    main = next(path for path in corpus.glob("*/*.jsonl"))
    sid = main.stem
    _append_needle(main, sid)
    assert sum(path.stat().st_size for path in corpus.rglob("*.jsonl")) >= 50 * 1024 * 1024
    site = tmp_path / "site"
    run_build(config(corpus, site, tmp_path / "cache"))
    _pages_stay_under_the_bound(site, sid)
    _calls_show_their_gist_results_and_diffs(site, sid, context)
    _outline_links_land_on_their_prompts(site, sid, context)
    _search_finds_a_word_only_one_tool_result_holds(site, sid, context)
    _an_append_rewrites_one_transcript_page_and_the_session_page(corpus, site, sid, tmp_path / "cache")


def _pages_stay_under_the_bound(site: Path, sid: str) -> None:
    sizes = {path.relative_to(site).as_posix(): path.stat().st_size for path in site.rglob("*.html")}
    assert max(sizes.values()) <= PAGE_BOUND, max(sizes.items(), key=lambda item: item[1])
    assert len(list((site / "sessions" / sid / "transcript").glob("*.html"))) > 3


def _calls_show_their_gist_results_and_diffs(site: Path, sid: str, context) -> None:
    opened = Opened(context, site / "sessions" / sid / "transcript" / "2.html")
    page = opened.page
    assert page.locator("details.call").count() > 100
    # Every Bash, Read, Edit, Grep and Glob header names what it did (command, path, pattern).
    gists = page.evaluate("""() => [...document.querySelectorAll('details.call')]
        .filter(d => ['Bash', 'Read', 'Edit', 'Grep', 'Glob'].includes(d.dataset.tool))
        .map(d => [d.dataset.tool, (d.querySelector('summary .gist') || {textContent: ''}).textContent.trim()])""")
    assert gists and all(gist for _, gist in gists), [g for g in gists if not g[1]][:5]
    edit = page.locator("details.call[data-tool=Edit]").first
    edit.locator("summary").first.click()
    assert edit.locator("del.diff-del").first.is_visible() and edit.locator("ins.diff-add").first.is_visible()
    # Results sit inside their calls' cards, not in cards of their own.
    assert page.locator("details.call div.result").count() > 50
    assert page.locator("div.result.standalone").count() == 0
    assert opened.problems == []


def _outline_links_land_on_their_prompts(site: Path, sid: str, context) -> None:
    session_page = (site / "sessions" / sid / "index.html").read_text()
    pages = re.findall(r'<a href="transcript/(\d+)\.html">Page \d+</a>', session_page)
    assert len(pages) > 3  # many prompts: one outline line per page, and each page lists its own
    for number in (pages[0], pages[-1]):
        opened = Opened(context, site / "sessions" / sid / "transcript" / f"{number}.html")
        page = opened.page
        page.locator("details.page-outline > summary").click()
        links = page.locator("details.page-outline ol.outline a")
        assert links.count() >= 1
        for which in (0, links.count() - 1):
            href = links.nth(which).get_attribute("href")
            links.nth(which).click()
            target = page.locator(href)
            assert target.evaluate("e => e.matches('li.msg.prompt')"), href
            assert target.evaluate("e => { const r = e.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; }"), href
        assert opened.problems == []


def _search_finds_a_word_only_one_tool_result_holds(site: Path, sid: str, context) -> None:
    opened = Opened(context, site / "search.html")
    page = opened.page
    page.goto((site / "search.html").as_uri() + f"?q={NEEDLE}")
    wait_until(page, "document.getElementById('search-status').textContent.startsWith('Searched 1 of 1 sessions')", seconds=60)
    hits = page.locator("ol#search-results li.hit")
    assert hits.count() == 1
    link = hits.first.locator("a").first
    href = link.get_attribute("href")
    assert f"sessions/{sid}/transcript/" in href and "#m" in href
    link.click()
    page.wait_for_load_state("load")
    card = page.locator(href[href.index("#"):])
    assert card.evaluate("d => d.tagName === 'DETAILS' && d.open") and NEEDLE in card.inner_text()
    assert opened.problems == []


def _an_append_rewrites_one_transcript_page_and_the_session_page(corpus: Path, site: Path, sid: str, cache: Path) -> None:
    inodes = {path.relative_to(site).as_posix(): path.stat().st_ino for path in site.rglob("*.html")}
    main = next(corpus.glob(f"*/{sid}.jsonl"))
    reply = json.loads(next(raw for raw in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in raw.replace(b" ", b"")))
    reply["uuid"], reply["requestId"], reply["message"]["id"] = "after", "req_after", "msg_after"
    with main.open("ab") as handle:
        handle.write(line(reply))
    run_build(config(corpus, site, cache))
    changed = sorted(rel for rel in (path.relative_to(site).as_posix() for path in site.rglob("*.html"))
                     if rel.startswith("sessions/") and inodes.get(rel) != (site / rel).stat().st_ino)
    last = max(int(path.stem) for path in (site / "sessions" / sid / "transcript").glob("*.html"))
    assert changed == [f"sessions/{sid}/index.html", f"sessions/{sid}/transcript/{last}.html"]
