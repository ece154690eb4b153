"""The layout rules of DESIGN §2 that code can check: who may import whom (static, from the source; no imports run).

- No command module imports :mod:`harmless.cli` (it imports them to register them); they share
  :mod:`harmless.clikit` instead.
- The emulated switches (``emulators/``) import one way (fakeswitch → ios/eos → dataplane/process), and no product
  module imports them (the lab starts them as a process).
- Controller apps (``pipelines/``) never import the CLI, the lab or OSHI's lab/CLI (``harmless/oshi``): what runs in
  the controller process stays apart from what drives it.
- The layers of DESIGN §2 (:data:`LAYERS`, docs/development.md): no import circle (imports inside functions count),
  no module imports one of a higher layer, imports of harmless modules inside functions only in command-line modules
  (which load their commands lazily), only command-line modules import :mod:`harmless.bench`, and no function in
  ``harmless/`` or ``otc/`` is longer than 60 lines.
"""
from __future__ import annotations

import ast
import fnmatch
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


# ----------------------------------------------------------------------------- layers (DESIGN §2)
#: the layers of harmless's own modules, bottom to top (fnmatch patterns; the first match places a module). A module
#: imports only from its own layer or below; within a layer the graph has no circle either.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("errors", ("harmless", "harmless.errors")),
    ("procs", ("harmless.procs",)),
    ("openflow messages", ("harmless.openflow",)),
    ("ovs", ("harmless.ovs", "harmless.ovsstats")),
    ("state/journal", ("harmless.state", "harmless.journal")),
    ("inventory parts", ("harmless.switch_drivers", "harmless.switch_drivers.*", "harmless.qos.model",
                         "harmless.netbox")),
    ("inventory", ("harmless.inventory", "harmless.inventory.*")),
    ("deployment access", ("harmless.deployment", "harmless.fleet", "harmless.originals")),
    ("plan/preflight", ("harmless.plan", "harmless.preflight", "harmless.ownership")),
    ("translator and plan-level checks", ("harmless.otc", "harmless.otc.*", "harmless.health", "harmless.conformance",
                                          "harmless.results",
                                          "harmless.qos.deploy")),
    ("commands", ("harmless.orchestrator", "harmless.steps", "harmless.up", "harmless.down", "harmless.status",
                  "harmless.restore",
                  "harmless.linkwatch", "harmless.portmod", "harmless.exporter", "harmless.qos", "harmless.qos.live",
                  "harmless.ports",
                  "harmless.offline", "harmless.demo", "harmless.qos.demo", "harmless.lab", "harmless.lab.*",
                  "harmless.oshi", "harmless.oshi.lab", "harmless.oshi.demo", "harmless.oshi.*",
                  "harmless.overlay", "harmless.overlay.lab", "harmless.overlay.demo", "harmless.overlay.*",
                  "harmless.cost", "harmless.cost.*", "harmless.ha", "harmless.ha.*")),
    ("cli", ("harmless.cli", "harmless.clikit", "harmless.ops_cli", "harmless.*.cli")),
]
#: packages of the distribution outside the layered product: benchmarks, emulated switches, controller apps
OUTSIDE = ("harmless.bench", "harmless.emulators", "harmless.pipelines")
#: command-line modules: the only ones that may import harmless modules inside functions (lazy command loading)
CLI_MODULES = ("harmless.cli", "harmless.clikit", "harmless.ops_cli", "harmless.*.cli")
#: justified exceptions to the in-function rule: ``{module: reason}``
IN_FUNCTION_EXCEPTIONS: dict[str, str] = {
    "harmless.emulators.fakeswitch": "the lab switch's command line (python -m harmless.emulators.fakeswitch) loads "
                                     "only the vendor emulator it is asked for (ios or eos)",
}
MAX_FUNCTION_LINES = 60


def _outside(m: str) -> bool:
    return any(m == p or m.startswith(p + ".") for p in OUTSIDE)


def _layer(m: str) -> int:
    cli = len(LAYERS) - 1
    if any(fnmatch.fnmatchcase(m, p) for p in LAYERS[cli][1]):
        return cli
    for i, (_name, pats) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(m, p) for p in pats):
            return i
    raise KeyError(m)


