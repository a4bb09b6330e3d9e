"""Orchestration graph: checks and subtree rollups (graph.dag), Graphviz drawing (graph.draw)."""
