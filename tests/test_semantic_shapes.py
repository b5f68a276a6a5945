"""Shapes produced by broadcasting, indexing, shape ops, reductions, scans, dot,
and the memory ops' operand shapes, checked on the recorded IR."""
from __future__ import annotations

import pytest

import tritium.language as tl

from _recording_builder import recording

F16, F32, I32, I1 = tl.float16, tl.float32, tl.int32, tl.int1


def blk(bld, shape, dt=F32):
    return bld.value(tl.block_type(dt, shape))


@pytest.mark.parametrize("a,b,out", [((4, 1), (1, 8), (4, 8)), ((8,), (4, 8), (4, 8)), ((4, 8), (8,), (4, 8)),
                                     ((1,), (16,), (16,)), ((2, 1, 4), (8, 1), (2, 8, 4)),
                                     ((), (4, 4), (4, 4)), ((1, 1), (1,), (1, 1))])
def test_broadcast_shapes(a, b, out):
    with recording() as bld:
        x = blk(bld, a) if a else bld.value(F32)
        y = blk(bld, b) if b else bld.value(F32)
        assert (x + y).shape == out
        assert (y * x).shape == out


def test_rank_alignment_uses_expand_dims_then_broadcast():
    with recording() as bld:
        x, y = blk(bld, (8,)), blk(bld, (4, 8))
        x + y
        assert bld.names() == ["expand_dims", "broadcast", "add"]
        assert bld.ops[0].attrs == {"axis": 0}


def test_scalar_is_splatted():
    with recording() as bld:
        x = blk(bld, (4, 8))
        s = bld.value(F32)
        x + s
        assert bld.names() == ["splat", "add"]


def test_indexing_new_axes():
    with recording() as bld:
        x = tl.arange(0, 16)
        assert x[None, :].shape == (1, 16)
        assert x[:, None].shape == (16, 1)
        assert x[None, :, None].shape == (1, 16, 1)
        assert x[:].shape == (16,)
        grid = x[:, None] * 16 + x[None, :]
        assert grid.shape == (16, 16)
        with pytest.raises(TypeError, match="only None"):
            x[0]
        with pytest.raises(TypeError, match="only None"):
            x[1:]


@pytest.mark.parametrize("shape,axis,out", [((8,), 0, (1, 8)), ((8,), 1, (8, 1)), ((8,), -1, (8, 1)),
                                            ((4, 8), (0, 2), (1, 4, 1, 8)), ((8,), (0, -1), (1, 8, 1)),
                                            ((4, 8), (-1, 0), (1, 4, 8, 1))])
def test_expand_dims(shape, axis, out):
    with recording() as bld:
        assert tl.expand_dims(blk(bld, shape), axis).shape == out


def test_expand_dims_scalar_and_errors():
    with recording() as bld:
        s = bld.value(F32)
        assert tl.expand_dims(s, 0).shape == (1,)
        with pytest.raises(ValueError, match="invalid axis"):
            tl.expand_dims(blk(bld, (8,)), 3)
        with pytest.raises(ValueError, match="duplicate"):
            tl.expand_dims(blk(bld, (8,)), (0, 0))


def test_reshape_view_ravel():
    with recording() as bld:
        x = blk(bld, (4, 8))
        assert tl.reshape(x, 32).shape == (32,)
        assert tl.reshape(x, (2, 16)).shape == (2, 16)
        assert x.reshape(8, 4).shape == (8, 4)
        assert bld.last().attrs == {"can_reorder": False}
        assert tl.view(x, (32,)).shape == (32,)
        assert bld.last().attrs == {"can_reorder": True}
        assert tl.ravel(x).shape == (32,)
        assert tl.reshape(x, 32, can_reorder=True).shape == (32,)


@pytest.mark.parametrize("call,out", [(lambda x: tl.trans(x), (8, 4)),
                                      (lambda x: tl.trans(x, 1, 0), (8, 4)), (lambda x: tl.trans(x, (1, 0)), (8, 4)),
                                      (lambda x: x.T, (8, 4)), (lambda x: tl.permute(x, 1, 0), (8, 4)),
                                      (lambda x: x.permute((1, 0)), (8, 4))])
def test_trans_forms(call, out):
    with recording() as bld:
        x = blk(bld, (4, 8))
        assert call(x).shape == out
        assert bld.last("permute").attrs == {"order": [1, 0]}


def test_permute_3d():
    with recording() as bld:
        x = blk(bld, (2, 4, 8))
        assert tl.permute(x, (2, 0, 1)).shape == (8, 2, 4)
        assert tl.trans(x, 2, 1, 0).shape == (8, 4, 2)


