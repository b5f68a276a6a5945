"""GPU checks for the barriers membar keeps: back-to-back reductions at the
same scratch offset, reductions and scans in loops and branches, compared
with torch over many programs and num_warps 1/4/8 (so that a missing barrier
would show as a race), and a kernel that is correct only because of the
barrier before a call (wrong with TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER=1)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

pytestmark = pytest.mark.gpu

WARPS = [1, 4, 8]
ROWS = 4096  # one program per row: many programs, so warps drift apart


@tritium.jit
def sum_then_max(x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    s = tl.sum(x, axis=0)
    m = tl.max(x * s, axis=0)
    mn = tl.min(x - m, axis=0)
    tl.store(y_ptr + row, s + m + mn)


@tritium.jit
def sums_in_loop(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    acc = 0.0
    for i in range(n):
        acc += tl.max(x * (i + 1), axis=0) + tl.sum(x, axis=0)
    tl.store(y_ptr + row, acc)


@tritium.jit
def sums_in_branches(x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    if row % 2 == 0:
        a = tl.sum(x, axis=0)
    else:
        a = tl.max(x, axis=0)
    b = tl.min(x + a, axis=0)
    tl.store(y_ptr + row, a + b)


@tritium.jit
def scans_in_loop(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * BLOCK + offs)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n):
        acc += tl.cumsum(x, axis=0) + tl.sum(x, axis=0)
    tl.store(y_ptr + row * BLOCK + offs, acc)


def rows(block: int) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(ROWS, block, device="cuda")


@pytest.mark.parametrize("warps", WARPS)
def test_back_to_back_reductions(warps):
    x = rows(1024)
    y = torch.empty(ROWS, device="cuda")
    sum_then_max[(ROWS,)](x, y, BLOCK=1024, num_warps=warps)
    s = x.sum(1)
    m = (x * s[:, None]).max(1).values
    mn = (x - m[:, None]).min(1).values
    torch.testing.assert_close(y, s + m + mn, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("warps", WARPS)
def test_reductions_in_a_loop(warps):
    x = rows(2048)
    y = torch.empty(ROWS, device="cuda")
    sums_in_loop[(ROWS,)](x, y, 5, BLOCK=2048, num_warps=warps)
    ref = sum((x * (i + 1)).max(1).values + x.sum(1) for i in range(5))
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("warps", WARPS)
def test_reductions_in_branches(warps):
    x = rows(1024)
    y = torch.empty(ROWS, device="cuda")
    sums_in_branches[(ROWS,)](x, y, BLOCK=1024, num_warps=warps)
    even = torch.arange(ROWS, device="cuda") % 2 == 0
    a = torch.where(even, x.sum(1), x.max(1).values)
    ref = a + (x + a[:, None]).min(1).values
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("warps", WARPS)
def test_scans_in_a_loop(warps):
    x = rows(1024)
    y = torch.empty_like(x)
    scans_in_loop[(ROWS,)](x, y, 3, BLOCK=1024, num_warps=warps)
    ref = 3 * (x.cumsum(1) + x.sum(1, keepdim=True))
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-2)


# --- correct only because of the barriers around a call -----------------------
# The caller transposes an NxN tile through scratch and passes the result to
# a function that transposes again through the same bytes (its writes come
# first thing); the caller then converts the function's result through
# scratch again. Each thread reads N*N/threads scattered elements back with
# bank conflicts, so warps finish reading at different times (the scheduler
# favours older warps). Only the barriers membar places around the call
# (from the callee's entry/exit summary) keep a warp that finished early
# from overwriting elements another warp has not read yet.

@tritium.jit(noinline=True)
def transpose_again(t):
    return tl.trans(t) * 2.0


def _transpose_twice(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, N)
    offs = pid * N * N + r[:, None] * N + r[None, :]
    x = tl.load(x_ptr + offs)
    t = tl.trans(x)
    u = transpose_again(t)
    tl.store(y_ptr + offs, t)
    tl.store(z_ptr + offs, u)


# two kernels of one source: each keeps its own table of loaded binaries, so
# the one compiled under the debug switch never serves the other's launches
transpose_twice = tritium.jit(_transpose_twice)
transpose_twice_unsynced = tritium.jit(_transpose_twice)


# (tile side, warps): from the configuration the race showed in first
RACE_CONFIGS = [(64, 8), (64, 4), (128, 8), (128, 16), (64, 16), (32, 4)]


def run_transpose_twice(n: int, warps: int, programs: int = 2048, kernel=transpose_twice):
    torch.manual_seed(1)
    x = torch.randn(programs, n, n, device="cuda")
    y, z = torch.empty_like(x), torch.empty_like(x)
    kernel[(programs,)](x, y, z, N=n, num_warps=warps)
    torch.cuda.synchronize()
    return x, y, z


def test_the_barriers_around_a_call_keep_the_kernel_correct(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    for n, warps in RACE_CONFIGS:
        for _ in range(3):
            x, y, z = run_transpose_twice(n, warps)
            torch.testing.assert_close(y, x.transpose(1, 2), rtol=0, atol=0)
            torch.testing.assert_close(z, 2.0 * x, rtol=0, atol=0)


def test_without_the_cross_call_barriers_the_kernel_races(monkeypatch, tmp_path):
    """The debug switch drops exactly the barriers membar placed because of
    the callee's summary; some configuration must then give wrong results."""
    monkeypatch.setenv("TRITIUM_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER", "1")
    tried = []
    for n, warps in RACE_CONFIGS:
        wrong = 0
        for _ in range(5):
            x, y, z = run_transpose_twice(n, warps, kernel=transpose_twice_unsynced)
            wrong += int(not (torch.equal(y, x.transpose(1, 2)) and torch.equal(z, 2.0 * x)))
        tried.append((n, warps, wrong))
        if wrong:
            print(f"race shown with N={n}, num_warps={warps}: {wrong}/5 runs wrong")
            return
    pytest.fail(f"the kernel stayed correct without the cross-call barriers: {tried}")
