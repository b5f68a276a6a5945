"""Counter-based random numbers (Philox 4x32-10 / 4x64), numerically identical
to Triton's `tl.rand`, `tl.randint`, `tl.randn`, ...: same constants, rounds,
seed split and float conversion. Written with the builtins (umulhi, unsigned
arithmetic) so the compiler and the interpreter share it.
"""
from __future__ import annotations

import builtins as _py
from typing import Any

from . import semantic
from .core import _unwrap, builtin, tensor
from .dtypes import int32, int64, uint32, uint64
from .math import cos, log, sin, sqrt

N_ROUNDS_DEFAULT = 10

# (key_a, key_b, round_a, round_b) per counter width: the Philox paper's
# Weyl increments and multipliers
_PHILOX = {
    32: (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57),
    64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157),
}


def philox_impl(c0: tensor, c1: tensor, c2: tensor, c3: tensor, k0: tensor, k1: tensor,
                n_rounds: int = N_ROUNDS_DEFAULT) -> tuple:
    """`n_rounds` Philox rounds on counters c0..c3 (one unsigned type) and key (k0, k1)."""
    key_a, key_b, round_a, round_b = _PHILOX[c0.dtype.primitive_bitwidth]
    for _ in _py.range(n_rounds):
        old_c0, old_c2 = c0, c2
        c0 = semantic.xor_(semantic.xor_(semantic.umulhi(round_b, old_c2), c1), k0)
        c2 = semantic.xor_(semantic.xor_(semantic.umulhi(round_a, old_c0), c3), k1)
        c1 = semantic.mul(round_b, old_c2)
        c3 = semantic.mul(round_a, old_c0)
        k0 = semantic.add(k0, key_a)
        k1 = semantic.add(k1, key_b)
    return c0, c1, c2, c3


@builtin
def philox(seed: Any, c0: Any, c1: Any, c2: Any, c3: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tuple:
    seed = semantic.to_tensor(_unwrap(seed))
    if not seed.dtype.is_int():
        raise TypeError(f"philox: seed must be an integer, got {seed.dtype}")
    seed = semantic.cast(seed, uint64)
    cs = [semantic.to_tensor(_unwrap(c)) for c in (c0, c1, c2, c3)]
    bits = cs[0].dtype.primitive_bitwidth
    if not cs[0].dtype.is_int() or bits not in (32, 64):
        raise TypeError(f"philox: counters must be 32- or 64-bit integers, got {cs[0].dtype}")
    if bits == 32:
        udt = uint32
        seed_hi = semantic.cast(semantic.and_(semantic.shr(seed, 32), 0xFFFFFFFF), uint32)
        seed_lo = semantic.cast(semantic.and_(seed, 0xFFFFFFFF), uint32)
    else:
        udt = uint64
        seed_hi = semantic.constant(0, uint64)
        seed_lo = seed
    cs = [semantic.bitcast(c, udt) for c in cs]
    return philox_impl(*cs, seed_lo, seed_hi, int(_unwrap(n_rounds)))


@builtin
def randint4x(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tuple:
    """Four blocks of random unsigned ints from `seed` and the counters `offset`."""
    offset = semantic.to_tensor(_unwrap(offset))
    zero = semantic.mul(offset, 0)
    return philox(seed, offset, zero, zero, zero, n_rounds)


@builtin
def randint(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tensor:
    return randint4x(seed, offset, n_rounds)[0]


def uint_to_uniform_float(x: tensor) -> tensor:
    """Random 32/64-bit ints to floats uniform in [0, 1) (fp32)."""
    if x.dtype.primitive_bitwidth == 32:
        x, scale = semantic.bitcast(x, int32), 4.6566127342e-10
    else:
        x, scale = semantic.bitcast(x, int64), 1.0842020432385337e-19
    x = semantic.where(semantic.less_than(x, 0), semantic.sub(semantic.minus(x), 1), x)
    return semantic.mul(x, scale)


def pair_uniform_to_normal(u1: tensor, u2: tensor) -> tuple:
    """Box-Muller: two uniforms to two independent standard normals."""
    u1 = semantic.maximum(1.0e-7, u1)
    th = semantic.mul(6.283185307179586, u2)
    r = sqrt(semantic.mul(-2.0, log(u1)))
    return semantic.mul(r, cos(th)), semantic.mul(r, sin(th))


@builtin
def rand(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tensor:
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@builtin
def rand4x(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tuple:
    return tuple(uint_to_uniform_float(i) for i in randint4x(seed, offset, n_rounds))


@builtin
def randn(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tensor:
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))[0]


@builtin
def randn4x(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> tuple:
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
