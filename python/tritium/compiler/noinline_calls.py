"""Noinline calls with aggregate arguments: how the arguments are encoded as a
template (hashable structure with statics inline, aggregate objects numbered
once so aliasing such as `f(a, a)` is part of it) plus the dynamic leaves
passed as IR arguments; how the callee is built once per template; and how
the fields the callee changed come back as extra results and are written
into the caller's objects."""
from __future__ import annotations

import ast
from typing import Any

from ..language import core
from ..language.aggregate import field_values, is_aggregate, new_instance, set_raw
from .aggregates import set_field
from .flattening import contains_aggregate
from .values import is_number, is_static, is_tensor, to_tensor, unwrap


class _Split:
    """Encodes values as a template (hashable structure, statics inline) plus
    the dynamic leaves; aggregate objects are numbered once, so aliasing
    (`f(a, a)`) is part of the template."""

    def __init__(self, seed: list[Any] = (), arg_handles: dict | None = None):
        self.objs: list[Any] = list(seed)
        self.index = {id(o): i for i, o in enumerate(self.objs)}
        self.layouts: list[Any] = [None] * len(self.objs)
        self.leaves: list[Any] = []
        self.arg_handles = arg_handles or {}   # id(IR arg) -> argument position (callee side)

    def enc(self, v: Any) -> tuple:
        if is_aggregate(v):
            i = self.index.get(id(v))
            if i is None:
                i = len(self.objs)
                self.index[id(v)] = i
                self.objs.append(v)
                self.layouts.append(None)
                self.layout(i)
            return ("obj", i)
        if isinstance(v, (tuple, list)):
            return ("seq", type(v), tuple(self.enc(x) for x in v))
        if is_tensor(v) or (is_number(v) and not isinstance(v, core.constexpr)):
            t = to_tensor(v)
            j = self.arg_handles.get(id(t.handle))
            if j is not None:
                return ("arg", j)
            self.leaves.append(t)
            return ("dyn", len(self.leaves) - 1, t.type)
        return ("static", v)

    def layout(self, i: int) -> None:
        o = self.objs[i]
        self.layouts[i] = (type(o), tuple((f, self.enc(x)) for f, x in field_values(o).items()))


def _hashable(t: Any) -> Any:
    if isinstance(t, tuple):
        return tuple(_hashable(x) for x in t)
    try:
        hash(t)
        return (type(t).__name__, t)
    except TypeError:
        return (type(t).__name__, repr(t))


def _decode(t: tuple, objs: Any, leaves: list, args: list, fresh: dict, layouts: list) -> Any:
    kind = t[0]
    if kind == "obj":
        i = t[1]
        if i < len(objs):
            return objs[i]
        if i not in fresh:
            cls, fields = layouts[i]
            fresh[i] = new_instance(cls, {})
            for f, ft in fields:
                set_raw(fresh[i], f, _decode(ft, objs, leaves, args, fresh, layouts))
        return fresh[i]
    if kind == "seq":
        items = [_decode(x, objs, leaves, args, fresh, layouts) for x in t[2]]
        return t[1](*items) if hasattr(t[1], "_fields") else t[1](items)
    if kind == "dyn":
        return leaves[t[1]]
    if kind == "arg":
        return args[t[1]]
    return t[1]


def call_noinline(gen: Any, node: ast.AST, callee: Any, bound: dict[str, Any]) -> Any:
    """A noinline call with aggregate arguments: every dynamic field is an
    argument, the fields the callee changed come back as extra results and
    are written back into the caller's objects (one object per identity)."""
    split = _Split()
    params = []
    for name, value in bound.items():
        # a constant specializes a constexpr parameter; a runtime value or an
        # aggregate there is an argument like any other (Triton decides by
        # the value, not the annotation)
        if name in callee.constexpr_names and is_static(value) and not contains_aggregate(value):
            params.append((name, ("static", core.constexpr(unwrap(value)))))
        else:
            params.append((name, split.enc(value)))
    n_objs = len(split.objs)
    key = (callee, "aggregate", _hashable(tuple(params)), _hashable(tuple(split.layouts)))
    if key not in gen.ctx.noinline:
        loc = gen.builder.get_loc()
        gen.ctx.noinline[key] = _build(gen, node, callee, params, split)
        gen.builder.set_loc(*loc)  # the call op belongs to the caller's line
    fname, ret_t, layouts, result_types = gen.ctx.noinline[key]
    results = gen.builder.create("call", [t.handle for t in split.leaves], result_types, {"callee": fname})
    outs = [core.tensor(h, ty) for h, ty in zip(results, result_types)]
    fresh: dict = {}
    new_fields = []
    for i in range(n_objs):
        _, fields = layouts[i]
        new_fields.append([(f, _decode(ft, split.objs, outs, split.leaves, fresh, layouts)) for f, ft in fields])
    for obj, fields in zip(split.objs, new_fields):
        for f, v in fields:
            if obj.__dict__.get(f, _MISSING) is not v:
                set_field(gen, node, obj, f, v, checked=False)
    return _decode(ret_t, split.objs, outs, split.leaves, fresh, layouts)


_MISSING = object()


def _build(gen: Any, node: ast.AST, callee: Any, params: list, split: _Split) -> tuple:
    base = callee.__name__
    name, n = base, 0
    while gen.builder.find_function(name) is not None:
        n += 1
        name = f"{base}_{n}"
    ir_fn = gen.builder.begin_function(name, [t.type for t in split.leaves], noinline=True)
    gen.ctx.call_stack.append(callee)
    try:
        args = [core.tensor(a, t.type) for a, t in zip(ir_fn.args, split.leaves)]
        copies = [new_instance(cls, {}) for cls, _ in split.layouts]
        for c, (_, fields) in zip(copies, split.layouts):
            for f, ft in fields:
                set_raw(c, f, _decode(ft, copies, args, args, {}, split.layouts))
        local_vars = {}
        for pname, t in params:
            v = _decode(t, copies, args, args, {}, split.layouts)
            local_vars[pname] = core.constexpr(unwrap(v)) if t[0] == "static" and v is not None else v
        callee_gen = type(gen)(callee, gen.ctx, local_vars)   # a generator like the caller's
        ret = callee_gen.run()
        callee_gen.set_end_loc()
        out = _Split(copies, {id(a): j for j, a in enumerate(ir_fn.args)})
        ret_t = out.enc(ret)
        for i in range(len(copies)):
            out.layout(i)
        gen.builder.end_function([t.handle for t in out.leaves])
        return name, ret_t, out.layouts, [t.type for t in out.leaves]
    except BaseException:
        gen.builder.abandon_function()
        raise
    finally:
        gen.ctx.call_stack.pop()
