"""The CUDA side of `kernel[grid](...)`: is a driver there, which device and
stream (PyTorch's current ones when torch is in use), where ptxas is, and the
per-kernel launcher: key → in-memory table → disk cache → compile → load →
launch through `_core.CudaKernel.launch` (argument packing in Rust). Repeated
launches with default options skip all of this: `_core.FastLauncher` does
them in one Rust call and comes back here only for what it does not handle."""
from __future__ import annotations

import functools
import os
import sys
import weakref
from pathlib import Path
from typing import Any

from .. import _core


@functools.lru_cache(maxsize=None)
def status() -> tuple[bool, str]:
    """(True, "driver version, N device(s)") or (False, why not)."""
    ok, text = _core.cuda_driver_status()
    if not ok:
        return False, text
    try:
        n = _core.cuda_device_count()
    except RuntimeError as e:
        return False, str(e)
    if n == 0:
        return False, f"the CUDA driver ({text}) reports no device"
    return True, f"CUDA driver {text}, {n} device(s)"


def available() -> bool:
    return status()[0]


def _torch() -> Any:
    # only a torch the program already imported: tritium never imports it itself
    return sys.modules.get("torch")


def torch_queries() -> tuple | None:
    """(current device, current raw stream of a device) callables, the
    cheapest torch has, once torch's CUDA state exists; else None (device 0,
    default stream). The fast launcher calls this until it gets the pair."""
    torch = _torch()
    if torch is None or not torch.cuda.is_initialized():
        return None
    # what current_device() / current_stream() call, minus their checks
    get = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        def raw(device: int) -> int:
            return torch.cuda.current_stream(device).cuda_stream
    return get, raw


def current_device() -> int:
    q = torch_queries()
    return q[0]() if q is not None else 0


def current_stream(device: int) -> int:
    """PyTorch's current stream on `device` when torch is in use, else the default stream (0)."""
    q = torch_queries()
    return q[1](device) if q is not None else 0


@functools.lru_cache(maxsize=None)
def device_info(device: int) -> dict:
    return dict(_core.cuda_device_info(device))


def target_for(device: int) -> str:
    major, minor = device_info(device)["capability"]
    return f"cuda:{major}{minor}"


def synchronize(device: int | None = None) -> None:
    _core.cuda_synchronize(current_device() if device is None else device)


# -- ptxas -----------------------------------------------------------------------

def ptxas_search_dirs() -> list[str]:
    """Where pip-installed ptxas binaries live: the nvidia-cuda-nvcc wheels'
    bin dirs, then the copy an installed Triton bundles."""
    dirs = []
    for entry in sys.path:
        base = Path(entry or ".")
        for rel in ("nvidia/cuda_nvcc/bin", "nvidia/cu13/bin", "triton/backends/nvidia/bin"):
            d = base / rel
            if d.is_dir():
                dirs.append(str(d))
    return dirs


@functools.lru_cache(maxsize=None)
def _ptxas_cached(env: str) -> str | None:
    found = _core.find_ptxas(ptxas_search_dirs())
    return str(found) if found is not None else None


def ptxas_path() -> str | None:
    """The ptxas to use, or None (then the driver JIT-compiles PTX).
    TRITIUM_PTXAS=/path picks one; TRITIUM_PTXAS= (empty) is "search"."""
    return _ptxas_cached(os.environ.get("TRITIUM_PTXAS", ""))


@functools.lru_cache(maxsize=None)
def _version(path: str) -> str:
    return _core.ptxas_version(path)


def ptxas_version() -> str | None:
    p = ptxas_path()
    return _version(p) if p else None


# -- the JIT launcher ------------------------------------------------------------

