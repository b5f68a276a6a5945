"""`tl.inline_asm_elementwise`: the typing rules of the `inline_asm` op
(docs/ir.md). Arguments broadcast to one shape; each asm invocation handles
`pack` elements of every argument and result, elements narrower than 32 bits
packed into 32-bit registers, outputs numbered first in the constraint string.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import core
from .builder import current_builder
from .dtypes import block_type, dtype
from .semantic import broadcast_tensors, to_tensor


def elems_per_register(bits: int, pack: int) -> int:
    """Elements of `bits` sharing one register (the IR's `asm_elems_per_reg`)."""
    return min(32 // bits, pack) if bits < 32 else 1


def operand_constraints(constraints: str) -> list[str]:
    """Register constraints in `$n` order; clobbers (`~{...}`) left out."""
    return [c.strip() for c in constraints.split(",") if c.strip() and not c.strip().startswith("~")]


def _check_dtype(t: Any, what: str) -> dtype:
    if not isinstance(t, dtype) or t.is_block():
        raise TypeError(f"inline_asm_elementwise: {what} must be a scalar dtype, got {t!r}")
    if t.is_ptr() or t.is_int1():
        raise TypeError(f"inline_asm_elementwise: {what} {t} cannot be an asm operand (pointers and int1 are not)")
    return t


def inline_asm_elementwise(asm: Any, constraints: Any, args: Sequence[Any], dtypes: Any, is_pure: Any,
                           pack: Any) -> "core.tensor | tuple":
    if not isinstance(asm, str):
        raise TypeError(f"inline_asm_elementwise: asm must be a string, got {asm!r}")
    if not isinstance(constraints, str):
        raise TypeError(f"inline_asm_elementwise: constraints must be a string, got {constraints!r}")
    if not isinstance(is_pure, bool):
        raise TypeError(f"inline_asm_elementwise: is_pure must be a bool, got {is_pure!r}")
    if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1 or pack > 16 or pack & (pack - 1):
        raise ValueError(f"inline_asm_elementwise: pack must be a power of two from 1 to 16, got {pack!r}")
    multiple = isinstance(dtypes, (tuple, list))
    out_types = [_check_dtype(t, "result dtype") for t in (dtypes if multiple else [dtypes])]
    if not out_types:
        raise ValueError("inline_asm_elementwise: dtype is empty; the asm must return at least one tensor")
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"inline_asm_elementwise: args must be a list or tuple of tensors, got {args!r}")
    tensors = broadcast_tensors(*[to_tensor(a) for a in args], opname="inline_asm_elementwise") if args else []
    for t in tensors:
        _check_dtype(t.type.scalar, "argument dtype")
    shape = tuple(tensors[0].shape) if tensors else ()
    numel = tensors[0].numel if tensors else 1
    if numel % pack:
        raise ValueError(f"inline_asm_elementwise: pack={pack} does not divide the {numel} element(s) of the "
                         f"{'scalar' if not shape else 'tensor'} operands")
    regs_out = sum(pack // elems_per_register(t.primitive_bitwidth, pack) for t in out_types)
    regs_in = sum(pack // elems_per_register(t.type.scalar.primitive_bitwidth, pack) for t in tensors)
    cons = operand_constraints(constraints)
    n_out = 0
    while n_out < len(cons) and cons[n_out].startswith("="):
        n_out += 1
    if any(c.startswith("=") for c in cons[n_out:]):
        raise ValueError(f"inline_asm_elementwise: constraints {constraints!r} list an output after an input")
    if (n_out, len(cons) - n_out) != (regs_out, regs_in):
        raise ValueError(
            f"inline_asm_elementwise: constraints {constraints!r} name {n_out} output(s) and {len(cons) - n_out} "
            f"input(s), but pack={pack} with these dtypes needs {regs_out} output and {regs_in} input register(s) "
            f"(elements narrower than 32 bits share 32-bit registers)")
    result_types = [block_type(t, list(shape)) if shape else t for t in out_types]
    attrs = {"asm": asm, "constraints": constraints, "pure": is_pure, "pack": pack}
    handles = current_builder().create("inline_asm", [t.handle for t in tensors], result_types, attrs)
    outs = [core.tensor(h, t) for h, t in zip(handles, result_types)]
    return tuple(outs) if multiple else outs[0]

