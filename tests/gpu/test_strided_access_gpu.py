"""GPU checks of 2-D vectorised accesses: a strided, padded 2-D copy compiled
on CUDA tensors against the interpreter and NumPy."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import test_codegen_scan as K
from compiled_vs_interpreted import run_both

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("m,n,pad", [(256, 512, 0), (100, 300, 4), (64, 64, 16)])
def test_copy_2d_strided(m, n, pad):
    torch.manual_seed(m)
    xs = torch.randn(m, n + pad, device="cuda")
    x = xs[:, :n]
    y = torch.zeros(m, n + 2 * pad, device="cuda")
    grid = ((m + 31) // 32, (n + 63) // 64)
    g, c = run_both(K.copy_2d_kernel, grid, [xs, y, m, n, n + pad, n + 2 * pad], BM=32, BN=64)
    torch.testing.assert_close(g[1][:, :n], x * 2.0)
    assert torch.count_nonzero(g[1][:, n:]) == 0
    np.testing.assert_array_equal(g[1].cpu().numpy(), c[1])
