"""GPU checks for noinline calls: the kernels of tests/test_codegen_calls.py
run compiled on CUDA tensors and are compared with torch (and with the
interpreter on the same inputs); plus a kernel that is correct only because
of the barrier kept around a call (and races with it removed)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl
from tritium.interpreter.runner import run_grid

import test_codegen_calls as K

pytestmark = pytest.mark.gpu


def interpret(k, grid, args, **const):
    cpu = [a.cpu().numpy() if torch.is_tensor(a) else a for a in args]
    run_grid(k, grid, cpu, kwargs=const)
    return cpu


def test_scalar_arguments():
    x, y = torch.randn(64, device="cuda"), torch.randn(64, device="cuda")
    out = torch.empty(64, device="cuda")
    K.scalar_kernel[(64,)](x, y, out, 1.5, num_warps=1)
    torch.testing.assert_close(out, x * 1.5 + y)


@pytest.mark.parametrize("n,block,warps", [(1000, 1024, 4), (4096, 256, 2), (77, 128, 8)])
def test_tensor_arguments_and_results(n, block, warps):
    x = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    K.tensor_kernel[(triton_cdiv(n, block),)](x, out, n, 0.7, BLOCK=block, num_warps=warps)
    torch.testing.assert_close(out, torch.tanh(0.7 * x), rtol=1e-4, atol=1e-5)


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def test_tuple_results():
    x = torch.randn(256, device="cuda")
    p, q, a = torch.empty_like(x), torch.empty_like(x), torch.empty(1, device="cuda")
    K.tuple_kernel[(1,)](x, p, q, a, BLOCK=256, num_warps=4)
    torch.testing.assert_close(p, x.clamp(min=0))
    torch.testing.assert_close(q, x.clamp(max=0))
    torch.testing.assert_close(a[0], x.abs().sum(), rtol=1e-5, atol=1e-4)


def test_aggregate_mutated_by_callee():
    x = torch.randn(128 * 3, device="cuda")
    out, peak = torch.empty(2, device="cuda"), torch.empty(128, device="cuda")
    K.aggregate_kernel[(1,)](x, out, peak, 3, BLOCK=128, num_warps=4)
    total, count, ref_peak = K.ref_aggregate(x.cpu().numpy(), 3, 128)
    np.testing.assert_allclose(out.cpu().numpy(), [total, count], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(peak.cpu().numpy(), ref_peak)


@pytest.mark.parametrize("limit", [0.5, -1.0])
def test_early_return(limit):
    x = torch.randn(512, device="cuda")
    out = torch.empty_like(x)
    K.early_return_kernel[(1,)](x, out, limit, BLOCK=512, num_warps=4)
    torch.testing.assert_close(out, x if limit < 0 else x.clamp(max=limit))


@pytest.mark.parametrize("warps", [1, 4, 8])
def test_reduction_callee_from_two_sites(warps):
    x = torch.randn(1024, device="cuda")
    out = torch.empty_like(x)
    K.reduce_two_sites_kernel[(1,)](x, out, BLOCK=1024, num_warps=warps)
    ref = torch.from_numpy(K.ref_two_sites(x.cpu().double().numpy())).float().cuda()
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
    c = interpret(K.reduce_two_sites_kernel, (1,), [x, out], BLOCK=1024)
    np.testing.assert_allclose(out.cpu().numpy(), c[1], rtol=1e-4, atol=1e-4)


def test_call_in_a_loop():
    x = torch.randn(256, device="cuda")
    out = torch.empty_like(x)
    K.loop_kernel[(1,)](x, out, 9, BLOCK=256, num_warps=2)
    ref = torch.from_numpy(K.ref_loop(x.cpu().numpy(), 9)).cuda()
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("warps", [2, 4])
def test_a_b_c_through_two_paths(warps):
    x = torch.randn(512, device="cuda")
    out = torch.empty(2, device="cuda")
    K.abc_kernel[(1,)](x, out, BLOCK=512, num_warps=warps)
    np.testing.assert_allclose(out.cpu().numpy(), K.ref_abc(x.cpu().numpy()), rtol=1e-4)


# --- the barrier across a call ---------------------------------------------------
# The caller reduces across warps (partials in scratch, then read back) and at
# once calls a function that reduces too: the callee's partials go to the
# same bytes. Without a barrier between the caller's reads and the callee's
# writes, a fast warp overwrites partials a slow warp has not read yet.

@tritium.jit(noinline=True)
def callee_sum(x):
    return tl.sum(x * 3.0, 0)


@tritium.jit
def race_kernel(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for r in range(n_rows):
        x = tl.load(x_ptr + r * BLOCK + offs)
        s = tl.sum(x, 0)
        t = callee_sum(x)
        tl.store(out_ptr + 2 * r, s)
        tl.store(out_ptr + 2 * r + 1, t)


def run_race(n_rows: int = 2048, block: int = 2048):
    x = torch.randn(n_rows, block, device="cuda")
    out = torch.empty(2 * n_rows, device="cuda")
    race_kernel[(132,)](x, out, n_rows, BLOCK=block, num_warps=32)
    torch.cuda.synchronize()
    ref = torch.stack([x.sum(1), 3.0 * x.sum(1)], 1).reshape(-1)
    return out, ref


def test_barrier_across_call_keeps_the_kernel_correct(monkeypatch):
    monkeypatch.setenv("TRITIUM_ALWAYS_COMPILE", "1")
    out, ref = run_race()
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-2)


# the barrier-removal counterpart (a kernel that races without them) is in test_membar.py
