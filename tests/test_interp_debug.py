"""Debugging and random numbers in the interpreter: device_assert,
device_print, Philox known answers and tl.rand."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import DeviceAssertionError

interp = triton.jit(interpret=True)


@interp
def _assert_positive(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x > 0, "x must be positive")


def test_device_assert():
    _assert_positive[(1,)](np.ones(4, np.int32), BLOCK=4)
    pattern = r"test_interp_debug.py:\d+:\d+: error: .*program \(0, 0, 0\) at lane\(s\) \[\(2,\)\]: x must be positive"
    with pytest.raises(DeviceAssertionError, match=pattern):
        _assert_positive[(1,)](np.array([1, 2, -3, 4], np.int32), BLOCK=4)


@interp
def _printer(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x", x)
    tl.device_print("pid", tl.program_id(0))


def test_device_print(capsys):
    _printer[(2,)](np.array([1, 2, 3, 4], np.int32), BLOCK=4)
    out = capsys.readouterr().out.splitlines()
    assert out == ["pid (0, 0, 0) x: [1 2 3 4]", "pid (0, 0, 0) pid: 0",
                   "pid (1, 0, 0) x: [1 2 3 4]", "pid (1, 0, 0) pid: 1"]


@interp
def _philox(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b, c, d = tl.randint4x(seed, offs * 0)
    tl.store(out_ptr + offs * 4 + 0, a)
    tl.store(out_ptr + offs * 4 + 1, b)
    tl.store(out_ptr + offs * 4 + 2, c)
    tl.store(out_ptr + offs * 4 + 3, d)
    tl.store(out_ptr + 4 * BLOCK + offs, tl.rand(seed, offs).to(tl.uint32, bitcast=True))
    tl.device_print("r", a, hex=True)


def test_philox_known_answer_and_rand(capsys):
    # Random123's known-answer vector for philox4x32-10 with zero counter and key
    out = np.zeros(4 * 4 + 4, np.uint32)
    _philox[(1,)](out, 0, BLOCK=4)
    assert out[:4].tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert (out[:16].reshape(4, 4) == out[:4]).all()
    u = out[16:].view(np.float32)
    assert ((u >= 0) & (u < 1)).all() and len(set(u.tolist())) == 4
    assert capsys.readouterr().out.strip() == "pid (0, 0, 0) r: [0x6627e8d5 0x6627e8d5 0x6627e8d5 0x6627e8d5]"
