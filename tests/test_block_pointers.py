"""Block pointers (`tl.make_block_ptr`, `tl.advance`, `boundary_check`,
`padding_option`) in the interpreter against NumPy: shapes that are not
multiples of the block, every padding option, transposed `order`, advance
carried through a loop, block pointers handed to @jit helpers; and Triton's
errors for misuse, as CompilationErrors at the user's line when compiling."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError

interp = triton.jit(interpret=True)


@interp
def _copy_block(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr,
                PAD: tl.constexpr, CHECK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (sxm, sxn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, shape=(M + 2, N + 2), strides=(sym, syn), offsets=(pm * BM, pn * BN),
                            block_shape=(BM, BN), order=(1, 0))
    v = tl.load(src, boundary_check=CHECK, padding_option=PAD)
    tl.store(dst, v, boundary_check=(0, 1))


def _padded_copy(x: np.ndarray, BM: int, BN: int, pad: float) -> np.ndarray:
    """What _copy_block writes: x where it exists, `pad` where a block reads past it."""
    M, N = x.shape
    gm, gn = -(-M // BM), -(-N // BN)
    want = np.full((M + 2, N + 2), -1.0, np.float32)
    want[:gm * BM, :gn * BN][:min(gm * BM, M + 2), :min(gn * BN, N + 2)] = pad
    want[:M, :N] = x
    return want


@pytest.mark.parametrize("M,N", [(16, 32), (13, 29), (1, 7), (33, 16)])
@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_load_store_with_boundary_checks(M, N, pad):
    BM, BN = 8, 16
    x = np.random.default_rng(M * N).standard_normal((M, N)).astype(np.float32)
    y = np.full((M + 2, N + 2), -1.0, np.float32)
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    _copy_block[grid](x, y, M, N, x.strides[0] // 4, 1, y.strides[0] // 4, 1, BM=BM, BN=BN, PAD=pad,
                      CHECK=(0, 1))
    want = _padded_copy(x, BM, BN, 0.0 if pad == "zero" else np.nan)
    # the destination is checked against its own shape (M+2, N+2): what lies beyond is untouched
    np.testing.assert_array_equal(y, want)


def test_padding_undefined_keeps_in_bounds_values():
    M, N, BM, BN = 10, 20, 8, 16
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    y = np.full((M + 2, N + 2), -1.0, np.float32)
    _copy_block[(2, 2)](x, y, M, N, N, 1, N + 2, 1, BM=BM, BN=BN, PAD="", CHECK=(0, 1))
    np.testing.assert_array_equal(y[:M, :N], x)


def test_boundary_check_on_one_dimension_only():
    # rows are checked, columns are not: a block that stays inside the columns
    M, N, BM, BN = 5, 16, 8, 16
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    y = np.full((M + 2, N + 2), -1.0, np.float32)
    _copy_block[(1, 1)](x, y, M, N, N, 1, N + 2, 1, BM=BM, BN=BN, PAD="nan", CHECK=0)
    np.testing.assert_array_equal(y[:M, :N], x)
    assert np.isnan(y[M:M + 2, :N]).all()


def test_unchecked_out_of_bounds_access_is_reported():
    from tritium.interpreter import OutOfBoundsError
    x = np.zeros((4, 16), np.float32)
    y = np.zeros((8, 16), np.float32)
    with pytest.raises(OutOfBoundsError):
        _copy_block[(1, 1)](x, y, 4, 16, 16, 1, 16, 1, BM=8, BN=16, PAD="", CHECK=())


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.float16])
def test_integer_and_half_blocks(dtype):
    @interp
    def k(x_ptr, y_ptr, n, B: tl.constexpr):
        p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (B,), (0,))
        q = tl.make_block_ptr(y_ptr, (n,), (1,), (0,), (B,), (0,))
        tl.store(q, tl.load(p, boundary_check=(0,), padding_option="zero") + 1, boundary_check=(0,))

    x = np.arange(10).astype(dtype)
    y = np.zeros(16, dtype)
    k[(1,)](x, y, 10, B=16)
    np.testing.assert_array_equal(y[:10], x + 1)
    assert (y[10:] == 0).all()


@interp
def _transposed(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # x is (M, N) row-major; read its transpose (N, M) through strides (1, N), order (0, 1)
    p = tl.make_block_ptr(x_ptr, (N, M), (1, N), (0, 0), (BN, BM), (0, 1))
    t = tl.load(p, boundary_check=(0, 1), padding_option="zero")
    offs_n = tl.arange(0, BN)[:, None]
    offs_m = tl.arange(0, BM)[None, :]
    tl.store(out_ptr + offs_n * BM + offs_m, t)


def test_transposed_order():
    M, N = 5, 12
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    out = np.full((16, 8), -1.0, np.float32)
    _transposed[(1,)](x, out, M, N, BM=8, BN=16)
    want = np.zeros((16, 8), np.float32)
    want[:N, :M] = x.T
    np.testing.assert_array_equal(out, want)


@interp
def _row_sums(x_ptr, out_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    # loop-carried advance, as in Triton's matmul-with-block-pointers tutorial
    pid = tl.program_id(0)
    p = tl.make_block_ptr(x_ptr, (M, K), (K, 1), (pid * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM,), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.sum(tl.load(p, boundary_check=(0, 1), padding_option="zero"), 1)
        p = tl.advance(p, (0, BK))
    o = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BM,), (BM,), (0,))
    tl.store(o, acc, boundary_check=(0,))


@pytest.mark.parametrize("M,K", [(16, 64), (19, 70), (3, 5)])
def test_loop_carried_advance(M, K):
    x = np.random.default_rng(K).standard_normal((M, K)).astype(np.float32)
    out = np.zeros(M, np.float32)
    _row_sums[(triton.cdiv(M, 8),)](x, out, M, K, BM=8, BK=16)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5, atol=1e-5)


@triton.jit
def _load_helper(p):
    return tl.load(p, boundary_check=(0,), padding_option="zero")


@triton.jit
def _advanced(p, n):
    return p.advance((n,))


@interp
def _through_helpers(x_ptr, out_ptr, n, B: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (B,), (0,))
    a = _load_helper(p)
    b = _load_helper(_advanced(p, B))
    o = tl.make_block_ptr(out_ptr, (B,), (1,), (0,), (B,), (0,))
    tl.store(o, a + b)


def test_block_pointer_through_jit_helpers():
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(16, np.float32)
    _through_helpers[(1,)](x, out, 20, B=16)
    want = x[:16].copy()
    want[:4] += x[16:]
    np.testing.assert_array_equal(out, want)


def test_advance_leaves_the_original_unchanged():
    @interp
    def k(x_ptr, out_ptr, B: tl.constexpr):
        p = tl.make_block_ptr(x_ptr, (2 * B,), (1,), (0,), (B,), (0,))
        q = tl.advance(p, (B,))
        o = tl.make_block_ptr(out_ptr, (2 * B,), (1,), (0,), (B,), (0,))
        tl.store(o, tl.load(p))
        tl.store(tl.advance(o, (B,)), tl.load(q))

    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k[(1,)](x, out, B=8)
    np.testing.assert_array_equal(out, x)


# -- misuse: Triton's errors, at the user's line ------------------------------------

def _compile_error(kernel, signature, **constexprs) -> CompilationError:
    with pytest.raises(CompilationError) as e:
        kernel.compile_ir(signature=signature, constexprs=constexprs)
    return e.value


@triton.jit
def _bad_mask(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    tl.load(p, mask=tl.arange(0, 16) < n)


@triton.jit
def _bad_nan_int(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    tl.load(p, boundary_check=(0,), padding_option="nan")


@triton.jit
def _bad_block_shape(x_ptr, n):
    tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (12,), (0,))


@triton.jit
def _bad_ranks(x_ptr, n):
    tl.make_block_ptr(x_ptr, (n, n), (1,), (0, 0), (16, 16), (1, 0))


@triton.jit
def _bad_order(x_ptr, n):
    tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (16, 16), (1, 1))


@triton.jit
def _bad_check(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    tl.load(p, boundary_check=(1,))


@triton.jit
def _bad_store_type(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    tl.store(p, tl.zeros((16,), tl.float16))


@triton.jit
def _bad_store_shape(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    tl.store(p, tl.zeros((8,), tl.float32))


@triton.jit
def _bad_advance(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    p = tl.advance(p, (1, 2))


@triton.jit
def _bad_offset_width(x_ptr, n):
    tl.make_block_ptr(x_ptr, (n,), (1,), (n.to(tl.int64),), (16,), (0,))


@triton.jit
def _bad_store_mask(x_ptr, n):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (16,), (0,))
    tl.store(p, tl.zeros((16,), tl.float32), mask=tl.arange(0, 16) < n)


@pytest.mark.parametrize("kernel,sig,needle,line", [
    (_bad_mask, "*fp32, i32", "`mask` and `other` cannot be given with a block pointer", 2),
    (_bad_nan_int, "*i32, i32", "'nan' is not supported for integer block pointers", 2),
    (_bad_block_shape, "*fp32, i32", "not a power of two", 1),
    (_bad_ranks, "*fp32, i32", "must have the same length", 1),
    (_bad_order, "*fp32, i32", "order must be a permutation", 1),
    (_bad_check, "*fp32, i32", "is not a dimension of a rank-1 block", 2),
    (_bad_store_type, "*fp32, i32", "element type is fp32 but the value's is fp16", 2),
    (_bad_store_shape, "*fp32, i32", "block shape [16] and value shape [8] differ", 2),
    (_bad_advance, "*fp32, i32", "has 1 dimensions, got 2 offsets", 2),
    (_bad_offset_width, "*fp32, i32", "block offsets are 32-bit", 1),
    (_bad_store_mask, "*fp32, i32", "`mask` cannot be given with a block pointer", 2),
])
def test_misuse_is_a_compilation_error_at_the_line(kernel, sig, needle, line):
    assert_misuse(kernel, sig, needle, line)


def assert_misuse(kernel, sig: str, needle: str, line: int) -> None:
    """Compiling `kernel` fails with `needle` at `line` lines below its def."""
    err = _compile_error(kernel, sig)
    assert needle in str(err)
    first = kernel.fn.__code__.co_firstlineno + 1   # the def line (co_firstlineno is the decorator)
    assert err.lineno == first + line, str(err)


@pytest.mark.parametrize("kernel,sig", [(_bad_mask, "*fp32, i32"), (_bad_nan_int, "*i32, i32"),
                                        (_bad_store_type, "*fp32, i32"), (_bad_check, "*fp32, i32")])
def test_interpreter_refuses_the_same(kernel, sig):
    # the interpreter runs the same rules (semantic/blocks.py): same message, same line
    from tritium.interpreter import run_grid
    compiled = _compile_error(kernel, sig)
    x = np.zeros(16, np.int32 if sig.startswith("*i32") else np.float32)
    with pytest.raises(Exception) as e:
        run_grid(kernel, (1,), [x, 16])
    assert compiled.message in str(e.value)
    assert f":{compiled.lineno}:" in str(e.value)
