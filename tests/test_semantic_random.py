"""Philox numerics: tl.randint4x/rand/randn evaluated op by op with a tiny
NumPy evaluator (only the ops random.py emits), checked against the published
Philox4x32-10 known-answer vectors (Random123) and the float conversions."""
from __future__ import annotations

import numpy as np
import pytest

import tritium.language as tl
from tritium.language.builder import using_builder

_NP = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
       "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
       "fp16": np.float16, "fp32": np.float32, "fp64": np.float64}


def _np(ty):
    return _NP[ty.scalar.name]


class MiniEval:
    """Executes the handful of ops Philox needs; handles are NumPy arrays."""
    is_interpreter = True

    def set_loc(self, *a):
        pass

    def create(self, op, xs, tys, attrs=None):
        attrs = attrs or {}
        ty = tys[0] if tys else None
        shape = ty.shape if ty is not None and ty.is_block() else ()
        with np.errstate(over="ignore", invalid="ignore"):
            if op == "const":
                return [np.full(shape, attrs["value"], dtype=_np(ty))]
            if op == "arange":
                return [np.arange(attrs["start"], attrs["end"], dtype=np.int32)]
            if op in ("splat", "broadcast"):
                return [np.broadcast_to(xs[0], shape).copy()]
            if op == "cast":
                return [xs[0].astype(_np(ty))]
            if op == "bitcast":
                return [np.ascontiguousarray(xs[0]).view(_np(ty)).reshape(shape)]
            if op == "umulhi":
                bits = ty.scalar.primitive_bitwidth
                a = xs[0].astype(object) % (1 << bits)
                b = xs[1].astype(object) % (1 << bits)
                return [np.array((a * b) >> bits).astype(np.uint64).astype(_np(ty)).reshape(shape)]
            binary = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "xor": np.bitwise_xor,
                      "and": np.bitwise_and, "shr": np.right_shift, "max": np.fmax}
            if op in binary:
                return [binary[op](xs[0], xs[1]).astype(_np(ty))]
            if op == "cmp":
                return [{"lt": np.less, "eq": np.equal, "ne": np.not_equal}[attrs["pred"]](xs[0], xs[1])]
            if op == "select":
                return [np.where(xs[0], xs[1], xs[2])]
            if op == "neg":
                return [np.negative(xs[0])]
            unary = {"log": np.log, "sqrt": np.sqrt, "cos": np.cos, "sin": np.sin}
            if op in unary:
                return [unary[op](xs[0]).astype(_np(ty))]
        raise NotImplementedError(op)



@pytest.mark.parametrize("ctr,key,expected", [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff, 0xffffffff), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
])
def test_philox_known_answers(ctr, key, expected):
    with using_builder(MiniEval()):
        cs = [tl.full((1,), c, tl.uint32) for c in ctr]
        seed = key[0] | (key[1] << 32)
        seed_t = tl.full((), seed, tl.uint64)
        out = tl.philox(seed_t, *cs)
        assert [int(o.handle[0]) for o in out] == list(expected)
        assert all(o.dtype == tl.uint32 for o in out)


def test_randint_is_the_first_word_and_offsets_are_counters():
    with using_builder(MiniEval()):
        offs = tl.arange(0, 4)
        r4 = tl.randint4x(0, offs)
        r = tl.randint(0, offs)
        assert r.dtype == tl.uint32 and r.shape == (4,)
        assert np.array_equal(r.handle, r4[0].handle)
        assert int(r.handle[0]) == 0x6627e8d5  # offset 0, seed 0 is the all-zero Philox block


def test_rand_and_randn_values():
    with using_builder(MiniEval()):
        offs = tl.arange(0, 64)
        u = tl.rand(1234, offs)
        i = tl.randint(1234, offs).handle.view(np.int32)
        assert u.dtype == tl.float32
        expect = (np.where(i < 0, -i - 1, i).astype(np.float32) * np.float32(4.6566127342e-10))
        assert np.array_equal(u.handle, expect)
        assert ((u.handle >= 0) & (u.handle < 1)).all()
        n = tl.randn(1234, offs)
        i1, i2, _, _ = (w.handle.view(np.int32) for w in tl.randint4x(1234, offs))
        u1 = np.maximum(np.float32(1e-7), np.where(i1 < 0, -i1 - 1, i1).astype(np.float32) * np.float32(4.6566127342e-10))
        u2 = np.where(i2 < 0, -i2 - 1, i2).astype(np.float32) * np.float32(4.6566127342e-10)
        ref = np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(6.283185307179586) * u2)
        assert np.allclose(n.handle, ref, rtol=1e-6, atol=1e-6)
        assert len(tl.rand4x(1, offs)) == 4 and len(tl.randn4x(1, offs)) == 4


def test_seed_changes_stream_and_64bit_counters():
    with using_builder(MiniEval()):
        offs = tl.arange(0, 8)
        a, b = tl.randint(1, offs).handle, tl.randint(2, offs).handle
        assert not np.array_equal(a, b)
        wide = tl.randint(1, offs.to(tl.int64))
        assert wide.dtype == tl.uint64
