"""Orchestration graph: networkx checks and rollups (graph.dag), Graphviz drawing (graph.draw).

Nothing is imported here: networkx takes a tenth of a second to import, and a build that
reuses every cached session view never needs it.
"""