def _in_function_imports() -> dict[str, list[str]]:
    """``{module: [harmless module imported inside a function]}`` over the distribution."""
    out: dict[str, list[str]] = {}
    for name, f in _modules().items():
        for fn in ast.walk(ast.parse(f.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    got = [a.name for a in node.names if a.name.split(".")[0] == "harmless"]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    got = [node.module] if node.module.split(".")[0] == "harmless" else []
                else:
                    got = []
                out.setdefault(name, []).extend(got)
    return {k: v for k, v in out.items() if v}


def _long_functions(folders: tuple[str, ...] = ("harmless", "otc")) -> list[str]:
    out = []
    for folder in folders:
        for f in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1
                    if n > MAX_FUNCTION_LINES:
                        out.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    return out


#: the modules of the core (#24 part 1), held to the rules now; the rest follows at the merge
CORE = ("harmless.state", "harmless.deployment", "harmless.orchestrator", "harmless.steps", "harmless.up",
        "harmless.down",
        "harmless.status", "harmless.restore", "harmless.linkwatch", "harmless.exporter", "harmless.fleet",
        "harmless.offline", "harmless.ports", "harmless.preflight", "harmless.qos.live", "harmless.qos.deploy",
        "harmless.health", "harmless.results", "harmless.ovsstats", "harmless.journal")


def test_every_module_of_the_product_has_a_layer():
    unplaced = []
    for m in G:
        if _outside(m):
            continue
        try:
            _layer(m)
        except KeyError:
            unplaced.append(m)
    assert unplaced == [], f"place these in LAYERS: {unplaced}"


def test_the_whole_import_graph_has_no_circle():
    assert nx.is_directed_acyclic_graph(G), sorted(nx.simple_cycles(G))


def test_the_import_graph_outside_the_switch_drivers_has_no_circle():
    sub = G.subgraph(m for m in G if not m.startswith("harmless.switch_drivers"))
    assert nx.is_directed_acyclic_graph(sub), sorted(nx.simple_cycles(sub))


def test_no_module_imports_a_higher_layer():
    bad = sorted((a, LAYERS[_layer(a)][0], b, LAYERS[_layer(b)][0]) for a, b in G.edges
                 if not _outside(a) and not _outside(b) and _layer(b) > _layer(a))
    assert bad == [], bad


def _in_function_outside_cli() -> dict[str, list[str]]:
    return {m: sorted(set(v)) for m, v in _in_function_imports().items()
            if not any(fnmatch.fnmatchcase(m, p) for p in CLI_MODULES) and m not in IN_FUNCTION_EXCEPTIONS}


def test_core_modules_import_harmless_modules_only_at_the_top():
    bad = {m: v for m, v in _in_function_outside_cli().items() if m in CORE}
    assert bad == {}, bad


def test_only_command_line_modules_import_harmless_modules_inside_functions():
    bad = _in_function_outside_cli()
    assert bad == {}, bad


def test_only_command_line_modules_import_the_benchmarks():
    bad = sorted((a, b) for a, b in G.edges if b.startswith("harmless.bench") and not a.startswith("harmless.bench")
                 and not any(fnmatch.fnmatchcase(a, p) for p in CLI_MODULES))
    assert bad == [], bad


#: the core modules whose functions are already held to 60 lines (exporter, restore, linkwatch and qos.live are cut
#: by the parallel "ops" branch and fall under the whole-tree rule below)
CORE_SHORT = ("harmless.state", "harmless.deployment", "harmless.orchestrator", "harmless.steps", "harmless.up",
              "harmless.down",
              "harmless.status", "harmless.fleet", "harmless.offline", "harmless.ports", "harmless.preflight",
              "harmless.qos.deploy", "harmless.health", "harmless.results", "harmless.ovsstats", "harmless.cli")


def test_core_functions_are_at_most_60_lines():
    core_files = {str(_modules()[m].relative_to(ROOT)) for m in CORE_SHORT if m in _modules()}
    bad = [x for x in _long_functions() if x.split(":")[0] in core_files]
    assert bad == [], bad


def test_every_function_in_harmless_and_otc_is_at_most_60_lines():
    bad = _long_functions()
    assert bad == [], bad


def test_test_modules_outside_packages_have_unique_basenames():
    """pytest's default import mode (rootdir-relative, ``prepend``) imports a test module outside a package by its
    basename: two ``test_x.py`` in folders without ``__init__.py`` stop the whole suite at collection ("import file
    mismatch"). Lab tests take a ``_lab`` suffix (``tests/lab/test_l2pt_lab.py`` beside ``tests/unit/test_l2pt.py``)."""
    seen: dict[str, Path] = {}
    clashes = []
    for f in sorted((ROOT / "tests").rglob("test_*.py")):
        if (f.parent / "__init__.py").exists() or ".faucet-suite" in f.parts:
            continue
        if f.name in seen:
            clashes.append(f"{seen[f.name].relative_to(ROOT)} and {f.relative_to(ROOT)}")
        seen.setdefault(f.name, f)
    assert not clashes, "same basename, rename one: " + "; ".join(clashes)
