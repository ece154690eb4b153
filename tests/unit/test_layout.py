"""The layout rules of DESIGN §2 that code can check: who may import whom (static, from the source; no imports run).

- No command module imports :mod:`harmless.cli` (it imports them to register them); they share
  :mod:`harmless.clikit` instead.
- The emulated switches (``emulators/``) import one way (fakeswitch → ios/eos → dataplane/process), and no product
  module imports them (the lab starts them as a process).
- Controller apps (``pipelines/``) never import the CLI, the lab or OSHI's lab/CLI (``harmless/oshi``): what runs in
  the controller process stays apart from what drives it.
"""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, Path]:
    """``{dotted module name: source file}`` for every module of the ``harmless`` distribution (pyproject's
    ``package-dir`` mapping: ``harmless.emulators`` = ``emulators/``, ...)."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = cfg["package-dir"]
    mods = {}
    for pkg in cfg["packages"]:
        base = next(k for k in sorted(dirs, key=len, reverse=True) if pkg == k or pkg.startswith(k + "."))
        folder = ROOT / dirs[base] / Path(*pkg[len(base):].strip(".").split(".")) if pkg != base else ROOT / dirs[base]
        for f in folder.glob("*.py"):
            mods[pkg if f.stem == "__init__" else f"{pkg}.{f.stem}"] = f
    return mods


def _graph() -> nx.DiGraph:
    """Import graph (every ``import``/``from ... import``, also inside functions) between the package's modules."""
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for t in targets:
                if t in mods and t != name:
                    g.add_edge(name, t)
    return g


G = _graph()


def test_the_graph_is_read():
    assert "harmless.emulators.fakeswitch" in G and "harmless.pipelines.oshi.controller" in G
    assert G.has_edge("harmless.cli", "harmless.clikit") and G.has_edge("harmless.oshi.cli", "harmless.clikit")


def test_no_command_module_imports_the_top_level_cli():
    assert sorted(m for m in G.predecessors("harmless.cli")) == []


def test_emulators_import_one_way_and_product_code_does_not_import_them():
    emu = {m for m in G if m.startswith("harmless.emulators.")}
    sub = G.subgraph(emu)
    assert nx.is_directed_acyclic_graph(sub), list(nx.simple_cycles(sub))
    for low in ("harmless.emulators.dataplane", "harmless.emulators.process"):
        assert not (set(G.successors(low)) & emu), low
    assert not G.has_edge("harmless.emulators.ios", "harmless.emulators.eos")
    assert not G.has_edge("harmless.emulators.eos", "harmless.emulators.ios")
    assert list(G.predecessors("harmless.emulators.fakeswitch")) == []
    users = {a for a, b in G.edges if b in emu and a not in emu}
    assert users == set(), users


def test_controller_apps_do_not_import_what_drives_them():
    apps = {m for m in G if m.startswith("harmless.pipelines")}
    drivers = {m for m in G if m.startswith(("harmless.oshi", "harmless.lab", "harmless.cli", "harmless.clikit"))}
    bad = {(a, b) for a, b in G.edges if a in apps and b in drivers}
    assert bad == set(), bad
