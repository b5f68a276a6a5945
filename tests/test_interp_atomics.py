"""Atomics in the interpreter: every rmw kind, float max/min/add, a CAS spin
lock across programs."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

interp = triton.jit(interpret=True)


@interp
def _atomics(cnt_ptr, vals_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(vals_ptr + offs, mask=mask)
    same = cnt_ptr + offs * 0  # every lane hits one address
    tl.atomic_add(same, v, mask=mask)
    tl.atomic_max(same + 1, v, mask=mask)
    tl.atomic_min(same + 2, v, mask=mask)
    tl.atomic_and(same + 3, v, mask=mask)
    tl.atomic_or(same + 4, v, mask=mask)
    tl.atomic_xor(same + 5, v, mask=mask)
    old = tl.atomic_xchg(same + 6, v, mask=mask)
    tl.store(old_ptr + offs, old, mask=mask)


def test_atomics_all_kinds():
    vals = np.random.default_rng(6).integers(-1000, 1000, 37).astype(np.int32)
    cnt = np.array([0, -2 ** 31, 2 ** 31 - 1, -1, 0, 0, -5], np.int32)
    old = np.zeros(37, np.int32)
    _atomics[(3,)](cnt, vals, old, 37, BLOCK=16)
    assert cnt[:6].tolist() == [vals.sum(), vals.max(), vals.min(), np.bitwise_and.reduce(vals),
                                np.bitwise_or.reduce(vals), np.bitwise_xor.reduce(vals)]
    assert cnt[6] == vals[-1] and old.tolist() == [-5] + vals[:-1].tolist()  # lane order, program order


@interp
def _float_atomics(out_ptr, vals_ptr, BLOCK: tl.constexpr):
    v = tl.load(vals_ptr + tl.arange(0, BLOCK))
    tl.atomic_max(out_ptr + tl.arange(0, BLOCK) * 0, v)
    tl.atomic_min(out_ptr + 1 + tl.arange(0, BLOCK) * 0, v)
    tl.atomic_add(out_ptr + 2 + tl.arange(0, BLOCK) * 0, v)


def test_float_atomic_max_min_add():
    vals = np.array([-3.5, 2.25, -0.5, 8.0, -9.75, 1.0, 0.0, 4.5], np.float32)
    out = np.array([-np.inf, np.inf, 0.0], np.float32)
    _float_atomics[(1,)](out, vals, BLOCK=8)
    assert out.tolist() == [8.0, -9.75, float(vals.sum())]


@interp
def _spin_lock(lock_ptr, counter_ptr, log_ptr):
    pid = tl.program_id(0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    c = tl.load(counter_ptr)
    tl.store(log_ptr + pid, c)
    tl.store(counter_ptr, c + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_cas_spin_lock():
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    log = np.full(6, -1, np.int32)
    _spin_lock[(6,)](lock, counter, log)
    assert counter[0] == 6 and lock[0] == 0 and sorted(log.tolist()) == list(range(6))
