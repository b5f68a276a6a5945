"""device_assert follows Triton's debug mode: compiled code keeps it only
with debug on (TRITON_DEBUG / TRITIUM_DEBUG, jit(debug=...), the warmup
option); the interpreter always checks it."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.interpreter import DeviceAssertionError

interp = triton.jit(interpret=True)


@triton.jit
def _asserting(x_ptr, N: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(v < 100, "too big")
    assert N > 0, "python assert on a constexpr stays static"
    tl.device_assert(False, "always fails")


def _assert_count(kernel, **kw) -> int:
    data = kernel.compile_ir(signature="*fp32", constexprs={"N": 8}, **kw)
    _core.verify(data)
    return _core.to_text(data).count('"assert"(')


def test_device_assert_only_in_debug_mode(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    assert _assert_count(_asserting) == 0
    assert _assert_count(_asserting, debug=True) == 2
    assert _assert_count(triton.jit(debug=True)(_asserting.fn)) == 2
    assert _assert_count(triton.jit(debug=True)(_asserting.fn), debug=False) == 0
    monkeypatch.setenv("TRITON_DEBUG", "1")
    assert _assert_count(_asserting) == 2
    monkeypatch.delenv("TRITON_DEBUG")
    monkeypatch.setenv("TRITIUM_DEBUG", "1")
    assert _assert_count(_asserting) == 2


def test_warmup_debug_option_keeps_asserts(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    monkeypatch.delenv("TRITIUM_DEBUG", raising=False)
    x = np.zeros(8, np.float32)
    assert _asserting.warmup(x, N=8, grid=(1,)).asm["ir"].count('"assert"(') == 0
    assert _asserting.warmup(x, N=8, grid=(1,), debug=True).asm["ir"].count('"assert"(') == 2


def test_interpreter_always_checks_device_assert(monkeypatch):
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    x = np.zeros(8, np.float32)
    with pytest.raises(DeviceAssertionError, match="always fails"):
        interp(_asserting.fn)[(1,)](x, N=8)
