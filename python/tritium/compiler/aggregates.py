"""Aggregates in the frontend: Python reference semantics compiled to SSA.

Instances are plain Python objects while compiling, so straight-line code and
inlined calls share objects exactly as Python does. Only where control flow
joins values do fields need SSA treatment: objects that exist before a dynamic
`if`/loop ("tracked") have their fields exported as pseudo-variables that the
ordinary if-merge / loop-carry machinery handles, then written back; objects
reached only through names the construct rebinds are flattened by value
(flattening.py), and relinked afterwards so paths that shared one object
still share it (the alias maps below). Noinline calls with aggregate
arguments are in noinline_calls.py."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ..language import core
from ..language.aggregate import constexpr_change_message, field_values, fields_of, is_aggregate, new_instance, serial_of, set_raw
from ..language.aggregate import _serial as _object_serial
from .flattening import contains_aggregate, flatten, has_tracked_ref, reachable
from .values import is_number, is_static, is_tensor, same_static, to_tensor, unwrap


def _key(obj: Any, f: str) -> str:
    return f"{type(obj).__name__}#{serial_of(obj)}.{f}"


def _assigned_names(nodes: list[ast.AST]) -> set[str]:
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _describe(v: Any) -> str:
    if is_tensor(v):
        return f"a tensor of type {v.type}"
    if is_aggregate(v):
        return f"an aggregate '{type(v).__name__}'"
    return repr(unwrap(v))


# -- aliasing among objects rebuilt by value ----------------------------------
# Objects that are not tracked are rebuilt per name after a merge or in a loop;
# these helpers record which paths share one object so the rebuilt values can
# be linked back together, and refuse aliasing that differs between paths.

def _alias_map(roots: list[tuple[str, Any]], tracked: dict) -> dict[tuple, tuple]:
    """path -> path of its first occurrence, for every untracked object
    reachable from `roots` (names visited in order, fields in declaration
    order); a path is (name, field or tuple index, ...)."""
    seen: dict[int, tuple] = {}
    out: dict[tuple, tuple] = {}

    def walk(v: Any, path: tuple) -> None:
        if is_aggregate(v):
            if id(v) in tracked:
                return
            if id(v) in seen:
                out[path] = seen[id(v)]
                return
            seen[id(v)] = out[path] = path
            for f, x in field_values(v).items():
                walk(x, path + (f,))
        elif isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                walk(x, path + (i,))
    for name, v in roots:
        walk(v, (name,))
    return out


def _alias_mismatch(first: dict, second: dict) -> tuple | None:
    """(path, its owner in `first`, its owner in `second`) for the first
    path whose sharing differs; paths present in only one are structural
    differences that the ordinary merge reports."""
    for path, owner in first.items():
        other = second.get(path)
        if other is not None and other != owner:
            return path, owner, other
    return None


def _relink(v: Any, path: tuple, alias: dict, built: dict, tracked: dict) -> Any:
    """`v` with every path that `alias` maps to an earlier path replaced by
    the object built there; `v`'s untracked objects are fresh rebuilds, so
    their fields may be overwritten."""
    if is_aggregate(v):
        if id(v) in tracked:
            return v
        owner = alias.get(path, path)
        if owner != path and owner in built:
            return built[owner]
        built[path] = v
        for f, x in list(field_values(v).items()):
            nx = _relink(x, path + (f,), alias, built, tracked)
            if nx is not x:
                set_raw(v, f, nx)
        return v
    if isinstance(v, (tuple, list)) and contains_aggregate(v):
        items = [_relink(x, path + (i,), alias, built, tracked) for i, x in enumerate(v)]
        if all(a is b for a, b in zip(items, v)):
            return v
        return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
    return v


def _relink_all(values: dict, order: list[str], alias: dict, tracked: dict) -> None:
    built: dict = {}
    for name in order:
        if name in values:
            values[name] = _relink(values[name], (name,), alias, built, tracked)


def _show_path(path: tuple, keys: dict, names: dict) -> str:
    root = path[0]
    if root in keys:
        obj, f = keys[root]
        root = f"{names.get(id(obj), f'{type(obj).__name__} object')}.{f}"
    elif root == "<conditional expression>":
        root = "the conditional expression"
    elif root == "$ret":
        root = "the return value"
    return root + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path[1:])


# -- field assignment ------------------------------------------------------

def _regions(gen: Any) -> list:
    return gen.ctx.__dict__.setdefault("agg_regions", [])


def set_field(gen: Any, node: ast.AST, obj: Any, name: str, value: Any, checked: bool = True) -> None:
    """`obj.name = value` in compiled code: the class checks the type; here we
    refuse to change a constexpr field of an object older than the innermost
    loop or dynamic branch (its value would depend on the run-time path)."""
    f = fields_of(obj).get(name)
    regions = _regions(gen)
    if f is not None and f.is_constexpr and regions and serial_of(obj) < regions[-1][0] \
            and name in obj.__dict__ and not same_static(obj.__dict__[name], value):
        raise gen.error(node, constexpr_change_message(obj, name, obj.__dict__[name], value, regions[-1][1]))
    if checked:
        setattr(obj, name, value)
    else:
        set_raw(obj, name, value)


def assign_attribute(gen: Any, target: ast.Attribute, value: Any) -> None:
    obj = gen.visit(target.value)
    if not is_aggregate(obj):
        raise gen.error(target, f"cannot assign attribute '{target.attr}' of {_describe(obj)} "
                                "(only fields of @aggregate objects can be assigned in kernels)")
    set_field(gen, target, obj, target.attr, value)


# -- control flow ------------------------------------------------------------

@dataclass
class _Construct:
    kind: str                      # "if" or "loop"
    before: Any
    tracked: dict                  # id -> object whose identity is kept
    snapshot: dict = field(default_factory=dict)   # id -> (object, its __dict__ before)
    keys: dict = field(default_factory=dict)       # pseudo-variable -> (object, field)
    fixed: dict = field(default_factory=dict)      # loop: pseudo-variable -> (object, field, value)
    branches: int = 0
    order: list = field(default_factory=list)     # loop: carried names and field keys, in carry order
    alias: dict = field(default_factory=dict)     # loop: sharing among untracked objects on entry
    names: dict = field(default_factory=dict)     # loop: id of a tracked object -> a name for messages


def _freeze(v: Any, tracked: dict, memo: dict) -> Any:
    """A branch's view of `v`: untracked objects copied with their current
    fields, since the other branch will run on the restored originals."""
    if is_aggregate(v):
        if id(v) in tracked:
            return v
        if id(v) not in memo:
            copy = new_instance(type(v), {})
            memo[id(v)] = copy
            for k, x in field_values(v).items():
                set_raw(copy, k, _freeze(x, tracked, memo))
        return memo[id(v)]
    if isinstance(v, (tuple, list)) and contains_aggregate(v):
        items = [_freeze(x, tracked, memo) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
    return v


class AggregateMixin:
    """Wraps the control-flow hooks of ControlFlowMixin (place it before it)."""

    def _agg_stack_(self) -> list:
        return self.__dict__.setdefault("_agg_stack", [])

    def _agg_push(self, entry: _Construct, what: str) -> None:
        self._agg_stack_().append(entry)
        _regions(self).append((next(_object_serial), what))

    def _agg_pop(self) -> _Construct:
        _regions(self).pop()
        return self._agg_stack_().pop()

    def _agg_tracked(self, rebound: set[str]) -> dict:
        return reachable([v for k, v in self.locals.items() if k not in rebound])

    # -- if -----------------------------------------------------------------
    def _branch(self, before: dict, body) -> tuple[Any, dict]:
        stack = self._agg_stack_()
        top = stack[-1] if stack else None
        if top is None or top.kind != "if" or top.before is not before or top.branches >= 2:
            top = _Construct("if", before, self._agg_tracked(_assigned_names([self.current_node])))
            top.snapshot = {i: (o, dict(o.__dict__)) for i, o in reachable(before.values()).items()}
            self._agg_push(top, "a branch on a runtime condition")
        top.branches += 1
        entry = top

        def run() -> None:
            body()
            memo: dict = {}
            for k, v in list(self.locals.items()):
                self.locals[k] = _freeze(v, entry.tracked, memo)
            for obj in entry.tracked.values():
                for f, v in field_values(obj).items():
                    key = _key(obj, f)
                    entry.keys[key] = (obj, f)
                    self.locals[key] = _freeze(v, entry.tracked, memo)
            for obj, saved in entry.snapshot.values():
                obj.__dict__.clear()
                obj.__dict__.update(saved)
        return super()._branch(before, run)

    def _merge_if(self, node, cond, before: dict, then: tuple, other: tuple) -> dict:
        entry = self._agg_stack_()[-1]   # popped after the merge: flatten needs its tracked set
        t_vars, e_vars = then[1], other[1]
        for name in t_vars:
            if name in e_vars and t_vars[name] is not e_vars[name] \
                    and (contains_aggregate(t_vars[name]) or contains_aggregate(e_vars[name])):
                ts, es = flatten(t_vars[name])[1], flatten(e_vars[name])[1]
                if ts != es and (has_tracked_ref(ts) or has_tracked_ref(es)):
                    what = f"field '{name.split('.', 1)[1]}' of {name.split('.', 1)[0]}" if name in entry.keys \
                        else f"'{name}'"
                    raise self.error(node, f"{what} refers to different aggregate objects in the two branches; "
                                           "compiled code cannot choose an object at run time: assign a new "
                                           "aggregate in both branches, or assign the fields of one object")
        order = [n for n in dict.fromkeys([*t_vars, *e_vars]) if n in t_vars and n in e_vars]
        t_alias = _alias_map([(n, t_vars[n]) for n in order], entry.tracked)
        e_alias = _alias_map([(n, e_vars[n]) for n in order], entry.tracked)
        bad = _alias_mismatch(t_alias, e_alias) or _alias_mismatch(e_alias, t_alias)
        if bad is not None:
            self._alias_error(node, entry, before, bad, t_alias, ("in the then-branch", "in the else-branch"))
        merged = super()._merge_if(node, cond, before, then, other)
        _relink_all(merged, order, t_alias, entry.tracked)
        self._agg_pop()
        for key, (obj, f) in entry.keys.items():
            if key in merged:
                set_raw(obj, f, merged.pop(key))
        return merged

    def _alias_error(self, node, entry: _Construct, before: dict, bad: tuple, first: dict, where: tuple,
                     names: dict | None = None) -> None:
        path, owner, other = bad
        if first.get(path) != owner:          # `bad` came from the swapped comparison
            where = where[::-1]
        shared, apart = (where[0], where[1]) if owner != path else (where[1], where[0])
        partner = owner if owner != path else other
        names = names if names is not None else {id(v): k for k, v in before.items() if is_aggregate(v)}
        a, b = _show_path(path, entry.keys, names), _show_path(partner, entry.keys, names)
        raise self.error(node, f"'{a}' and '{b}' refer to one aggregate object {shared} but to "
                               f"different objects {apart}; compiled code cannot make their sharing "
                               "depend on the run-time path: make them the same object (or separate objects) "
                               "on every path")

    # -- loops ----------------------------------------------------------------
    def _loop_carried(self, node) -> tuple[list, list, list]:
        entry = _Construct("loop", None, self._agg_tracked(_assigned_names(node.body)))
        self._agg_push(entry, "a loop")
        names, inits, specs = super()._loop_carried(node)
        for obj in entry.tracked.values():
            for f, v in field_values(obj).items():
                key = _key(obj, f)
                leaves, spec = flatten(v)
                if leaves and all(is_tensor(x) or (is_number(x) and not isinstance(x, core.constexpr)) for x in leaves):
                    tensors = [to_tensor(x) for x in leaves]
                    entry.keys[key] = (obj, f)
                    names.append(key)
                    specs.append((key, spec, len(tensors)))
                    inits.extend(tensors)
                else:
                    entry.fixed[key] = (obj, f, v)
        entry.order = list(names)
        entry.alias = _alias_map([(n, self.locals[n]) for n in names if n in self.locals]
                                 + [(k, entry.keys[k][0].__dict__[entry.keys[k][1]]) for k in names
                                    if k in entry.keys], entry.tracked)
        entry.names = {id(v): k for k, v in self.locals.items() if is_aggregate(v)}
        return names, inits, specs

    def _bind_carried(self, names, specs, handles, inits) -> None:
        stack = self._agg_stack_()
        entry = stack[-1] if stack and stack[-1].kind == "loop" else None
        if entry is None:
            return super()._bind_carried(names, specs, handles, inits)
        # every tracked field is carried; canonicalize (Rust) drops the ones
        # the loop leaves unchanged
        ops = self.builder.current_block().ops
        final = bool(ops) and ops[-1].results is handles
        super()._bind_carried(names, specs, handles, inits)
        _relink_all(self.locals, entry.order, entry.alias, entry.tracked)
        for key, (obj, f) in entry.keys.items():
            if key in self.locals:
                set_raw(obj, f, self.locals.pop(key))
        if final:
            self._agg_pop()

    def _carried_out(self, node, names, inits) -> list:
        entry = self._agg_stack_()[-1]
        for key, (obj, f) in entry.keys.items():
            self.locals[key] = obj.__dict__[f]
        for key, (obj, f, v0) in entry.fixed.items():
            v = obj.__dict__.get(f)
            if v is not v0 and not (is_static(v) and is_static(v0) and same_static(v, v0)):
                raise self.error(node, f"field '{f}' of aggregate '{type(obj).__name__}' is changed inside the "
                                       f"loop from {_describe(v0)} to {_describe(v)}; only fields holding tensors "
                                       "or numbers can change across iterations")
        end = _alias_map([(n, self.locals[n]) for n in entry.order if n in self.locals], entry.tracked)
        bad = _alias_mismatch(entry.alias, end) or _alias_mismatch(end, entry.alias)
        if bad is not None:
            self._alias_error(node, entry, {}, bad, entry.alias,
                              ("before the loop", "at the end of a loop iteration"), entry.names)
        return super()._carried_out(node, names, inits)
