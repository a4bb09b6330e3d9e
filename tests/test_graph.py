"""The orchestration DAG: checks, rollups, the critical path, escaping, and the no-`dot` fallback."""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
from decimal import Decimal
from pathlib import Path

import networkx as nx
import pytest

from agenthropic_site.graph.dag import build_graph, check_graph, critical_path, rollups
from agenthropic_site.graph.draw import DrawEdge, DrawNode, dot_source, render_svg
from agenthropic_site.parse import Tokens
from conftest import DEMO_CORPUS, DOT_MISSING, build
from test_hostile_output import append_request
from test_incremental import SESSION


def test_checks_find_cycles_double_parents_and_orphans() -> None:
    good = build_graph(["m", "a", "b"], [("m", "a"), ("a", "b")])
    assert check_graph(good, "m", []) == []
    cyclic = build_graph(["m", "a", "b"], [("m", "a"), ("a", "b"), ("b", "a")])
    assert "the agent graph has a cycle" in check_graph(cyclic, "m", [])
    two_parents = build_graph(["m", "a", "b"], [("m", "a"), ("m", "b"), ("a", "b")])
    assert check_graph(two_parents, "m", []) == ["agent b has 2 parents"]
    orphan = build_graph(["m", "a", "w"], [("m", "a")])
    assert check_graph(orphan, "m", []) == ["agent w is neither reachable from the main agent nor listed as unlinked"]
    assert check_graph(orphan, "m", ["w"]) == []


def test_rollups_add_each_subtree() -> None:
    graph = build_graph(["m", "a", "b", "c"], [("m", "a"), ("a", "b"), ("m", "c")])
    own = {name: (Tokens(input=n), Decimal(n)) for name, n in (("m", 1), ("a", 10), ("b", 100), ("c", 1000))}
    sums = rollups(graph, own, ["m"])
    assert sums["m"].subtree_cost == 1111 and sums["a"].subtree_cost == 110 and sums["b"].subtree_cost == 100
    assert sums["m"].subtree_tokens.input == 1111 and (sums["b"].depth, sums["c"].depth) == (2, 1)


def test_critical_path_is_the_longest_chain_of_durations() -> None:
    graph = build_graph(["m", "a", "b", "c", "d"], [("m", "a"), ("a", "b"), ("m", "c"), ("m", "d")])
    assert critical_path(graph, "m", {"m": 5, "a": 10, "b": 10, "c": 15}) == ["m", "a", "b"]  # 25 beats 20
    assert critical_path(graph, "m", {"m": 5, "a": 10, "b": 5, "c": 15, "d": 15}) == ["m", "a", "b"]  # ties: smaller id
    assert critical_path(graph, "m", {"c": 1}) == ["m", "c"]


def _random_graph(rng: random.Random) -> tuple[list[str], list[tuple[str, str]]]:
    """A small graph: mostly a tree under "m", sometimes with extra links, cycles, orphans and repeated links."""
    nodes = ["m", *(f"a{n}" for n in range(rng.randrange(0, 12)))]
    edges = [(rng.choice(nodes[:index]), node) for index, node in enumerate(nodes) if index and rng.random() < 0.9]
    for _ in range(rng.choice((0, 0, 0, 1, 2))):
        edges.append((rng.choice(nodes), rng.choice(nodes)))  # a second parent, a cycle or a self-link
    edges += rng.sample(edges, k=min(len(edges), rng.randrange(0, 2)))  # a link written twice
    rng.shuffle(edges)
    return nodes, edges


def test_graph_functions_agree_with_networkx_on_random_graphs() -> None:
    """networkx is the oracle: the build walks its own adjacency lists (no 0.1 s import for one changed session)."""
    rng = random.Random(18)
    checked = valid = 0
    for _ in range(600):
        nodes, edges = _random_graph(rng)
        graph, oracle = build_graph(nodes, edges), nx.DiGraph()
        oracle.add_nodes_from(nodes)
        oracle.add_edges_from(edges)
        assert list(graph.children) == list(oracle.nodes)
        problems = check_graph(graph, "m", [])
        assert ("the agent graph has a cycle" in problems) == (not nx.is_directed_acyclic_graph(oracle))
        assert [p for p in problems if "parents" in p] == [f"agent {n} has {oracle.in_degree(n)} parents" for n in sorted(oracle) if oracle.in_degree(n) > 1]
        unreachable = sorted(set(oracle) - {"m"} - nx.descendants(oracle, "m"))
        assert [p for p in problems if "reachable" in p] == [f"agent {n} is neither reachable from the main agent nor listed as unlinked" for n in unreachable]
        checked += 1
        if problems:
            continue
        valid += 1
        # Costs exact in eighths, as prices times tokens are: sums do not depend on their order.
        own = {node: (Tokens(input=rng.randrange(100)), Decimal(rng.randrange(1000)) / 8) for node in nodes}
        sums = rollups(graph, own, ["m"])
        for node in nodes:
            subtree = {node} | nx.descendants(oracle, node)
            assert sums[node].subtree_cost == sum((own[n][1] for n in subtree), Decimal(0))
            assert sums[node].subtree_tokens.input == sum(own[n][0].input for n in subtree)
            assert sums[node].depth == nx.shortest_path_length(oracle, "m", node)
        durations = {node: rng.randrange(5) for node in nodes}
        path = critical_path(graph, "m", durations)
        longest = max(sum(durations[n] for n in chain) for chain in ([*nx.shortest_path(oracle, "m", leaf)] for leaf in oracle if oracle.out_degree(leaf) == 0))
        assert path[0] == "m" and all(oracle.has_edge(a, b) for a, b in zip(path, path[1:])) and oracle.out_degree(path[-1]) == 0
        assert sum(durations[n] for n in path) == longest
    assert checked == 600 and 200 < valid < 600


