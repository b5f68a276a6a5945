"""The code the interpreter runs for a @jit function: its own source, checked
by language/python_subset.py (the check the compiler runs), with each `assert`
turned into a call that treats a tensor condition as a device assert, as the
compiler does (Python would ask the tensor for a single truth value), and
the kernel builtins `range`, `min`, `max` and `print` given the meaning the
compiler gives them where Python's would differ: `range` over tensors is a
device loop (tl.range), `min`/`max` of tensors are tl.minimum/tl.maximum,
and `print` runs the programs one at a time so its lines come in order.

The rewritten function keeps the file, lines and columns of the original and
its closure cells, so tracebacks, `pdb`, `print` and later rebinding of a
captured name behave as in the original. A function without source (made by
`exec`) runs unchanged and unchecked: the compiler cannot compile it either.
"""
from __future__ import annotations

import ast
import builtins
import copy
import linecache
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from ..language import core, iterators, semantic
from ..language.builder import current_builder
from ..language.errors import CompileTimeAssertionFailure, UnsupportedLanguageConstruct
from ..language.python_subset import DEBUGGER_MODULES, check_function, free_names, is_jit_function, kernel_minmax
from ..language.source import FunctionSource, parse_function

_ASSERT = "__tritium_assert__"
_COPY = "__tritium_copy__"


@dataclass
class KernelCode:
    original: types.FunctionType
    src: FunctionSource | None
    run: types.FunctionType     # what the interpreter calls
    debugs: bool = False        # calls breakpoint() or imports a debugger: programs run one at a time


_cache: "weakref.WeakKeyDictionary[types.FunctionType, KernelCode]" = weakref.WeakKeyDictionary()


def kernel_code(fn: types.FunctionType) -> KernelCode:
    code = _cache.get(fn)
    if code is None:
        try:
            src = parse_function(fn)
        except (OSError, TypeError, SyntaxError, ValueError):
            src = None
        if src is None:
            code = KernelCode(fn, None, fn)
        else:
            code = KernelCode(fn, src, _rewrite(fn, src), _debugs(src.tree))
        _cache[fn] = code
    return code


def _debugs(fn_def: ast.FunctionDef) -> bool:
    for node in ast.walk(fn_def):
        if isinstance(node, ast.Name) and node.id == "breakpoint":
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n.split(".")[0] in DEBUGGER_MODULES for n in names):
                return True
    return False


class LaunchChecks:
    """The functions one launch has checked (each once: globals are read
    again on every launch, since they may be rebound) and the @jit calls in
    progress (recursion is refused, as the compiler does)."""

    def __init__(self) -> None:
        self.checked: set[types.FunctionType] = set()
        self.calls: list[types.FunctionType] = []
        self.debugs = False     # some function checked so far calls a debugger
        self.enforce_subset = True   # Triton's Python subset (another frontend has its own rules)

    def prepare(self, fn: types.FunctionType) -> types.FunctionType:
        """`fn`'s runnable code, checked with every @jit function it names."""
        code = kernel_code(fn)
        if fn not in self.checked:
            self.checked.add(fn)
            self.debugs |= code.debugs
            if code.src is not None and self.enforce_subset:
                check_function(fn, code.src, interpreter=True, on_free_value=self._follow)
        return code.run

    def _follow(self, name: str, value: Any) -> None:
        # @jit functions a kernel names are checked up front, like the compiler
        # checks every function a kernel reaches on any path
        if is_jit_function(value):
            self.prepare(value.fn)
        elif is_jit_function(getattr(value, "fn", None)):   # autotune / heuristics wrappers
            self.prepare(value.fn.fn)

    def refuse_recursion(self, fn: types.FunctionType, file: str | None, line: int | None) -> None:
        if fn in self.calls:
            raise UnsupportedLanguageConstruct(
                f"recursive call to '{fn.__name__}' is not supported in kernels", file, line, None,
                linecache.getline(file, line) if file else None)


# -- the rewrite ---------------------------------------------------------------

