"""The Python package's layering (docs/architecture.md, "Python layering"):
every import in python/tritium, at module level or inside a function, read
with `ast`, must go down or sideways: no cycle between modules, no lower
layer importing a higher one, and the compiler frontend and the interpreter
(side by side) never import each other. A lower layer that must call up
registers a hook instead (e.g. the frontend's call-jit caller on IRBuilder)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "tritium"
EXTENSIONS = {"tritium._core"}   # the Rust extension: below everything

# layer of each top-level part of the package; higher numbers sit above
LAYERS = {
    "_core": 0, "version": 0, "settings": 0, "errors": 0, "grid": 0, "language": 0,
    "compiler": 1, "interpreter": 1, "backends": 1,
    "runtime": 2, "nki": 2,
    "compile": 3, "ast_source": 3, "tools": 3, "testing": 3, "knobs": 3, "as_triton": 3, "profiler": 3, "_C": 3,
    "": 3,
}
SIDE_BY_SIDE = {"compiler", "interpreter"}


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module -> {imported tritium module: line of the first such import}."""
    modules = _modules(root)
    known = set(modules) | EXTENSIONS
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")[:len(name.split(".")) + is_package - node.level]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                # `from pkg import sub` imports the submodule; `from mod import name` the module
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            for t in targets:
                while t and t not in known:   # `import tritium.language.core as x` names a module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    edges.setdefault(t, node.lineno)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}   # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_violations(graph: dict[str, dict[str, int]]) -> list[str]:
    out = []
    for m, edges in sorted(graph.items()):
        for t, line in sorted(edges.items()):
            pm, pt = _part(m), _part(t)
            if LAYERS[pt] > LAYERS[pm]:
                out.append(f"{m} (layer {LAYERS[pm]}) imports {t} (layer {LAYERS[pt]}) at line {line}")
            elif pm != pt and {pm, pt} <= SIDE_BY_SIDE:
                out.append(f"{m} imports {t} at line {line}: the compiler and the interpreter sit side by side")
    return out


def test_every_part_of_the_package_has_a_layer():
    assert {_part(m) for m in import_graph()} <= set(LAYERS)


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_layer_imports_a_higher_one():
    bad = layer_violations(import_graph())
    assert not bad, "\n".join(bad)


# -- the checks can fail -------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "tritium"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "runtime/__init__.py": "",
        "runtime/jit.py": "from . import driver\n",
        "runtime/driver.py": "def f():\n    from .jit import JITFunction\n",
    })
    assert find_cycle(import_graph(root)) == ["tritium.runtime.driver", "tritium.runtime.jit",
                                              "tritium.runtime.driver"]


def test_an_upward_import_is_found(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "language/__init__.py": "",
        "language/core.py": "def f():\n    from ..runtime import jit\n",
        "runtime/__init__.py": "",
        "runtime/jit.py": "",
        "interpreter/__init__.py": "import tritium.compiler.ir\n",
        "compiler/__init__.py": "",
        "compiler/ir.py": "",
    })
    bad = layer_violations(import_graph(root))
    assert bad == ["tritium.interpreter imports tritium.compiler.ir at line 1: the compiler and the interpreter "
                   "sit side by side",
                   "tritium.language.core (layer 0) imports tritium.runtime.jit (layer 2) at line 2"]


@pytest.mark.parametrize("text,target", [
    ("from tritium import _core\n", "tritium._core"),
    ("from .. import language\n", "tritium.language"),
    ("from ..language.core import tensor\n", "tritium.language.core"),
    ("import tritium.language.core as c\n", "tritium.language.core"),
])
def test_import_forms_resolve_to_modules(tmp_path, text, target):
    root = _tree(tmp_path, {"__init__.py": "", "language/__init__.py": "", "language/core.py": "",
                            "runtime/__init__.py": "", "runtime/jit.py": text})
    assert target in import_graph(root)["tritium.runtime.jit"]
