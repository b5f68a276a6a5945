"""The Python subset kernels are written in, checked in one place for both ways
a kernel runs: the compiler frontend checks each function it compiles and the
interpreter each function it runs, so a kernel the interpreter accepts never
fails these checks when compiled.

It owns two rules: which constructs a kernel may contain (checked on the
source, every path, once per function) and which values a kernel may read
from its globals and closure cells (checked against their current values on
each compile or launch, since a global may be rebound)."""
from __future__ import annotations

import ast
import builtins
import types
from dataclasses import dataclass
from typing import Any, Callable

from ..settings import allow_non_constexpr_globals
from . import builtins as _builtins
from . import core
from .dtypes import dtype
from .errors import CompilationError, UnsupportedLanguageConstruct
from .kernel_function import KernelFunction
from .source import FunctionSource

#: Python builtins a kernel may use (the compiler gives each its kernel meaning).
KERNEL_BUILTINS = frozenset({
    "len", "int", "float", "bool", "isinstance", "getattr", "hasattr", "enumerate", "zip", "list", "tuple",
    "type", "divmod", "round", "repr", "str", "range", "min", "max", "abs", "print"})
#: Accepted by the interpreter only, since debugging is what it is for:
#: `breakpoint()` and importing a debugger (`import pdb; pdb.set_trace()`).
INTERPRETER_ONLY_BUILTINS = frozenset({"breakpoint"})
DEBUGGER_MODULES = frozenset({"pdb", "ipdb", "pudb"})

def _static(v: Any) -> bool:
    return not isinstance(v, core.tensor) and not (isinstance(v, (tuple, list)) and not all(_static(x) for x in v))


def kernel_minmax(py_fn: Callable, tl_name: str) -> Callable:
    """The kernel meaning of `min`/`max` (both the compiler and the interpreter
    use it): Python's on compile-time values, a chain of tl.minimum /
    tl.maximum as soon as one argument is a tensor."""
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(core._unwrap(args[0]), (tuple, list)):
            args = tuple(core._unwrap(args[0]))
        if all(_static(a) for a in args):
            return py_fn(*[core._unwrap(a) for a in args], **kwargs)
        acc = args[0]
        for a in args[1:]:
            acc = getattr(_builtins, tl_name)(acc, a, **kwargs)
        return acc
    call.__name__ = py_fn.__name__
    return call


_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.If, ast.For, ast.While,
               ast.Assert, ast.Pass)
_EXPRESSIONS = (ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Compare, ast.Call, ast.JoinedStr,
                ast.FormattedValue, ast.Constant, ast.Attribute, ast.Subscript, ast.Starred, ast.Name, ast.List,
                ast.Tuple, ast.Slice)
_NAMES = {"Break": "break", "Continue": "continue", "With": "with", "Lambda": "lambda", "Try": "try",
          "TryStar": "try", "Raise": "raise", "Delete": "del", "ClassDef": "class", "FunctionDef": "def",
          "AsyncFunctionDef": "async def", "ListComp": "list comprehension",
          "GeneratorExp": "generator expression", "DictComp": "dict comprehension",
          "SetComp": "set comprehension", "Yield": "yield", "YieldFrom": "yield from", "Await": "await",
          "AsyncFor": "async for", "AsyncWith": "async with", "Global": "global", "Nonlocal": "nonlocal",
          "Set": "set literal", "Dict": "dict literal", "NamedExpr": ":=", "Match": "match",
          "Import": "import", "ImportFrom": "import", "While": "while"}


def construct_name(node: ast.AST) -> str:
    """The construct as a user writes it (`'try'`, `'lambda'`)."""
    return _NAMES.get(type(node).__name__, type(node).__name__)


@dataclass(frozen=True)
class Refusal:
    node: ast.AST
    message: str
    unsupported: bool = True   # an unsupported construct, rather than a misuse of a supported one
    interpreter_only: bool = False


