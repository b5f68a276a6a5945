"""The classic Triton tutorial kernels (tests/kernels/: vector add, fused
softmax, layer norm forward and backward, grouped matmul, dropout, cumsum, fused
attention) run in tritium's interpreter against NumPy (and PyTorch CPU tensors
when torch is installed), and compiled to tile IR that the Rust verifier must
accept. Together they exercise the user-facing surface at once: masks, constexpr
blocks, reductions, scans, dot, atomics and locks, @jit helpers, autotune.
"""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tritium as triton
from tritium import _core

from kernels.axpy import axpy_kernel
from kernels.vector_add import add_kernel
from kernels.softmax import persistent_softmax_kernel, softmax_kernel
from kernels.layer_norm import layer_norm_bwd_dwdb_kernel, layer_norm_bwd_dx_kernel, layer_norm_fwd_kernel
from kernels.matmul import matmul_autotuned, matmul_kernel
from kernels.dropout import masked_dropout_kernel, rand_kernel, seeded_dropout_kernel
from kernels.cumsum import row_cumsum_kernel, tile_cumsum_kernel
from kernels.attention import attention_fwd_kernel


# --------------------------------------------------------------------------
# harness: array libraries, interpreter mode, IR compilation


class Backend:
    """The array library a test feeds the kernels: NumPy always, PyTorch CPU
    tensors when torch is installed. Strides are in elements, as Triton's are."""

    def __init__(self, name: str):
        self.name = name
        self.torch = None
        if name == "torch":
            self.torch = pytest.importorskip("torch")

    def asarray(self, a: np.ndarray):
        return self.torch.from_numpy(a.copy()) if self.torch else a.copy()

    def to_numpy(self, t) -> np.ndarray:
        return t.numpy() if self.torch else t

    def empty_like(self, t):
        return self.torch.empty_like(t) if self.torch else np.empty_like(t)

    def numel(self, t) -> int:
        return t.numel() if self.torch else t.size

    def shape(self, t) -> tuple[int, ...]:
        return tuple(t.shape)

    def strides(self, t) -> tuple[int, ...]:
        return tuple(t.stride()) if self.torch else tuple(s // t.itemsize for s in t.strides)

    def row_stride(self, t) -> int:
        return self.strides(t)[0]


BACKENDS = {"numpy": Backend("numpy")}


@pytest.fixture(params=["numpy", "torch"])
def backend(request) -> Backend:
    return BACKENDS[request.param] if request.param in BACKENDS else Backend(request.param)


@pytest.fixture
def interpret(monkeypatch):
    """Run kernels in the NumPy interpreter, the way a user asks for it."""
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")


def compile_ir(kernel, args: tuple, constexprs: dict) -> str:
    """Compile `kernel` for `args` without launching it; the Rust verifier must
    accept the IR. Returns the IR's text form."""
    binary = kernel.compile_ir(*args, **constexprs)
    _core.verify(binary)
    text = _core.to_text(binary)
    assert text.strip(), "empty IR text"
    return text


def ir_ops(text: str) -> set[str]:
    """Op names in the IR text (ops print as `"name"(operands)`)."""
    return set(re.findall(r'"([a-z_0-9]+)"\(', text))


def assert_has_ops(text: str, *ops: str) -> None:
    missing = set(ops) - ir_ops(text)
    assert not missing, f"ops {sorted(missing)} missing from the IR:\n{text}"


# --------------------------------------------------------------------------
# vector add


def vector_add(x, y, backend: Backend, block: int = 128):
    out = backend.empty_like(x)
    n = backend.numel(x)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=block)
    return out


@pytest.mark.parametrize("n", [1, 127, 1000, 4099])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_vector_add(interpret, backend: Backend, n: int, dtype) -> None:
    rng = np.random.default_rng(n)
    if np.issubdtype(dtype, np.integer):
        x_np = rng.integers(-1000, 1000, n).astype(dtype)
        y_np = rng.integers(-1000, 1000, n).astype(dtype)
    else:
        x_np = rng.standard_normal(n).astype(dtype)
        y_np = rng.standard_normal(n).astype(dtype)
    out = vector_add(backend.asarray(x_np), backend.asarray(y_np), backend)
    np.testing.assert_array_equal(backend.to_numpy(out), x_np + y_np)


