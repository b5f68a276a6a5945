"""`triton.profiler` (Proton's Python API) on tritium: sessions, scopes and
kernel launches recorded as a tree of frames, written as Proton's hatchet
JSON and read back by `triton.profiler.viewer` (plain Python: no hatchet or
pandas needed).

    import triton.profiler as proton
    proton.start("matmul", hook="triton")   # session 0, active
    with proton.scope("torch", {"flops16": 2. * M * N * K}):
        torch.matmul(a, b)
    matmul_kernel[grid](...)                # a frame per kernel (launch metadata's name)
    proton.finalize()                       # writes matmul.hatchet

Kernel frames are timed with device events around each tritium launch (the
NumPy interpreter's launches with the host clock); other GPU work is timed
at the scope around it (hooks.py). See docs/triton_compat.md."""
from .profile import (DEFAULT_PROFILE_NAME, activate, deactivate, enter_scope, exit_scope, finalize, profile,
                      scope, start)

__all__ = ["DEFAULT_PROFILE_NAME", "activate", "deactivate", "enter_scope", "exit_scope", "finalize", "profile",
           "scope", "start"]
