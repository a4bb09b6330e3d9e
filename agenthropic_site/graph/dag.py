"""The orchestration DAG of one session: checks and subtree rollups over its parent -> child links.

Plain Python over adjacency lists rather than networkx: a session's agents form a tree (or a few),
walked in linear time without recursion, and a build that re-renders one changed session would
otherwise spend a tenth of a second importing networkx. tests/test_graph.py checks each function
against networkx's algorithms on random graphs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from decimal import Decimal

from agenthropic_site.parse.model import Tokens
from agenthropic_site.records import record_class


@record_class(frozen=True)
class Rollup:
    """An agent's own spend and that of its whole subtree."""

    tokens: Tokens
    cost: Decimal
    subtree_tokens: Tokens
    subtree_cost: Decimal
    depth: int


@record_class
class AgentGraph:
    """Agents (in the order first named) and parent -> child links, each link kept once."""

    children: dict[str, list[str]] = field(default_factory=dict)  # every node, with its children in link order
    parents: dict[str, list[str]] = field(default_factory=dict)

    def add(self, node: str) -> None:
        """Add an agent (once)."""
        if node not in self.children:
            self.children[node] = []
            self.parents[node] = []

    def __contains__(self, node: object) -> bool:
        return node in self.children

    def descendants(self, root: str) -> set[str]:
        """Return every agent below `root` (not `root` itself, unless a cycle leads back to it)."""
        found: set[str] = set()
        stack = list(self.children[root])
        while stack:
            node = stack.pop()
            if node not in found:
                found.add(node)
                stack.extend(self.children[node])
        return found

    def topological_order(self, nodes: set[str] | None = None) -> list[str] | None:
        """Return the agents (or those of `nodes`) parents before children, or None when they hold a cycle."""
        members = self.children.keys() if nodes is None else [node for node in self.children if node in nodes]
        waiting = {node: sum(1 for parent in self.parents[node] if nodes is None or parent in nodes) for node in members}
        ready = [node for node in members if waiting[node] == 0]
        order: list[str] = []
        while ready:
            node = ready.pop()
            order.append(node)
            for child in self.children[node]:
                if child in waiting:
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        ready.append(child)
        return order if len(order) == len(waiting) else None


def build_graph(agent_ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> AgentGraph:
    """Return the graph of a node per agent and an edge per parent -> child link (a node named only by a link is added)."""
    graph = AgentGraph()
    for agent_id in agent_ids:
        graph.add(agent_id)
    seen: set[tuple[str, str]] = set()
    for parent, child in edges:
        graph.add(parent)
        graph.add(child)
        if (parent, child) not in seen:
            seen.add((parent, child))
            graph.children[parent].append(child)
            graph.parents[child].append(parent)
    return graph


def check_graph(graph: AgentGraph, main_id: str, unlinked: Iterable[str]) -> list[str]:
    """Return the violated invariants: acyclic, one parent each, all reachable from main or listed unlinked."""
    problems = []
    if graph.topological_order() is None:
        problems.append("the agent graph has a cycle")
    for node in sorted(graph.children):
        if len(graph.parents[node]) > 1:
            problems.append(f"agent {node} has {len(graph.parents[node])} parents")
    reachable: set[str] = set()
    for root in {main_id, *unlinked}:
        if root in graph:
            reachable |= {root} | graph.descendants(root)
    for node in sorted(set(graph.children) - reachable):
        problems.append(f"agent {node} is neither reachable from the main agent nor listed as unlinked")
    return problems


def critical_path(graph: AgentGraph, root: str, durations: dict[str, int]) -> list[str]:
    """Return the chain from `root` down whose agents' durations add up most (ties: smaller ids); the graph is acyclic."""
    if root not in graph:
        return []
    order = graph.topological_order(graph.descendants(root) | {root})
    if order is None:
        raise ValueError("the agent graph has a cycle")
    total: dict[str, int] = {}
    following: dict[str, str | None] = {}  # each agent's next agent on its longest chain (no list copied per agent: deep chains stay linear)
    for node in reversed(order):
        children = sorted(child for child in graph.children[node] if child in total)
        longest = max(children, key=total.__getitem__, default=None)  # first maximum: the smallest id
        total[node] = durations.get(node, 0) + (total[longest] if longest is not None else 0)
        following[node] = longest
    path: list[str] = []
    step: str | None = root
    while step is not None:
        path.append(step)
        step = following[step]
    return path


def rollups(graph: AgentGraph, own: dict[str, tuple[Tokens, Decimal]], roots: Iterable[str]) -> dict[str, Rollup]:
    """Sum tokens and cost over each agent's subtree (children before parents); the graph is acyclic."""
    depth: dict[str, int] = {}
    for root in roots:
        if root in graph:
            depth.setdefault(root, 0)
            queue, at = [root], 0  # breadth first, as deep as the chain goes, without recursion
            while at < len(queue):
                parent = queue[at]
                at += 1
                for child in graph.children[parent]:
                    if child not in depth:
                        depth[child] = depth[parent] + 1
                        queue.append(child)
    order = graph.topological_order()
    if order is None:
        raise ValueError("the agent graph has a cycle")
    result: dict[str, Rollup] = {}
    for node in reversed(order):
        tokens, cost = own.get(node, (Tokens(), Decimal(0)))
        sub_tokens, sub_cost = tokens, cost
        for child in graph.children[node]:
            sub_tokens = sub_tokens + result[child].subtree_tokens
            sub_cost += result[child].subtree_cost
        result[node] = Rollup(tokens, cost, sub_tokens, sub_cost, depth.get(node, 0))
    return result
