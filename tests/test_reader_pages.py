"""Transcripts are read in bounded pages: stable page boundaries, an outline that lands, one page rewritten per append."""

from __future__ import annotations

import random
import re
from pathlib import Path

from agenthropic_site.pipeline.build import run_build
from agenthropic_site.render.reader import MAX_PAGE_BYTES, MAX_PAGE_MESSAGES, PAGE_BOUND, paginate
from test_incremental import SESSION, config, main_file

ANCHOR = re.compile(r'<a href="(transcript/\d+\.html)#(m\d+)"')


def test_pages_close_at_the_message_count_and_at_the_byte_bound() -> None:
    assert [len(page) for page in paginate([1] * (2 * MAX_PAGE_MESSAGES + 7))] == [MAX_PAGE_MESSAGES, MAX_PAGE_MESSAGES, 7]
    half = MAX_PAGE_BYTES // 2 + 1
    assert paginate([half, half, half]) == [[0], [1], [2]]
    assert paginate([MAX_PAGE_BYTES * 3]) == [[0]]  # one message per page at worst (the renderer keeps each under the bound)
    assert paginate([0, 5, 0, 0]) == [[0, 1, 2, 3]]  # messages that show nothing stay where they fall
    assert paginate([]) == [[]]


def test_an_append_never_moves_an_earlier_page_boundary() -> None:
    rng = random.Random(16)
    for _ in range(300):
        sizes = [rng.choice((0, 1, 100, MAX_PAGE_BYTES // 3, MAX_PAGE_BYTES)) for _ in range(rng.randrange(0, 40))]
        before = paginate(sizes)
        after = paginate(sizes + [rng.choice((0, 1, MAX_PAGE_BYTES // 2)) for _ in range(rng.randrange(1, 6))])
        assert after[: len(before) - 1] == before[:-1]
        assert after[len(before) - 1][: len(before[-1])] == before[-1]


def _inodes(site: Path) -> dict[str, int]:
    return {path.relative_to(site).as_posix(): path.stat().st_ino for path in site.rglob("*.html")} | {
        path.relative_to(site).as_posix(): path.stat().st_ino for path in site.rglob("*.js") if "search" in path.parts
    }


def test_the_outline_lands_on_its_prompts_and_an_append_rewrites_one_transcript_page(demo_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    session_page = (out / "sessions" / SESSION / "index.html").read_text()
    links = ANCHOR.findall(session_page)
    assert links, "the session page outlines its prompts"
    for page, anchor in links:
        target = (out / "sessions" / SESSION / page).read_text()
        assert f'id="{anchor}"' in target and 'class="msg user prompt' in target.split(f'id="{anchor}"')[0].rsplit("<li", 1)[-1]
    assert "<ol class=\"transcript\">" not in session_page  # the session page stays small: no transcript on it
    for path in out.rglob("*.html"):
        assert path.stat().st_size <= PAGE_BOUND, path
    before = _inodes(out)
    main = main_file(demo_corpus)
    reply = next(line for line in reversed(main.read_bytes().splitlines()) if b'"type":"assistant"' in line and b'"msg_' in line)
    with main.open("ab") as handle:  # one more reply: a new request, at the end of the last turn
        handle.write(reply.replace(b'"msg_', b'"msg_appended_', 1).replace(b'"req_', b'"req_appended_', 1) + b"\n")
    run_build(config(demo_corpus, out, tmp_path / "cache"))
    after = _inodes(out)
    rewritten = sorted(rel for rel in after if before.get(rel) != after[rel])
    session_files = [rel for rel in rewritten if rel.startswith(f"sessions/{SESSION}/")]
    pages = sorted((out / "sessions" / SESSION / "transcript").glob("*.html"), key=lambda path: int(path.stem))
    assert session_files == [f"sessions/{SESSION}/index.html", f"sessions/{SESSION}/transcript/{pages[-1].stem}.html"]
    assert f"search/s/{SESSION}.js" in rewritten
    assert not [rel for rel in rewritten if rel.startswith("sessions/") and not rel.startswith(f"sessions/{SESSION}/")]
