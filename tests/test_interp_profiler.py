"""The profiler client (issue #15 item 5): per kernel and source line, bytes
loaded and stored, mask utilization, atomics per element (from the
interpreter's events), accesses the compiler cannot vectorize and why, and
small constant loops worth unrolling (from tritium-codegen's report)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.interpreter import Profiler, run_grid
from kernels.vector_add import add_kernel


def _line(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _profile(kernel, grid, args, **kwargs) -> Profiler:
    prof = Profiler()
    run_grid(kernel, grid, args, kwargs=kwargs, clients=[prof])
    return prof


def test_bytes_and_mask_utilization_per_line():
    n = 1000
    x = np.ones(n, np.float32)
    prof = _profile(add_kernel, (4,), (x, x, np.zeros_like(x), n), BLOCK_SIZE=256)
    rows = {r.line: r for r in prof.rows(kernel="add_kernel")}
    load_x = rows[_line(add_kernel, "x = tl.load")]
    store = rows[_line(add_kernel, "tl.store")]
    assert (load_x.loaded, load_x.stored) == (4 * n, 0) and (store.loaded, store.stored) == (0, 4 * n)
    assert load_x.ops == 4 and load_x.issued == 1024 and load_x.active == n
    assert load_x.mask_utilization == pytest.approx(n / 1024)


def test_the_compilers_vectorization_verdict_and_why():
    x = np.ones(1024, np.float32)
    ragged = _profile(add_kernel, (4,), (x, x, np.zeros_like(x), 1000), BLOCK_SIZE=256)
    row = ragged.rows(kernel="add_kernel", sort="line")[0]
    assert row.vector == "load 4 B, not vectorized: mask constant over 1 element(s)"
    # n divisible by 16: the mask is constant over 16 lanes, the access is 16 bytes
    even = _profile(add_kernel, (4,), (x, x, np.zeros_like(x), 1024), BLOCK_SIZE=256)
    assert {r.vector for r in even.rows(kernel="add_kernel")} == {"load 16 B, full", "store 16 B, full"}
    assert "not vectorized: mask" in ragged.table(sort="vector").splitlines()[2]


@triton.jit
def _strided(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride))


def test_a_strided_load_is_reported_with_its_contiguity():
    x = np.ones(64 * 3, np.float32)
    prof = _profile(_strided, (1,), (x, np.zeros(64, np.float32), 3), BLOCK=64)
    rows = {r.line: r for r in prof.rows()}
    assert rows[_line(_strided, "tl.store")].vector == \
        "load 4 B, not vectorized: pointer contiguity 1; store 16 B, full"


@triton.jit
def _hist(x_ptr, h_ptr, n, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    for i in range(0, 4):
        tl.atomic_add(h_ptr + (v + i) % 8, 1, mask=offs < n)
    for j in range(0, 64):
        tl.atomic_add(h_ptr + 8, 1)
    for k in range(0, K):
        tl.atomic_add(h_ptr + 9, 1)


def test_atomics_per_element_and_loops_worth_unrolling():
    h = np.zeros(10, np.int32)
    prof = _profile(_hist, (2,), (np.arange(100, dtype=np.int32), h, 100, 3), BLOCK=64)
    rows = {r.line: r for r in prof.rows()}
    hot = rows[_line(_hist, "(v + i) % 8")]
    assert hot.atomic_lanes == 4 * 100 and hot.atomics_per_element == pytest.approx(400 / 8)
    assert rows[_line(_hist, "h_ptr + 8")].atomics_per_element == 2 * 64
    assert rows[_line(_hist, "for i in")].notes == ["loop runs 4 times, a constant: tl.static_range(4) unrolls it"]
    assert _line(_hist, "for j in") not in rows or not rows[_line(_hist, "for j in")].notes   # 64: too many
    assert _line(_hist, "for k in") not in rows or not rows[_line(_hist, "for k in")].notes   # not a constant
    assert h[:8].sum() == 400 and h[8] == 128 and h[9] == 6
    text = prof.table(sort="atomics")
    first_row = text.splitlines()[2]
    assert first_row.startswith("test_interp_profiler.py:") and "128.0" in first_row


def test_sorting_puts_the_worst_lines_first():
    x = np.ones(1000, np.float32)
    prof = _profile(_hist, (2,), (np.arange(100, dtype=np.int32), np.zeros(10, np.int32), 100, 3), BLOCK=64)
    run_grid(add_kernel, (1,), (x, x, np.zeros_like(x), 1000), kwargs={"BLOCK_SIZE": 1024}, clients=[prof])
    by_mask = [r.mask_utilization for r in prof.rows(sort="mask", kernel="add_kernel")]
    assert by_mask == sorted(by_mask)
    by_bytes = [r.loaded + r.stored for r in prof.rows(sort="bytes", kernel="_hist")]
    assert by_bytes == sorted(by_bytes, reverse=True)
    with pytest.raises(ValueError, match="sort must be one of"):
        prof.rows(sort="nonsense")
    text = prof.table()
    assert text.startswith("_hist: 1 launch(es)") and "add_kernel: 1 launch(es)" in text


def test_access_report_binding():
    x = np.ones(1024, np.float32)
    report = _core.access_report(add_kernel.launch_ir(add_kernel.bind_call((x, x, x, 1024), {"BLOCK_SIZE": 256})))
    assert [(a["op"], a["width"], a["limit"]) for a in report["accesses"]] == \
        [("load", 4, "max access size"), ("load", 4, "max access size"), ("store", 4, "max access size")]
    assert report["loops"] == []
