"""Shared pytest set-up: the `gpu` marker (skipped without a CUDA device) and
the hypothesis profiles. GPU detection asks the CUDA driver library directly
through ctypes, so collection never imports torch or any other heavy package.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

import pytest

try:
    from hypothesis import settings as _hyp_settings
except ImportError:  # hypothesis is optional for running a subset of tests
    _hyp_settings = None

_ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

if _hyp_settings is not None:
    # Interpreted kernels are slow and their timing varies with machine load,
    # so a per-example deadline would only produce flaky failures.
    _hyp_settings.register_profile("dev", deadline=None)
    _hyp_settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True)
    _hyp_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if _ON_CI else "dev"))


@functools.lru_cache(maxsize=None)
def cuda_device_count() -> int:
    """Number of CUDA devices the driver reports; 0 when there is no driver."""
    names = ["libcuda.so.1", "libcuda.so"]
    found = ctypes.util.find_library("cuda")
    if found:
        names.append(found)
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        try:
            if lib.cuInit(0) != 0:
                return 0
            count = ctypes.c_int(0)
            if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
                return 0
            return count.value
        except AttributeError:
            return 0
    return 0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped without one)")
    config.addinivalue_line("markers", "hip: needs an AMD GPU with ROCm (skipped without one)")
    config.addinivalue_line("markers", "wheel: builds the manylinux_2_28 release wheel (scripts/build_wheel.sh) "
                            "and runs it in a fresh virtual environment")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items or cuda_device_count() > 0:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (libcuda missing or no device)")
    for item in gpu_items:
        item.add_marker(skip)
