"""The per-kernel GPU launcher behind `kernel[grid](...)`: key → in-memory
table → disk cache → compile → load → launch through `_core.CudaKernel.launch`
(argument packing in Rust). Repeated launches with default options skip all
of this: `_core.FastLauncher` does them in one Rust call and comes back here
only for what it does not handle."""
from __future__ import annotations

import weakref
from typing import Any

from .. import _core
from ..grid import normalize_grid
from ..settings import fp_fusion_requested
from . import driver, launch_hooks
from .compiled import compiled_for, compiled_many
from .driver import torch_queries
from .specialization import specializer


class Launcher:
    """Per-JITFunction launch state: its Specializer and the table of loaded
    kernels by (key, num_warps, num_stages, debug, enable_fp_fusion, device)."""

    def __init__(self, jit_fn: Any):
        self.jit_fn = jit_fn
        self.spec = specializer(jit_fn, "cuda")
        self.names = [p.name for p in jit_fn.params]
        self.table: dict = {}
        plan = self.spec._plan
        # the Rust entry for repeated launches; it holds the kernel only weakly
        # (through `_slow_path`), so no reference cycle runs through Rust
        self.fast = _core.FastLauncher(plan, _slow_path(weakref.ref(jit_fn)), torch_queries) \
            if plan is not None else None

    def __call__(self, grid: Any, args: tuple, kwargs: dict) -> Any:
        key, bound, options = self.spec.bind(*args, **kwargs)
        queries = torch_queries()
        device = queries[0]() if queries is not None else 0
        if options:
            tkey = _table_key(key, options, device)
        else:
            tkey = (key, 4, 3, None, True, device)
        kernel = self.table.get(tkey)
        if kernel is None:
            kernel = self._remember(tkey, self._compile(tkey))
        if options.get("warmup"):
            return kernel
        if callable(grid):
            grid = grid({**dict(zip(self.names, bound)), **options})
        gx, gy, gz = _grid3(grid)
        stream = options.get("stream")
        if stream is None:
            stream = queries[1](device) if queries is not None else 0
        hook = launch_hooks.hook
        if hook is not None:     # a profiler (launch_hooks.py); the Rust fast path is off meanwhile
            stream = int(stream)
            hook.gpu_launch(self.jit_fn, kernel, (gx, gy, gz), bound,
                            lambda: kernel.launch(gx, gy, gz, stream, bound))
            return kernel
        kernel.launch(gx, gy, gz, int(stream), bound)
        return kernel

    def _remember(self, tkey: tuple, kernel: Any) -> Any:
        self.table[tkey] = kernel
        # the Rust table serves the default options, whichever launch
        # compiled them (one with warmup= or stream= included); a kernel
        # compiled with enable_fp_fusion=False is never one of them
        if tkey[1:5] == (4, 3, None, True) and self.fast is not None and isinstance(kernel, _core.CudaKernel):
            self.fast.insert(tkey[0], tkey[5], kernel)
        return kernel

    def precompile(self, calls: list[tuple[tuple, dict]]) -> list[Any]:
        """Compiles and loads, without launching, the kernels that
        `self(grid, *call)` would launch, for every call at once (one batch
        on the compile pool, compiled.compiled_many). Per call: the loaded
        kernel, or the exception binding, compiling or loading it raised
        (OutOfResources when the device cannot run it)."""
        queries = torch_queries()
        device = queries[0]() if queries is not None else 0
        wanted: list[Any] = []
        for args, kwargs in calls:
            try:
                key, _bound, options = self.spec.bind(*args, **kwargs)
            except Exception as e:  # noqa: BLE001  reported in this call's place
                wanted.append(e)
                continue
            try:
                wanted.append(_table_key(key, options, device))
            except Exception as e:  # noqa: BLE001  a bad option, reported in this call's place
                wanted.append(e)
        missing = list(dict.fromkeys(t for t in wanted if isinstance(t, tuple) and t not in self.table))
        target = driver.target_for(device)
        built = compiled_many([(self.jit_fn, self.spec, t[0], target, t[1], t[2], t[3], t[4]) for t in missing])
        failed = {}
        for tkey, result in zip(missing, built):
            try:
                if isinstance(result, BaseException):
                    raise result
                self._remember(tkey, result.load(device))
            except Exception as e:  # noqa: BLE001
                failed[tkey] = e
        return [t if isinstance(t, BaseException) else failed.get(t, self.table.get(t)) for t in wanted]

    def _compile(self, tkey: tuple) -> Any:
        key, num_warps, num_stages, debug, fp_fusion, device = tkey
        return compiled_for(self.jit_fn, self.spec, key, driver.target_for(device), num_warps, num_stages,
                            debug, fp_fusion).load(device)


def _table_key(key: tuple, options: dict, device: int) -> tuple:
    """Where a launch's loaded kernel is kept: the specialization key and every
    option that changes the code (enable_fp_fusion resolved to a bool, so
    leaving it out and passing True share one kernel)."""
    return (key, options.get("num_warps", 4), options.get("num_stages", 3), options.get("debug"),
            fp_fusion_requested(options.get("enable_fp_fusion")), device)


def _grid3(grid: Any) -> tuple[int, int, int]:
    # the common case (a tuple of 1-3 non-negative ints) without a generator:
    # this runs on every launch
    if type(grid) is tuple:
        n = len(grid)
        if n == 1:
            g = grid[0]
            if type(g) is int and g >= 0:
                return g, 1, 1
        elif n == 2:
            a, b = grid
            if type(a) is int and type(b) is int and a >= 0 and b >= 0:
                return a, b, 1
        elif n == 3:
            a, b, c = grid
            if type(a) is int and type(b) is int and type(c) is int and a >= 0 and b >= 0 and c >= 0:
                return grid
    return normalize_grid(grid)


def _slow_path(fn_ref: Any):
    def slow(grid: Any, args: tuple, kwargs: dict) -> Any:
        fn = fn_ref()
        if fn is None:
            raise RuntimeError("the @jit function of this launcher no longer exists")
        return fn._run_slow(grid, args, kwargs)
    return slow


def launch(jit_fn: Any, grid: Any, args: tuple, kwargs: dict) -> Any:
    """`jit_fn[grid](*args, **kwargs)` on the GPU, through the Python path;
    from the first call on, `kernel[grid](...)` reaches the launcher's Rust
    entry (`jit_fn._fast`) directly."""
    return launcher_for(jit_fn)(grid, args, kwargs)


def launcher_for(jit_fn: Any) -> Launcher:
    """The kernel's Launcher, made on first use."""
    launcher = jit_fn.__dict__.get("_cuda_launcher")
    if launcher is None:
        launcher = jit_fn.__dict__["_cuda_launcher"] = Launcher(jit_fn)
        launch_hooks.register(jit_fn)      # attaches the fast path unless a profiler's hook is set
    return launcher
