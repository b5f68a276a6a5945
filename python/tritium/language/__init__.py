"""`tritium.language` — the kernel language, spelled like `triton.language`.

`import tritium.language as tl` exposes the dtypes, `constexpr`, `tensor`, every
builtin, the reductions of `standard.py`, `tl.math` (also flattened here) and
the Philox random functions.
"""
from . import math  # noqa: F401
from . import _members  # noqa: F401 (registers the tensor-member spellings: x.sum(), x.exp())
from .aggregate import aggregate
from .blocks import (advance, block_pointer, load_tensor_descriptor, make_block_ptr, make_tensor_descriptor,
                     store_tensor_descriptor, tensor_descriptor, tensor_descriptor_type)
from .builtins import (arange, atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg,
                       atomic_xor, broadcast, broadcast_to, cast, cat, clamp, debug_barrier, device_assert,
                       device_print, dot, expand_dims, full, full_like, inline_asm_elementwise, interleave, join,
                       load, max_constancy, max_contiguous, maximum, minimum, multiple_of, num_programs, permute,
                       program_id, reshape,
                       split, static_assert, static_print, store, to_tensor, trans, view, where, zeros,
                       zeros_like)
from .core import (CompileTimeAssertionFailure, PropagateNan, builtin, constexpr, is_builtin, tensor)
from .dtypes import (block_type, bfloat16, dtype, float8e4, float8e4b8, float8e4b15, float8e4nv, float8e5,
                     float8e5b16, float16, float32, float64,
                     int1, int8, int16, int32, int64, pi32_t, pointer_type, uint8, uint16, uint32, uint64,
                     void)
from .extern import extern, extern_elementwise
from .iterators import range, static_range
from .lookup import assume, gather, histogram
from .math import (abs, cdiv, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sin, sqrt,
                   sqrt_rn, umulhi)
from .random import (pair_uniform_to_normal, philox, philox_impl, rand, rand4x, randint, randint4x, randn,
                     randn4x, uint_to_uniform_float)
from .sorting import bitonic_merge, sort, topk
from .standard import (argmax, argmin, associative_scan, cumprod, cumsum, flip, max, min, ravel, reduce, reduce_or,
                       sigmoid, softmax, sum, swizzle2d, xor_sum)

from . import extra  # noqa: E402,F401  (after the builtins extra's functions call)
from . import _core_names  # noqa: E402,F401

# Triton spells the boolean type both ways
bool_ = int1
# Triton's base class of descriptors; tritium has one kind
tensor_descriptor_base = tensor_descriptor
