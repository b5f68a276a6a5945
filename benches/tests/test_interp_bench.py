"""interp_vs_triton.py's tritium side on shrunken cases: every kernel runs in
the interpreter and matches NumPy (the Triton side needs its venv; the full
comparison is `benches/interp_vs_triton.py`)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import interp_vs_triton  # noqa: E402


@pytest.mark.parametrize("kernel", interp_vs_triton.KERNELS)
def test_tritium_side_runs_and_checks(kernel, monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")   # the worker sets it for its own process
    launch, check = interp_vs_triton._case(kernel, 16, "tritium")
    launch()
    assert check()


def test_host_tensor_exposes_what_tritons_interpreter_calls():
    import numpy as np
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = interp_vs_triton.HostTensor(a[:, 1:])
    assert t.size() == (3, 3) and t.stride() == (4, 1) and t.storage_offset() == 1
    view = t.new_empty(0).set_(t.untyped_storage(), t.storage_offset(), t.size(), t.stride())
    assert view.data_ptr() == t.data_ptr() and np.array_equal(view.arr, a[:, 1:])