def test_a_chain_thousands_deep_is_walked_without_recursion() -> None:
    chain = [f"a{n}" for n in range(5_000)]
    graph = build_graph(["m", *chain], zip(["m", *chain], chain))
    assert check_graph(graph, "m", []) == []
    sums = rollups(graph, {node: (Tokens(input=1), Decimal(1)) for node in chain}, ["m"])
    assert sums["m"].subtree_cost == 5_000 and sums[chain[-1]].depth == 5_000
    assert critical_path(graph, "m", {}) == ["m", *chain]


def test_hostile_labels_are_escaped_for_graphviz(tmp_path: Path) -> None:
    evil = 'x"]; evil [label=<<b>html</b>>]; \\l\\N'
    nodes = [DrawNode("m", "main", "working", "index.html"), DrawNode("a", evil, "error", 'agents/a.html" onload="x')]
    source = dot_source(nodes, [DrawEdge("m", "a", "<TABLE>")])
    store: dict[str, bytes] = {}
    svg = render_svg(source, store.get, store.__setitem__)
    if svg is None:
        pytest.skip(DOT_MISSING)
    text = svg.decode()
    assert text.count('class="node"') == 2  # the quote never closed the label: no third node "evil"
    assert "<b>" not in text and "&lt;b&gt;html&lt;/b&gt;" in text
    assert "onload" not in text.replace("onload=&quot;", "")
    assert text.startswith("<svg") and "Generated by graphviz" not in text


def test_without_dot_the_tree_is_a_nested_list_and_one_notice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code = build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache")
    assert code == 1
    page = (tmp_path / "site" / "sessions" / "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d" / "index.html").read_text()
    assert '<ul class="tree">' in page and '<figure class="dag">' not in page
    assert os.environ["PATH"] == str(empty)


def test_a_dot_that_fails_leaves_the_tree_a_nested_list_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "dot").write_text("#!/bin/sh\necho 'Error: syntax error in line 1' >&2\nexit 1\n")
    (fake / "dot").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    caplog.set_level("INFO", logger="agenthropic_site.render.pages")
    # The command's own logger prints to stderr and does not pass records on to the root logger,
    # where caplog listens unless an earlier test's command set that logger up already.
    package = logging.getLogger("agenthropic_site")
    package.addHandler(caplog.handler)
    try:
        assert build(DEMO_CORPUS, tmp_path / "site", tmp_path / "cache") == 1  # the demo's unpriced session, as always
    finally:
        package.removeHandler(caplog.handler)
    page = (tmp_path / "site" / "sessions" / "0bc7a4f3-9ec7-4477-8626-53233c4bcc4d" / "index.html").read_text()
    assert '<ul class="tree">' in page and '<figure class="dag">' not in page
    assert any("could not draw the agent tree of session 0bc7a4f3" in record.getMessage() for record in caplog.records)


def test_the_cache_keeps_the_graph_each_session_shows_and_forgets_those_drawn_before(demo_corpus: Path, tmp_path: Path) -> None:
    """An append draws its session's graph anew (its labels show costs): the one drawn before leaves the cache, the others stay."""
    def drawn() -> set[str]:
        connection = sqlite3.connect(tmp_path / "cache" / "cache.sqlite3")
        try:
            return {digest for (digest,) in connection.execute("SELECT digest FROM svg_cache")}
        finally:
            connection.close()

    build(demo_corpus, tmp_path / "site", tmp_path / "cache")
    first = drawn()
    if not first:
        pytest.skip(DOT_MISSING)
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    pages = {s["session_id"]: (tmp_path / "site" / "sessions" / s["session_id"] / "index.html").read_text() for s in index["sessions"]}
    with_graphs = [sid for sid, page in pages.items() if '<figure class="dag">' in page]
    assert len(first) == len(with_graphs) and SESSION in with_graphs
    for _ in range(3):
        append_request(demo_corpus, SESSION)
        build(demo_corpus, tmp_path / "site", tmp_path / "cache")
    now = drawn()
    assert len(now) == len(first)  # one graph a session that shows one, not one more each append
    assert len(first - now) == 1 and len(now - first) == 1  # the appended session's, drawn anew
    assert '<figure class="dag">' in (tmp_path / "site" / "sessions" / SESSION / "index.html").read_text()