def test_join_split_interleave_cat():
    with recording() as bld:
        a, b = blk(bld, (4, 8)), blk(bld, (4, 8))
        j = tl.join(a, b)
        assert j.shape == (4, 8, 2)
        lo, hi = tl.split(j)
        assert lo.shape == hi.shape == (4, 8)
        assert tl.interleave(a, b).shape == (4, 16)
        s1, s2 = bld.value(F32), bld.value(F32)
        assert tl.join(s1, s2).shape == (2,)
        x, y = tl.split(tl.join(s1, s2))
        assert x.shape == () and x.dtype == F32
        assert tl.join(blk(bld, (8,)), bld.value(F32)).shape == (8, 2)
        c = tl.cat(blk(bld, (8,)), blk(bld, (8,)), can_reorder=True)
        assert c.shape == (16,)


def test_broadcast_to_and_broadcast():
    with recording() as bld:
        x = blk(bld, (1, 8))
        assert tl.broadcast_to(x, (4, 8)).shape == (4, 8)
        assert tl.broadcast_to(x, 4, 8).shape == (4, 8)
        assert x.broadcast_to(4, 8).shape == (4, 8)
        assert tl.broadcast_to(bld.value(F32), (2, 2)).shape == (2, 2)
        a, b = tl.broadcast(blk(bld, (4, 1)), blk(bld, (1, 8)))
        assert a.shape == b.shape == (4, 8)


def test_full_zeros_arange():
    with recording() as bld:
        z = tl.zeros((16, 32), dtype=F16)
        assert z.shape == (16, 32) and z.dtype == F16
        assert bld.last().name == "const" and bld.last().attrs == {"value": 0.0}
        f = tl.full([8], 7, tl.int8)
        assert f.dtype == tl.int8 and bld.last().attrs == {"value": 7}
        s = tl.full((), 1.5, F32)
        assert s.shape == ()
        v = tl.full((4,), bld.value(tl.int64), F32)
        assert v.shape == (4,) and bld.names()[-2:] == ["cast", "splat"]
        zl = tl.zeros_like(blk(bld, (2, 4), tl.int16))
        assert zl.shape == (2, 4) and zl.dtype == tl.int16
        fl = tl.full_like(blk(bld, (2, 4)), 3, dtype=tl.int32)
        assert fl.dtype == tl.int32
        r = tl.arange(16, 48)
        assert r.shape == (32,) and r.dtype == I32 and bld.last().attrs == {"start": 16, "end": 48}
        assert tl.arange(tl.constexpr(0), tl.constexpr(4)).shape == (4,)


# ----- reductions and scans


@pytest.mark.parametrize("axis,keep,out", [(0, False, (8,)), (1, False, (4,)), (-1, False, (4,)),
                                           (0, True, (1, 8)), (1, True, (4, 1)), (None, False, ()),
                                           (None, True, (1, 1))])
def test_reduction_shapes(axis, keep, out):
    with recording() as bld:
        x = blk(bld, (4, 8))
        assert tl.sum(x, axis, keep_dims=keep).shape == out
        assert tl.max(x, axis=axis, keep_dims=keep).shape == out
        assert x.min(axis, keep_dims=keep).shape == out


def test_reduce_region_and_attrs():
    with recording() as bld:
        x = blk(bld, (4, 8))
        tl.sum(x, 1)
        red = bld.last("reduce")
        assert red.attrs == {"axis": 1}
        assert [o.name for o in red.region] == ["add"]
        assert red.result_types == [tl.block_type(F32, [4])]


def test_reduce_user_combine_tuple():
    def combine(a0, a1, b0, b1):
        return a0 + b0, tl.maximum(a1, b1)

    with recording() as bld:
        x, y = blk(bld, (4, 8)), blk(bld, (4, 8), I32)
        s, m = tl.reduce((x, y), 0, combine)
        assert s.shape == m.shape == (8,) and s.dtype == F32 and m.dtype == I32
        assert [o.name for o in bld.last("reduce").region] == ["add", "max"]


def test_reduce_combine_through_jit_hook(monkeypatch):
    from tritium.language import core
    calls = []

    class FakeJit:
        def __init__(self, fn):
            self.fn = fn

    def hook(fn, args):
        calls.append(fn)
        return fn.fn(*args)

    monkeypatch.setattr(core, "_call_jit_function", hook)
    with recording() as bld:
        f = FakeJit(lambda a, b: a * b)
        r = tl.reduce(blk(bld, (8,)), 0, f)
        assert r.shape == () and calls == [f]


