"""What a compiled kernel depends on besides its arguments: the source of the
kernel and of every @jit function it reaches, and the values of the globals and
closure cells those functions read. The disk-cache key hashes all of it, so a
changed constexpr global or a closure over another value never reuses a binary
built for the old one.

The names a function's source reads are found once per function (its AST does
not change); their *values* are read again each time a key is made, because a
global may be rebound and a closure cell may be set after decoration."""
from __future__ import annotations

import ast
import hashlib
import textwrap
import types
from typing import Any, Iterator

from ..language import core
from ..language.dtypes import dtype
from ..language.kernel_function import KernelFunction

# a value nested deeper than this (a tuple of tuples of ...) is keyed by type only
_MAX_DEPTH = 8


def _is_jit(v: Any) -> bool:
    return isinstance(v, KernelFunction)


def _references(jit_fn: Any) -> list[tuple[str, ...]]:
    """Every name or `name.attr...` chain read in the function's source,
    outermost chain only (`a.b.c` gives ("a", "b", "c"), not also ("a",))."""
    refs = jit_fn.__dict__.get("_references")
    if refs is None:
        refs = []
        src = getattr(jit_fn, "src", None)
        if src is not None:
            try:
                tree = ast.parse(textwrap.dedent(src))
            except SyntaxError:
                tree = None
            if tree is not None:
                local = _local_names(tree)
                inner: set[int] = set()
                for node in ast.walk(tree):
                    if isinstance(node, ast.Attribute):
                        inner.add(id(node.value))
                for node in ast.walk(tree):
                    if id(node) in inner:
                        continue
                    chain = _chain(node)
                    # a name the function binds is local everywhere in it, as in Python
                    if chain is not None and chain[0] not in local:
                        refs.append(chain)
        refs = sorted(set(refs))
        jit_fn.__dict__["_references"] = refs
    return refs


def _local_names(tree: ast.AST) -> set[str]:
    """Names the function binds: its parameters and every assignment target."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return names


def _chain(node: ast.AST) -> tuple[str, ...] | None:
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and (attrs or isinstance(node.ctx, ast.Load)):
        return (node.id, *reversed(attrs))
    return None


def _scopes(jit_fn: Any) -> tuple[dict, dict]:
    fn = jit_fn.fn
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:   # a cell not set yet: the kernel cannot read it either
            pass
    return closure, fn.__globals__


_ABSENT = object()


def _resolve(chain: tuple[str, ...], closure: dict, globals_: dict) -> Iterator[tuple[str, Any]]:
    """(dotted name, value) for the chain's first name and for each attribute
    step taken through a module, a class or a @jit function (the ones a
    kernel can reach into at compile time)."""
    head = chain[0]
    if head in closure:
        value = closure[head]
    else:
        value = globals_.get(head, _ABSENT)
    if value is _ABSENT:
        return
    name = head
    yield name, value
    for attr in chain[1:]:
        if not (isinstance(value, (types.ModuleType, type)) or _is_jit(value)):
            return
        value = getattr(value, attr, _ABSENT)
        if value is _ABSENT:
            return
        name = f"{name}.{attr}"
        yield name, value


def _callees_of(value: Any) -> list:
    """The @jit functions a referenced value brings along."""
    if _is_jit(value):
        return [value]
    inner = getattr(value, "fn", None)     # autotune / heuristics wrappers
    if inner is not None and _is_jit(inner):
        return [inner]
    methods = getattr(value, "__tritium_methods__", None)   # @aggregate classes
    if isinstance(value, type) and isinstance(methods, dict):
        return [m for m in methods.values() if _is_jit(m)]
    return []


def value_text(v: Any, depth: int = 0) -> str | None:
    """A process-independent text for a value a kernel may read at compile
    time, or None for values that carry no compile-time meaning of their own
    (modules, functions, @jit functions: those are keyed by their source or by
    the compiler's version)."""
    if depth > _MAX_DEPTH:
        return type(v).__qualname__
    if isinstance(v, core.constexpr):
        inner = value_text(v.value, depth + 1)
        return f"constexpr({inner})"
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, dtype):
        return f"dtype:{v}"
    if isinstance(v, (tuple, list)):
        items = ",".join(value_text(x, depth + 1) or "-" for x in v)
        fields = getattr(v, "_fields", None)
        return f"{type(v).__qualname__}{tuple(fields) if fields else ''}({items})"
    if isinstance(v, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)) or _is_jit(v):
        return None
    module = getattr(type(v), "__module__", "") or ""
    if module.startswith("tritium."):
        return None          # language objects: the compiler version covers them
    if hasattr(v, "fn") and _is_jit(v.fn):
        return None          # autotune / heuristics wrappers: the inner kernel is reached
    return f"{module}.{type(v).__qualname__}:{v!r}"


