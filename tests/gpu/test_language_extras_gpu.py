"""Issue 14's language pieces compiled and run on the GPU (marked `gpu`),
against NumPy: tl.sort, tl.topk, tl.bitonic_merge, tl.reduce_or (and the
others as they are added to tests/language_extras_kernels.py)."""
from __future__ import annotations

import numpy as np
import pytest

import language_extras_kernels as K

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def on_gpu(a: np.ndarray):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def back(t) -> np.ndarray:
    return t.cpu().numpy()


@pytest.mark.parametrize("dtype", K.SORT_DTYPES)
@pytest.mark.parametrize("n", [2, 32, 1024])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_1d(dtype, n, descending):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 1000).astype(dtype)
    y = torch.zeros(n, dtype=on_gpu(x).dtype, device="cuda")
    K.sort_1d[(1,)](on_gpu(x), y, N=n, DESCENDING=descending)
    want = np.sort(x)
    np.testing.assert_array_equal(back(y), want[::-1] if descending else want)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_2d(dim, descending):
    x = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    y = torch.zeros(16, 64, device="cuda")
    K.sort_2d[(1,)](on_gpu(x), y, M=16, N=64, DIM=dim, DESCENDING=descending)
    want = np.sort(x, axis=dim)
    np.testing.assert_array_equal(back(y), np.flip(want, axis=dim) if descending else want)


@pytest.mark.parametrize("k", [1, 4, 32, 128])
def test_topk(k):
    x = np.random.default_rng(k).permutation(8 * 128).astype(np.float32).reshape(8, 128)
    y = torch.zeros(8, k, device="cuda")
    K.topk_2d[(1,)](on_gpu(x), y, M=8, N=128, K=k)
    np.testing.assert_array_equal(back(y), -np.sort(-x, axis=1)[:, :k])


def test_bitonic_merge_and_reduce_or():
    x = K.bitonic_input(256, np.random.default_rng(5)).astype(np.int32)
    y = torch.zeros(256, dtype=torch.int32, device="cuda")
    K.bitonic_merge_1d[(1,)](on_gpu(x), y, N=256, DESCENDING=True)
    np.testing.assert_array_equal(back(y), np.sort(x)[::-1])
    bits = (1 << np.random.default_rng(7).integers(0, 31, (8, 32))).astype(np.int32)
    out = torch.zeros(9, dtype=torch.int32, device="cuda")
    K.reduce_or_2d[(1,)](on_gpu(bits), out, M=8, N=32)
    np.testing.assert_array_equal(back(out)[:8], np.bitwise_or.reduce(bits, axis=1))
    assert back(out)[8] == np.bitwise_or.reduce(bits.ravel())


@pytest.mark.parametrize("axis,k", [(0, 4), (1, 32)])
def test_gather(axis, k):
    rng = np.random.default_rng(k)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    shape = (k, 16) if axis == 0 else (8, k)
    idx = rng.integers(0, x.shape[axis], shape).astype(np.int32)
    y = torch.zeros(shape, device="cuda")
    K.gather_2d[(1,)](on_gpu(x), on_gpu(idx), y, M=8, N=16, K=k, AXIS=axis)
    np.testing.assert_array_equal(back(y), K.gather_reference(x, idx, axis))


@pytest.mark.parametrize("n", [1024, 700])
def test_histogram(n):
    x = np.random.default_rng(n).integers(-3, 70, 1024).astype(np.int32)
    y = torch.zeros(64, dtype=torch.int32, device="cuda")
    K.histogram_1d[(1,)](on_gpu(x), y, n, N=1024, BINS=64)
    np.testing.assert_array_equal(back(y), K.histogram_reference(x, n, 64))


def test_assume():
    x = np.arange(128, dtype=np.int32)
    y = torch.zeros(128, dtype=torch.int32, device="cuda")
    K.assume_positive[(1,)](on_gpu(x), y, 128, N=128)
    np.testing.assert_array_equal(back(y), x // 2)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_casts_to_bf16_round_once_on_sm90(dtype):
    x = (np.random.default_rng(1).integers(-2**31, 2**31, 1024) | 1).astype(dtype)
    y = torch.zeros(1024, dtype=torch.int16, device="cuda")
    K.to_bf16[(1,)](on_gpu(x), y, N=1024)
    np.testing.assert_array_equal(back(y).view(np.uint16), K.bf16_bits(x))


def test_fp32_to_bf16_rtz():
    x = np.random.default_rng(2).standard_normal(1024).astype(np.float32)
    y = torch.zeros(1024, dtype=torch.int16, device="cuda")
    K.to_bf16_rtz[(1,)](on_gpu(x), y, N=1024)
    np.testing.assert_array_equal(back(y).view(np.uint16), K.bf16_bits(x, rtz=True))
