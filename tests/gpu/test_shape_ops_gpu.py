"""GPU checks of shape ops (reshape, trans, expand_dims, join, split, cat):
kernels of tests/test_codegen_layout.py compiled on CUDA tensors and
interpreted on the same inputs, both compared with torch."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

import test_codegen_layout as K
from compiled_vs_interpreted import run_both

pytestmark = pytest.mark.gpu


def test_shape_ops():
    x = torch.arange(16 * 32, device="cuda", dtype=torch.float32)
    g, c = run_both(K.shape_ops_kernel, (1,), lambda d: [x.to(d), torch.empty(32 * 16, device=d)], M=16, N=32)
    ref = x.view(16, 32).t() + x.view(32, 16)
    torch.testing.assert_close(g[1].view(32, 16), ref)
    np.testing.assert_allclose(g[1].cpu().float().numpy(), c[1].astype(np.float32))


def test_join_split_cat():
    a = torch.randn(256, device="cuda")
    b = torch.randn(256, device="cuda")
    g, c = run_both(K.join_split_cat_kernel, (1,), lambda d: [a.to(d), b.to(d), torch.empty(512, device=d)], N=256)
    np.testing.assert_allclose(g[2].cpu().float().numpy(), c[2].astype(np.float32))
    # cat with can_reorder: the multiset of values is what Triton promises
    got = np.sort(g[2].cpu().numpy())
    want = np.sort(np.concatenate([a.cpu().numpy(), b.cpu().numpy()]) * 2.0)
    np.testing.assert_allclose(got, want)


@tritium.jit
def split_to_scalars(p, q, BLOCK: tl.constexpr):
    a, b = tl.split(tl.load(p + tl.arange(0, 2)))
    offs = tl.arange(0, BLOCK)
    tl.store(q + offs, offs * a + b)


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.float16])
def test_split_of_two_elements_gives_scalars(dtype):
    # each scalar is read back from scratch by every thread
    p = torch.tensor([3, 5], device="cuda", dtype=dtype)
    q = torch.empty(128, device="cuda", dtype=dtype)
    split_to_scalars[(1,)](p, q, BLOCK=128)
    ref = torch.arange(128, device="cuda").to(dtype) * p[0] + p[1]
    torch.testing.assert_close(q, ref)
