"""The built demo site: every link resolves, pages are well formed, output is deterministic."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import DEMO_CORPUS, DEMO_EXPECTED, NEEDS_DOT, REPO, build_subprocess, tree_bytes

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class PageParser(HTMLParser):
    """Collect links and check that every opened element is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.first_head_child: str | None = None
        self.in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.in_head and self.first_head_child is None:
            self.first_head_child = f"{tag} {dict(attrs).get('http-equiv', '')}"
        if tag == "head":
            self.in_head = True
        for name, value in attrs:
            if name in ("href", "src", "xlink:href") and value:
                self.links.append(value)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src", "xlink:href") and value:
                self.links.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.in_head = False
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()


def parse_page(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_index_links_every_project_and_session(demo_site: Path) -> None:
    truth = json.loads((DEMO_EXPECTED / "corpus.json").read_text())
    links = set(parse_page(demo_site / "index.html").links)
    for session_id in truth["sessions"]:
        assert f"sessions/{session_id}/index.html" in links
    index = json.loads((demo_site / "data" / "index.json").read_text())
    for project in index["projects"]:
        assert f"projects/{project['key']}/index.html" in links
    assert {p["project"] for p in index["projects"]} == set(truth["sessions"].values())


def test_every_internal_link_resolves(demo_site: Path) -> None:
    broken = []
    for page in pages(demo_site):
        for link in parse_page(page).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("#") or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(demo_site)} -> {link}")
    assert broken == []


def test_pages_are_well_formed_with_csp_first(demo_site: Path) -> None:
    for page in pages(demo_site):
        parser = parse_page(page)
        assert parser.problems == [], f"{page}: {parser.problems[:3]}"
        assert parser.stack == [], f"{page}: unclosed {parser.stack}"
        assert parser.first_head_child == "meta Content-Security-Policy", page


def test_no_absolute_path_or_build_time_in_output(demo_site: Path, tmp_path: Path) -> None:
    for rel, data in tree_bytes(demo_site).items():
        text = data.decode("utf-8", "replace")
        assert str(REPO) not in text and str(demo_site) not in text, rel


@pytest.mark.slow
def test_builds_are_byte_identical_across_tz_hashseed_and_paths(tmp_path: Path) -> None:
    first = build_subprocess(DEMO_CORPUS, tmp_path / "one" / "site", tmp_path / "c1", env={"TZ": "UTC", "PYTHONHASHSEED": "1", "LC_ALL": "C"})
    second = build_subprocess(DEMO_CORPUS, tmp_path / "elsewhere" / "two", tmp_path / "c2",
                              env={"TZ": "Pacific/Kiritimati", "PYTHONHASHSEED": "4242", "LC_ALL": "C.UTF-8"})
    assert first.returncode in (0, 1) and second.returncode in (0, 1), (first.stderr, second.stderr)
    a, b = tree_bytes(tmp_path / "one" / "site"), tree_bytes(tmp_path / "elsewhere" / "two")
    assert sorted(a) == sorted(b)
    assert [rel for rel in a if a[rel] != b[rel]] == []


@NEEDS_DOT
def test_committed_site_is_the_build_of_the_demo_corpus(demo_site: Path) -> None:
    committed = tree_bytes(REPO / "site")
    fresh = tree_bytes(demo_site)
    assert sorted(committed) == sorted(fresh), "site/ is stale: run `make site` and commit it"
    assert [rel for rel in fresh if fresh[rel] != committed[rel]] == [], "site/ is stale: run `make site` and commit it"


def test_no_change_rebuild_opens_nothing_and_writes_nothing(tmp_path: Path) -> None:
    from agenthropic_site.pipeline.build import run_build
    from agenthropic_site.config import BuildConfig, parse_instant

    config = BuildConfig(corpus=DEMO_CORPUS, out=tmp_path / "site", cache=tmp_path / "cache", now=parse_instant("2026-06-01T00:00:00Z"), quiet=True)
    first = run_build(config)
    assert first.parsed == first.sessions > 0 and first.transcripts_opened > 0
    second = run_build(config)
    assert (second.parsed, second.transcripts_opened, second.pages_written) == (0, 0, 0)
    assert second.pages_unchanged == first.pages_written


def test_session_json_follows_the_data_contract(demo_site: Path) -> None:
    required = {"session_id", "project", "title", "cwd", "started_at", "ended_at", "status", "excluded", "tokens", "cost_usd",
                "agents", "edges", "unlinked_agents", "compactions", "warnings"}
    agent_keys = {"agent_id", "parent_agent_id", "edge_source", "kind", "agent_type", "status", "outcome_cause", "tokens",
                  "cost_usd", "subtree_tokens", "subtree_cost_usd"}
    files = sorted((demo_site / "data" / "sessions").glob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text())
        assert required <= set(data), path.name
        assert path.stem == data["session_id"]
        for agent in data["agents"]:
            assert agent_keys <= set(agent)
            assert agent["status"] in ("working", "waiting", "completed", "error", "unknown")
        if data["excluded"] is None:
            assert re.fullmatch(r"\d+\.\d{6,}", data["cost_usd"])
        else:
            assert data["cost_usd"] is None and "reason" in data["excluded"]
