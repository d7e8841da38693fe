"""The package's architecture, checked from the source: layers, import cycles, module sizes.

Every ``import`` / ``from … import`` in ``sgr/``, ``cypher/``, ``loaders/`` and ``cli.py`` is read with :mod:`ast`,
wherever it stands (module level, inside functions, under ``if TYPE_CHECKING``), plus the lazy forms
``importlib.import_module("sgr.x")`` and the registry's ``"sgr.x:factory"`` strings. Imports point down the layers
(lowest first)::

    sgr.core → sgr.graph → (cypher, loaders: only sgr.core and sgr.graph) → sgr.llm → sgr.datasets → sgr.retrieval
    → sgr.methods → sgr.evidence → sgr.evaluation → sgr.api → sgr (the package's lazy façade) → sgr.langchain
    → sgr.cli → cli.py

Inside one layer imports may go either way, but no module may reach itself again (no cycle anywhere). No module is
over 600 lines; at most 8 modules lie directly under ``sgr/``.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "sgr", ROOT / "cypher", ROOT / "loaders", ROOT / "cli.py"]
MAX_LINES = 600
MAX_TOP_MODULES = 8

#: (module prefix, layer); the longest matching prefix wins. Equal layers may import each other (cycles aside).
LAYERS: list[tuple[str, float]] = [
    ("sgr.core", 0), ("sgr.graph", 1), ("cypher", 2), ("loaders", 2), ("sgr.llm", 3), ("sgr.datasets", 4),
    ("sgr.retrieval", 5), ("sgr.methods", 6), ("sgr.evidence", 7), ("sgr.evaluation", 8), ("sgr.api", 9),
    ("sgr", 9.5), ("sgr.langchain", 10), ("sgr.cli", 11), ("cli", 12),
]
#: cypher/ and loaders/ sit beside each other on top of the graph layer and may use nothing else
ONLY_CORE_AND_GRAPH = ("cypher", "loaders")

_REGISTRY_STRING = re.compile(r"^((?:sgr|cypher|loaders)(?:\.\w+)+):\w+$")


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    """Dotted module name → file, for every Python file of the checked sources."""
    out = {}
    for src in SOURCES:
        files = [src] if src.is_file() else sorted(src.rglob("*.py"))
        for path in files:
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _resolve(name: str) -> str | None:
    """The known module ``name`` refers to: itself, else its closest known parent package."""
    mods = modules()
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


@lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """Module → the known modules it imports (anywhere in its source)."""
    graph: dict[str, set[str]] = {}
    for module, path in modules().items():
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {_resolve(a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = _base(module, path, node)
                for alias in node.names:  # `from pkg import submodule` imports the submodule
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in modules() else _resolve(base))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                m = _REGISTRY_STRING.match(node.value)
                if m:
                    targets.add(_resolve(m.group(1)))
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                  == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)):
                targets.add(_resolve(node.args[0].value))
        graph[module] = {t for t in targets if t and t != module}
    return graph


def layer(module: str) -> tuple[str, float]:
    best = max((p for p in LAYERS if module == p[0] or module.startswith(p[0] + ".")), key=lambda p: len(p[0]))
    return best


def layer_violations(graph: dict[str, set[str]] | None = None) -> set[str]:
    out = set()
    for module, targets in (graph if graph is not None else import_graph()).items():
        group, rank = layer(module)
        for target in targets:
            tgroup, trank = layer(target)
            if group in ONLY_CORE_AND_GRAPH and tgroup != group and tgroup not in ("sgr.core", "sgr.graph"):
                out.add(f"{module} -> {target}")
            elif trank > rank:
                out.add(f"{module} -> {target}")
    return out


def cycles(graph: dict[str, set[str]] | None = None) -> set[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    graph = graph if graph is not None else import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    counter = [0]

    def visit(v: str) -> None:  # recursion depth is bounded by the module count (~120)
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def long_modules() -> set[str]:
    return {str(p.relative_to(ROOT)) for p in modules().values() if len(p.read_text().splitlines()) > MAX_LINES}


# -- the checker itself can fail --------------------------------------------------------------------------------------
def test_the_walk_sees_lazy_and_relative_imports() -> None:
    graph = import_graph()
    assert "sgr.methods.sgr.answerer" in graph["sgr.methods.registry"]  # a "module:factory" registry string
    assert "sgr.api" in graph["sgr.cli.ask"]  # an import inside a function
    assert "sgr.core.errors" in graph["sgr.api"]
    assert layer("sgr.methods.sgr.answerer") == ("sgr.methods", 6) and layer("cli") == ("cli", 12)


def test_a_cycle_and_an_upward_import_are_found() -> None:
    fake = {"sgr.core.text": {"sgr.api"}, "sgr.api": {"sgr.core.text"}, "cypher.x": {"sgr.llm.client", "sgr.graph"},
            "sgr.methods.a": {"sgr.methods.b"}, "sgr.methods.b": {"sgr.retrieval.c"}, "sgr.retrieval.c": set()}
    assert cycles(fake) == {frozenset({"sgr.core.text", "sgr.api"})}
    assert layer_violations(fake) == {"sgr.core.text -> sgr.api", "cypher.x -> sgr.llm.client"}


# -- the rules --------------------------------------------------------------------------------------------------------
def test_imports_point_down_the_layers() -> None:
    found = layer_violations()
    assert not found, "imports that point up a layer (or out of cypher/loaders):\n  " + "\n  ".join(sorted(found))


def test_no_import_cycles() -> None:
    found = cycles()
    assert not found, "import cycles:\n  " + "\n  ".join(" ↔ ".join(sorted(c)) for c in found)


def test_no_module_over_600_lines() -> None:
    found = long_modules()
    assert not found, f"modules over {MAX_LINES} lines: {sorted(found)}"


def test_at_most_8_modules_directly_under_sgr() -> None:
    top = sorted(p.name for p in (ROOT / "sgr").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_MODULES, top


def test_cli_commands_go_through_the_api() -> None:
    """One way in: a command module of ``sgr/cli/`` reaches the package only through ``sgr.api`` (plus the CLI's own
    modules and the errors it turns into exit codes); ``render.py``, which formats what the API returns, may read the
    record types it prints."""
    allowed = ("sgr.api", "sgr.cli", "sgr.core.errors")
    offenders = []
    for module, targets in import_graph().items():
        if not module.startswith("sgr.cli.") or module == "sgr.cli.render":
            continue
        offenders += [f"{module} imports {t}" for t in sorted(targets)
                      if t.startswith(("sgr", "cypher", "loaders")) and not t.startswith(allowed)]
    assert not offenders, "\n".join(offenders)
