"""Orchestration graph: networkx checks and rollups, Graphviz drawing."""

from agenthropic_site.graph.dag import Rollup, build_graph, check_graph, rollups

__all__ = ["Rollup", "build_graph", "check_graph", "rollups"]
