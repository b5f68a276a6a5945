"""Integer and float→int edge cases where LLVM's own instructions are
undefined (division by zero, MIN / -1, shifts past the width, out-of-range
float→int) or where signedness matters (umulhi): the compiled kernel must give
the interpreter's answers, which follow NVIDIA's div/rem/shl/shr/cvt."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

pytestmark = pytest.mark.gpu


@tritium.jit
def binop_kernel(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if OP == "div":
        r = a // b
    elif OP == "rem":
        r = a % b
    elif OP == "shl":
        r = a << b
    elif OP == "shr":
        r = a >> b
    else:
        r = tl.umulhi(a, b)
    tl.store(out_ptr + offs, r)


@tritium.jit
def to_int_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


def _edge_ints(dtype: np.dtype, n: int) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    special = [0, 1, -1, 2, 31, 32, 33, 63, 64, 100, info.min, info.max] if info.min < 0 else \
        [0, 1, 2, 31, 32, 33, 63, 64, 100, info.max, info.max - 1]
    special = np.array(special, dtype=np.int64).astype(dtype)
    rng = np.random.default_rng(1)
    a = np.concatenate([np.repeat(special, len(special)), rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)])
    b = np.concatenate([np.tile(special, len(special)), rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)])
    size = 1 << int(np.ceil(np.log2(len(a))))
    pad = size - len(a)
    return np.concatenate([a, np.ones(pad, dtype)]), np.concatenate([b, np.ones(pad, dtype)])


# umulhi is defined for 32- and 64-bit integers only, so it gets no 8- or 16-bit case
INT_CASES = [(op, dtype) for op in ("div", "rem", "shl", "shr", "umulhi")
             for dtype in (np.int32, np.uint32, np.int64, np.int8, np.int16)
             if op != "umulhi" or dtype in (np.int32, np.uint32, np.int64)]


@pytest.mark.parametrize("op,dtype", INT_CASES, ids=[f"{op}-{np.dtype(dtype).name}" for op, dtype in INT_CASES])
def test_int_edge_cases_match_interpreter(op, dtype):
    a, b = _edge_ints(np.dtype(dtype), 256)
    out_i = np.empty_like(a)
    binop_kernel.interpret = True
    try:
        binop_kernel[(1,)](a, b, out_i, OP=op, BLOCK=len(a))
    finally:
        binop_kernel.interpret = None
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    out = torch.empty_like(ta)
    binop_kernel[(1,)](ta, tb, out, OP=op, BLOCK=len(a))
    got = out.cpu().numpy()
    bad = np.nonzero(got != out_i)[0]
    assert bad.size == 0, [(int(a[i]), int(b[i]), int(got[i]), int(out_i[i])) for i in bad[:8]]


@pytest.mark.parametrize("dst", [np.int32, np.uint32, np.int8, np.int64, np.uint8])
def test_float_to_int_saturates_like_interpreter(dst):
    vals = np.array([0.0, -0.0, 1.5, -1.5, 127.9, 128.0, -129.0, 255.5, 256.0, 3e9, -3e9, 1e20, -1e20,
                     np.inf, -np.inf, np.nan, 2147483647.0, -2147483648.0, 4294967296.0], np.float32)
    x = np.resize(vals, 32).astype(np.float32)
    out_i = np.empty(32, dst)
    to_int_kernel.interpret = True
    try:
        to_int_kernel[(1,)](x, out_i, BLOCK=32)
    finally:
        to_int_kernel.interpret = None
    out = torch.empty(32, dtype=getattr(torch, np.dtype(dst).name), device="cuda")
    to_int_kernel[(1,)](torch.from_numpy(x).cuda(), out, BLOCK=32)
    np.testing.assert_array_equal(out.cpu().numpy(), out_i)
