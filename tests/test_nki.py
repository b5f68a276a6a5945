"""The NKI frontend (issue #15 item 6): kernels in AWS Neuron NKI's style run
on the same interpreter as Triton kernels and emit the same events, so the
tracer, sanitizer, visualizer and profiler work on them unchanged."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
import tritium.nki as nki
import tritium.nki.language as nl
from tritium.interpreter import InterpreterError, OutOfBoundsError, Profiler, Sanitizer, Tracer, Visualizer, clients

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_matmul():
    with clients(Visualizer(), Tracer()) as (viz, tracer):
        a, b, c = _example("nki_matmul").run(M=256, K=256, N=1024)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-2)
    dots = tracer.of_kind("dot")
    assert len(dots) == 4 * 2 and {d.a_shape for d in dots} == {(128, 128)}
    (dot,) = viz.launch().dots.values()
    program = viz.launch().programs.index((1, 1, 0))
    # program (1, 1) reads a_t[:, 128:256] (both K halves) and b[:, 512:1024], writes c[128:256, 512:1024]
    idx_a = np.arange(256 * 256).reshape(256, 256)
    idx_c = np.arange(256 * 1024).reshape(256, 1024)
    assert dot.elements(program, "a").tolist() == sorted(idx_a[:, 128:].reshape(-1).tolist())
    assert dot.elements(program, "b").tolist() == sorted(idx_c[:, 512:].reshape(-1).tolist())
    assert dot.elements(program, "c").tolist() == sorted(idx_c[128:, 512:].reshape(-1).tolist())


def test_example_softmax_with_every_client(tmp_path):
    with clients(Sanitizer(races=True), Profiler(), Visualizer()) as (san, prof, viz):
        x, y = _example("nki_softmax").run(rows=300, cols=256)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert san.reports == [] and san.race_reports == []
    load = next(r for r in prof.rows() if "nl.load" in r.source)
    assert load.loaded == 300 * 256 * 4 and load.mask_utilization == pytest.approx(300 / 384)
    assert "not compiled by tritium" in prof.table()
    assert viz.heatmap("x", "read").sum() == 300 * 256 and viz.heatmap("y", "masked").sum() == 0
    assert viz.save_png(tmp_path / "s.png").stat().st_size > 0 and viz.save_html(tmp_path / "s.html").exists()


@nki.jit
def _nki_add(a, b, c):
    i_p = nl.program_id(0) * 32 + nl.arange(32)[:, None]
    i_f = nl.arange(64)[None, :]
    x = nl.load(a[i_p, i_f], mask=i_p < a.shape[0])
    y = nl.load(b[i_p, i_f], mask=i_p < a.shape[0])
    nl.store(c[i_p, i_f], value=x + y, mask=i_p < a.shape[0])


@triton.jit
def _triton_add(a_ptr, b_ptr, c_ptr, rows, COLS: tl.constexpr):
    r = tl.program_id(0) * 32 + tl.arange(0, 32)[:, None]
    f = tl.arange(0, COLS)[None, :]
    x = tl.load(a_ptr + r * COLS + f, mask=r < rows)
    y = tl.load(b_ptr + r * COLS + f, mask=r < rows)
    tl.store(c_ptr + r * COLS + f, x + y, mask=r < rows)


def test_the_same_events_whatever_the_frontend():
    from tritium.interpreter import run_grid
    a = np.random.default_rng(0).random((70, 64), np.float32)
    b = np.ones_like(a)
    seen = []
    for launch in (lambda t: _nki_add.run((3,), (a, b, np.zeros_like(a)), {}, clients=[t]),
                   lambda t: run_grid(_triton_add, (3,), (a, b, np.zeros_like(a), 70), kwargs={"COLS": 64},
                                      clients=[t])):
        tracer = Tracer()
        launch(tracer)
        seen.append(tracer.events)
    nki_events, triton_events = seen
    assert len(nki_events) == len(triton_events) == 9
    base = lambda e: e.addresses - e.addresses.reshape(-1)[0]   # noqa: E731 - buffers map at one address each run
    for n, t in zip(nki_events, triton_events):
        assert (n.kind, n.pid, n.dtype, n.nbytes, n.shape) == (t.kind, t.pid, t.dtype, t.nbytes, t.shape)
        assert np.array_equal(n.mask, t.mask) and np.array_equal(base(n), base(t))


@nki.jit
def _nki_oob(a, c):
    i_p = nl.arange(32)[:, None]
    i_f = nl.arange(64)[None, :]
    nl.store(c[i_p, i_f], value=nl.load(a[i_p + 8, i_f]))


def test_sanitizer_on_an_nki_kernel():
    a = np.zeros((32, 64), np.float32)
    with pytest.raises(OutOfBoundsError, match=r"test_nki.py:\d+:\d+: error: load: .*'a'") as info:
        _nki_oob(a, np.zeros_like(a))
    assert "nl.load(a[i_p + 8, i_f])" in str(info.value)
    san = Sanitizer()
    _nki_oob.run((1,), (a, np.zeros_like(a)), {}, clients=[san], oob="skip")
    assert len(san.reports) == 1 and len(san.reports[0].lanes) == 8 * 64


@nki.jit
def _nki_race(c):
    i_p = nl.arange(32)[:, None]
    i_f = nl.arange(64)[None, :]
    nl.store(c[i_p, i_f], value=nl.full((32, 64), 1.0, nl.float32) * nl.program_id(0))


def test_race_detector_on_an_nki_kernel():
    san = Sanitizer(races=True)
    _nki_race.run((2,), (np.zeros((32, 64), np.float32),), {}, clients=[san])
    assert [r.kind for r in san.race_reports] == ["write/write"] and san.race_reports[0].count == 32 * 64


@nki.jit
def _nki_math(x, out):
    i_p = nl.arange(32)[:, None]
    i_f = nl.arange(16)[None, :]
    t = nl.load(x[i_p, i_f])
    buf = nl.ndarray((32, 16 * 8), nl.float32, buffer=nl.sbuf)
    buf[:, 0:16] = nl.exp(t)
    buf[:, 16:32] = nl.tanh(t)
    buf[:, 32:48] = nl.sigmoid(t)
    buf[:, 48:64] = nl.relu(t)
    buf[:, 64:80] = nl.maximum(t, 0.25)
    buf[:, 80:96] = nl.multiply(nl.square(t), nl.reciprocal(nl.add(nl.abs(t), 1.0)))
    buf[:, 96:112] = nl.mean(t, axis=1, keepdims=True) + nl.zeros((32, 16), nl.float32)
    buf[:, 112:128] = nl.transpose(nl.load(x[0:16, 0:32]))
    nl.store(out[i_p, nl.arange(128)[None, :]], value=buf)


def test_the_elementwise_set_and_buffers():
    x = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float32)
    out = np.zeros((32, 128), np.float32)
    _nki_math(x, out)
    t = x[:, :16]
    expected = [np.exp(t), np.tanh(t), 1 / (1 + np.exp(-t)), np.maximum(t, 0), np.maximum(t, 0.25),
                t * t / (np.abs(t) + 1), np.broadcast_to(t.mean(1, keepdims=True), t.shape), x[:16, :32].T]
    np.testing.assert_allclose(out, np.concatenate(expected, axis=1), rtol=1e-5, atol=1e-6)


@nki.jit
def _too_tall(a):
    nl.load(a[0:256, 0:16])


@nki.jit
def _uneven(a):
    n = nl.program_id(0)
    nl.load(a[0:n + 1, 0:16])


def test_errors_name_the_nki_line():
    a = np.zeros((256, 16), np.float32)
    with pytest.raises(InterpreterError, match=r"test_nki.py:\d+:\d+: error: nl.load: partition dimension 256 "
                                               r"exceeds nl.tile_size.pmax \(128\)"):
        _too_tall(a)
    with pytest.raises(InterpreterError, match="a slice whose length differs between programs"):
        _uneven[(2,)](a)
