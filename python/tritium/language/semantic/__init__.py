"""Type and shape rules of the kernel language, decided once.

Every builtin and tensor operator lands here: promotion, broadcasting, casts and
argument checks follow Triton's rules so existing kernels type-check the same
way; the result is a call to the current builder with an op of docs/ir.md. The
compiler and the interpreter share this package, so they cannot disagree.

Callers use `semantic.<rule>`; the modules below split the rules by topic and
import each other downward only (emit, scalars, shapes, casts, promotion, then
the op families), so this file is just the public surface.
"""
from __future__ import annotations

import sys

from .. import core
from . import blocks  # noqa: F401 (semantic.blocks.*: block pointers, descriptors)
from .arithmetic import (add, and_, div_rn, fdiv, floordiv, invert, logical_and, logical_or, minus, mod, mul,
                         not_, or_, plus, shl, shr, sub, truediv, xor_)
from .atomics import atomic_cas, atomic_rmw
from .casts import bitcast, cast
from .comparison import (PROPAGATE_NAN_ALL, clamp, compare, equal, greater_equal, greater_than, less_equal,
                         less_than, maximum, minimum, not_equal, where)
from .creation import arange, full, num_programs, program_id
from .debug import debug_barrier, device_assert, device_print, max_constancy, max_contiguous, multiple_of
from .dot import dot
from .elementwise import abs_, fma, umulhi, unary_math
from .emit import with_element_ty
from .memory import load, store
from .promotion import binary_operands, computation_type, integer_promote
from .reduction import reduction, scan
from .scalars import constant, int_range, literal_type, to_tensor
from .shapes import (broadcast_pair, broadcast_shapes, broadcast_tensors, broadcast_to, broadcast_to_shape, cat,
                     check_shape, expand_dims, join, permute, reshape, split, splat, trans, wrap_axis)

__all__ = [
    "PROPAGATE_NAN_ALL", "abs_", "add", "and_", "arange", "atomic_cas", "atomic_rmw", "binary_operands", "bitcast",
    "broadcast_pair", "broadcast_shapes", "broadcast_tensors", "broadcast_to", "broadcast_to_shape", "cast", "cat",
    "check_shape", "clamp", "compare", "computation_type", "constant", "debug_barrier", "device_assert",
    "device_print", "div_rn", "dot", "equal", "expand_dims", "fdiv", "floordiv", "fma", "full", "greater_equal",
    "greater_than", "int_range", "integer_promote", "invert", "join", "less_equal", "less_than", "literal_type",
    "load", "logical_and", "logical_or", "max_constancy", "max_contiguous", "maximum", "minimum", "minus", "mod",
    "mul", "multiple_of", "not_", "not_equal", "num_programs", "or_", "permute", "plus", "program_id", "reduction",
    "reshape", "scan", "shl", "shr", "splat", "split", "store", "sub", "to_tensor", "trans", "truediv", "umulhi",
    "unary_math", "wrap_axis", "where", "with_element_ty", "xor_",
]

core.use_semantic(sys.modules[__name__])
