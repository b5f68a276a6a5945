"""GPU checks of atomics (histogram, float add, max/min, bitwise and unsigned
ops on scalar pointers, cas spin lock, xchg): compiled kernels on CUDA
tensors against the interpreter on the same inputs and against torch."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl
from compiled_vs_interpreted import run_both

pytestmark = pytest.mark.gpu


@tritium.jit
def histogram_kernel(x_ptr, hist_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + x % BINS, 1, mask=m)


@pytest.mark.parametrize("block,warps", [(1024, 4), (64, 4), (16, 8)])
def test_histogram_matches_torch(block, warps):
    torch.manual_seed(0)
    n, bins = 100_003, 32
    x = torch.randint(0, 1000, (n,), device="cuda", dtype=torch.int32)
    hist = torch.zeros(bins, device="cuda", dtype=torch.int32)
    histogram_kernel[(triton_cdiv(n, block),)](x, hist, n, BINS=bins, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    ref = torch.bincount((x % bins).long(), minlength=bins).int()
    torch.testing.assert_close(hist, ref)


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


@tritium.jit
def float_add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out_ptr + offs % 7, tl.load(x_ptr + offs, mask=m, other=0.0), mask=m, sem="relaxed")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_float_atomic_add_sums(dtype):
    torch.manual_seed(0)
    n = 4096
    x = (torch.rand(n, device="cuda") * 4).round().to(dtype)  # small integers: exact sums in any order
    out = torch.zeros(7, device="cuda", dtype=dtype)
    _, cpu = run_both(float_add_kernel, (n // 256,), [x, out, n], BLOCK=256)
    ref = torch.zeros(7, device="cuda", dtype=torch.float64).index_add_(0, torch.arange(n, device="cuda") % 7, x.double())
    torch.testing.assert_close(out.double(), ref)
    np.testing.assert_array_equal(out.cpu().numpy(), cpu[1])


@tritium.jit
def minmax_kernel(x_ptr, mx_ptr, mn_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    old = tl.atomic_max(mx_ptr + offs % 4, x, mask=m)
    tl.atomic_min(mn_ptr + offs % 4, x, mask=m, sem="relaxed", scope="gpu")
    # per-element CTA-local max: old values are the slot's content before each update
    tl.store(old_ptr + offs, old, mask=m)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
def test_atomic_max_min(dtype):
    torch.manual_seed(0)
    n = 3000
    x = (torch.randn(n, device="cuda") * 1000).to(dtype)
    init_max = torch.full((4,), -(2**30), device="cuda", dtype=dtype)
    init_min = torch.full((4,), 2**30, device="cuda", dtype=dtype)
    mx, mn, old = init_max.clone(), init_min.clone(), torch.empty(n, device="cuda", dtype=dtype)
    minmax_kernel[(triton_cdiv(n, 512),)](x, mx, mn, old, n, BLOCK=512)
    torch.cuda.synchronize()
    slots = torch.arange(n, device="cuda") % 4
    for s in range(4):
        torch.testing.assert_close(mx[s], x[slots == s].max())
        torch.testing.assert_close(mn[s], x[slots == s].min())
    # every old value is the initial value or some element of its slot, never above the final max
    assert bool((old <= mx[slots]).all())


@tritium.jit
def unsigned_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # int32 buffers seen as uint32: max/min compare unsigned
    xu = x_ptr.to(tl.pointer_type(tl.uint32), bitcast=True)
    ou = out_ptr.to(tl.pointer_type(tl.uint32), bitcast=True)
    offs = tl.arange(0, BLOCK)
    x = tl.load(xu + offs)
    same = offs * 0  # every element hits the same word
    tl.atomic_max(ou + same, x)
    tl.atomic_min(ou + 1 + same, x)
    tl.atomic_or(ou + 2 + same, x)
    tl.atomic_and(ou + 3 + same, x)
    tl.atomic_xor(ou + 4 + same, x)


def test_scalar_pointer_bitwise_and_unsigned():
    rng = np.random.default_rng(1)
    xs = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    x = torch.from_numpy(xs.view(np.int32)).cuda()
    init = np.array([0, 0xFFFFFFFF, 0, 0xFFFFFFFF, 0], dtype=np.uint32)
    out = torch.from_numpy(init.view(np.int32).copy()).cuda()
    unsigned_kernel[(1,)](x, out, BLOCK=256)
    torch.cuda.synchronize()
    got = out.cpu().numpy().view(np.uint32)
    xor = np.bitwise_xor.reduce(xs)
    assert list(got) == [xs.max(), xs.min(), np.bitwise_or.reduce(xs), np.bitwise_and.reduce(xs), xor]


@tritium.jit
def lock_counter_kernel(lock_ptr, count_ptr, tickets_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") == 1:
        pass
    c = tl.load(count_ptr, volatile=True)
    tl.store(count_ptr, c + 1)
    tl.atomic_xchg(lock_ptr, 0, sem="release")
    t = tl.atomic_add(tickets_ptr, 1)
    tl.store(tickets_ptr + 1 + tl.program_id(0), t)


def test_cas_spin_lock_counter():
    programs = 512
    lock = torch.zeros(1, device="cuda", dtype=torch.int32)
    count = torch.zeros(1, device="cuda", dtype=torch.int32)
    tickets = torch.zeros(programs + 1, device="cuda", dtype=torch.int32)
    lock_counter_kernel[(programs,)](lock, count, tickets)
    torch.cuda.synchronize()
    assert int(count) == programs and int(lock) == 0
    # the scalar atomic's old value reached the thread that stored it: each ticket once
    assert int(tickets[0]) == programs
    assert sorted(tickets[1:].tolist()) == list(range(programs))


@tritium.jit
def xchg_cas_kernel(x_ptr, v_ptr, old_ptr, cas_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_xchg(x_ptr + offs, tl.load(v_ptr + offs))
    tl.store(old_ptr + offs, old)
    prev = tl.atomic_cas(cas_ptr + offs, offs % 2, offs + 100)
    tl.store(old_ptr + BLOCK + offs, prev)


@pytest.mark.parametrize("block,warps", [(256, 4), (16, 4)])
def test_xchg_and_tensor_cas(block, warps):
    x = torch.arange(block, device="cuda", dtype=torch.float32) * 0.5
    v = -torch.arange(block, device="cuda", dtype=torch.float32)
    old = torch.empty(2 * block, device="cuda", dtype=torch.int32)
    x_i = x.view(torch.int32)
    cas = torch.zeros(block, device="cuda", dtype=torch.int32)
    _, cpu = run_both(xchg_cas_kernel, (1,), [x_i, v.view(torch.int32), old, cas], num_warps=warps, BLOCK=block)
    ar = torch.arange(block, device="cuda", dtype=torch.int32)
    torch.testing.assert_close(x, v)
    torch.testing.assert_close(old[:block].view(torch.float32), torch.arange(block, device="cuda", dtype=torch.float32) * 0.5)
    torch.testing.assert_close(cas, torch.where(ar % 2 == 0, ar + 100, torch.zeros_like(ar)))
    torch.testing.assert_close(old[block:], torch.zeros_like(ar))
    np.testing.assert_array_equal(old.cpu().numpy(), cpu[2])
    np.testing.assert_array_equal(cas.cpu().numpy(), cpu[3])
