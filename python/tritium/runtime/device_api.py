"""`triton.runtime.driver.active`: the device queries Triton code makes
(current device and stream, torch device, target, device properties, the
benchmarker and its L2-flush buffer), answered from tritium's own driver
(runtime/driver.py) and, where Triton hands out torch objects, from PyTorch.
`DriverConfig` keeps Triton's `set_active`/`reset_active`, which tests use
to put a fake driver in place."""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Callable

from .. import _core
from . import driver
from .bench import do_bench

# Triton's get_device_properties keys (and a few more) -> CUdevice_attribute (cuda.h)
DEVICE_ATTRIBUTES = {
    "max_shared_mem": 97,                  # per block, opt-in maximum
    "max_num_regs": 12,                    # per block
    "multiprocessor_count": 16,
    "warpSize": 10,
    "sm_clock_rate": 13,                   # kHz
    "mem_clock_rate": 36,                  # kHz
    "mem_bus_width": 37,                   # bits
    "max_threads_per_block": 1,
    "max_shared_mem_per_multiprocessor": 81,
    "max_regs_per_multiprocessor": 82,
    "l2_cache_size": 38,                   # bytes
}

# the L2 flush buffer: larger than any current GPU's L2 cache
BENCHMARK_FLUSH_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class GPUTarget:
    """Triton's target description: backend ("cuda"), arch (90), warp size."""
    backend: str
    arch: int | str
    warp_size: int

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"


class CudaUtils:
    """`driver.active.utils`: device properties."""

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def get_device_properties(device: int) -> dict[str, int]:
        return {name: _core.cuda_device_attribute(int(device), attr) for name, attr in DEVICE_ATTRIBUTES.items()}


def _torch() -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            raise RuntimeError("this needs PyTorch (torch.cuda), which is not installed") from None
    return torch


class CudaDriver:
    """The active driver on an NVIDIA machine."""
    backend = "cuda"

    def __init__(self) -> None:
        self.utils = CudaUtils()

    @staticmethod
    def is_active() -> bool:
        return driver.available()

    def get_current_device(self) -> int:
        return driver.current_device()

    def set_current_device(self, device: int) -> None:
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.cuda.set_device(device)
        elif int(device) != 0:
            raise RuntimeError("set_current_device: without PyTorch tritium launches on device 0")

    def get_current_stream(self, device: int | None = None) -> int:
        return driver.current_stream(self.get_current_device() if device is None else device)

    def get_device_capability(self, device: int | None = None) -> tuple[int, int]:
        return tuple(driver.device_info(self.get_current_device() if device is None else device)["capability"])

    def get_current_target(self) -> GPUTarget:
        major, minor = self.get_device_capability()
        return GPUTarget("cuda", major * 10 + minor, 32)

    def get_active_torch_device(self) -> Any:
        return _torch().device("cuda", self.get_current_device())

    def get_device_interface(self) -> Any:
        """What the benchmarkers time with: torch.cuda (Event, synchronize)."""
        return _torch().cuda

    def get_benchmarker(self) -> Callable[..., Any]:
        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        torch = _torch()
        return torch.empty(BENCHMARK_FLUSH_BYTES // 4, dtype=torch.int, device="cuda")

    def clear_cache(self, cache: Any) -> None:
        cache.zero_()

    def __repr__(self) -> str:
        return "tritium.runtime.device_api.CudaDriver()"


class DriverConfig:
    """Triton's `triton.runtime.driver`: `active` (created on first use),
    `default`, `set_active(driver)`, `reset_active()`."""

    def __init__(self) -> None:
        self._default: Any = None
        self._active: Any = None

    @property
    def default(self) -> Any:
        if self._default is None:
            ok, why = driver.status()
            if not ok:
                raise RuntimeError(f"0 active drivers: no CUDA GPU is usable ({why})")
            self._default = CudaDriver()
        return self._default

    @property
    def active(self) -> Any:
        if self._active is None:
            self._active = self.default
        return self._active

    def set_active(self, driver: Any) -> None:
        self._active = driver

    def reset_active(self) -> None:
        self._active = None


drivers = DriverConfig()
driver.register_drivers(drivers)   # `driver.active` etc., as Triton's driver module has them

__all__ = ["BENCHMARK_FLUSH_BYTES", "CudaDriver", "CudaUtils", "DEVICE_ATTRIBUTES", "DriverConfig", "GPUTarget",
           "drivers"]
