"""Where a profiler sees kernel launches (`triton.profiler`'s hook="triton",
python/tritium/profiler/). `hook` is None unless a profiling session wants
launches; while it is None a launch costs nothing extra: repeated launches
go through the Rust fast path (`JITFunction._fast`), which never calls
Python. Setting a hook detaches every @jit function's fast path, so each
launch comes through the Python launch path, which calls the hook around the
launch itself (after binding and compiling); clearing it attaches them again.

A hook has two methods:
- `gpu_launch(jit_fn, kernel, grid, bound, launch)`: `kernel` the loaded
  `_core.CudaKernel`, `grid` three ints, `bound` the arguments in parameter
  order (constexprs included), `launch()` does the launch on the current
  stream; the hook must call it exactly once;
- `interpreted_launch(jit_fn, grid, bound, run)`: the same for a launch the
  NumPy interpreter runs (`bound` by name; `run()` runs it to the end).

A callable `kernel[grid]` taken before the hook was set (`k = f[grid]`) keeps
the fast path it was made with."""
from __future__ import annotations

import threading
import weakref
from typing import Any

hook: Any = None

# @jit functions that have a GPU launcher (and so maybe a Rust fast path)
_launched: "weakref.WeakSet[Any]" = weakref.WeakSet()
# one thread at a time registers or sets the hook: a kernel getting its
# launcher on one thread while another starts or stops a profiling session
# changed the set being walked (RuntimeError), or attached a fast path just
# after the hook detached it
_lock = threading.Lock()


def register(jit_fn: Any) -> None:
    """Called when a @jit function gets its GPU launcher; attaches its fast
    path, or not, as the hook in force says."""
    with _lock:
        _launched.add(jit_fn)
        jit_fn._attach_fast()


def set_hook(new: Any) -> None:
    """Installs `new` (None removes the hook) and re-attaches fast paths."""
    global hook
    with _lock:
        hook = new
        for fn in list(_launched):
            fn._attach_fast()


__all__ = ["hook", "register", "set_hook"]
