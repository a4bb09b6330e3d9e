"""The demo pages in a real browser, light and dark: text people can read, landmarks and links assistive technology can name.

Checked in headless Chromium (as tests/test_browser.py, whose lookup and skip this module shares)
on the computed styles, so what is measured is what a reader sees:

- every piece of text outside the charts has a contrast of at least 4.5 to 1 with what is
  behind it (3 to 1 for large text), WCAG 2's level AA; the colours are composited through
  transparent backgrounds and the opacity of the element and its ancestors;
- landmarks of one kind (the site's navigation, each transcript pager) have names that tell
  them apart, so a screen reader's list of landmarks is not "navigation, navigation";
- nothing focusable sits inside an element shown as one image (`role="img"`): such links could
  be reached with Tab but never named;
- the page says its language and every image has a text alternative.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_browser import CHROMIUM, demo_pages

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's `chromium` package is not installed (apt-get install chromium; .ci/run installs it)"
)

# Returns one line for each problem found on the page; [] when there is none.
AUDIT = """() => {
  const problems = [];
  const rgba = text => {
    const parts = text.match(/rgba?\\(([^)]*)\\)/)[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const behind = element => {
    const layers = [];
    for (let e = element; e; e = e.parentElement) {
      const colour = rgba(getComputedStyle(e).backgroundColor);
      if (colour[3] > 0) layers.push(colour);
      if (colour[3] >= 1) break;
    }
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255, 1]);
  };
  const opacity = element => {
    let value = 1;
    for (let e = element; e; e = e.parentElement) value *= Number(getComputedStyle(e).opacity);
    return value;
  };
  const luminance = colour => {
    const [r, g, b] = colour.slice(0, 3).map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => {
    const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (light + 0.05) / (dark + 0.05);
  };
  for (const element of document.body.querySelectorAll("*")) {
    if (element.closest("svg")) continue;
    if (![...element.childNodes].some(node => node.nodeType === Node.TEXT_NODE && node.textContent.trim())) continue;
    const style = getComputedStyle(element);
    if (style.visibility !== "visible" || element.getClientRects().length === 0) continue;
    const background = behind(element);
    const colour = rgba(style.color);
    const ink = over([colour[0], colour[1], colour[2], colour[3] * opacity(element)], background);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const ratio = contrast(ink, background);
    if (ratio < needed) {
      problems.push(`contrast ${ratio.toFixed(2)} < ${needed}: <${element.localName} class="${element.className}"> ` +
                    `${JSON.stringify(element.textContent.trim().slice(0, 40))} (${style.color} on rgb(${background.slice(0, 3).join(", ")}))`);
    }
  }
  const names = {};
  for (const landmark of document.querySelectorAll("nav, main, header, footer, aside, [role=navigation], [role=search]")) {
    const key = `${landmark.getAttribute("role") || landmark.localName}: ${landmark.getAttribute("aria-label") || ""}`;
    names[key] = (names[key] || 0) + 1;
  }
  for (const [key, count] of Object.entries(names)) if (count > 1) problems.push(`${count} landmarks named alike (${key})`);
  for (const inside of document.querySelectorAll("[role=img] a[href], [role=img] button, [role=img] [tabindex]")) {
    problems.push(`focusable <${inside.localName}> inside role=img: ${inside.outerHTML.slice(0, 80)}`);
  }
  if (!document.documentElement.lang) problems.push("no lang on <html>");
  for (const image of document.querySelectorAll("img:not([alt])")) problems.push(`image without alt: ${image.outerHTML.slice(0, 80)}`);
  return problems;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_demo_pages_are_readable_and_their_parts_named(demo_site: Path, browser, scheme: str) -> None:
    pages = {**demo_pages(demo_site), "search": demo_site / "search.html"}
    context = browser.new_context(color_scheme=scheme)
    try:
        found = {}
        for which, path in pages.items():
            page = context.new_page()
            page.goto(path.as_uri(), wait_until="load")
            page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")  # the text inside too
            if problems := page.evaluate(AUDIT):
                found[which] = problems
            page.close()
    finally:
        context.close()
    assert not found, found


def test_the_audit_sees_low_contrast_duplicate_landmarks_and_links_inside_an_image(browser, tmp_path: Path) -> None:
    """The audit itself: a page with each fault is reported for each (so a quiet audit means something)."""
    page_path = tmp_path / "faults.html"
    page_path.write_text(
        '<!doctype html><html><body style="background:#fff"><p style="color:#999">faint text</p>'
        '<p style="color:#000;opacity:.3">see-through text</p>'
        "<nav><a href='#'>one</a></nav><nav><a href='#'>two</a></nav>"
        '<svg role="img" aria-label="chart"><a href="#x"><circle r="3"/></a></svg><img src="x.png"></body></html>',
        encoding="utf-8",
    )
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(page_path.as_uri(), wait_until="load")
        problems = page.evaluate(AUDIT)
    finally:
        context.close()
    assert [line.split(":")[0].split(" <")[0].split(" ")[0] for line in problems] == [
        "contrast", "contrast", "2", "focusable", "no", "image",
    ], problems
