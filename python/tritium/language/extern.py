"""`tl.extern_elementwise` and the `@extern` decorator: a call of a library
function (libdevice's `__nv_*`) on each element, the `extern_elementwise`
op of docs/ir.md.

The library function is chosen by the operands' element types from a table
`{(arg dtypes...): (symbol, result dtype)}`. Operands whose types are a key
only broadcast; otherwise they are first promoted like a binary operator's
(so `pow(x_fp32, 2.0)` finds the `(fp32, fp32)` entry), and a combination
the table lacks is a TypeError naming the function and the types it takes.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from . import core
from .builder import current_builder
from .dtypes import block_type, dtype
from .semantic import broadcast_tensors, to_tensor
from .semantic.promotion import binary_operands


def extern(fn: Callable) -> Callable:
    """Marks a function that builds `extern_elementwise` calls (Triton's
    `@core.extern`); tritium treats it as any other builtin."""
    return core.builtin(fn)


def _promote(args: list) -> list:
    """All operands converted to the type binary-operator promotion gives them."""
    out = list(args)
    for _ in range(2):   # a second pass spreads a type found late back to the first operands
        for i in range(1, len(out)):
            out[0], out[i] = binary_operands(out[0], out[i], "extern_elementwise")
    return out


def _type_name(t: dtype) -> str:
    return str(t).replace("triton.language.", "")


def extern_elementwise(lib_name: Any, lib_path: Any, args: Sequence[Any],
                       arg_type_symbol_dict: Mapping[tuple, tuple], is_pure: Any, name: str | None = None,
                       **_: Any) -> "core.tensor":
    """Calls the library function the table maps the operands' types to, on
    each element; `lib_name`/`lib_path` are accepted for Triton's signature
    (tritium links libdevice itself, `TRITIUM_LIBDEVICE_PATH` overrides it)."""
    is_pure = core._unwrap(is_pure)
    what = name or "extern_elementwise"
    if not args:
        raise TypeError(f"{what}: needs at least one operand")
    table = {tuple(k): v for k, v in arg_type_symbol_dict.items()}
    tensors = [to_tensor(core._unwrap(a)) for a in args]
    types = tuple(t.type.scalar for t in tensors)
    if types not in table and len(tensors) > 1:
        tensors = _promote([core._unwrap(a) for a in args])
        types = tuple(t.type.scalar for t in tensors)
    if types not in table:
        takes = "; ".join("(" + ", ".join(_type_name(t) for t in k) + ")" for k in table)
        got = "(" + ", ".join(_type_name(t) for t in types) + ")"
        raise TypeError(f"{what}: no version for argument types {got}; it takes {takes}")
    symbol, ret = table[types]
    tensors = broadcast_tensors(*tensors, opname=what) if len(tensors) > 1 else tensors
    shape = list(tensors[0].shape)
    ret_type = block_type(ret, shape) if shape else ret
    attrs = {"symbol": symbol, "lib": str(core._unwrap(lib_name) or "libdevice"), "pure": bool(is_pure),
             "name": what}
    [h] = current_builder().create("extern_elementwise", [t.handle for t in tensors], [ret_type], attrs)
    return core.tensor(h, ret_type)


__all__ = ["extern", "extern_elementwise"]