def reached_functions(jit_fn: Any) -> list:
    """The kernel and every @jit function it can reach through names in its
    body (globals, closure cells, `module.attr` chains, aggregate classes),
    transitively, in a stable order."""
    seen: dict[int, Any] = {}
    todo = [jit_fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen[id(f)] = f
        closure, globals_ = _scopes(f)
        for chain in _references(f):
            for _, value in _resolve(chain, closure, globals_):
                todo.extend(_callees_of(value))
    return sorted(seen.values(), key=lambda f: (f.__module__ or "", f.__qualname__, id(f)))


def captured_values(jit_fn: Any) -> dict[str, str]:
    """"qualname:name" → value text, for every global and closure cell that
    the kernel or a function it reaches reads and whose value could change
    the compiled code."""
    out: dict[str, str] = {}
    for f in reached_functions(jit_fn):
        closure, globals_ = _scopes(f)
        for chain in _references(f):
            for name, value in _resolve(chain, closure, globals_):
                text = value_text(value)
                if text is not None:
                    out[f"{f.__module__}.{f.__qualname__}:{name}"] = text
    return out


def source_digest(jit_fn: Any) -> str:
    """Hash of the sources of the kernel and every @jit function it reaches,
    with the flags that change how each compiles."""
    h = hashlib.sha256()
    for f in reached_functions(jit_fn):
        h.update(f"{f.__module__}.{f.__qualname__}\0".encode())
        h.update((f.src or "").encode())
        h.update(f"\0{sorted(f.do_not_specialize)}{sorted(f.do_not_specialize_on_alignment)}"
                 f"{f.noinline}\0".encode())
    return h.hexdigest()


def dependencies_digest(jit_fn: Any) -> str:
    """Sources and captured values together: what `cache.kernel_key` hashes
    besides the target, the options and the specialization."""
    h = hashlib.sha256(source_digest(jit_fn).encode())
    for name, text in sorted(captured_values(jit_fn).items()):
        h.update(f"\0{name}={text}".encode())
    return h.hexdigest()


def check_unchanged(jit_fn: Any) -> None:
    """Records the captured values at a kernel's first compile; a later
    compile that sees one changed raises, as Triton does: kernels compiled
    before keep the old value in this process, so mixing them would give
    results that depend on which specialization ran."""
    now = captured_values(jit_fn)
    before = jit_fn.__dict__.setdefault("_captured_at_compile", now)
    if before is now:
        return
    changed = [k for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)]
    if changed:
        k = changed[0]
        raise RuntimeError(
            f"'{k.partition(':')[2]}' (read by {k.partition(':')[0]}) changed after kernel "
            f"'{jit_fn.__name__}' was compiled, from {before.get(k, 'unset')} to {now.get(k, 'unset')}; "
            "compiled specializations keep the old value, so a changed global or closure value needs a "
            "new process (or a new @jit function)")


__all__ = ["captured_values", "check_unchanged", "dependencies_digest", "reached_functions", "source_digest",
           "value_text"]