class Launcher:
    """Per-JITFunction launch state: its Specializer and the table of loaded
    kernels by (key, options, device)."""

    def __init__(self, jit_fn: Any):
        from .specialization import specializer
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
            num_warps = options.get("num_warps", 4)
            num_stages = options.get("num_stages", 3)
            tkey = (key, num_warps, num_stages, options.get("debug"), device)
        else:
            num_warps, num_stages = 4, 3
            tkey = (key, 4, 3, None, device)
        kernel = self.table.get(tkey)
        if kernel is None:
            kernel = self.table[tkey] = self._compile(key, num_warps, num_stages, options.get("debug"), device)
            # the Rust table serves the default options, whichever launch
            # compiled them (one with warmup= or stream= included)
            if tkey[1:4] == (4, 3, None) and self.fast is not None and isinstance(kernel, _core.CudaKernel):
                self.fast.insert(key, device, kernel)
        if options.get("warmup"):
            return kernel
        if callable(grid):
            grid = grid({**dict(zip(self.names, bound)), **options})
        gx, gy, gz = _grid3(grid)
        stream = options.get("stream")
        if stream is None:
            stream = queries[1](device) if queries is not None else 0
        kernel.launch(gx, gy, gz, int(stream), bound)
        return kernel

    def _compile(self, key: tuple, num_warps: int, num_stages: int, debug: Any, device: int) -> Any:
        return compiled_for(self.jit_fn, self.spec, key, target_for(device), num_warps, num_stages,
                            debug).load(device)


def compiled_for(jit_fn: Any, spec: Any, key: tuple, target: str, num_warps: int, num_stages: int,
                 debug: Any) -> Any:
    """The CompiledKernel for one specialization: from the disk cache, or
    compiled and stored. Needs no GPU (tests drive the cache through it)."""
    from . import cache
    from .dependencies import check_unchanged
    from ..compile import CompiledKernel, compile_ir_bytes, param_kinds
    from ..compiler.frontend import compile_kernel
    from .jit import debug_requested
    check_unchanged(jit_fn)
    dbg = debug_requested(debug, jit_fn.debug)
    options = {"num_warps": num_warps, "num_stages": num_stages, "debug": dbg}
    disk_key = cache.kernel_key(jit_fn, target, options, spec.key_text(key))

    def build() -> dict[str, bytes]:
        s = spec.specialization(key)
        ir = compile_kernel(jit_fn, s.signature, s.arg_attrs(), debug=dbg).encode()
        return compile_ir_bytes(ir, jit_fn.__name__, param_kinds(s.signature), target, num_warps,
                                num_stages).to_files()
    return cache.load_or_build(disk_key, build, CompiledKernel.from_files)


def current_target() -> str:
    """The current device's target; "cuda:90" without a GPU (ahead-of-time work)."""
    return target_for(current_device()) if available() else "cuda:90"


def warmup_compile(jit_fn: Any, args: tuple, params: dict, options: dict) -> Any:
    """`kernel.warmup(...)`: the CompiledKernel for these arguments, through
    the disk cache, without launching (and without a GPU if need be)."""
    from .specialization import specializer
    from .tensors import MockTensor
    unknown = set(options) - {"num_warps", "num_stages", "debug", "stream", "num_ctas"}
    if unknown:
        raise TypeError(f"{jit_fn.__name__}.warmup(): unsupported option(s) {', '.join(sorted(unknown))}")
    spec = specializer(jit_fn, "cuda")
    bound = jit_fn.bind_call([MockTensor.wrap_dtype(a) for a in args],
                             {k: MockTensor.wrap_dtype(v) for k, v in params.items()})
    key = spec.key(tuple(bound.values()))
    return compiled_for(jit_fn, spec, key, current_target(), options.get("num_warps", 4),
                        options.get("num_stages", 3), options.get("debug"))


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
    from .jit import _normalize_grid
    return _normalize_grid(grid)


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
    launcher = jit_fn.__dict__.get("_cuda_launcher")
    if launcher is None:
        launcher = jit_fn.__dict__["_cuda_launcher"] = Launcher(jit_fn)
        jit_fn._attach_fast()
    return launcher(grid, args, kwargs)


# Triton's `triton.runtime.driver` object lives in device_api.py; this module
# answers for it, so `driver.active`, `driver.set_active(...)` and
# `from triton.runtime.driver import driver` work on the module as well.
def __getattr__(name: str) -> Any:
    if name in ("active", "default"):
        from .device_api import drivers
        return getattr(drivers, name)
    if name == "driver":
        from .device_api import drivers
        return drivers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def set_active(drv: Any) -> None:
    from .device_api import drivers
    drivers.set_active(drv)


def reset_active() -> None:
    from .device_api import drivers
    drivers.reset_active()


__all__ = ["Launcher", "available", "compiled_for", "current_device", "current_stream", "current_target",
           "device_info", "launch", "ptxas_path", "ptxas_search_dirs", "ptxas_version", "reset_active",
           "set_active", "status", "synchronize", "target_for", "torch_queries", "warmup_compile"]
