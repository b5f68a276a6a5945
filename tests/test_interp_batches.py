"""Programs run in batches (interpreter/batches.py): a batched launch must
give exactly what one program at a time gives, however the programs'
control flow differs, and must keep program order where it is observable
(atomics, device_print, print)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import run_grid

interp = triton.jit(interpret=True)


class _Stats:
    def on_event(self, event):
        pass

    def on_finish(self, launch):
        self.launch = launch


def _run(kernel, grid, *args, batch=True, **kwargs):
    stats = _Stats()
    run_grid(kernel, grid, args, kwargs=kwargs, clients=[stats], batch=batch)
    return stats.launch


def _both(kernel, grid, make_args, **kwargs):
    """Runs batched and one at a time on fresh arguments; returns both results and the batched launch."""
    a, b = make_args(), make_args()
    launch = _run(kernel, grid, *a, **kwargs)
    _run(kernel, grid, *b, batch=False, **kwargs)
    return a, b, launch


@interp
def _branchy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)             # a store before the programs diverge: undone, then redone
    if pid % 3 == 0:
        tl.store(out_ptr + offs, x * 2)
    elif pid == 1:
        return
    else:
        tl.store(out_ptr + offs, x + 100)
    total = 0
    for i in range(pid):                      # a trip count per program
        total += i
    while total > 10:                         # data-dependent exit
        total -= 7
    tl.store(out_ptr + offs, tl.load(out_ptr + offs) + total)


def test_diverging_programs_match_one_at_a_time():
    def args():
        return np.arange(64 * 8, dtype=np.float32), np.zeros(64 * 8, np.float32)
    (_, batched), (_, single), launch = _both(_branchy, (64,), args, BLOCK=8)
    assert np.array_equal(batched, single)
    assert launch.restarts > 0 and not launch.one_at_a_time


@interp
def _two_paths(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid % 2 == 0:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) - 1)


def test_programs_that_agree_still_run_together():
    x = np.arange(64 * 8, dtype=np.int32)
    out = np.zeros_like(x)
    launch = _run(_two_paths, (64,), x, out, BLOCK=8)
    assert np.array_equal(out, x + np.where(np.arange(64 * 8) // 8 % 2 == 0, 1, -1))
    # the first batch (16 programs) splits in two; the rest (48) split in two too
    assert launch.restarts == 2 and launch.batches == 6


@interp
def _strided_rows(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    # each program starts at its own row: the induction variable differs per
    # program, the trip count does not, so the batch never splits
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        tl.store(out_ptr + row * BLOCK + cols, tl.load(x_ptr + row * BLOCK + cols) * 3)


def test_loops_with_per_program_starts_stay_batched():
    x = np.arange(32 * 4, dtype=np.int32)
    out = np.zeros_like(x)
    launch = _run(_strided_rows, (8,), x, out, 32, BLOCK=4)
    assert np.array_equal(out, x * 3)
    assert launch.restarts == 0 and launch.batches == 1


@interp
def _tickets(counter_ptr, out_ptr):
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(out_ptr + tl.program_id(0), ticket)


def test_atomics_keep_program_order():
    counter, out = np.zeros(1, np.int32), np.full(32, -1, np.int32)
    launch = _run(_tickets, (32,), counter, out)
    assert out.tolist() == list(range(32)) and counter[0] == 32
    assert launch.one_at_a_time


@interp
def _printer(x_ptr):
    pid = tl.program_id(0)
    tl.device_print("a", pid)
    print("b", pid)


def test_prints_keep_program_order(capsys):
    launch = _run(_printer, (3,), np.zeros(1, np.int32))
    assert capsys.readouterr().out.splitlines() == [
        "pid (0, 0, 0) a: 0", "b tensor(0, triton.language.int32)",
        "pid (1, 0, 0) a: 1", "b tensor(1, triton.language.int32)",
        "pid (2, 0, 0) a: 2", "b tensor(2, triton.language.int32)"]
    assert launch.one_at_a_time


@interp
def _uses_min(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    hi = min(pid * 4 + 4, n)                  # the compiler's min: tl.minimum on tensors
    lo = max(pid * 4, 0)
    tl.store(out_ptr + pid, hi - lo)


def test_min_and_max_of_tensors_mean_what_they_mean_compiled():
    out = np.zeros(4, np.int32)
    launch = _run(_uses_min, (4,), np.zeros(1, np.int32), out, 10)
    assert out.tolist() == [4, 4, 2, -2] and launch.restarts == 0


def test_shared_kernels_agree_batched_and_one_at_a_time():
    from kernels.matmul import matmul_kernel
    from kernels.softmax import softmax_kernel
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 100)).astype(np.float32)
    (o1, _), (o2, _), _ = _both(softmax_kernel, (37,), lambda: (np.zeros_like(x), x.copy()), in_row_stride=100,
                                out_row_stride=100, n_cols=100, BLOCK_SIZE=128)
    assert np.array_equal(o1, o2)
    a = rng.standard_normal((70, 50)).astype(np.float16)
    b = rng.standard_normal((50, 90)).astype(np.float16)

    def mm_args():
        return a, b, np.zeros((70, 90), np.float16), 70, 90, 50, 50, 1, 90, 1, 90, 1
    (_, _, c1, *_), (_, _, c2, *_), launch = _both(matmul_kernel, (9,), mm_args, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32,
                                                    BLOCK_SIZE_K=16, GROUP_SIZE_M=2, ACTIVATION="leaky_relu")
    assert np.array_equal(c1, c2)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c1.astype(np.float32), np.where(ref >= 0, ref, 0.01 * ref), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("seed", [0, 1])
def test_shuffled_batches_give_the_same_result(seed):
    x = np.arange(64 * 8, dtype=np.float32)
    out1, out2 = np.zeros_like(x), np.zeros_like(x)
    run_grid(_branchy, (64,), (x, out1), kwargs={"BLOCK": 8})
    run_grid(_branchy, (64,), (x, out2), kwargs={"BLOCK": 8}, shuffle=True, seed=seed)
    assert np.array_equal(out1, out2)


def test_env_var_runs_one_program_at_a_time(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET_BATCH", "0")
    x = np.arange(32 * 4, dtype=np.int32)
    launch = _run(_strided_rows, (8,), x, np.zeros_like(x), 32, BLOCK=4, batch=None)
    assert launch.one_at_a_time and launch.batches == 8


@interp
def _ragged_while(out_ptr):
    pid = tl.program_id(0)
    i = 0
    while i < pid:          # each program leaves the loop at its own iteration
        i += 1
    tl.store(out_ptr + pid, i)


def test_programs_parting_one_by_one_fall_back_to_one_at_a_time():
    out = np.zeros(256, np.int32)
    launch = _run(_ragged_while, (256,), out)
    assert out.tolist() == list(range(256))
    assert launch.one_at_a_time and launch.restarts < 100
