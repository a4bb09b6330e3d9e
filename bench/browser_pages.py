"""Measure what a reader waits for in a built site's pages: sorting the index's sessions, searching every session.

Usage: python bench/browser_pages.py --site DIR [--runs 3] [--query WORD ...]
Opens DIR/index.html and DIR/search.html in the system's headless Chromium (Debian's `chromium`,
as the browser tests use it) from file://. For each column of the index's sessions table it
clicks the header `runs` times and reports the median time of the click's handler and of the
handler with the layout that follows. For each query (default: one word no session holds, then
the longest word of the first session's title) it reports the median time from submitting the
search form to the status line's last word, then of the same search again on that page (the shards
it keeps are not loaded again), and the matches it counted. A site of a few thousand
sessions is what shows the difference: `python -m fixtures.generate --sessions 5000 --session-kb 16
--out C` and `agenthropic build --corpus C --out DIR`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _screenshots():  # noqa: ANN202 - a script's module
    """Import docs/screenshots.py (a script, not a package module), which finds Chromium as the browser tests do."""
    spec = importlib.util.spec_from_file_location("screenshots", REPO / "docs" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


screenshots = _screenshots()

# The handler alone, then with the layout it causes (read back through offsetHeight).
CLICK = """(index) => {
  var head = document.querySelectorAll("table#sessions thead th")[index];
  var began = performance.now();
  head.click();
  var handled = performance.now() - began;
  document.body.offsetHeight;
  return [handled, performance.now() - began];
}"""
# Resolves when the status line stops ending in "…" (search.js's mark of a search still running).
SEARCH = """(query) => new Promise((resolve) => {
  var input = document.getElementById("q"), status = document.getElementById("search-status");
  var began = performance.now();
  input.value = query;
  document.getElementById("full-search").requestSubmit();
  (function wait() {
    var text = status.textContent;
    if (text && !/\\u2026$/.test(text)) resolve([performance.now() - began, text]);
    else setTimeout(wait, 5);
  })();
})"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, required=True, help="a site built by agenthropic build")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--query", action="append", help="a search to time (repeatable)")
    args = parser.parse_args()
    site = args.site.resolve()
    chromium = screenshots.chromium()
    if chromium is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    queries = args.query or ["zqxjkvwy", _common_word(site)]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=screenshots.FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.goto((site / "index.html").as_uri(), wait_until="load")
            page.evaluate("() => document.body.offsetHeight")
            heads = page.evaluate("() => Array.from(document.querySelectorAll('table#sessions thead th'), th => th.textContent)")
            rows = page.evaluate("() => document.querySelectorAll('table#sessions tbody tr').length")
            print(f"index: {rows:,} sessions; each column clicked {args.runs} times (median ms: handler, with layout)")
            for index, name in enumerate(heads):
                times = [page.evaluate(CLICK, index) for _ in range(args.runs)]
                print(f"  {name:10} {statistics.median(t[0] for t in times):8.1f} {statistics.median(t[1] for t in times):8.1f}")
            for query in queries:
                first, again, said = [], [], ""
                for _ in range(args.runs):
                    page = browser.new_page()  # no shard kept from the run before
                    page.goto((site / "search.html").as_uri(), wait_until="load")
                    took, said = page.evaluate(SEARCH, query)
                    first.append(took / 1000)
                    took, _ = page.evaluate(SEARCH, query)  # as a reader refining a search: the shards kept are not loaded again
                    again.append(took / 1000)
                    page.close()
                print(f"search {query!r}: median {statistics.median(first):.2f} s, again on the same page {statistics.median(again):.2f} s, "
                      f"of {args.runs}; {said}")
        finally:
            browser.close()
    return 0


def _common_word(site: Path) -> str:
    """Return the longest word of the first session's title: a word the search will find often in a generated corpus."""
    sessions = json.loads((site / "data" / "index.json").read_text(encoding="utf-8"))["sessions"]
    words = [word for word in (sessions[0].get("title") or "session").split() if word.isalpha()]
    return max(words, key=len) if words else "session"


if __name__ == "__main__":
    sys.exit(main())
