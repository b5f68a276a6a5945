"""NumpyBuilder reduce/scan through combine callbacks, dot, shape ops,
program ids, debug ops and events, against NumPy / Python references."""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, strategies as st

from interp_builder_env import Env, blk, env, floats_elem, mapped, ptrs  # noqa: F401 (env is a fixture)
from tritium.interpreter import (DeviceAssertionError, MemoryMap, NumpyBuilder, OutOfBoundsError, Sanitizer, Tracer,
                                 wrap)
from tritium.interpreter.events import EventBus, Launch
from tritium.interpreter import floats
from tritium.language import dtypes as D


# ---------------------------------------------------------------- reduce / scan

def _add_combine(env, ty):
    def combine(accs, news):
        return [env.op("add", accs[0], news[0], ty=ty)]
    return combine


@pytest.mark.parametrize("shape,axis", [((16,), 0), ((4, 8), 0), ((4, 8), 1), ((2, 4, 8), 1)])
def test_reduce_sum_through_combine(env, shape, axis):
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape) * 7 - 50
    out_shape = shape[:axis] + shape[axis + 1:]
    rty = blk(D.int32, out_shape) if out_shape else D.int32
    r = env.combine("reduce", [env.v(x, D.int32)], [rty], {"axis": axis}, [D.int32],
                             _add_combine(env, D.int32))[0]
    assert r.shape == out_shape and np.array_equal(r, x.sum(axis=axis))


def test_reduce_argmax_with_value_index_combine(env):
    x = np.array([3.0, 9.0, 1.0, 9.0, np.nan, 2.0, 9.0, 0.0], np.float32)

    def combine(accs, news):  # larger value wins, ties (and NaN compares) keep the lower index
        v1, i1 = accs
        v2, i2 = news
        gt = env.op("cmp", v2, v1, ty=D.int1, pred="gt")
        eq = env.op("cmp", v2, v1, ty=D.int1, pred="eq")
        lt_idx = env.op("cmp", i2, i1, ty=D.int1, pred="lt")
        take = env.op("or", gt, env.op("and", eq, lt_idx, ty=D.int1), ty=D.int1)
        return [env.op("select", take, v2, v1, ty=D.float32), env.op("select", take, i2, i1, ty=D.int32)]

    idx = env.v(np.arange(8, dtype=np.int32), D.int32)
    v, i = env.combine("reduce", [env.v(x, D.float32), idx], [D.float32, D.int32], {"axis": 0},
                                [D.float32, D.int32], combine)
    assert v.item() == 9.0 and i.item() == 1


def test_reduce_is_left_to_right_for_non_commutative_combines(env):
    x = np.array([4, 9, 2, 9, 7, 9, 1, 3], np.int32)
    v = env.v(x, D.int32)
    first = env.combine("reduce", [v], [D.int32], {"axis": 0}, [D.int32], lambda a, n: [a[0]])[0]
    last = env.combine("reduce", [v], [D.int32], {"axis": 0}, [D.int32], lambda a, n: [n[0]])[0]
    assert first.item() == 4 and last.item() == 3

    def strict_max(accs, news):  # keeps the accumulator on ties: the earliest index must win
        take = env.op("cmp", news[0], accs[0], ty=D.int1, pred="gt")
        return [env.op("select", take, n, a, ty=D.int32) for a, n in zip(accs, news)]

    idx = env.v(np.arange(8, dtype=np.int32), D.int32)
    _, i = env.combine("reduce", [v, idx], [D.int32, D.int32], {"axis": 0}, [D.int32, D.int32],
                                strict_max)
    assert i.item() == 1


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", [((16,), 0), ((4, 8), 1), ((8, 4), 0)])
def test_scan_cumsum(env, shape, axis, reverse):
    x = np.random.default_rng(1).integers(-100, 100, shape).astype(np.int32)
    r = env.combine("scan", [env.v(x, D.int32)], [blk(D.int32, shape)], {"axis": axis, "reverse": reverse},
                             [D.int32], _add_combine(env, D.int32))[0]
    ref = np.flip(np.cumsum(np.flip(x, axis), axis), axis) if reverse else np.cumsum(x, axis)
    assert np.array_equal(r, ref)


def test_scan_keeps_operand_order_for_non_commutative_combine(env):
    # combine(a, b) = 2a + b is associative only up to reordering of terms, but in
    # a prefix scan of (x0..xn) its result is a weighted sum whose weights reveal
    # the order: the last element always has weight 1.
    x = np.zeros(8, np.int64)
    x[3] = 1

    def last(accs, news):  # "the later element wins": associative, not commutative
        return [news[0]]

    def first(accs, news):
        return [accs[0]]

    v = env.v(np.arange(8, dtype=np.int64), D.int64)
    sc = lambda comb, rev: env.combine("scan", [v], [blk(D.int64, 8)], {"axis": 0, "reverse": rev},
                                                [D.int64], comb)[0].tolist()
    assert sc(last, False) == list(range(8))
    assert sc(first, False) == [0] * 8
    assert sc(first, True) == [7] * 8
    assert sc(last, True) == list(range(8))


# ---------------------------------------------------------------- dot and shapes

