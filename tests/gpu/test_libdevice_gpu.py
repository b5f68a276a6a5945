"""Every libdevice function variant compiled (libdevice.10.bc linked) and
run on the GPU (marked `gpu`), against the interpreter's answer: integers
and conversions exactly, floats within the errors NVIDIA documents (the
interpreter's answers are correctly rounded, or nearly: libdevice_bounds.py).
benches/libdevice_accuracy.py measures the errors precisely."""
from __future__ import annotations

import numpy as np
import pytest

import libdevice_bounds as B
import libdevice_cases as C
import libdevice_kernels as K
from tritium.interpreter import run_grid
from tritium.language.extra import libdevice

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

VARIANTS = C.variants()


@pytest.mark.parametrize("name,types,symbol,ret", VARIANTS, ids=[f"{v[0]}-{'-'.join(v[1])}" for v in VARIANTS])
def test_gpu_matches_the_interpreter(name, types, symbol, ret):
    rng = np.random.default_rng(C.seed(name, types))
    args = C.inputs(name, types, 1000, rng)
    out_dtype = np.bool_ if name in ("isnan", "isinf") else C.NP[ret]
    want = np.zeros(1000, out_dtype)
    kernel = K.APPLY[len(types)]
    consts = dict(FN=getattr(libdevice, name), BLOCK=256)
    run_grid(kernel, (4,), kernel.bind_call(list(args) + [want, 1000], consts))
    got = torch.zeros(1000, dtype=getattr(torch, "bool" if out_dtype is np.bool_ else np.dtype(out_dtype).name),
                      device="cuda")
    kernel[(4,)](*[torch.from_numpy(a).cuda() for a in args], got, 1000, **consts)
    got = got.cpu().numpy()
    if not np.issubdtype(out_dtype, np.floating):
        np.testing.assert_array_equal(got, want)
        return
    ok, what = B.within_bounds(name, ret, args, got, want)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, (f"{symbol}: {bad.size} of 1000 beyond {what}; first at "
                           f"{[a[bad[0]] for a in args]}: got {got[bad[0]]!r}, want {want[bad[0]]!r}")