def test_argmax_argmin():
    with recording() as bld:
        x = blk(bld, (4, 8), F16)
        i = tl.argmax(x, 1)
        assert i.shape == (4,) and i.dtype == I32
        v, i = tl.max(x, 0, return_indices=True)
        assert v.shape == i.shape == (8,) and v.dtype == F16
        red = bld.last("reduce")
        assert red.operand_types[1] == tl.block_type(I32, [4, 8])
        assert tl.argmin(x, 0, keep_dims=True).shape == (1, 8)
        assert tl.argmax(blk(bld, (16,)), 0).shape == ()


@pytest.mark.parametrize("src,sum_dt,max_dt", [(tl.int8, I32, I32), (tl.int16, I32, I32), (I32, I32, I32),
                                               (tl.int64, tl.int64, tl.int64), (tl.uint8, tl.uint32, I32),
                                               (tl.uint16, tl.uint32, I32), (I1, tl.uint32, I32),
                                               (F16, F16, F32), (tl.bfloat16, tl.bfloat16, F32), (F32, F32, F32),
                                               (tl.float64, tl.float64, tl.float64)])
def test_reduction_accumulator_dtypes(src, sum_dt, max_dt):
    with recording() as bld:
        x = blk(bld, (16,), src)
        assert tl.sum(x, 0).dtype == sum_dt
        assert tl.max(x, 0).dtype == max_dt
        assert tl.cumsum(x, 0).dtype == sum_dt


def test_sum_explicit_dtype_and_xor_sum():
    with recording() as bld:
        x = blk(bld, (16,), tl.int8)
        assert tl.sum(x, 0, dtype=tl.int8).dtype == tl.int8
        assert tl.xor_sum(blk(bld, (4, 4), I32), 1).shape == (4,)
        with pytest.raises(TypeError, match="integers"):
            tl.xor_sum(blk(bld, (4,), F32), 0)


def test_scans():
    with recording() as bld:
        x = blk(bld, (4, 8))
        c = tl.cumsum(x, 1)
        assert c.shape == (4, 8) and bld.last("scan").attrs == {"axis": 1, "reverse": False}
        tl.cumprod(x, 0, reverse=True)
        assert bld.last("scan").attrs == {"axis": 0, "reverse": True}
        a, b = tl.associative_scan((x, blk(bld, (4, 8), I32)), -1, lambda a0, a1, b0, b1: (a0 + b0, a1 + b1))
        assert a.dtype == F32 and b.dtype == I32 and bld.last("scan").attrs["axis"] == 1


def test_softmax_sigmoid_flip_swizzle():
    with recording() as bld:
        x = blk(bld, (16,))
        assert tl.softmax(x).shape == (16,)
        assert tl.sigmoid(x).dtype == F32
        y = blk(bld, (4, 8), I32)
        assert tl.flip(y).shape == (4, 8) and tl.flip(y, 0).shape == (4, 8)
        i, j = tl.swizzle2d(tl.program_id(0), tl.program_id(1), 64, 64, 8)
        assert i.dtype == j.dtype == I32


# ----- dot and memory


@pytest.mark.parametrize("dt,out", [(F16, F32), (tl.bfloat16, F32), (F32, F32), (tl.int8, I32),
                                    (tl.float64, tl.float64), (tl.float8e5, F32)])
def test_dot_result(dt, out):
    with recording() as bld:
        a, b = blk(bld, (32, 64), dt), blk(bld, (64, 16), dt)
        c = tl.dot(a, b)
        assert c.shape == (32, 16) and c.dtype == out
        d = bld.last("dot")
        assert d.attrs == {"input_precision": "tf32", "max_num_imprecise_acc": 0}


def test_dot_options():
    with recording() as bld:
        a, b = blk(bld, (16, 16), F16), blk(bld, (16, 16), F16)
        assert tl.dot(a, b, out_dtype=F16).dtype == F16
        acc = blk(bld, (16, 16), F32)
        assert tl.dot(a, b, acc).dtype == F32
        tl.dot(blk(bld, (16, 16)), blk(bld, (16, 16)), allow_tf32=False)
        assert bld.last("dot").attrs["input_precision"] == "ieee"
        tl.dot(blk(bld, (16, 16)), blk(bld, (16, 16)), input_precision="tf32x3")
        assert bld.last("dot").attrs["input_precision"] == "tf32x3"


