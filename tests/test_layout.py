"""The package's layout: no import cycle, and every import points down the layers of docs/architecture.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "agenthropic_site"
# Lowest first. A module imports its own unit (top-level module or package) or a unit of a lower
# layer, never one of its own layer or above: commands -> pipeline -> stages. Kept in step with
# the table in docs/architecture.md ("Layers"), which test_the_architecture_doc_states_these_layers checks.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "heap", "ids", "places", "digits", "records", "terminal", "locks", "batches"),
    ("console", "errors"),
    ("config",),
    ("corpus", "parse"),
    ("cost", "graph"),
    ("cache",),
    ("model", "live"),
    ("render",),
    ("pipeline", "audit"),
    ("commands",),
    ("cli",),
    ("entry",),
    ("__main__",),
)
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def module_name(path: Path) -> str:
    """Return the dotted name of a module file of the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    """Return the layer unit of a dotted module name: its top-level module or package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def resolve(name: str, modules: set[str]) -> str:
    """Return the module an imported dotted name lives in (`from pkg import module` names a module)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def import_graph() -> nx.DiGraph:
    """Return every import between the package's modules, those inside functions included."""
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                if name.split(".")[0] == "agenthropic_site":
                    target = resolve(name, modules)
                    if target != module:
                        graph.add_edge(module, target)
    return graph


def test_every_unit_has_a_layer() -> None:
    """A new top-level module or package must be given its place in the layers."""
    units = {unit_of(module) for module in import_graph()}
    assert units - set(RANK) == set(), "add the new unit to LAYERS and to docs/architecture.md"
    assert set(RANK) - units == set(), "a unit in LAYERS no longer exists"


def test_no_import_cycle() -> None:
    """No module imports, even inside a function, a module that imports it back."""
    graph = import_graph()
    assert graph.number_of_edges() > 50  # the graph really was read
    cycles = sorted(sorted(cycle) for cycle in nx.simple_cycles(graph))
    assert cycles == []


def test_imports_point_down_the_layers() -> None:
    """Commands use the pipeline, the pipeline uses the stages, and no stage reaches up."""
    upward = sorted(
        f"{source} -> {target}"
        for source, target in import_graph().edges
        if unit_of(source) != unit_of(target) and RANK[unit_of(target)] >= RANK[unit_of(source)]
    )
    assert upward == []


def test_the_layer_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The rule is not vacuous: a stage importing the pipeline breaks it."""
    source, target = "agenthropic_site.parse.lines", "agenthropic_site.pipeline.build"
    assert RANK[unit_of(target)] >= RANK[unit_of(source)]
    assert resolve("agenthropic_site.cache.Cache", set(import_graph())) == "agenthropic_site.cache"


def test_render_never_touches_the_cache_or_the_pipeline() -> None:
    """render/ gets the model and a read-only view loader: it imports neither the cache nor the pipeline."""
    reached = {
        target
        for source, target in import_graph().edges
        if unit_of(source) == "render" and unit_of(target) in ("cache", "pipeline", "live", "commands")
    }
    assert reached == set()


def test_the_architecture_doc_states_these_layers() -> None:
    """docs/architecture.md lists the same layers, lowest first, in its Layers table."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [row for row in section.splitlines() if re.match(r"\|\s*\d+\s*\|", row)]
    documented = [tuple(re.findall(r"`([a-z_]+)`", row.split("|")[2])) for row in rows]
    assert documented == [tuple(sorted(units)) for units in LAYERS]
