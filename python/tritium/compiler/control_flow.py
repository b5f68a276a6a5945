"""Structured control flow for the AST walker: a compile-time condition or
range is resolved in Python (only the taken branch / unrolled body is
compiled); a runtime one becomes an `if`/`for`/`while` op whose results are
the variables that flow out of it (if-merged or loop-carried)."""
from __future__ import annotations

import ast
import contextlib
from typing import Any, Iterator

from .. import language
from ..language import core, semantic
from ..language.dtypes import int1
from .flattening import flatten, unflatten
from .values import is_number, is_static, is_tensor, same_static, to_tensor, unwrap

RET = "$ret"
_RANGE_OPTIONS = ("num_stages", "loop_unroll_factor", "flatten", "warp_specialize",
                  "disallow_acc_multi_buffer")


def _language_class(name: str) -> Any:
    return getattr(language, name, None)


def _leaf_type(v: Any) -> str:
    return str(v.type) if is_tensor(v) else f"constexpr {unwrap(v)!r}"


class ControlFlowMixin:
    # -- if ---------------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        cond = self.visit(node.test)
        if is_static(cond):
            self.visit_stmts(node.body if unwrap(cond) else node.orelse)
            return
        cond = self.scalar_condition(node.test, cond, "if")
        before = self.locals
        then = self._branch(before, lambda: self.visit_stmts(node.body))
        other = self._branch(before, lambda: self.visit_stmts(node.orelse))
        self.locals = self._merge_if(node, cond, before, then, other)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if is_static(cond):
            return self.visit(node.body if unwrap(cond) else node.orelse)
        cond = self.scalar_condition(node.test, cond, "conditional expression")
        key = "<conditional expression>"
        before = self.locals
        then = self._branch(before, lambda: self.locals.__setitem__(key, self.visit(node.body)))
        other = self._branch(before, lambda: self.locals.__setitem__(key, self.visit(node.orelse)))
        merged = self._merge_if(node, cond, before, then, other)
        return merged[key]

    def scalar_condition(self, node: ast.AST, cond: Any, what: str) -> Any:
        cond = to_tensor(cond)
        if cond.type.is_block():
            raise self.error(node, f"{what} condition must be a scalar, got {cond.type.ir}; "
                                   "use tl.where for elementwise selection")
        if cond.type != int1:
            cond = semantic.not_equal(cond, 0)
        return cond

    def _branch(self, before: dict, body) -> tuple[Any, dict]:
        block = self.builder.push_block()
        self.locals = dict(before)
        try:
            body()
        finally:
            self.builder.pop_block()
        return block, self.locals

    def _merge_if(self, node, cond, before: dict, then: tuple, other: tuple) -> dict:
        (t_block, t_vars), (e_block, e_vars) = then, other
        merged = {k: v for k, v in before.items() if k in t_vars and k in e_vars}
        pending = []  # (name, spec, leaves with None where a result goes)
        t_yield, e_yield = [], []
        for name in list(dict.fromkeys([*t_vars, *e_vars])):
            if name not in t_vars or name not in e_vars:
                if name == RET and (t_vars.get(RET, e_vars.get(RET)) is not None):
                    raise self.error(node, f"function '{self.jit_fn.__name__}' returns a value on some "
                                           "paths but not on others")
                continue
            tv, ev = t_vars[name], e_vars[name]
            if tv is ev:
                merged[name] = tv
                continue
            t_leaves, t_spec = flatten(tv)
            e_leaves, e_spec = flatten(ev)
            if t_spec != e_spec:
                raise self.error(node, f"'{_pretty(name)}' has different structures in the two branches: "
                                       f"{_describe(tv)} and {_describe(ev)}")
            leaves = []
            for a, b in zip(t_leaves, e_leaves):
                if a is b or (is_static(a) and is_static(b) and same_static(a, b)):
                    leaves.append(a)
                    continue
                if not ((is_tensor(a) or is_number(a)) and (is_tensor(b) or is_number(b))):
                    raise self.error(node, f"'{_pretty(name)}' is {_leaf_type(a)} in the then-branch but "
                                           f"{_leaf_type(b)} in the else-branch")
                a = self._in_block(t_block, lambda: to_tensor(a))
                b = self._in_block(e_block, lambda: to_tensor(b))
                if a.type != b.type:
                    raise self.error(node, f"'{_pretty(name)}' has type {a.type} in the then-branch but "
                                           f"{b.type} in the else-branch; both branches must agree")
                t_yield.append(a)
                e_yield.append(b)
                leaves.append(None)
            pending.append((name, t_spec, leaves))
        self._in_block(t_block, lambda: self.builder.create("yield", [v.handle for v in t_yield], []))
        self._in_block(e_block, lambda: self.builder.create("yield", [v.handle for v in e_yield], []))
        types = [v.type for v in t_yield]
        results = iter(self.builder.create_with_regions("if", [cond.handle], types, {}, [t_block, e_block]))
        tys = iter(types)
        for name, spec, leaves in pending:
            filled = [core.tensor(next(results), next(tys)) if x is None else x for x in leaves]
            merged[name] = unflatten(filled, spec)
        return merged

    def _in_block(self, block, fn) -> Any:
        self.builder.enter_block(block)
        try:
            return fn()
        finally:
            self.builder.pop_block()

    # -- for --------------------------------------------------------------
    def visit_For(self, node: ast.For) -> None:
        if isinstance(node.iter, ast.Call):
            fn = unwrap(self.visit(node.iter.func))
            kinds = {range: "range", _language_class("range"): "range",
                     _language_class("static_range"): "static_range"}
            kinds.pop(None, None)
            if isinstance(fn, type) and fn in kinds:
                args = self._visit_elts(node.iter.args)
                kwargs = {kw.arg: self.visit(kw.value) for kw in node.iter.keywords}
                lb, ub, step = self._range_bounds(node.iter, fn, args, kwargs)
                if kinds[fn] == "static_range":
                    return self._static_range(node, lb, ub, step)
                return self._dynamic_for(node, lb, ub, step, kwargs.get("num_stages"))
        iterable = self.visit(node.iter)
        if is_static(iterable) and hasattr(unwrap(iterable), "__iter__") and not isinstance(unwrap(iterable), str):
            # tuples, enumerate(...), zip(...): unrolled at compile time
            return self._unroll(node, list(unwrap(iterable)))
        raise self.error(node.iter, "kernels can only loop over range(), tl.range(), tl.static_range() "
                                    "or a compile-time tuple")

    def _range_bounds(self, node, fn, args: list, kwargs: dict) -> tuple[Any, Any, Any]:
        name = "range" if fn is range else f"tl.{fn.__name__}"
        for k in kwargs:
            if k not in _RANGE_OPTIONS:
                raise self.error(node, f"{name}() got an unexpected keyword argument '{k}'")
        if fn is range and kwargs:
            raise self.error(node, "range() takes no keyword arguments; use tl.range for loop options")
        if not 1 <= len(args) <= 3:
            raise self.error(node, f"{name}() expects 1 to 3 arguments, got {len(args)}")
        if len(args) == 1:
            return core.constexpr(0), args[0], core.constexpr(1)
        if len(args) == 2:
            return args[0], args[1], core.constexpr(1)
        return tuple(args)  # type: ignore[return-value]

    def _static_range(self, node, lb, ub, step) -> None:
        for what, v in (("start", lb), ("end", ub), ("step", step)):
            if not is_static(v):
                raise self.error(node.iter, f"static_range's {what} must be a constexpr")
        self._unroll(node, list(range(int(unwrap(lb)), int(unwrap(ub)), int(unwrap(step)))))

    def _unroll(self, node: ast.For, values: list) -> None:
        for v in values:
            self.assign(node.target, core.constexpr(v) if isinstance(v, (int, float, bool)) else v)
            self.visit_stmts(node.body)

    def _dynamic_for(self, node: ast.For, lb, ub, step, num_stages: Any = None) -> None:
        if is_static(step) and unwrap(step) == 0:
            raise self.error(node.iter, "range() step must not be zero")
        attrs = {}
        stages = unwrap(num_stages)
        if stages is not None:
            if not is_static(num_stages) or not isinstance(stages, int) or isinstance(stages, bool) or stages < 0:
                raise self.error(node.iter, f"tl.range's num_stages must be a non-negative constexpr int, got {stages!r}")
            attrs["num_stages"] = stages
        bounds = [to_tensor(x) for x in (lb, ub, step)]
        for what, b in zip(("start", "end", "step"), bounds):
            if b.type.is_block() or not b.type.is_int() or b.type.is_int1():
                raise self.error(node.iter, f"range {what} must be a scalar integer, got {b.type}")
        iv_ty = semantic.integer_promote(semantic.integer_promote(bounds[0].type, bounds[1].type),
                                         bounds[2].type)
        bounds = [b if b.type == iv_ty else semantic.cast(b, iv_ty) for b in bounds]
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "a range loop variable must be a single name")
        carried = self._loop_carried(node)
        before = self.locals
        with self._loop_region(before, carried, leading=(iv_ty,)) as body:
            self.locals[node.target.id] = core.tensor(body.args[0], iv_ty)
            self._loop_body(node, carried)
        self._loop_op("for", [b.handle for b in bounds], [body], before, carried, attrs)

    # -- while ------------------------------------------------------------
    def visit_While(self, node: ast.While) -> None:
        carried = self._loop_carried(node)
        before = self.locals
        with self._loop_region(before, carried) as cond_block:
            cond = self.scalar_condition(node.test, self.visit(node.test), "while")
            self.builder.create("condition", [cond.handle] + list(cond_block.args), [])
        with self._loop_region(before, carried) as body:
            self._loop_body(node, carried)
        self._loop_op("while", [], [cond_block, body], before, carried)

    # -- the parts `for` and `while` share ----------------------------------
    @contextlib.contextmanager
    def _loop_region(self, before: dict, carried: tuple, leading: tuple = ()) -> Iterator[Any]:
        """One region of a loop op, built inside the `with`. Its arguments are
        `leading` (a `for`'s induction variable) then the carried values; the
        scope is the one before the loop, with the carried variables naming
        those arguments, since every region starts from an iteration's entry."""
        names, inits, specs = carried
        block = self.builder.push_block(list(leading) + [t.type for t in inits])
        try:
            self.locals = dict(before)
            self._bind_carried(names, specs, block.args[len(leading):], inits)
            yield block
        finally:
            self.builder.pop_block()

    def _loop_body(self, node: ast.For | ast.While, carried: tuple) -> None:
        """One iteration's statements, then the yield of the carried values."""
        self.visit_stmts(node.body)
        names, inits, _ = carried
        outs = self._carried_out(node, names, inits)
        self.builder.create("yield", [t.handle for t in outs], [])

    def _loop_op(self, name: str, operands: list, regions: list, before: dict, carried: tuple,
                 attrs: dict | None = None) -> None:
        """Emits the loop op once its regions are built; after it, the carried
        variables name its results."""
        names, inits, specs = carried
        results = self.builder.create_with_regions(name, operands + [t.handle for t in inits],
                                                   [t.type for t in inits], attrs or {}, regions)
        self.locals = dict(before)
        self._bind_carried(names, specs, results, inits)

    # -- loop-carried values ---------------------------------------------
    def _loop_carried(self, node) -> tuple[list[str], list[Any], list[tuple[str, Any, int]]]:
        """Variables assigned in the body that exist before the loop, with
        their initial values flattened to tensors."""
        assigned = []
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    assigned.append(sub.id)
        target = node.target.id if isinstance(getattr(node, "target", None), ast.Name) else None
        names, inits, specs = [], [], []
        for name in dict.fromkeys(assigned):
            if name not in self.locals or name == target:
                continue
            leaves, spec = flatten(self.locals[name])
            if not all(is_tensor(x) or is_number(x) for x in leaves):
                raise self.error(node, f"'{name}' is reassigned inside the loop but its value before the loop "
                                       f"({_describe(self.locals[name])}) is not a tensor or a number")
            tensors = [to_tensor(x) for x in leaves]
            names.append(name)
            specs.append((name, spec, len(tensors)))
            inits.extend(tensors)
        return names, inits, specs

    def _bind_carried(self, names, specs, handles, inits) -> None:
        i = 0
        for name, spec, n in specs:
            leaves = [core.tensor(h, t.type) for h, t in zip(handles[i:i + n], inits[i:i + n])]
            self.locals[name] = unflatten(leaves, spec)
            i += n

    def _carried_out(self, node, names, inits) -> list[Any]:
        outs = []
        for name in names:
            if name not in self.locals:
                raise self.error(node, f"loop-carried variable '{name}' is not defined at the end of the loop body")
            leaves, _ = flatten(self.locals[name])
            for x in leaves:
                if not (is_tensor(x) or is_number(x)):
                    raise self.error(node, f"loop-carried variable '{name}' becomes {_describe(x)} in the loop")
            outs.extend(to_tensor(x) for x in leaves)
        if len(outs) != len(inits):
            raise self.error(node, "the structure of a loop-carried tuple changed inside the loop")
        i = 0
        for name in names:
            n = len(flatten(self.locals[name])[0])
            for a, b in zip(inits[i:i + n], outs[i:i + n]):
                if a.type != b.type:
                    raise self.error(node, f"loop-carried variable '{name}' has type {a.type} before the loop "
                                           f"but {b.type} at the end of an iteration; its type must stay the same")
            i += n
        return outs


def _pretty(name: str) -> str:
    return "the return value" if name == RET else name


def _describe(v: Any) -> str:
    if is_tensor(v):
        return str(v.type)
    return f"{type(unwrap(v)).__name__} {unwrap(v)!r}"
