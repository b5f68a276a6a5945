"""GPU checks of reductions over layouts (softmax, layer norm, row sums,
column max/argmax): each kernel of tests/test_codegen_layout.py runs compiled
on CUDA tensors and interpreted (`interpret=True`) on the same inputs, and
both are compared with torch."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import test_codegen_layout as K
from compiled_vs_interpreted import run_both

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n_cols,block,warps", [(8192, 8192, 4), (1000, 1024, 8), (17, 32, 1)])
def test_softmax(n_cols, block, warps):
    torch.manual_seed(0)
    x = torch.randn(64, n_cols, device="cuda")
    def args(dev):
        return [torch.empty(64, n_cols, device=dev), x.to(dev), n_cols, n_cols, n_cols]
    g, c = run_both(K.softmax_kernel, (64,), args, num_warps=warps, BLOCK_SIZE=block)
    ref = torch.softmax(x, dim=1)
    torch.testing.assert_close(g[0], ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g[0].cpu().float().numpy(), c[0].astype(np.float32), rtol=1e-5, atol=1e-6)


def test_layer_norm_fp16():
    torch.manual_seed(0)
    m, n = 32, 5000
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    w = torch.rand(n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, device="cuda", dtype=torch.float16)
    def args(dev):
        return [x.to(dev), torch.empty(m, n, device=dev, dtype=torch.float16), w.to(dev), b.to(dev),
                torch.empty(m, device=dev), torch.empty(m, device=dev), n, n, 1e-5]
    g, c = run_both(K.layer_norm_kernel, (m,), args, num_warps=8, BLOCK=8192)
    ref = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
    torch.testing.assert_close(g[1].float(), ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(g[1].cpu().float().numpy(), c[1].astype(np.float32), rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(g[4], x.float().mean(1), rtol=1e-4, atol=1e-4)


def test_row_sum_2d():
    torch.manual_seed(0)
    m, n = 100, 120
    x = torch.randn(m, n, device="cuda")
    def args(dev):
        return [x.to(dev), torch.empty(m, device=dev), m, n, n]
    g, c = run_both(K.row_sum_2d_kernel, (triton_cdiv(m, 16),), args, BM=16, BN=128)
    torch.testing.assert_close(g[1], x.sum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g[1].cpu().float().numpy(), c[1].astype(np.float32), rtol=1e-4, atol=1e-4)


def test_layer_norm_2d():
    torch.manual_seed(0)
    m, n = 40, 200
    x = torch.randn(m, n, device="cuda")
    def args(dev):
        return [x.to(dev), torch.empty(m, n, device=dev), m, n, n]
    g, c = run_both(K.layer_norm_2d_kernel, (triton_cdiv(m, 8),), args, BM=8, BN=256)
    ref = torch.nn.functional.layer_norm(x, (n,), eps=1e-5)
    torch.testing.assert_close(g[1], ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g[1].cpu().float().numpy(), c[1].astype(np.float32), rtol=1e-4, atol=1e-4)


def test_col_max_and_argmax():
    torch.manual_seed(0)
    x = torch.randn(64, 32, device="cuda")
    g, c = run_both(K.col_max_kernel, (1,), lambda d: [x.to(d), torch.empty(32, device=d), 32], BM=64, BN=32)
    torch.testing.assert_close(g[1], x.max(0).values)
    np.testing.assert_allclose(g[1].cpu().float().numpy(), c[1].astype(np.float32))
    v = torch.randn(1024, device="cuda")
    g, c = run_both(K.argmax_kernel, (1,), lambda d: [v.to(d), torch.zeros(1, device=d, dtype=torch.int32)], BLOCK=1024)
    assert int(g[1].item()) == int(v.argmax().item()) == int(c[1].item())


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b
