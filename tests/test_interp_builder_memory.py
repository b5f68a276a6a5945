"""NumpyBuilder memory op by op: masked loads and stores, out-of-bounds
errors, bf16/fp8 storage, strides, atomics, and the memory map."""
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


# ---------------------------------------------------------------- memory

def test_masked_load_store_never_touch_masked_lanes(env):
    data = np.arange(10, dtype=np.float32)
    base = mapped(env, "x", data)
    p = ptrs(env, base, np.arange(16))
    mask = env.v(np.arange(16) < 10, D.int1)
    other = env.v(np.full(16, -1.0, np.float32), D.float32)
    got = env.create("load", [p, mask, other], [blk(D.float32, 16)], {})[0]
    assert got.tolist() == list(range(10)) + [-1.0] * 6
    zero_fill = env.create("load", [p, mask], [blk(D.float32, 16)], {})[0]
    assert zero_fill.tolist()[10:] == [0.0] * 6
    val = env.v(np.full(16, 7.0, np.float32), D.float32)
    even = env.v((np.arange(16) % 2 == 0) & (np.arange(16) < 10), D.int1)
    env.create("store", [p, val, even], [], {})
    assert data.tolist() == [7.0 if i % 2 == 0 else float(i) for i in range(10)]
    none = env.v(np.zeros(16, bool), D.int1)
    env.create("store", [ptrs(env, base, np.arange(16) + 1000), val, none], [], {})  # all-false mask


def test_unmasked_out_of_bounds_raises_with_context(env):
    base = mapped(env, "x_ptr", np.zeros(4, np.float32))
    p = ptrs(env, base, np.arange(8))
    with pytest.raises(OutOfBoundsError) as ei:
        env.create("load", [p], [blk(D.float32, 8)], {})
    msg = str(ei.value)
    assert "'x_ptr'" in msg and hex(int(base) + 16) in msg and "program (0, 0, 0)" in msg
    assert "interp_builder_env.py" in msg


def test_scalar_load_store_and_int64(env):
    data = np.array([2 ** 40, -5], np.int64)
    base = mapped(env, "d", data)
    assert env.create("load", [base], [D.int64], {})[0].item() == 2 ** 40
    p1 = env.op("addptr", base, env.v(np.int32(1), D.int32), ty=base.ktype)
    env.create("store", [p1, env.v(np.int64(9), D.int64)], [], {})
    assert data[1] == 9


def test_bf16_memory_representation(env):
    raw = np.array([0x3F80, 0x4049], np.uint16)  # bf16 bits in memory
    base = mapped(env, "h", raw)
    bptr = env.op("bitcast", base, ty=D.pointer_type(D.bfloat16))
    p = ptrs(env, bptr, [0, 1])
    v = env.create("load", [p], [blk(D.bfloat16, 2)], {})[0]
    assert v.dtype == np.float32 and v.tolist() == [1.0, 3.140625]
    env.create("store", [p, env.op("add", v, v, ty=blk(D.bfloat16, 2))], [], {})
    assert raw.tolist() == [0x4000, 0x40C9]


def test_strided_argument_is_addressable(env):
    full = np.arange(20, dtype=np.int32)
    view = full[::2]
    base = mapped(env, "v", view)
    p = ptrs(env, base, np.arange(10) * 2)  # the kernel steps by the stride
    assert env.create("load", [p], [blk(D.int32, 10)], {})[0].tolist() == view.tolist()


def test_fp8_memory_and_negative_strides(env):
    raw = np.array([0x38, 0x40, 0xB8, 0x7E], np.uint8)  # e4m3: 1, 2, -1, 448
    base = mapped(env, "f8", raw)
    p = ptrs(env, env.op("bitcast", base, ty=D.pointer_type(D.float8e4nv)), [0, 1, 2, 3])
    v = env.create("load", [p], [blk(D.float8e4nv, 4)], {})[0]
    assert v.tolist() == [1.0, 2.0, -1.0, 448.0]
    env.create("store", [p, env.op("mul", v, v, ty=blk(D.float8e4nv, 4))], [], {})
    # 1, 4, 1, and 448*448 saturates (fp8 results are re-rounded with satfinite)
    assert raw.tolist() == [0x38, 0x48, 0x38, 0x7E]
    rev = np.arange(6, dtype=np.int32)[::-1]
    rbase = mapped(env, "rev", rev)
    got = env.create("load", [ptrs(env, rbase, [0, -1, -5])], [blk(D.int32, 3)], {})[0]
    assert got.tolist() == [5, 4, 0]


def test_atomics_return_old_values_in_lane_order(env):
    mem = np.zeros(2, np.int32)
    base = mapped(env, "m", mem)
    p = ptrs(env, base, [0, 0, 1, 0, 1])
    val = env.v(np.array([1, 2, 3, 4, 5], np.int32), D.int32)
    old = env.create("atomic_rmw", [p, val], [blk(D.int32, 5)], {"kind": "add"})[0]
    assert old.tolist() == [0, 1, 0, 3, 3] and mem.tolist() == [7, 8]
    mask = env.v(np.array([True, False, True, False, False]), D.int1)
    old = env.create("atomic_rmw", [p, val, mask], [blk(D.int32, 5)], {"kind": "xchg"})[0]
    assert old.tolist() == [7, 0, 8, 0, 0] and mem.tolist() == [1, 3]
    neg = env.v(np.array([-1] * 5, np.int32), D.int32)
    env.create("atomic_rmw", [p, neg], [blk(D.int32, 5)], {"kind": "max"})
    assert mem.tolist() == [1, 3]
    for kind, ref in (("and", [1 & 2 & 4, 3 & 3 & 5]), ("or", [1 | 2 | 4 | 1, 3 | 3 | 5 | 1]), ):
        mem[:] = [1, 3]
        env.create("atomic_rmw", [p, val], [blk(D.int32, 5)], {"kind": kind})
        assert mem.tolist() == ([1 & 1 & 2 & 4, 3 & 3 & 5] if kind == "and" else [1 | 1 | 2 | 4, 3 | 3 | 5])