def test_vector_add_with_tritons_env_var(monkeypatch) -> None:
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    x = np.arange(300, dtype=np.float32)
    out = vector_add(x, x, BACKENDS["numpy"], block=64)
    np.testing.assert_array_equal(out, 2 * x)


def test_jit_interpret_argument(monkeypatch) -> None:
    for var in ("TRITIUM_INTERPRET", "TRITON_INTERPRET"):
        monkeypatch.delenv(var, raising=False)
    x = np.linspace(-1, 1, 77, dtype=np.float32)
    y = np.ones(77, np.float32)
    axpy_kernel[(triton.cdiv(77, 32),)](x, y, 2.5, 77, BLOCK_SIZE=32)
    np.testing.assert_allclose(y, 2.5 * x + 1, rtol=1e-6)


def test_vector_add_ir() -> None:
    x = np.zeros(1000, np.float32)
    text = compile_ir(add_kernel, (x, x, x, 1000), {"BLOCK_SIZE": 256})
    assert_has_ops(text, "program_id", "arange", "addptr", "load", "store", "add", "cmp")
    assert "tensor<256xf32>" in text


# --------------------------------------------------------------------------
# fused softmax: one row per program, the row padded to a power of two


def softmax(x, backend: Backend, n_cols: int | None = None):
    rows, stride = backend.shape(x)[0], backend.row_stride(x)
    n_cols = backend.shape(x)[1] if n_cols is None else n_cols
    out = backend.empty_like(x)
    block = triton.next_power_of_2(n_cols)
    softmax_kernel[(rows,)](out, x, stride, backend.row_stride(out), n_cols, BLOCK_SIZE=block)
    return out


def np_softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 17), (33, 100), (4, 256)])
def test_softmax(interpret, backend: Backend, rows: int, cols: int) -> None:
    x_np = (np.random.default_rng(cols).standard_normal((rows, cols)) * 4).astype(np.float32)
    out = softmax(backend.asarray(x_np), backend)
    got = backend.to_numpy(out)
    np.testing.assert_allclose(got, np_softmax(x_np), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_softmax_uses_row_stride(interpret) -> None:
    # Only the first 50 columns of each 64-wide row are the data; the padding
    # holds huge values that would dominate the result if the kernel read them.
    padded = np.full((7, 64), 1e4, np.float32)
    padded[:, :50] = np.random.default_rng(0).standard_normal((7, 50))
    out = np.full_like(padded, np.nan)
    softmax_kernel[(7,)](out, padded, 64, 64, 50, BLOCK_SIZE=64)
    np.testing.assert_allclose(out[:, :50], np_softmax(padded[:, :50]), rtol=1e-5, atol=1e-6)
    assert np.isnan(out[:, 50:]).all(), "masked lanes were stored"


@pytest.mark.parametrize("programs", [1, 3, 40])
def test_persistent_softmax(interpret, programs: int) -> None:
    x = np.random.default_rng(programs).standard_normal((23, 45)).astype(np.float32)
    out = np.full_like(x, np.nan)
    persistent_softmax_kernel[(programs,)](out, x, 45, 23, 45, BLOCK_SIZE=64, NUM_STAGES=2)
    np.testing.assert_allclose(out, np_softmax(x), rtol=1e-5, atol=1e-6)


def test_softmax_ir() -> None:
    x = np.zeros((4, 100), np.float32)
    text = compile_ir(softmax_kernel, (x, x, 100, 100, 100), {"BLOCK_SIZE": 128})
    assert_has_ops(text, "reduce", "max", "exp", "div", "load", "store")
    assert "tensor<128xf32>" in text
    persistent = compile_ir(persistent_softmax_kernel, (x, x, 100, 4, 100), {"BLOCK_SIZE": 128, "NUM_STAGES": 3})
    assert_has_ops(persistent, "num_programs", "for", "reduce", "exp")


# --------------------------------------------------------------------------
# layer norm, forward and backward


def np_layer_norm(x, w, b, eps):
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    return (x - mean[:, None]) * rstd[:, None] * w + b, mean, rstd


def np_layer_norm_bwd(x, w, dy, mean, rstd):
    n = x.shape[1]
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).sum(axis=1, keepdims=True) / n
    c2 = wdy.sum(axis=1, keepdims=True) / n
    dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def layer_norm_fwd(x, w, b, eps, backend: Backend, block: int):
    m, n = backend.shape(x)
    y = backend.empty_like(x)
    mean = backend.asarray(np.empty(m, np.float32))
    rstd = backend.asarray(np.empty(m, np.float32))
    layer_norm_fwd_kernel[(m,)](x, y, w, b, mean, rstd, backend.row_stride(x), n, eps, BLOCK_SIZE=block)
    return y, mean, rstd


