"""Test helpers users import as `triton.testing`: `assert_close` for NumPy
arrays, PyTorch tensors and scalars (numpy is imported lazily)."""
from __future__ import annotations

from typing import Any


def _to_numpy(x: Any):
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) in ("torch.bfloat16",) or "float8" in str(getattr(x, "dtype", "")):
            x = x.float()
        return x.numpy()
    return np.asarray(x)


def assert_close(x: Any, y: Any, atol: float | None = None, rtol: float | None = None, err_msg: str = "") -> None:
    """Raises AssertionError unless |x - y| <= atol + rtol * |y| everywhere
    (NaNs must match). Defaults follow Triton: atol 1e-2, rtol 0."""
    import numpy as np
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    a, b = _to_numpy(x), _to_numpy(y)
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    np.testing.assert_allclose(a.astype(np.float64) if a.dtype.kind in "fiu" else a,
                               b.astype(np.float64) if b.dtype.kind in "fiu" else b,
                               atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
