"""Loads and stores in the interpreter: masks, `other`, out-of-bounds reports
(sanitizer), bool memory as bytes, strided NumPy views."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import OutOfBoundsError, Sanitizer, Tracer, run_grid

interp = triton.jit(interpret=True)


@interp
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@pytest.mark.parametrize("n", [0, 1, 37, 64, 1000])
def test_vector_add_with_masks(n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    _add[(triton.cdiv(n, 64) or 1,)](x, y, out, n, BLOCK=64)
    assert np.array_equal(out, x + y)


def test_env_var_selects_interpreter(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)

    x = np.arange(8, dtype=np.int32)
    k[(1,)](x, BLOCK=8)
    assert x.tolist() == [2 * i for i in range(8)]


@interp
def _load_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=-7)
    tl.store(out_ptr + offs, v)


def test_masked_lanes_get_other_and_are_not_read():
    x = np.arange(5, dtype=np.int32)
    out = np.zeros(16, np.int32)
    _load_other[(1,)](x, out, 5, BLOCK=16)
    assert out.tolist() == [0, 1, 2, 3, 4] + [-7] * 11
    _load_other[(1,)](x, out, 0, BLOCK=16)  # all lanes masked off
    assert out.tolist() == [-7] * 16


@interp
def _oob(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


def test_unmasked_out_of_bounds_names_the_kernel_line():
    with pytest.raises(OutOfBoundsError, match=r"test_interp_memory.py:\d+:\d+: error: .*'x_ptr'.*program \(0, 0, 0\)"):
        _oob[(1,)](np.zeros(10, np.float32), BLOCK=16)


def test_sanitizer_client_collects_reports():
    san, tracer = Sanitizer(), Tracer()
    run_grid(_oob, (2,), {"x_ptr": np.zeros(12, np.float32), "BLOCK": 16}, clients=[san, tracer], oob="skip")
    assert len(san.reports) == 4  # a load and a store per program
    assert {r.kind for r in san.reports} == {"load", "store"}
    assert san.reports[0].lanes.tolist() == [12, 13, 14, 15]
    assert len(tracer.of_kind("load")) == 2 and tracer.of_kind("load")[1].pid == (1, 0, 0)


@interp
def _bool_copy(src, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs)
    tl.store(dst + offs, ~v)


def test_bool_pointers_are_bytes():
    src = np.array([True, False, True, True])
    dst = np.zeros(4, bool)
    _bool_copy[(1,)](src, dst, BLOCK=4)
    assert dst.tolist() == [False, True, False, False]


@interp
def _strided(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride))


def test_strided_numpy_view():
    base = np.arange(32, dtype=np.float32)
    view = base[::4]
    out = np.zeros(8, np.float32)
    _strided[(1,)](view, out, 1, BLOCK=8)  # the view's own elements are contiguous in its byte range
    assert out.tolist() == base[:8].tolist()  # element stride 1 reads the underlying buffer's neighbours
    _strided[(1,)](base, out, 4, BLOCK=8)
    assert out.tolist() == view.tolist()