@pytest.mark.parametrize("m,n,block", [(1, 8, 8), (9, 100, 32), (16, 257, 128)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_layer_norm_forward(interpret, backend: Backend, m: int, n: int, block: int, dtype) -> None:
    rng = np.random.default_rng(m * n)
    x = (rng.standard_normal((m, n)) * 3 + 1).astype(dtype)
    w = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    y, mean, rstd = layer_norm_fwd(*(backend.asarray(a) for a in (x, w, b)), 1e-5, backend, block)
    y_ref, mean_ref, rstd_ref = np_layer_norm(x.astype(np.float64), w.astype(np.float64),
                                              b.astype(np.float64), 1e-5)
    # statistics are accumulated in float32 whatever the input type
    np.testing.assert_allclose(backend.to_numpy(mean), mean_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(backend.to_numpy(rstd), rstd_ref, rtol=1e-4)
    got = backend.to_numpy(y)
    assert got.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-2
    np.testing.assert_allclose(got.astype(np.float64), y_ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("locked", [True, False], ids=["lock", "atomic_add"])
@pytest.mark.parametrize("m,n", [(1, 7), (19, 100), (64, 130)])
def test_layer_norm_backward(interpret, backend: Backend, locked: bool, m: int, n: int) -> None:
    check_layer_norm_backward(backend, locked, m, n)


@pytest.mark.parametrize("locked", [True, False], ids=["lock", "atomic_add"])
def test_layer_norm_backward_any_program_order(interpret, monkeypatch, locked: bool) -> None:
    # The partial dw/db sums must not depend on which program gets a lock first.
    monkeypatch.setenv("TRITIUM_INTERPRET_SHUFFLE", "1")
    check_layer_norm_backward(BACKENDS["numpy"], locked, 37, 50)


def check_layer_norm_backward(backend: Backend, locked: bool, m: int, n: int) -> None:
    rng = np.random.default_rng(m + n)
    x = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    block_n = triton.next_power_of_2(n)
    xb, wb, bb = (backend.asarray(a) for a in (x, w, b))
    _, mean, rstd = layer_norm_fwd(xb, wb, bb, 1e-5, backend, block_n)

    group = 4
    dx = backend.asarray(np.empty_like(x))
    dw_part = backend.asarray(np.zeros((group, n), np.float32))
    db_part = backend.asarray(np.zeros((group, n), np.float32))
    locks = backend.asarray(np.zeros(2 * group, np.int32))
    layer_norm_bwd_dx_kernel[(m,)](dx, backend.asarray(dy), dw_part, db_part, xb, wb, mean, rstd, locks,
                                   backend.row_stride(xb), n, GROUP_SIZE_M=group, BLOCK_SIZE_N=block_n,
                                   LOCKED=locked)
    dw = backend.asarray(np.full(n, np.nan, np.float32))
    db = backend.asarray(np.full(n, np.nan, np.float32))
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE_N"]),)
    layer_norm_bwd_dwdb_kernel[grid](dw_part, db_part, dw, db, group, n, BLOCK_SIZE_M=2, BLOCK_SIZE_N=32)

    dx_ref, dw_ref, db_ref = np_layer_norm_bwd(x.astype(np.float64), w, dy, backend.to_numpy(mean),
                                               backend.to_numpy(rstd))
    np.testing.assert_allclose(backend.to_numpy(dx), dx_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(backend.to_numpy(dw), dw_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(backend.to_numpy(db), db_ref, rtol=1e-4, atol=1e-4)
    if locked:
        state = backend.to_numpy(locks)
        assert (state[:group] == 0).all(), "a lock was left held"
        assert (state[group:] == (np.arange(group) < m)).all(), "first-visit flags are wrong"


def test_layer_norm_ir() -> None:
    x = np.zeros((8, 100), np.float32)
    v = np.zeros(100, np.float32)
    s = np.zeros(8, np.float32)
    fwd = compile_ir(layer_norm_fwd_kernel, (x, x, v, v, s, s, 100, 100, 1e-5), {"BLOCK_SIZE": 64})
    assert_has_ops(fwd, "for", "reduce", "sqrt", "store")
    locks = np.zeros(8, np.int32)
    part = np.zeros((4, 100), np.float32)
    for locked in (True, False):
        bwd = compile_ir(layer_norm_bwd_dx_kernel, (x, x, part, part, x, v, s, s, locks, 100, 100),
                         {"GROUP_SIZE_M": 4, "BLOCK_SIZE_N": 128, "LOCKED": locked})
        if locked:
            assert_has_ops(bwd, "atomic_cas", "while", "if", "atomic_rmw")
            assert 'kind = "xchg"' in bwd
        else:
            assert_has_ops(bwd, "atomic_rmw")
            assert "atomic_cas" not in ir_ops(bwd) and 'kind = "add"' in bwd
    final = compile_ir(layer_norm_bwd_dwdb_kernel, (part, part, v, v, 4, 100),
                       {"BLOCK_SIZE_M": 2, "BLOCK_SIZE_N": 32})
    assert_has_ops(final, "for", "reduce", "broadcast", "and")


# --------------------------------------------------------------------------
# blocked matmul with grouped ordering and a fused activation


def matmul(a, b, backend: Backend, activation: str = "", out_dtype=np.float16,
           blocks: tuple[int, int, int, int] = (32, 32, 16, 2)):
    (m, k), (_, n) = backend.shape(a), backend.shape(b)
    c = backend.asarray(np.full((m, n), np.nan, out_dtype))
    bm, bn, bk, group = blocks
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, m, n, k,
                        *backend.strides(a), *backend.strides(b), *backend.strides(c),
                        BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=group,
                        ACTIVATION=activation)
    return c


def np_leaky_relu(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, x, 0.01 * x)


@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (100, 72, 90), (33, 130, 17)])
@pytest.mark.parametrize("activation", ["", "leaky_relu"])
def test_matmul(interpret, backend: Backend, m: int, n: int, k: int, activation: str) -> None:
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = matmul(backend.asarray(a), backend.asarray(b), backend, activation)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    if activation:
        ref = np_leaky_relu(ref)
    got = backend.to_numpy(c).astype(np.float32)
    assert not np.isnan(got).any(), "some output tiles were never written"
    np.testing.assert_allclose(got, ref, rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("group", [1, 3, 8])
def test_matmul_grouping_covers_every_tile(interpret, group: int) -> None:
    # 5 x 4 tiles: the group size does not divide the tile rows, so the last group is short.
    rng = np.random.default_rng(group)
    a = rng.standard_normal((80, 24)).astype(np.float32)
    b = rng.standard_normal((24, 64)).astype(np.float32)
    c = matmul(a, b, BACKENDS["numpy"], out_dtype=np.float32, blocks=(16, 16, 16, group))
    assert not np.isnan(c).any(), "some output tiles were never written"
    # float32 operands may be multiplied at reduced (tf32-like) precision
    np.testing.assert_allclose(c, a @ b, rtol=2e-2, atol=5e-2)


def test_matmul_autotuned(interpret) -> None:
    m, n, k = 70, 50, 40
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)
    strides = [s // 2 for arr in (a, b, c) for s in arr.strides]
    matmul_autotuned[grid](a, b, c, m, n, k, *strides, ACTIVATION="leaky_relu")
    ref = np_leaky_relu(a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=1e-2, atol=2e-2)


def test_matmul_ir() -> None:
    a = np.zeros((64, 64), np.float16)
    text = compile_ir(matmul_kernel, (a, a, a, 64, 64, 64, 64, 1, 64, 1, 64, 1),
                      {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4,
                       "ACTIVATION": "leaky_relu"})
    assert_has_ops(text, "dot", "for", "select", "min", "cast")
    assert "tensor<32x32xf32>" in text
    plain = compile_ir(matmul_kernel, (a, a, a, 64, 64, 64, 64, 1, 64, 1, 64, 1),
                       {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4,
                        "ACTIVATION": ""})
    assert "select" not in ir_ops(plain), "the activation was compiled in although ACTIVATION is empty"


# --------------------------------------------------------------------------
# dropout driven by a seed argument


def test_masked_dropout(interpret) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal(999).astype(np.float32)
    keep = rng.random(999) > 0.25
    out = np.empty_like(x)
    masked_dropout_kernel[(triton.cdiv(999, 128),)](x, keep, out, 999, 0.25, BLOCK_SIZE=128)
    np.testing.assert_allclose(out, np.where(keep, x / 0.75, 0.0), rtol=1e-6)


def seeded_dropout(x, p: float, seed: int, backend: Backend):
    out = backend.empty_like(x)
    n = backend.numel(x)
    seeded_dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    return out


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics_and_scaling(interpret, backend: Backend, p: float) -> None:
    n = 20_001
    x_np = np.random.default_rng(1).uniform(1.0, 2.0, n).astype(np.float32)
    out = backend.to_numpy(seeded_dropout(backend.asarray(x_np), p, 1234, backend))
    kept = out != 0
    # 6 standard deviations of a binomial(n, 1 - p) count
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(kept.sum() - n * (1 - p)) < 6 * sigma, f"kept {kept.sum()} of {n} at p={p}"
    np.testing.assert_allclose(out[kept], x_np[kept] / (1 - p), rtol=1e-6)


def test_dropout_is_deterministic_per_seed(interpret, backend: Backend) -> None:
    x = backend.asarray(np.ones(3000, np.float32))
    first = backend.to_numpy(seeded_dropout(x, 0.5, 42, backend))
    again = backend.to_numpy(seeded_dropout(x, 0.5, 42, backend))
    other = backend.to_numpy(seeded_dropout(x, 0.5, 43, backend))
    np.testing.assert_array_equal(first, again)
    assert (first != other).mean() > 0.3, "different seeds gave nearly the same mask"


def test_rand_is_uniform(interpret) -> None:
    n = 50_000
    out = np.empty(n, np.float32)
    rand_kernel[(triton.cdiv(n, 2048),)](out, n, 7, BLOCK_SIZE=2048)
    assert out.min() >= 0.0 and out.max() < 1.0
    # each of 10 bins holds n/10 ± 6 sigma
    counts, _ = np.histogram(out, bins=10, range=(0.0, 1.0))
    sigma = math.sqrt(n * 0.1 * 0.9)
    assert np.all(np.abs(counts - n / 10) < 6 * sigma), counts
    # neighbouring offsets must not be correlated
    assert abs(np.corrcoef(out[:-1], out[1:])[0, 1]) < 0.05


def test_dropout_ir() -> None:
    x = np.zeros(4096, np.float32)
    text = compile_ir(seeded_dropout_kernel, (x, x, 4096, 0.5, 123), {"BLOCK_SIZE": 1024})
    assert_has_ops(text, "cmp", "select", "store")
    keep = np.zeros(4096, np.bool_)
    masked = compile_ir(masked_dropout_kernel, (x, keep, x, 4096, 0.5), {"BLOCK_SIZE": 1024})
    assert_has_ops(masked, "load", "select", "store")
    rand = compile_ir(rand_kernel, (x, 4096, 7), {"BLOCK_SIZE": 1024})
    assert_has_ops(rand, "store")


# --------------------------------------------------------------------------
# cumulative sum per row, carried across blocks for long rows


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("rows,cols,block", [(1, 1, 16), (3, 100, 128), (5, 300, 64)])
def test_row_cumsum(interpret, backend: Backend, dtype, rows: int, cols: int, block: int) -> None:
    rng = np.random.default_rng(cols)
    x_np = rng.integers(-50, 50, (rows, cols)).astype(dtype)
    x = backend.asarray(x_np)
    out = backend.empty_like(x)
    row_cumsum_kernel[(rows,)](x, out, cols, backend.row_stride(x), BLOCK_SIZE=block)
    # small integers: exact in float32 too
    np.testing.assert_array_equal(backend.to_numpy(out), np.cumsum(x_np, axis=1))


def test_tile_cumsum(interpret) -> None:
    x = np.random.default_rng(3).standard_normal((37, 20)).astype(np.float32)
    out = np.full_like(x, np.nan)
    tile_cumsum_kernel[(triton.cdiv(37, 8),)](x, out, 37, 20, BLOCK_M=8, BLOCK_N=32)
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)


def test_cumsum_ir() -> None:
    x = np.zeros((4, 300), np.int32)
    text = compile_ir(row_cumsum_kernel, (x, x, 300, 300), {"BLOCK_SIZE": 64})
    assert_has_ops(text, "scan", "for", "reduce")
    tile = compile_ir(tile_cumsum_kernel, (x, x, 4, 300), {"BLOCK_M": 4, "BLOCK_N": 512})
    assert_has_ops(tile, "scan", "expand_dims", "broadcast")
    assert re.search(r'\{axis = 1, reverse = false\}', tile), tile


# --------------------------------------------------------------------------
# fused attention, forward: online softmax over key blocks


def np_attention(q, k, v, sm_scale: float, causal: bool) -> np.ndarray:
    s = q.astype(np.float64) @ k.astype(np.float64).T * sm_scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_ctx", [16, 77])
def test_attention_forward(interpret, causal: bool, n_ctx: int) -> None:
    head_dim = 32
    rng = np.random.default_rng(n_ctx)
    q, k, v = (rng.standard_normal((n_ctx, head_dim)).astype(np.float16) for _ in range(3))
    out = np.full((n_ctx, head_dim), np.nan, np.float16)
    attention_fwd_kernel[(triton.cdiv(n_ctx, 16),)](q, k, v, out, 0.25, n_ctx, HEAD_DIM=head_dim, BLOCK_M=16,
                                                    BLOCK_N=32, CAUSAL=causal)
    np.testing.assert_allclose(out.astype(np.float64), np_attention(q, k, v, 0.25, causal), rtol=2e-2, atol=2e-2)


def test_attention_ir() -> None:
    x = np.zeros((64, 64), np.float16)
    text = compile_ir(attention_fwd_kernel, (x, x, x, x, 0.125, 64),
                      {"HEAD_DIM": 64, "BLOCK_M": 32, "BLOCK_N": 32, "CAUSAL": True})
    assert_has_ops(text, "for", "dot", "reduce", "exp2", "max", "select", "cast")
    assert text.count('"dot"(') == 2


# --------------------------------------------------------------------------
# the README's kernel and the sample script keep working

REPO = Path(__file__).resolve().parent.parent


def _run_python(script: Path, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, str(script)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)


def test_readme_example(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README.md has no python example"
    script = tmp_path / "readme_example.py"
    # the example's own promise, checked: the kernel really added the vectors
    script.write_text(blocks[0] + "\nassert np.array_equal(out, x + y), 'README kernel gave a wrong sum'\n")
    done = _run_python(script, {"TRITIUM_INTERPRET": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"store"' in done.stdout, "the README example did not print its IR"


def test_vector_add_example_script() -> None:
    done = _run_python(REPO / "examples" / "vector_add.py", {"TRITIUM_INTERPRET": "0"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("OK"), done.stdout
    assert '"load"' in done.stdout and "func @add_kernel" in done.stdout
