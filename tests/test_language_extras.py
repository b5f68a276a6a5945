"""Issue 14's language pieces in the interpreter (against NumPy) and
compiled for sm_80 and sm_90a through ptxas: tl.sort (any axis, both
directions, every dtype), tl.topk, tl.bitonic_merge, tl.reduce_or.
tests/gpu/test_language_extras_gpu.py runs the compiled kernels."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.interpreter import run_grid

import language_extras_kernels as K
from test_codegen_ptx import ARCHS, ptxas


def interpret(kernel, grid, *args, **consts):
    run_grid(kernel, grid, kernel.bind_call(list(args), consts))


def compiles(kernel, sig: str, consts: dict, arch: str, tmp_path, warps: int = 4) -> str:
    out = _core.compile_ptx(kernel.compile_ir(signature=sig, constexprs=consts), arch, warps)
    ptxas(out["ptx"], arch, tmp_path)
    return out["ptx"]


def _random(dtype, shape, rng):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -10**6), min(info.max, 10**6), shape, dtype=dtype)


SIG = {np.float32: "fp32", np.float16: "fp16", np.int32: "i32", np.uint8: "u8", np.int64: "i64",
       np.float64: "fp64", np.int8: "i8", np.int16: "i16", np.uint32: "u32"}


@pytest.mark.parametrize("dtype", K.SORT_DTYPES)
@pytest.mark.parametrize("n", [1, 2, 16, 256])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_1d(dtype, n, descending):
    rng = np.random.default_rng(n)
    x = _random(dtype, n, rng)
    y = np.zeros_like(x)
    interpret(K.sort_1d, (1,), x, y, N=n, DESCENDING=descending)
    want = np.sort(x)
    np.testing.assert_array_equal(y, want[::-1] if descending else want)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_2d_along_any_axis(dim, descending):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 32)).astype(np.float32)
    y = np.zeros_like(x)
    interpret(K.sort_2d, (1,), x, y, M=8, N=32, DIM=dim, DESCENDING=descending)
    want = np.sort(x, axis=dim)
    np.testing.assert_array_equal(y, np.flip(want, axis=dim) if descending else want)


def test_sort_keeps_ties_and_signed_zeros_and_infinities():
    x = np.array([3, -0.0, 0.0, np.inf, -np.inf, 3, -2, 1e-30], np.float32)
    y = np.zeros_like(x)
    interpret(K.sort_1d, (1,), x, y, N=8, DESCENDING=False)
    np.testing.assert_array_equal(y, np.sort(x))


@pytest.mark.parametrize("k", [1, 2, 8, 64])
def test_topk(k):
    rng = np.random.default_rng(k)
    x = rng.permutation(4 * 64).astype(np.float32).reshape(4, 64)
    y = np.zeros((4, k), np.float32)
    interpret(K.topk_2d, (1,), x, y, M=4, N=64, K=k)
    np.testing.assert_array_equal(y, -np.sort(-x, axis=1)[:, :k])


@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_merge(descending):
    x = K.bitonic_input(64, np.random.default_rng(5)).astype(np.int32)
    y = np.zeros_like(x)
    interpret(K.bitonic_merge_1d, (1,), x, y, N=64, DESCENDING=descending)
    np.testing.assert_array_equal(y, np.sort(x)[::-1] if descending else np.sort(x))


def test_reduce_or():
    rng = np.random.default_rng(7)
    x = (1 << rng.integers(0, 31, (4, 16))).astype(np.int32)
    y = np.zeros(5, np.int32)
    interpret(K.reduce_or_2d, (1,), x, y, M=4, N=16)
    np.testing.assert_array_equal(y[:4], np.bitwise_or.reduce(x, axis=1))
    assert y[4] == np.bitwise_or.reduce(x.ravel())


def test_reduce_or_refuses_floats():
    x = np.zeros((4, 16), np.float32)
    with pytest.raises(Exception, match="reduce_or is only defined for integers"):
        interpret(K.reduce_or_2d, (1,), x, np.zeros(5, np.float32), M=4, N=16)


def test_sort_and_topk_arguments_are_checked():
    with pytest.raises(Exception, match="topk: k must be an int between 1 and 64, got 128"):
        interpret(K.topk_2d, (1,), np.zeros((4, 64), np.float32), np.zeros((4, 128), np.float32), M=4, N=64, K=128)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,kernel,sig,consts", [
    ("sort_f32", K.sort_1d, "*fp32, *fp32", dict(N=256, DESCENDING=False)),
    ("sort_f16_desc", K.sort_1d, "*fp16, *fp16", dict(N=128, DESCENDING=True)),
    ("sort_i64", K.sort_1d, "*i64, *i64", dict(N=64, DESCENDING=False)),
    ("sort_u8", K.sort_1d, "*u8, *u8", dict(N=32, DESCENDING=False)),
    ("sort_2d_dim0", K.sort_2d, "*fp32, *fp32", dict(M=8, N=32, DIM=0, DESCENDING=True)),
    ("topk", K.topk_2d, "*fp32, *fp32", dict(M=4, N=64, K=8)),
    ("bitonic_merge", K.bitonic_merge_1d, "*i32, *i32", dict(N=64, DESCENDING=False)),
    ("reduce_or", K.reduce_or_2d, "*i32, *i32", dict(M=4, N=16)),
])
def test_compiles_through_ptxas(name, kernel, sig, consts, arch, tmp_path):
    compiles(kernel, sig, consts, arch, tmp_path)


@pytest.mark.parametrize("axis,k", [(0, 4), (0, 16), (1, 8), (1, 32)])
def test_gather(axis, k):
    rng = np.random.default_rng(axis * 100 + k)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    shape = (k, 16) if axis == 0 else (8, k)
    idx = rng.integers(0, x.shape[axis], shape).astype(np.int32)
    y = np.zeros(shape, np.float32)
    interpret(K.gather_2d, (1,), x, idx, y, M=8, N=16, K=k, AXIS=axis)
    np.testing.assert_array_equal(y, K.gather_reference(x, idx, axis))


def test_gather_reports_an_index_out_of_range():
    x = np.zeros((8, 16), np.float32)
    idx = np.zeros((4, 16), np.int32)
    idx[2, 5] = 8
    with pytest.raises(Exception, match=r"gather: index 8 at position \(2, 5\) is outside the source's axis 0 of "
                                        r"length 8"):
        interpret(K.gather_2d, (1,), x, idx, np.zeros((4, 16), np.float32), M=8, N=16, K=4, AXIS=0)


def test_gather_checks_shapes_at_the_kernel_line():
    with pytest.raises(Exception, match=r"gather: index dimension 1 is 8 but the source's is 16") as e:
        _gather_bad.compile_ir(signature="*fp32, *i32, *fp32", constexprs={})
    assert "test_language_extras.py" in str(e.value)


@triton.jit
def _gather_bad(x_ptr, i_ptr, y_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :])
    idx = tl.load(i_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.store(y_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], tl.gather(x, idx, 0))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
@pytest.mark.parametrize("n", [256, 100])
def test_histogram(dtype, n):
    rng = np.random.default_rng(n)
    lo = 0 if np.dtype(dtype).kind == "u" else -5
    x = rng.integers(lo, 40, 256).astype(dtype)
    y = np.zeros(32, np.int32)
    interpret(K.histogram_1d, (1,), x, y, n, N=256, BINS=32)
    np.testing.assert_array_equal(y, K.histogram_reference(x, n, 32))


def test_assume_holds_and_a_false_one_is_reported():
    x = np.arange(16, dtype=np.int32)
    y = np.zeros_like(x)
    interpret(K.assume_positive, (1,), x, y, 16, N=16)
    np.testing.assert_array_equal(y, x // 2)
    with pytest.raises(Exception, match="tl.assume: the assumed condition is false"):
        interpret(K.assume_positive, (1,), -x - 1, y, 16, N=16)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,kernel,sig,consts", [
    ("gather_axis0", K.gather_2d, "*fp32, *i32, *fp32", dict(M=8, N=16, K=4, AXIS=0)),
    ("gather_axis1_i64", K.gather_2d, "*fp16, *i64, *fp16", dict(M=8, N=16, K=32, AXIS=1)),
    ("histogram", K.histogram_1d, "*i32, *i32, i32", dict(N=256, BINS=32)),
    ("histogram_u8", K.histogram_1d, "*u8, *i32, i32", dict(N=128, BINS=64)),
    ("assume", K.assume_positive, "*i32, *i32, i32", dict(N=128)),
])
def test_lookup_ops_compile_through_ptxas(name, kernel, sig, consts, arch, tmp_path):
    ptx = compiles(kernel, sig, consts, arch, tmp_path)
    if name.startswith("histogram"):
        assert "atom.shared.add" in ptx or "red.shared.add" in ptx


# integers whose bf16 rounding differs when it goes through f32 first (double
# rounding), ties, and values past f32's exact integers
BF16_INTS = np.array([0x01018001, 0x01008000, 0x01018000, -0x01018001, 257, -129, 2**31 - 1, -2**31, 0, 7,
                      0x7F7F, 0x8180, 0x018101, 0x40000001, -0x40804001, 3], np.int64)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float64])
def test_casts_to_bf16_round_once_in_the_interpreter(dtype):
    x = np.abs(BF16_INTS).astype(dtype) if np.dtype(dtype).kind == "u" else BF16_INTS.astype(dtype)
    if dtype == np.float64:
        x = x * 1.0000001
    y = np.zeros(x.shape, np.int16)
    interpret(K.to_bf16, (1,), x, y, N=len(x))
    np.testing.assert_array_equal(y.view(np.uint16), K.bf16_bits(x))


def test_fp32_to_bf16_rtz_in_the_interpreter():
    x = np.array([1.00390625, -1.0078125 - 2**-20, 3.0e38, 1e-40, -0.0], np.float32)
    x = np.concatenate([x, np.float32(1) + np.arange(11, dtype=np.float32) * np.float32(2**-10)])[:16]
    y = np.zeros(x.shape, np.int16)
    interpret(K.to_bf16_rtz, (1,), x, y, N=16)
    np.testing.assert_array_equal(y.view(np.uint16), K.bf16_bits(x, rtz=True))


@pytest.mark.parametrize("src,instruction", [("i32", "cvt.rn.bf16.s32"), ("i64", "cvt.rn.bf16.s64"),
                                             ("u32", "cvt.rn.bf16.u32"), ("fp64", "cvt.rn.bf16.f64")])
@pytest.mark.parametrize("arch", ARCHS)
def test_casts_to_bf16_compile_through_ptxas(src, instruction, arch, tmp_path):
    ptx = compiles(K.to_bf16, f"*{src}, *i16", dict(N=128), arch, tmp_path)
    # sm_90 converts in one instruction; sm_80 goes through f32, as Triton does there
    assert (instruction in ptx) == (arch == "sm_90a")
    if arch == "sm_80":
        assert "cvt.rn.bf16.f32" in ptx


@pytest.mark.parametrize("arch", ARCHS)
def test_fp32_to_bf16_rtz_compiles(arch, tmp_path):
    assert "cvt.rz.bf16.f32" in compiles(K.to_bf16_rtz, "*fp32, *i16", dict(N=128), arch, tmp_path)