def _imports_debugger(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return all(a.name.split(".")[0] in DEBUGGER_MODULES for a in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in DEBUGGER_MODULES


def _construct_refusal(node: ast.AST, loops: int) -> Refusal | None:
    if isinstance(node, (ast.For, ast.While)) and node.orelse:
        what = "for" if isinstance(node, ast.For) else "while"
        return Refusal(node, f"'{what} ... else' is not supported in kernels")
    if isinstance(node, ast.Return) and loops:
        return Refusal(node, "'return' inside a loop is not supported in kernels")
    if _imports_debugger(node):
        return Refusal(node, "importing a debugger only works in the interpreter (TRITIUM_INTERPRET=1); "
                             "remove it to compile", interpreter_only=True)
    if isinstance(node, ast.Compare) and len(node.ops) != 1:
        return Refusal(node, "chained comparisons (a < b < c) are not supported in kernels")
    if isinstance(node, ast.AugAssign) and not isinstance(node.target, (ast.Name, ast.Attribute)):
        return Refusal(node.target, "augmented assignment is only supported on names in kernels", False)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
            bad = _bad_target(target)
            if bad is not None:
                return Refusal(bad, f"assignment to '{construct_name(bad)}' is not supported in kernels "
                                    "(tensors are immutable: use tl.store or tl.where)")
    if isinstance(node, (ast.stmt, ast.expr)) and not isinstance(node, _STATEMENTS + _EXPRESSIONS):
        return Refusal(node, f"'{construct_name(node)}' is not supported in kernels")
    return None


def _bad_target(target: ast.AST) -> ast.AST | None:
    if isinstance(target, (ast.Name, ast.Attribute)):
        return None
    if isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            bad = _bad_target(t)
            if bad is not None:
                return bad
        return None
    return target


def construct_refusals(fn_def: ast.FunctionDef) -> list[Refusal]:
    """Every construct of the body a kernel may not contain, in source order."""
    out: list[Refusal] = []

    def walk(node: ast.AST, loops: int) -> None:
        r = _construct_refusal(node, loops)
        if r is not None:
            out.append(r)
            return
        inner = loops + isinstance(node, (ast.For, ast.While))
        for child in ast.iter_child_nodes(node):
            # a loop's iterable is evaluated outside the loop
            walk(child, loops if isinstance(node, ast.For) and child is node.iter else inner)

    for stmt in fn_def.body:
        walk(stmt, 0)
    return out


def _local_names(fn_def: ast.FunctionDef) -> set[str]:
    a = fn_def.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    for node in ast.walk(fn_def):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def free_names(fn_def: ast.FunctionDef) -> list[tuple[str, ast.Name]]:
    """Names the body reads that it never binds (globals, closure cells and
    builtins), each with its first use, in source order."""
    local = _local_names(fn_def)
    seen: dict[str, ast.Name] = {}
    for stmt in fn_def.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                prev = seen.get(node.id)
                if prev is None or (node.lineno, node.col_offset) < (prev.lineno, prev.col_offset):
                    seen[node.id] = node
    return sorted(seen.items(), key=lambda kv: (kv[1].lineno, kv[1].col_offset))


# -- values a kernel may read ---------------------------------------------------

def is_jit_function(val: Any) -> bool:
    return isinstance(val, KernelFunction)


def global_allowed(name: str, val: Any, fn_globals: dict) -> bool:
    """Triton's rule: modules, @jit functions, constexprs, dtypes, language
    objects and named tuples; anything else only when annotated constexpr or
    with TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1."""
    if isinstance(val, (types.ModuleType, core.constexpr, dtype)) or is_jit_function(val):
        return True
    if getattr(val, "__triton_builtin__", False):
        return True
    module = getattr(val, "__module__", None) or ""
    if module.startswith(("tritium.language", "triton.language")):
        return True
    if isinstance(val, tuple) and hasattr(val, "_fields"):
        return True
    ann = fn_globals.get("__annotations__", {}).get(name)
    if ann is core.constexpr or (isinstance(ann, str) and ann.endswith("constexpr")):
        return True
    return allow_non_constexpr_globals()


def closure_allowed(name: str, val: Any) -> bool:
    """Closure cells follow the rule for globals, and may also hold plain
    immutable values (numbers, strings, None, tuples of allowed values): a
    factory's parameters, captured when the @jit function is made. Mutable
    host state (a list, a dict, an arbitrary object) is refused either way."""
    if val is None or isinstance(val, (bool, int, float, str)):
        return True
    if isinstance(val, tuple) and not hasattr(val, "_fields"):
        return all(closure_allowed(name, v) for v in val)
    return global_allowed(name, val, {})


def global_refusal(name: str) -> str:
    return (f"cannot access global variable '{name}' from a kernel: globals must be "
            f"constexpr ('{name} = tl.constexpr(...)'), modules, dtypes or @jit functions")


def closure_refusal(name: str, val: Any) -> str:
    return (f"cannot access closure variable '{name}' ({type(val).__name__}) from a kernel: closure cells, "
            "like globals, must be constexpr values, numbers, strings, None, tuples of those, modules, "
            "dtypes or @jit functions")


def closure_vars(fn: types.FunctionType) -> dict[str, Any]:
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # empty cell (assigned later)
            continue
    return out


_MISSING = object()


def name_refusal(name: str, fn: types.FunctionType, closure: dict[str, Any], interpreter: bool) -> str | None:
    """Why the kernel `fn` may not read the free name `name`, or None."""
    if name in fn.__code__.co_freevars:
        val = closure.get(name, _MISSING)
        if val is _MISSING or closure_allowed(name, val):
            return None   # an unset cell fails when read, in both modes
        return closure_refusal(name, val)
    val = fn.__globals__.get(name, _MISSING)
    if val is not _MISSING:
        return None if global_allowed(name, val, fn.__globals__) else global_refusal(name)
    if name in KERNEL_BUILTINS or (interpreter and name in INTERPRETER_ONLY_BUILTINS):
        return None
    if name in INTERPRETER_ONLY_BUILTINS:
        return f"'{name}()' only works in the interpreter (TRITIUM_INTERPRET=1); remove it to compile"
    if hasattr(builtins, name):
        return f"the Python builtin '{name}' cannot be used in kernels"
    return f"name '{name}' is not defined"


# -- the check both callers run ----------------------------------------------------

def _error(src: FunctionSource, refusal: Refusal) -> CompilationError:
    line, col = src.file_pos(refusal.node)
    cls = UnsupportedLanguageConstruct if refusal.unsupported else CompilationError
    return cls(refusal.message, src.filename, line, col, src.file_line(line))


def _analysis(src: FunctionSource) -> tuple[list[Refusal], list[tuple[str, ast.Name]]]:
    """The source-only part, once per parsed function."""
    hit = src.__dict__.get("_subset")
    if hit is None:
        hit = src.__dict__["_subset"] = (construct_refusals(src.tree), free_names(src.tree))
    return hit


def check_function(fn: types.FunctionType, src: FunctionSource, *, interpreter: bool,
                   on_free_value: Callable[[str, Any], None] | None = None) -> None:
    """Raises the CompilationError (UnsupportedLanguageConstruct for a
    construct) of the first thing in `fn` a kernel may not contain or read.
    `on_free_value(name, value)` sees each allowed global or closure value
    (the interpreter follows @jit functions through it)."""
    refusals, names = _analysis(src)
    for refusal in refusals:
        if not (interpreter and refusal.interpreter_only):
            raise _error(src, refusal)
    closure = closure_vars(fn)
    for name, node in names:
        why = name_refusal(name, fn, closure, interpreter)
        if why is not None:
            raise _error(src, Refusal(node, why, unsupported=False))
        if on_free_value is not None:
            val = closure[name] if name in closure else fn.__globals__.get(name, _MISSING)
            if val is not _MISSING:
                on_free_value(name, val)
