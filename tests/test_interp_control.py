"""Control flow and calls in the interpreter: loops, branches, @jit calls,
early return, 3-D grids, program order, the call hook for nested jit functions."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter.runner import program_order

interp = triton.jit(interpret=True)


@triton.jit
def _square_plus(x, y: tl.constexpr):
    return x * x + y


@interp
def _control(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(n):                        # loop-carried tensor
        acc += tl.load(x_ptr + i * BLOCK + offs)
    for i in tl.range(0, 3):
        acc = acc + i
    for i in tl.static_range(2):
        acc = acc * 2
    k = 0
    while k < 5:
        k += 2
    if n > 2:
        acc = acc + 1000
    else:
        acc = acc - 1000
    acc = _square_plus(acc, 1)
    tl.store(out_ptr + offs, acc + k)


@pytest.mark.parametrize("n", [1, 3])
def test_loops_branches_and_jit_calls(n):
    x = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
    out = np.zeros(8, np.float32)
    _control[(1,)](x, out, n, BLOCK=8)
    acc = (x.sum(0, dtype=np.float32) + 3) * 4 + (1000 if n > 2 else -1000)
    np.testing.assert_allclose(out, acc * acc + 1 + 6, rtol=1e-5)


@interp
def _early_return(out_ptr, limit):
    pid = tl.program_id(0)
    if pid >= limit:
        return
    tl.store(out_ptr + pid, pid + 1)


def test_early_return():
    out = np.zeros(8, np.int32)
    _early_return[(8,)](out, 5)
    assert out.tolist() == [1, 2, 3, 4, 5, 0, 0, 0]


@interp
def _grid3d(out_ptr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny, nz = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    idx = (z * ny + y) * nx + x
    tl.store(out_ptr + idx, x * 100 + y * 10 + z + 0 * nz)


def test_3d_grid_program_ids():
    out = np.zeros(4 * 3 * 2, np.int32)
    _grid3d[(4, 3, 2)](out)
    ref = [x * 100 + y * 10 + z for z in range(2) for y in range(3) for x in range(4)]
    assert out.tolist() == ref
    out2 = np.zeros(6, np.int32)
    _grid3d[lambda meta: (2, 3)](out2)
    assert out2.tolist() == [x * 100 + y * 10 for y in range(3) for x in range(2)]


@interp
def _order(log_ptr, counter_ptr):
    slot = tl.atomic_add(counter_ptr, 1)
    tl.store(log_ptr + slot, tl.program_id(0))


def test_program_order_and_shuffle(monkeypatch):
    log, counter = np.zeros(16, np.int32), np.zeros(1, np.int32)
    _order[(16,)](log, counter)
    assert log.tolist() == list(range(16))
    assert program_order((2, 2, 1), False).tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]
    monkeypatch.setenv("TRITIUM_INTERPRET_SHUFFLE", "1")
    orders = set()
    for _ in range(4):
        log[:], counter[:] = 0, 0
        _order[(16,)](log, counter)
        assert sorted(log.tolist()) == list(range(16))
        orders.add(tuple(log.tolist()))
    assert len(orders) > 1


@triton.jit
def _helper_kind(x, N: tl.constexpr):
    # plain Python values, as in Triton's interpreter (so `N is True` works)
    tl.static_assert(type(N) is int)
    return x + N


@interp
def _uses_call_hook(out_ptr):
    tl.store(out_ptr, _helper_kind(tl.program_id(0), 41))


def test_call_jit_in_interpreter_passes_constexpr_params_unwrapped():
    out = np.zeros(1, np.int32)
    _uses_call_hook[(1,)](out)
    assert out[0] == 41
    with pytest.raises(RuntimeError, match="inside a @jit kernel"):
        from tritium.interpreter import call_jit_in_interpreter
        call_jit_in_interpreter(_helper_kind, 1, 2)
