"""Online softmax over long rows read in chunks: the running maximum, sum and
the row's output pointer live in an @aggregate updated by a method inside
the loop. Checked in the interpreter against NumPy, compiled to verified IR
(only the changing fields are loop-carried), and on a GPU against PyTorch."""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from ir_util import canonical_text
from tritium.interpreter.runner import run_grid


@tl.aggregate
class SoftmaxState:
    m: tl.float32
    s: tl.float32
    out_ptr: tl.tensor
    BLOCK: tl.constexpr

    @triton.jit
    def __init__(self, out_ptr, BLOCK: tl.constexpr):
        self.m = -float("inf")
        self.s = 0.0
        self.out_ptr = out_ptr
        self.BLOCK = BLOCK

    def update(self, x):
        m_new = tl.maximum(self.m, tl.max(x, 0))
        self.s = self.s * tl.exp(self.m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        self.m = m_new

    def write(self, x, offs, mask):
        tl.store(self.out_ptr + offs, tl.exp(x - self.m) / self.s, mask=mask)


@triton.jit
def online_softmax(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    st = SoftmaxState(out_ptr + row * stride, BLOCK)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, st.BLOCK)
        mask = offs < n_cols
        st.update(tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf")))
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, st.BLOCK)
        mask = offs < n_cols
        st.write(tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf")), offs, mask)


def _reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("rows,cols,block", [(3, 1000, 128), (2, 64, 64), (1, 5, 8)])
def test_online_softmax_interpreter(rows, cols, block):
    rng = np.random.default_rng(rows * cols)
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    out = np.zeros_like(x)
    run_grid(online_softmax, (rows,), [x, out, cols, cols], kwargs={"BLOCK": block})
    np.testing.assert_allclose(out, _reference(x), rtol=1e-5, atol=1e-6)


def test_online_softmax_compiles_with_changed_fields_carried():
    text = canonical_text(online_softmax, "*fp32 *fp32 i32 i32", BLOCK=128)
    fors = [line for line in text.splitlines() if '"for"(' in line]
    assert len(fors) == 2
    # first loop carries m and s (the pointer and BLOCK do not change); the second carries nothing
    assert fors[0].lstrip().startswith("%") and fors[0].split("=")[0].count("%") == 2
    assert not fors[1].lstrip().startswith("%")


@pytest.mark.gpu
def test_online_softmax_gpu_matches_torch():
    torch = pytest.importorskip("torch")
    rows, cols, block = 4, 4096 + 17, 256
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float32) * 4
    out = torch.empty_like(x)
    online_softmax[(rows,)](x, out, cols, cols, BLOCK=block)
    torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