def test_atomic_unsigned_max_and_float_add(env):
    mem = np.array([5], np.uint32)
    base = mapped(env, "u", mem)
    p = ptrs(env, base, [0, 0])
    v = env.v(np.array([0xFFFFFFFF, 3], np.uint32), D.uint32)
    env.create("atomic_rmw", [p, v], [blk(D.uint32, 2)], {"kind": "max"})
    assert mem[0] == 0xFFFFFFFF
    f = np.zeros(1, np.float32)
    fb = mapped(env, "f", f)
    fp = ptrs(env, fb, [0] * 4)
    old = env.create("atomic_rmw", [fp, env.v(np.full(4, 0.5, np.float32), D.float32)], [blk(D.float32, 4)],
                       {"kind": "add"})[0]
    assert old.tolist() == [0.0, 0.5, 1.0, 1.5] and f[0] == 2.0


def test_atomic_cas_spin_lock_pattern(env):
    lock = np.zeros(1, np.int32)
    base = mapped(env, "lock", lock)
    p = ptrs(env, base, [0, 0, 0])
    zero = env.v(np.zeros(3, np.int32), D.int32)
    one = env.v(np.ones(3, np.int32), D.int32)
    old = env.create("atomic_cas", [p, zero, one], [blk(D.int32, 3)], {})[0]
    assert old.tolist() == [0, 1, 1] and lock[0] == 1
    old = env.create("atomic_cas", [base, env.v(np.int32(1), D.int32), env.v(np.int32(0), D.int32)],
                       [D.int32], {})[0]
    assert old.item() == 1 and lock[0] == 0


def test_atomic_out_of_bounds_raises(env):
    base = mapped(env, "a", np.zeros(2, np.int32))
    with pytest.raises(OutOfBoundsError):
        env.create("atomic_rmw", [ptrs(env, base, [0, 5]), env.v(np.ones(2, np.int32), D.int32)],
                     [blk(D.int32, 2)], {"kind": "add"})


def test_memory_map_keeps_buffers_apart():
    m = MemoryMap()
    a = m.register("a", np.zeros(3, np.int32))
    b = m.register("b", np.zeros(3, np.int32))
    assert a % 256 == 0 and b % 256 == 0 and b > a + 12
    assert m.find(np.array([a, a + 8, a + 12, b]), 4).tolist() == [0, 0, -1, 1]


def test_tma_copy_fills_its_stage_where_its_guard_holds(env):
    # the pipeliner's TMA copy lands at once, as a block load of the
    # descriptor's box into one stage; the mbarrier ops have nothing to do
    data = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    base = mapped(env, "x", data)
    i32 = lambda v: env.v(np.int32(v), D.int32)   # noqa: E731
    i64 = lambda v: env.v(np.int64(v), D.int64)   # noqa: E731
    buf = env.op("local_alloc", ty=blk(D.float32, (2, 4, 8)))
    bars = env.op("local_alloc", ty=blk(D.int64, (2, 1)))
    env.create("mbarrier_init", [bars], [], {"count": 1})
    attrs = {"boundary_check": [0, 1], "order": [1, 0], "descriptor": True, "cache": "", "eviction": "",
             "volatile": False}
    box = [i64(0), base, i32(8), i32(16), i64(16), i64(1)]
    env.create("tma_copy", [buf, i32(1), bars, env.v(True, D.int1), *box, i32(4), i32(8)], [], attrs)
    env.create("tma_copy", [buf, i32(0), bars, env.v(False, D.int1), *box, i32(0), i32(0)], [], attrs)
    env.create("mbarrier_wait", [bars, i32(1), i32(0)], [], {})
    got = env.op("local_view", buf, i32(1), ty=blk(D.float32, (4, 8)))
    assert got.tolist() == data[4:8, 8:16].tolist()
    # the guarded-off copy left its stage as it was
    assert env.op("local_view", buf, i32(0), ty=blk(D.float32, (4, 8))).tolist() == [[0.0] * 8] * 4
    # a box over the edge reads zeros there
    env.create("tma_copy", [buf, i32(0), bars, env.v(True, D.int1), *box, i32(6), i32(12)], [], attrs)
    edge = env.op("local_view", buf, i32(0), ty=blk(D.float32, (4, 8)))
    assert edge.tolist() == [data[6, 12:].tolist() + [0.0] * 4, data[7, 12:].tolist() + [0.0] * 4] + [[0.0] * 8] * 2
    env.create("mbarrier_inval", [bars], [], {})


def test_async_copy_fills_its_stage(env):
    data = np.arange(8, dtype=np.float32)
    base = mapped(env, "x", data)
    buf = env.op("local_alloc", ty=blk(D.float32, (2, 4)))
    mask = env.v(np.array([True, True, False, True]), D.int1)
    env.create("async_copy", [buf, env.v(np.int32(1), D.int32), ptrs(env, base, [4, 5, 6, 7]), mask], [], {})
    got = env.op("local_view", buf, env.v(np.int32(1), D.int32), ty=blk(D.float32, 4))
    assert got.tolist() == [4.0, 5.0, 0.0, 7.0]
