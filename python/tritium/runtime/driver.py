"""The CUDA driver as tritium sees it: is a driver there, which device and
stream (PyTorch's current ones when torch is in use), the device's target,
where ptxas is. Also Triton's `triton.runtime.driver` module: `driver.active`
and friends come from device_api.py, which registers itself here. The
per-kernel launcher is launcher.py; compiling for a launch is compiled.py."""
from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

from .. import _core
from ..settings import ptxas_choice


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
    return _ptxas_cached(ptxas_choice())


@functools.lru_cache(maxsize=None)
def _version(path: str) -> str:
    return _core.ptxas_version(path)


def ptxas_version() -> str | None:
    p = ptxas_path()
    return _version(p) if p else None


# Triton's `triton.runtime.driver` object lives in device_api.py (built on
# this module), which registers it here; this module answers for it, so
# `driver.active`, `driver.set_active(...)` and
# `from triton.runtime.driver import driver` work on the module as well.
_drivers: Any = None


def register_drivers(drivers: Any) -> None:
    global _drivers
    _drivers = drivers


def __getattr__(name: str) -> Any:
    if name in ("active", "default"):
        return getattr(_drivers, name)
    if name == "driver":
        return _drivers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def set_active(drv: Any) -> None:
    _drivers.set_active(drv)


def reset_active() -> None:
    _drivers.reset_active()


__all__ = ["available", "current_device", "current_stream",
           "device_info", "ptxas_path", "ptxas_search_dirs", "ptxas_version", "reset_active",
           "set_active", "status", "synchronize", "target_for", "torch_queries"]
