"""GPU checks of loops: compiled range loops over bounds and steps of either
sign against the interpreter and NumPy."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from kernels.tiles import loop_kernel
from compiled_vs_interpreted import run_interpreted

pytestmark = pytest.mark.gpu


def _loop_numpy(x, lb, ub, step, block):
    acc = np.zeros(block, np.float32)
    cnt = 0
    for i in range(lb, ub, step):
        row = x[i * block:(i + 1) * block]
        acc = acc + row if i % 2 == 0 else acc - row * np.float32(0.5)
        cnt += 1
    while cnt > 1:
        cnt //= 2
        acc = acc * np.float32(2.0)
    return acc + np.float32(cnt)


@pytest.mark.parametrize("lb,ub,step", [(0, 8, 1), (1, 8, 3), (5, 5, 1), (6, 2, 1), (0, 7, 2)])
def test_loops_match_numpy(lb, ub, step):
    block = 512
    x = np.random.default_rng(1).standard_normal(8 * block).astype(np.float32)
    xt = torch.from_numpy(x).cuda()
    out = torch.empty(block, device="cuda", dtype=torch.float32)
    loop_kernel[(1,)](xt, out, lb, ub, step, BLOCK=block)
    want = _loop_numpy(x, lb, ub, step, block)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
    oi = np.empty(block, np.float32)
    run_interpreted(loop_kernel, (1,), x, oi, lb, ub, step, BLOCK=block)
    np.testing.assert_allclose(out.cpu().numpy(), oi, rtol=1e-6, atol=1e-6)
