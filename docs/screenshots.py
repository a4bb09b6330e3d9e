"""Screenshots of a built site for the docs: PNGs taken by headless Chromium from file:// pages.

    make screenshots                                   # builds the demo site, then runs this
    .venv/bin/python docs/screenshots.py [--site site] [--out docs/screenshots]

Writes one PNG for each entry of SHOTS into the output folder (index, usage, project, session,
context, agent, transcript and report), each one viewport wide and at most one viewport high
(default 1280x900 at device scale 1, light colour scheme): the index page and its usage section,
a project's weekly charts, the Agents section (graph and agent table) and the context growth of
the demo session with the most agents, the first subagent page of that session, the first page
of its transcript, and the build report, one after the other in one page. The session is chosen
from the site's JSON mirror (data/sessions/*.json), so the script works on any built site whose
busiest session has a subagent. A page that logs a console error, throws or fails a request
stops the script (exit code 1) rather than leaving a picture of a broken page.

Chromium is the system's (Debian's `chromium` package), driven by Playwright's sync API with
`executable_path`; `playwright install` is never needed (`--chromium PATH` picks another binary).
tests/test_browser.py imports `chromium()`, `FLAGS` and `demo_pages()` from here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Headless, offline and quiet: no sandbox (containers, root), no GPU, no background traffic.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
WIDTH, HEIGHT = 1280, 900
# Screenshot name -> (page from demo_pages(), CSS selector of the element whose section starts the picture, or None for the top).
SHOTS = {
    "index": ("index", None),
    "session": ("session", "figure.dag"),
    "agent": ("agent", None),
    "transcript": ("transcript", "details.call"),
    "usage": ("index", "section.usage"),
    "context": ("session", "section.context-growth"),
    "project": ("project", "section.weeks"),
    "report": ("report", None),
}


def chromium() -> str | None:
    """The system's Chromium executable (Debian's `chromium`), or None when it is not installed."""
    found = shutil.which("chromium")
    if found:
        return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def demo_pages(site: Path) -> dict[str, Path]:
    """Pick a project, the session with the most agents, one of its subagent pages, and the build report."""
    index = json.loads((site / "data" / "index.json").read_text())
    project = index["projects"][0]["key"]
    sessions = [json.loads(p.read_text()) for p in sorted((site / "data" / "sessions").glob("*.json"))]
    session = max(sessions, key=lambda s: (len(s["agents"]), s["session_id"]))
    agent = next(a["agent_id"] for a in session["agents"] if a["parent_agent_id"] is not None)
    return {
        "index": site / "index.html",
        "project": site / "projects" / project / "index.html",
        "session": site / "sessions" / session["session_id"] / "index.html",
        "agent": site / "sessions" / session["session_id"] / "agents" / f"{agent}.html",
        "transcript": site / "sessions" / session["session_id"] / "transcript" / "1.html",
        "report": site / "report.html",
    }


def take_screenshots(site: Path, out: Path, *, width: int = WIDTH, height: int = HEIGHT,
                     executable: str | None = None, browser=None) -> dict[str, Path]:
    """Write one PNG per entry of SHOTS into `out` (width x at most height pixels) and return their paths.

    `browser` is an already launched Playwright Browser (the tests pass theirs); without it the
    system's Chromium (or `executable`) is launched with FLAGS and closed afterwards.
    """
    if browser is not None:
        return _shoot(browser, site, out, width, height)
    from playwright.sync_api import sync_playwright

    executable = executable or chromium()
    if executable is None:
        raise RuntimeError("no Chromium found: install Debian's `chromium` package or pass --chromium PATH")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS, headless=True)
        try:
            return _shoot(browser, site, out, width, height)
        finally:
            browser.close()


def _shoot(browser, site: Path, out: Path, width: int, height: int) -> dict[str, Path]:
    pages = demo_pages(site)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1,
                                  color_scheme="light", reduced_motion="reduce")
    context.set_default_timeout(15_000)
    # One page for every picture: opening a page starts a renderer process, about as long as loading one.
    problems: list[str] = []
    page = context.new_page()
    page.on("console", lambda message: message.type == "error" and problems.append(f"console: {message.text}"))
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"requestfailed: {request.url}"))
    try:
        for name, (which, anchor) in SHOTS.items():
            problems.clear()
            page.goto(pages[which].resolve().as_uri(), wait_until="load")
            top = 0.0
            if anchor is not None:
                # Start at the top of the section that holds the anchor, so its heading shows.
                top = page.locator(anchor).first.evaluate(
                    "e => (e.closest('section') || e).getBoundingClientRect().top + window.scrollY")
            total = page.evaluate("document.documentElement.scrollHeight")
            if problems:
                raise RuntimeError(f"{pages[which]}: " + "; ".join(problems))
            written[name] = out / f"{name}.png"
            clip = {"x": 0, "y": top, "width": width, "height": min(height, total - top)}
            page.screenshot(path=written[name], full_page=True, clip=clip, animations="disabled")
    finally:
        context.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="docs/screenshots.py",
        description="Take PNG screenshots of a built agenthropic site (index, usage, a project, the busiest session's "
                    "graph and context growth, one agent page, a transcript page, the build report) with the system's headless Chromium.",
        epilog="Build the site first (`make site`); `make screenshots` does both.")
    parser.add_argument("--site", type=Path, default=REPO / "site", help="the built site folder (default: site/ in the repository)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots",
                        help="where the PNGs go (default: docs/screenshots/ in the repository)")
    parser.add_argument("--width", type=int, default=WIDTH, help=f"viewport width in pixels (default {WIDTH})")
    parser.add_argument("--height", type=int, default=HEIGHT, help=f"viewport height, the most a picture shows (default {HEIGHT})")
    parser.add_argument("--chromium", metavar="PATH", help="the Chromium executable (default: the system's `chromium`)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file() or not (args.site / "data" / "index.json").is_file():
        print(f"{args.site} is not a built agenthropic site: run `make site` first", file=sys.stderr)
        return 2
    try:
        written = take_screenshots(args.site, args.out, width=args.width, height=args.height, executable=args.chromium)
    except RuntimeError as error:
        print(f"screenshots: {error}", file=sys.stderr)
        return 1
    for path in written.values():
        print(f"{path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