def test_load_store_shapes():
    with recording() as bld:
        p = bld.value(tl.pointer_type(F16))
        offs = tl.arange(0, 64)
        mask = offs < 50
        x = tl.load(p + offs, mask=mask, other=0.0)
        assert x.shape == (64,) and x.dtype == F16
        ld = bld.last("load")
        assert ld.attrs == {"cache": "", "eviction": "", "volatile": False} and len(ld.operands) == 3
        tl.store(p + offs, x * 2, mask=mask)
        assert bld.last("store").operand_types[1] == tl.block_type(F16, [64])
        # a scalar value and a scalar mask broadcast to the pointer block
        tl.store(p + offs, 1.0, mask=offs < bld.value(I32))
        st = bld.last("store")
        assert st.operand_types[1] == tl.block_type(F16, [64])
        # scalar load/store
        s = tl.load(p)
        assert s.shape == () and s.dtype == F16
        tl.store(p, s + 1)
        # 2-D with a row mask broadcast
        rows, cols = tl.arange(0, 16)[:, None], tl.arange(0, 32)[None, :]
        y = tl.load(p + rows * 32 + cols, mask=rows < 10, other=0.0, cache_modifier=".cg",
                    eviction_policy="evict_last", volatile=True)
        assert y.shape == (16, 32)
        assert bld.last("load").attrs == {"cache": ".cg", "eviction": "evict_last", "volatile": True}


def test_bool_memory_goes_through_bytes():
    with recording() as bld:
        p = bld.value(tl.pointer_type(I1))
        x = tl.load(p + tl.arange(0, 8))
        assert x.dtype == I1
        assert bld.last("load").result_types[0].scalar == tl.int8
        tl.store(p + tl.arange(0, 8), x)
        assert bld.last("store").operand_types[1].scalar == tl.int8


def test_atomics():
    with recording() as bld:
        p = bld.value(tl.pointer_type(F32))
        offs = tl.arange(0, 32)
        old = tl.atomic_add(p + offs, 1, mask=offs < 4)
        assert old.shape == (32,) and old.dtype == F32
        a = bld.last("atomic_rmw")
        assert a.attrs == {"kind": "add", "sem": "acq_rel", "scope": "gpu"} and len(a.operands) == 3
        tl.atomic_xchg(p, 2.0, sem="relaxed", scope="cta")
        assert bld.last("atomic_rmw").attrs == {"kind": "xchg", "sem": "relaxed", "scope": "cta"}
        # float max goes through the integer-ordering trick: two integer atomics
        n_before = len([o for o in bld.ops if o.name == "atomic_rmw"])
        r = tl.atomic_max(p + offs, bld.value(tl.block_type(F32, [32])))
        rmws = [o for o in bld.ops if o.name == "atomic_rmw"][n_before:]
        assert r.dtype == F32 and [o.attrs["kind"] for o in rmws] == ["max", "min"]
        assert rmws[0].operand_types[1].scalar == I32 and rmws[1].operand_types[1].scalar == tl.uint32
        q = bld.value(tl.pointer_type(I32))
        for fn, kind in [(tl.atomic_max, "max"), (tl.atomic_min, "min"), (tl.atomic_and, "and"),
                         (tl.atomic_or, "or"), (tl.atomic_xor, "xor")]:
            fn(q + offs, 3)
            assert bld.last("atomic_rmw").attrs["kind"] == kind
        old = tl.atomic_cas(q, 0, 1)
        assert old.dtype == I32 and bld.last("atomic_cas").attrs == {"sem": "acq_rel", "scope": "gpu"}


def test_hints_and_debug_ops():
    with recording() as bld:
        x = tl.arange(0, 64)
        assert tl.multiple_of(x, 16) is not x
        assert bld.last().attrs == {"values": [16]}
        tl.max_contiguous(tl.multiple_of(x, [16]), [64])
        assert bld.last().name == "max_contiguous"
        tl.max_constancy(x[:, None], (1, 1))
        tl.device_print("x", x)
        assert bld.last().attrs == {"prefix": " x: ", "hex": False}
        tl.device_print("vals: ", x, hex=True)
        assert bld.last().attrs == {"prefix": " vals: ", "hex": True}
        tl.device_assert(x < 64, "too big")
        assert bld.last().name == "assert" and bld.last().attrs == {"msg": "too big"}
        tl.device_assert(False, "unreachable")
        assert bld.last().operand_types == [I1]
        tl.debug_barrier()
        assert bld.last().name == "barrier"
        pid = tl.program_id(2)
        n = tl.num_programs(1)
        assert pid.dtype == n.dtype == I32 and pid.shape == ()
