"""The interpreter's half of an aggregate rule the compiler enforces
(compiler/aggregates.py::set_field): a constexpr field of an aggregate made
before the innermost loop or branch on a runtime condition must not change
inside it, since its value would then depend on the run-time path.

Kernels run here as plain Python, so the enclosing loops and branches are read
from the user's frames and their source. Only what can be decided soundly is
reported: a branch whose condition cannot be re-evaluated without side effects
is skipped, so this never raises where the compiler would accept the kernel.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
import textwrap
import types
from functools import lru_cache
from typing import Any

from ..language.errors import CompilationError
from ..language import core
from ..language import iterators
from ..language.aggregate import constexpr_change_message, use_interpreter_regions
from .builder import is_user_file
from .kernel_code import kernel_range
from .runner import run_grid

# `range` in a kernel's interpreted code is kernel_range (kernel_code.py)
_LOOP_FUNCTIONS = (builtins.range, iterators.range, kernel_range)
# Operators whose re-evaluation has no side effect (no memory access, no dot).
_PURE_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift,
                ast.BitOr, ast.BitXor, ast.BitAnd)


def _user_frames(frame: types.FrameType | None) -> list[types.FrameType]:
    """Frames of kernel code (outside the tritium package) up to the kernel
    that `run_grid` called, innermost first; the launching code above it is
    not part of the kernel."""
    out = []
    while frame is not None:
        if frame.f_code is run_grid.__code__:
            return out
        if is_user_file(frame.f_code.co_filename):
            out.append(frame)
        frame = frame.f_back
    return []  # not under run_grid: no kernel is running


def creation_site() -> tuple:
    """Where an aggregate is being made: (frame id, code, line) of each kernel
    frame on the stack, so a later check can tell whether it was made inside a
    loop or branch that is still running."""
    return tuple((id(f), f.f_code, f.f_lineno) for f in _user_frames(sys._getframe(1)))


@lru_cache(maxsize=256)
def _function_node(code: types.CodeType) -> ast.AST | None:
    """The def of `code`, with line numbers as in its file (None without source)."""
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    ast.increment_lineno(tree, first - 1)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            return node
    return None


def _span(stmts: list[ast.stmt]) -> tuple[int, int]:
    return stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno


def _enclosing(stmts: list[ast.stmt], line: int, out: list) -> ast.stmt | None:
    """Appends (construct, statements of the part holding `line`) for each
    loop or `if` around `line`, outermost first; returns the innermost
    statement holding it."""
    for s in stmts:
        if not s.lineno <= line <= (s.end_lineno or s.lineno):
            continue
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return s
        parts = [p for p in (getattr(s, "body", None), getattr(s, "orelse", None)) if isinstance(p, list) and p]
        for part in parts:
            lo, hi = _span(part)
            if lo <= line <= hi:
                if isinstance(s, (ast.For, ast.While)) and part is s.body or isinstance(s, ast.If):
                    out.append((s, part))
                return _enclosing(part, line, out) or s
        return s
    return None


def _module_attr_ref(node: ast.expr, frame: types.FrameType) -> Any:
    """The object a name or `module.attr` chain names in `frame`, looked up
    without running user code; None when it is anything else."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if node.id in scope:
                return scope[node.id]
        return None
    if isinstance(node, ast.Attribute):
        base = _module_attr_ref(node.value, frame)
        if isinstance(base, types.ModuleType):
            return getattr(base, node.attr, None)
    return None


def _pure(expr: ast.expr) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.BinOp) and not isinstance(n.op, _PURE_BINOPS):
            return False
        if not isinstance(n, (ast.Name, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp,
                              ast.expr_context, ast.cmpop, ast.boolop, ast.unaryop, ast.operator)):
            return False
    return True


def _is_dynamic(node: ast.stmt, part: list[ast.stmt], frame: types.FrameType) -> bool | None:
    """True if the compiler makes `node` a runtime loop or branch, False if it
    resolves it at compile time, None if that cannot be told safely."""
    if isinstance(node, ast.While):
        return True
    if isinstance(node, ast.For):
        if isinstance(node.iter, ast.Call):
            fn = _module_attr_ref(node.iter.func, frame)
            return any(fn is f for f in _LOOP_FUNCTIONS)
        return False  # a tuple or other compile-time iterable: unrolled
    # an `if`: its condition is re-evaluated, which is only sound when it has no
    # side effects and no name in it was rebound since it was evaluated
    if not _pure(node.test):
        return None
    names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
    for s in part:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id in names:
                return None
    try:
        cond = eval(compile(ast.Expression(node.test), frame.f_code.co_filename, "eval"),  # noqa: S307
                    frame.f_globals, dict(frame.f_locals))
    except Exception:
        return None
    return isinstance(cond, core.tensor)


def check_constexpr_change(obj: Any, name: str, old: Any, new: Any) -> None:
    """Raises CompilationError if `obj.name` (a constexpr field) changes from
    `old` to `new` inside a runtime loop or branch that `obj` predates."""
    frames = _user_frames(sys._getframe(1))
    if not frames:
        return
    made_in = obj.__dict__.get("_tritium_made_in", ())
    for frame in frames:
        fn = _function_node(frame.f_code)
        if fn is None:
            return  # no source to read: let it run rather than guess
        constructs: list = []
        _enclosing(fn.body, frame.f_lineno, constructs)
        for node, part in reversed(constructs):
            dynamic = _is_dynamic(node, part, frame)
            if not dynamic:
                continue
            lo, hi = (_span(node.body) if not isinstance(node, ast.If)
                      else (node.body[0].lineno, _span(node.orelse or node.body)[1]))
            if any(fid == id(frame) and code is frame.f_code and lo <= line <= hi for fid, code, line in made_in):
                return  # made inside this construct: free to change, as in the compiler
            what = "a loop" if isinstance(node, (ast.For, ast.While)) else "a branch on a runtime condition"
            raise _error(frames, obj, name, old, new, what)


def _error(frames: list[types.FrameType], obj: Any, name: str, old: Any, new: Any, what: str) -> CompilationError:
    here = frames[0]
    fn = _function_node(here.f_code)
    stmt = _enclosing(fn.body, here.f_lineno, []) if fn is not None else None
    col = stmt.col_offset if stmt is not None and stmt.lineno == here.f_lineno else None
    err = CompilationError(
        constexpr_change_message(obj, name, old, new, what),
        here.f_code.co_filename, here.f_lineno, col, linecache.getline(here.f_code.co_filename, here.f_lineno))
    for callee, caller in zip(frames, frames[1:]):
        err.add_call_site(f"  in '{callee.f_code.co_name}' called from {caller.f_code.co_filename}:{caller.f_lineno}")
    return err


use_interpreter_regions(sys.modules[__name__])