def test_dot(env):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)
    acc = np.ones((16, 16), np.float32)
    r = env.create("dot", [env.v(a, D.float32), env.v(b, D.float32), env.v(acc, D.float32)],
                     [blk(D.float32, (16, 16))], {"input_precision": "ieee"})[0]
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, a.astype(np.float64) @ b + 1, rtol=1e-5, atol=1e-5)
    ia = np.full((16, 32), 127, np.int8)
    ib = np.full((32, 16), 127, np.int8)
    iacc = np.full((16, 16), 2 ** 31 - 1 - 32 * 127 * 127 + 1, np.int32)
    r = env.create("dot", [env.v(ia, D.int8), env.v(ib, D.int8), env.v(iacc, D.int32)],
                     [blk(D.int32, (16, 16))], {})[0]
    assert r.dtype == np.int32 and (r == -2 ** 31).all()  # wraps like an int32 accumulator
    ha = a.astype(np.float16)
    hb = b.astype(np.float16)
    r = env.create("dot", [env.v(ha, D.float16), env.v(hb, D.float16), env.v(np.zeros((16, 16), np.float16),
                                                                                  D.float16)],
                     [blk(D.float16, (16, 16))], {})[0]
    assert r.dtype == np.float16
    np.testing.assert_allclose(r, (ha.astype(np.float64) @ hb), rtol=1e-2, atol=1e-2)


def test_shape_ops(env):
    x = np.arange(8, dtype=np.int32).reshape(2, 4)
    h = env.v(x, D.int32)
    assert np.array_equal(env.op("expand_dims", h, ty=blk(D.int32, (2, 1, 4)), axis=1), x[:, None, :])
    assert np.array_equal(env.op("reshape", h, ty=blk(D.int32, (4, 2))), x.reshape(4, 2))
    assert np.array_equal(env.op("permute", h, ty=blk(D.int32, (4, 2)), order=[1, 0]), x.T)
    col = env.v(np.array([[1], [2]], np.int32), D.int32)
    assert np.array_equal(env.op("broadcast", col, ty=blk(D.int32, (2, 4))), np.broadcast_to([[1], [2]], (2, 4)))
    j = env.op("join", h, h, ty=blk(D.int32, (2, 4, 2)))
    assert np.array_equal(j, np.stack([x, x], -1))
    s0, s1 = env.create("split", [j], [blk(D.int32, (2, 4))] * 2, {})
    assert np.array_equal(s0, x) and np.array_equal(s1, x)
    c = env.op("cat", h, h, ty=blk(D.int32, (4, 4)))
    assert sorted(c.reshape(-1).tolist()) == sorted(x.reshape(-1).tolist() * 2)
    assert env.op("arange", ty=blk(D.int32, 4), start=3, end=7).tolist() == [3, 4, 5, 6]
    assert env.op("const", ty=blk(D.bfloat16, 2), value=math.pi).tolist() == [3.140625] * 2
    assert env.op("const", ty=D.uint64, value=2 ** 64 - 1).item() == 2 ** 64 - 1
    assert env.op("multiple_of", h, ty=blk(D.int32, (2, 4)), values=[1, 4]).tolist() == x.tolist()


def test_program_ids():
    env = Env(grid=(4, 3, 2))
    env.b.pid = (3, 1, 0)
    assert env.op("program_id", ty=D.int32, axis=0).item() == 3
    assert env.op("program_id", ty=D.int32, axis=1).item() == 1
    assert env.op("num_programs", ty=D.int32, axis=2).item() == 2


# ---------------------------------------------------------------- debug and events

def test_assert_and_print(env, capsys):
    env.b.pid = (1, 0, 0)
    env.create("assert", [env.v(np.array([True, True]), D.int1)], [], {"msg": "fine"})
    with pytest.raises(DeviceAssertionError, match=r"program \(1, 0, 0\).*lane\(s\) \[\(1,\)\].*x must be positive"):
        env.create("assert", [env.v(np.array([True, False]), D.int1)], [], {"msg": "x must be positive"})
    env.create("print", [env.v(np.array([1, 2], np.int32), D.int32)], [], {"prefix": " x: ", "hex": False})
    env.create("print", [env.v(np.array([255], np.int32), D.int32)], [], {"prefix": " h: ", "hex": True})
    out = capsys.readouterr().out.splitlines()
    assert out == ["pid (1, 0, 0) x: [1 2]", "pid (1, 0, 0) h: [0xff]"]


def test_tracer_and_sanitizer_events():
    tracer, san = Tracer(), Sanitizer()
    env = Env(events=EventBus([tracer, san]), oob="skip")
    data = np.arange(4, dtype=np.int32)
    base = mapped(env, "data", data)
    env.b.events.launch(Launch("k", (1, 1, 1), env.b.memory))
    p = ptrs(env, base, np.arange(8))
    masked = env.v(np.arange(8) < 4, D.int1)
    env.create("load", [p, masked], [blk(D.int32, 8)], {})      # masked-off OOB lanes: fine
    got = env.create("load", [p], [blk(D.int32, 8)], {})[0]     # unmasked OOB: reported, skipped
    assert got.tolist() == [0, 1, 2, 3, 0, 0, 0, 0]
    env.create("store", [p, env.v(np.ones(8, np.int32), D.int32), masked], [], {})
    assert [e.kind for e in tracer.events] == ["load", "load", "store"]
    assert tracer.of_kind("store")[0].mask[0].tolist() == [True] * 4 + [False] * 4
    assert len(san.reports) == 1
    rep = san.reports[0]
    assert rep.kind == "load" and rep.lanes.tolist() == [4, 5, 6, 7]
    assert "data" in str(rep) and "interp_builder_env.py" in str(rep)
    assert data.tolist() == [1, 1, 1, 1]
