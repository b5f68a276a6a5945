"""GPU checks of scans (cumsum, cumprod, running argmax, non-commutative
combines, 2-D): the kernels of tests/test_codegen_scan.py run compiled on
CUDA tensors and interpreted (`interpret=True`) on the same inputs; both
are compared with torch/NumPy."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import test_codegen_scan as K
from compiled_vs_interpreted import run_both

pytestmark = pytest.mark.gpu


def flipped(f, x, reverse):
    return torch.flip(f(torch.flip(x, [0])), [0]) if reverse else f(x)


@pytest.mark.parametrize("block,n,warps,reverse", [
    (1024, 1024, 4, False), (1024, 1000, 4, True), (8192, 8192, 8, False), (8192, 5000, 1, True),
    (4096, 4096, 2, True), (32, 32, 8, False), (2, 2, 4, True), (128, 77, 1, False),
])
def test_cumsum_f32(block, n, warps, reverse):
    torch.manual_seed(block + n)
    x = torch.randn(n, device="cuda")
    y = torch.full((n,), float("nan"), device="cuda")
    g, c = run_both(K.cumsum_kernel, (1,), [x, y, n], num_warps=warps, BLOCK=block, REVERSE=reverse)
    ref = flipped(lambda t: torch.cumsum(t.double(), 0), x, reverse).float()
    tol = 1e-4 * max(1.0, n ** 0.5)
    torch.testing.assert_close(g[1], ref, rtol=1e-4, atol=tol)
    np.testing.assert_allclose(g[1].cpu().numpy(), c[1], rtol=1e-4, atol=tol)


@pytest.mark.parametrize("block,warps,reverse", [(512, 2, True), (2048, 8, False), (64, 4, False)])
def test_cumprod_f32(block, warps, reverse):
    torch.manual_seed(block)
    x = 1.0 + 0.01 * torch.randn(block, device="cuda")
    y = torch.empty(block, device="cuda")
    g, c = run_both(K.cumprod_kernel, (1,), [x, y, block], num_warps=warps, BLOCK=block, REVERSE=reverse)
    ref = flipped(lambda t: torch.cumprod(t.double(), 0), x, reverse).float()
    torch.testing.assert_close(g[1], ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g[1].cpu().numpy(), c[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("warps", [1, 4, 8])
def test_cumsum_i32_is_exact(warps):
    torch.manual_seed(warps)
    x = torch.randint(-1000, 1000, (2048,), device="cuda", dtype=torch.int32)
    y = torch.empty_like(x)
    g, c = run_both(K.int_cumsum_kernel, (1,), [x, y], num_warps=warps, BLOCK=2048)
    assert torch.equal(g[1], torch.cumsum(x, 0).to(torch.int32))
    np.testing.assert_array_equal(g[1].cpu().numpy(), c[1])


def running_argmax_ref(x: np.ndarray, reverse: bool):
    idx = np.arange(len(x))
    order = idx[::-1] if reverse else idx
    v_out, i_out = np.empty_like(x), np.empty(len(x), np.int32)
    best_v, best_i = None, None
    for j in order:
        if best_v is None or x[j] > best_v:
            best_v, best_i = x[j], j
        v_out[j], i_out[j] = best_v, best_i
    return v_out, i_out


@pytest.mark.parametrize("block,warps,reverse", [(1024, 4, False), (256, 8, True), (4096, 2, True), (64, 1, False)])
def test_running_argmax_pairs(block, warps, reverse):
    torch.manual_seed(block)
    # few distinct values: ties must keep the index met first in scan order
    x = torch.randint(0, 50, (block,), device="cuda").float()
    v = torch.empty(block, device="cuda")
    i = torch.empty(block, device="cuda", dtype=torch.int32)
    g, c = run_both(K.running_argmax_kernel, (1,), [x, v, i], num_warps=warps, BLOCK=block, REVERSE=reverse)
    rv, ri = running_argmax_ref(x.cpu().numpy(), reverse)
    np.testing.assert_array_equal(g[1].cpu().numpy(), rv)
    np.testing.assert_array_equal(g[2].cpu().numpy(), ri)
    np.testing.assert_array_equal(c[2], ri)


def affine_ref(a: np.ndarray, b: np.ndarray, reverse: bool):
    n = len(a)
    order = range(n - 1, -1, -1) if reverse else range(n)
    ra, rb = np.empty(n), np.empty(n)
    acc = None
    for j in order:
        acc = (a[j], b[j]) if acc is None else (acc[0] * a[j], acc[1] * a[j] + b[j])
        ra[j], rb[j] = acc
    return ra, rb


@pytest.mark.parametrize("block,warps,reverse", [(512, 4, False), (512, 4, True), (4096, 8, True), (128, 1, False)])
def test_non_commutative_affine_scan_f64(block, warps, reverse):
    torch.manual_seed(block)
    a = 1.0 + 0.001 * torch.randn(block, device="cuda", dtype=torch.float64)
    b = torch.randn(block, device="cuda", dtype=torch.float64)
    oa, ob = torch.empty_like(a), torch.empty_like(b)
    g, c = run_both(K.affine_scan_kernel, (1,), [a, b, oa, ob], num_warps=warps, BLOCK=block, REVERSE=reverse)
    ra, rb = affine_ref(a.cpu().numpy(), b.cpu().numpy(), reverse)
    np.testing.assert_allclose(g[2].cpu().numpy(), ra, rtol=1e-10)
    np.testing.assert_allclose(g[3].cpu().numpy(), rb, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(c[3], rb, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("bm,bn,m,n,axis,reverse,warps", [
    (16, 128, 16, 128, 1, False, 4), (16, 128, 13, 100, 1, True, 4),
    (64, 32, 64, 32, 0, True, 4), (128, 16, 120, 16, 0, False, 8),
    (32, 64, 32, 64, 0, False, 1), (8, 1024, 8, 1000, 1, False, 8),
])
def test_cumsum_2d(bm, bn, m, n, axis, reverse, warps):
    torch.manual_seed(bm * bn + axis)
    x = torch.randn(m, n, device="cuda")
    y = torch.zeros(m, n, device="cuda")
    g, c = run_both(K.cumsum_2d_kernel, (1,), [x, y, m, n, n], num_warps=warps, BM=bm, BN=bn, AXIS=axis, REVERSE=reverse)
    xd = x.double()
    ref = (torch.flip(torch.cumsum(torch.flip(xd, [axis]), axis), [axis]) if reverse else torch.cumsum(xd, axis)).float()
    torch.testing.assert_close(g[1], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g[1].cpu().numpy(), c[1], rtol=1e-4, atol=1e-4)
