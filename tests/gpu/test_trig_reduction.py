"""GPU checks for sin/cos on huge arguments (Payne-Hanek, trig_reduce.rs):
f32 up to 3.4e38 and f64 up to 1.8e308 against an exact reduction (pi to 400
digits, tests/test_codegen_math.py), and small arguments unchanged."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

from test_codegen_math import Ref, _huge_inputs, exact_sincos, ulp_error

pytestmark = pytest.mark.gpu


@tritium.jit
def trig_kernel(x_ptr, s_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(s_ptr + offs, tl.sin(x), mask=m)
    tl.store(c_ptr + offs, tl.cos(x), mask=m)


def _run(x: np.ndarray):
    xt = torch.from_numpy(x).cuda()
    s, c = torch.empty_like(xt), torch.empty_like(xt)
    trig_kernel[((x.size + 255) // 256,)](xt, s, c, x.size, BLOCK=256)
    return s.cpu().numpy(), c.cpu().numpy()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_huge_arguments(dt):
    x = _huge_inputs(dt, 4000)
    s, c = _run(x)
    for got, cos in ((s, False), (c, True)):
        err = ulp_error(got, exact_sincos(np.float64(x), cos), dt)
        print(f"{'cos' if cos else 'sin'} {dt.__name__}: {err:.2f} ulp")
        assert err <= (2.0 if dt == np.float32 else 3.0), err
        # the NumPy mirror of the same algorithm, up to its f64 fma emulation (one more rounding)
        ref = Ref(dt).sincos(x, cos)
        assert ulp_error(got, ref.astype(np.float64), dt) <= (1.0 if dt == np.float32 else 2.0)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_threshold_neighbourhood_and_specials(dt):
    base = np.float64(2.0 ** 20)
    x = np.concatenate([base + np.arange(-2000, 2000) * (1.0 / 64), -base + np.arange(-50, 50),
                        np.random.default_rng(2).uniform(-1e4, 1e4, 5000)]).astype(dt)
    s, c = _run(x)
    assert ulp_error(s, exact_sincos(np.float64(x)), dt) <= (2.0 if dt == np.float32 else 3.0)
    assert ulp_error(c, exact_sincos(np.float64(x), True), dt) <= (2.0 if dt == np.float32 else 3.0)
    sp = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], dt)
    s, c = _run(sp)
    assert np.all(np.isnan(s[:3])) and np.all(np.isnan(c[:3]))
    assert s[3] == 0 and np.signbit(s[4]) and np.all(c[3:] == 1)
