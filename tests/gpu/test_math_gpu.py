"""GPU checks of the math functions: compiled kernels on CUDA tensors against
the interpreter on the same inputs and against NumPy/libm. Accuracy bounds
are those measured by tests/test_codegen_math.py's reference."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl
from compiled_vs_interpreted import run_interpreted

pytestmark = pytest.mark.gpu


@tritium.jit
def unary_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    if OP == "log":
        y = tl.log(x)
    elif OP == "log2":
        y = tl.log2(x)
    elif OP == "sin":
        y = tl.sin(x)
    elif OP == "cos":
        y = tl.cos(x)
    elif OP == "erf":
        y = tl.erf(x)
    elif OP == "exp":
        y = tl.exp(x)
    else:
        y = tl.sqrt(x)
    tl.store(out_ptr + offs, y, mask=m)


EXACT = {"log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
         "erf": np.vectorize(math.erf, otypes=[np.float64]), "exp": np.exp, "sqrt": np.sqrt}
# f32 exp is Triton's fast ex2.approx(x * log2 e): the rounding of the product
# costs up to |x log2 e| / 2 ulp, so its bound is for |x| <= 20
ULP = {"log": 3, "log2": 3, "sin": 3, "cos": 3, "erf": 3, "exp": 32, "sqrt": 2}
ULP64 = {**ULP, "log2": 4, "erf": 6, "exp": 4}


def _inputs(op, dtype, n):
    rng = np.random.default_rng(0)
    if op in ("log", "log2", "sqrt"):
        v = np.exp(rng.uniform(-80, 80, n))
    elif op in ("sin", "cos"):
        v = rng.uniform(-1e4, 1e4, n)
    elif op == "exp":
        v = rng.uniform(-20, 20, n)
    else:
        v = rng.uniform(-6, 6, n)
    return v.astype(dtype)


@pytest.mark.parametrize("op", list(EXACT))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_matches_libm_and_interpreter(op, dtype):
    n = 1 << 16
    x = _inputs(op, dtype, n)
    xt = torch.from_numpy(x).cuda()
    out = torch.empty_like(xt)
    unary_kernel[(n // 1024,)](xt, out, n, OP=op, BLOCK=1024)
    got = out.cpu().numpy().astype(np.float64)
    exact = EXACT[op](x.astype(np.float64))
    ulp = np.maximum(np.spacing(np.abs(exact.astype(dtype))).astype(np.float64), np.finfo(dtype).smallest_subnormal)
    bound = (ULP64 if dtype == np.float64 else ULP)[op]
    assert np.max(np.abs(got - exact) / ulp) <= bound
    # the interpreter's result on the same inputs agrees within the same tolerance
    oi = np.empty_like(x)
    run_interpreted(unary_kernel, (n // 1024,), x, oi, n, OP=op, BLOCK=1024)
    np.testing.assert_allclose(got, oi, rtol=2 * (bound + 1) * np.finfo(dtype).eps, atol=0)

