"""The orchestration DAG of one session: checks and subtree rollups with networkx."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from collections.abc import Iterable

import networkx as nx

from agenthropic_site.parse.model import Tokens


@dataclass(frozen=True)
class Rollup:
    """An agent's own spend and that of its whole subtree."""

    tokens: Tokens
    cost: Decimal
    subtree_tokens: Tokens
    subtree_cost: Decimal
    depth: int


def build_graph(agent_ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> nx.DiGraph:
    """Return a DiGraph with a node per agent and an edge per parent -> child link."""
    graph = nx.DiGraph()
    graph.add_nodes_from(agent_ids)
    graph.add_edges_from(edges)
    return graph


def check_graph(graph: nx.DiGraph, main_id: str, unlinked: Iterable[str]) -> list[str]:
    """Return the violated invariants: acyclic, one parent each, all reachable from main or listed unlinked."""
    problems = []
    if not nx.is_directed_acyclic_graph(graph):
        problems.append("the agent graph has a cycle")
    for node in sorted(graph.nodes):
        if graph.in_degree(node) > 1:
            problems.append(f"agent {node} has {graph.in_degree(node)} parents")
    roots = {main_id, *unlinked}
    reachable = set()
    for root in roots:
        if root in graph:
            reachable |= {root} | nx.descendants(graph, root)
    for node in sorted(set(graph.nodes) - reachable):
        problems.append(f"agent {node} is neither reachable from the main agent nor listed as unlinked")
    return problems


def critical_path(graph: nx.DiGraph, root: str, durations: dict[str, int]) -> list[str]:
    """Return the chain from `root` down whose agents' durations add up most (ties: smaller ids)."""
    if root not in graph:
        return []
    best: dict[str, tuple[int, list[str]]] = {}
    for node in reversed(list(nx.topological_sort(graph.subgraph(nx.descendants(graph, root) | {root})))):
        tails = [best[child] for child in sorted(graph.successors(node)) if child in best]
        longest = max(tails, key=lambda tail: tail[0], default=(0, []))  # first maximum: the smallest id
        best[node] = (durations.get(node, 0) + longest[0], [node, *longest[1]])
    return best[root][1]


def rollups(graph: nx.DiGraph, own: dict[str, tuple[Tokens, Decimal]], roots: Iterable[str]) -> dict[str, Rollup]:
    """Sum tokens and cost over each agent's subtree (children before parents)."""
    result: dict[str, Rollup] = {}
    depth: dict[str, int] = {}
    for root in roots:
        if root in graph:
            depth.setdefault(root, 0)
            for parent, child in nx.bfs_edges(graph, root):
                depth[child] = depth[parent] + 1
    for node in reversed(list(nx.topological_sort(graph))):
        tokens, cost = own.get(node, (Tokens(), Decimal(0)))
        sub_tokens, sub_cost = tokens, cost
        for child in graph.successors(node):
            sub_tokens = sub_tokens + result[child].subtree_tokens
            sub_cost += result[child].subtree_cost
        result[node] = Rollup(tokens, cost, sub_tokens, sub_cost, depth.get(node, 0))
    return result