class _AssertToCall(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        args = [node.test, node.msg or ast.Constant(""), ast.Constant(node.lineno), ast.Constant(node.col_offset)]
        call = ast.copy_location(ast.Call(ast.Name(_ASSERT, ast.Load()), args, []), node)
        return ast.copy_location(ast.Expr(call), node)


def _make_assert(src: FunctionSource) -> Callable[..., None]:
    def kernel_assert(cond: Any, msg: Any, line: int, col: int) -> None:
        msg = core._unwrap(msg)
        if isinstance(cond, core.tensor):
            semantic.device_assert(cond, str(msg))
        elif not core._unwrap(cond):
            raise CompileTimeAssertionFailure(f"static assertion failed{': ' + str(msg) if msg else ''}",
                                              src.filename, line, col, src.file_line(line))
    return kernel_assert


def kernel_range(*args: Any, **kwargs: Any) -> Any:
    if kwargs:
        raise TypeError("range() takes no keyword arguments; use tl.range for loop options")
    if any(isinstance(a, core.tensor) for a in args):
        return iterators.range(*args)   # bounds known when the kernel runs: a device loop
    return builtins.range(*[core._unwrap(a) for a in args])


def kernel_print(*args: Any, **kwargs: Any) -> None:
    current_builder().require_order("print")
    builtins.print(*args, **kwargs)


#: what the kernel builtins mean when interpreted (where Python's meaning would differ)
_BUILTINS = {"range": kernel_range, "min": kernel_minmax(builtins.min, "minimum"),
             "max": kernel_minmax(builtins.max, "maximum"), "print": kernel_print}


def _rewrite(fn: types.FunctionType, src: FunctionSource) -> types.FunctionType:
    fn_def = copy.deepcopy(src.tree)
    fn_def.decorator_list = []
    # annotations were evaluated when the original was defined; the binder reads those
    a = fn_def.args
    for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
        if p is not None:
            p.annotation = None
    fn_def.returns = None
    ast.increment_lineno(fn_def, src.line_offset)
    for node in ast.walk(fn_def):
        if hasattr(node, "col_offset"):
            node.col_offset += src.col_offset
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += src.col_offset
    fn_def = _AssertToCall().visit(fn_def)
    # under its own name the copy would be a local of the wrapper below, and
    # a recursive call would reach it instead of the global the original reads
    fn_def.name = _COPY
    # the original's free variables become the free variables of the copy by
    # defining it inside a function whose parameters have their names
    freevars = fn.__code__.co_freevars
    rebound = [n for n, _ in free_names(src.tree)
               if n in _BUILTINS and n not in freevars and n not in fn.__globals__]
    module = ast.parse(f"def __tritium_interpreted__({', '.join((*freevars, _ASSERT, *rebound))}):\n"
                       f"    return {fn_def.name}")
    for node in ast.walk(module):
        if hasattr(node, "lineno"):
            ast.copy_location(node, fn_def)
    module.body[0].body.insert(0, fn_def)
    ast.fix_missing_locations(module)
    compiled = compile(module, src.filename, "exec", dont_inherit=True)
    outer_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType) and c.co_name == _COPY)
    names = {"co_name": fn.__code__.co_name}
    if hasattr(inner_code, "co_qualname"):   # Python 3.11+
        names["co_qualname"] = fn.__code__.co_qualname
    inner_code = inner_code.replace(**names)
    cells = dict(zip(freevars, fn.__closure__ or ()))
    cells[_ASSERT] = types.CellType(_make_assert(src))
    cells.update((n, types.CellType(_BUILTINS[n])) for n in rebound)
    run = types.FunctionType(inner_code, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(cells[n] for n in inner_code.co_freevars))
    run.__kwdefaults__ = fn.__kwdefaults__
    run.__qualname__ = fn.__qualname__
    run.__module__ = fn.__module__
    return run


def call_jit_in_interpreter(jitfn: Any, *args: Any, **kwargs: Any) -> Any:
    """A @jit function called from an interpreted kernel: runs its Python body
    (checked as the compiler checks it), with constexpr parameters as plain
    Python values (like the kernel's own)."""
    builder = current_builder()
    if not getattr(builder, "is_interpreter", False):
        raise RuntimeError("call_jit_in_interpreter: no interpreter is running")
    fn = getattr(jitfn, "fn", jitfn)
    if hasattr(jitfn, "bind_call"):   # errors name the function, as the compiler's do
        bound = jitfn.bind_call(args, kwargs)
        for name in jitfn.constexpr_names:
            bound[name] = core._unwrap(bound[name])
        call_args, call_kwargs = (), bound
    else:
        call_args, call_kwargs = args, kwargs
    checks = builder.checks
    loc = builder.location()
    checks.refuse_recursion(fn, loc.file if loc else None, loc.line if loc else None)
    run = checks.prepare(fn)
    if kernel_code(fn).debugs:
        builder.require_order("a debugger")
    checks.calls.append(fn)
    try:
        return run(*call_args, **call_kwargs)
    finally:
        checks.calls.pop()
