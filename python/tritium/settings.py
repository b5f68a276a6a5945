"""tritium's environment settings, read in one place.

Settings are read from the environment each time they are needed (tests and
users set them after import), so each is a function. A flag is on when its
variable is 1, true, yes or on, in any case.
`knobs.py` offers the same variables as Triton's `triton.knobs`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

TRUE = ("1", "true", "yes", "on")


def is_true(raw: str) -> bool:
    # as the Rust launch path reads TRITIUM_INTERPRET (_core.interpret_requested)
    return raw.lower() in TRUE


def flag(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    return default if raw is None else is_true(raw)


# os.environ[...] encodes its key on every lookup; the launch path checks the
# interpreter flag on every launch (~1.8 us that way), so its keys are encoded
# once and read from the mapping os.environ keeps its (encoded) contents in.
_ENV_DATA = os.environ._data
_INTERPRET_KEYS = tuple(os.environ.encodekey(k) for k in ("TRITIUM_INTERPRET", "TRITON_INTERPRET"))


def interpret_requested() -> bool:
    """TRITIUM_INTERPRET / TRITON_INTERPRET: run kernels in the interpreter."""
    for key in _INTERPRET_KEYS:
        v = _ENV_DATA.get(key)
        if v is not None and is_true(os.environ.decodevalue(v)):
            return True
    return False


def debug_requested(option: bool | None, jit_debug: bool | None) -> bool:
    """Triton's debug mode (keeps device_assert): the launch option, else
    `jit(debug=...)`, and TRITON_DEBUG=1 / TRITIUM_DEBUG=1 turn it on everywhere."""
    if flag("TRITIUM_DEBUG") or flag("TRITON_DEBUG"):
        return True
    return bool(option if option is not None else jit_debug)


def fp_fusion_requested(option: Any) -> bool:
    """Triton's `enable_fp_fusion` (default True): float add, sub and mul may
    fuse into fma (`a * b + c` rounded once). Only True, False or None
    (the default) are accepted, so a typo never silently changes rounding."""
    if option is None:
        return True
    if isinstance(option, bool) or type(option).__name__ == "bool_":
        return bool(option)
    raise TypeError(f"enable_fp_fusion must be True or False, got {option!r}")


def interpret_shuffle() -> bool:
    """TRITIUM_INTERPRET_SHUFFLE: run programs in a random order."""
    return flag("TRITIUM_INTERPRET_SHUFFLE")


def interpret_batch() -> bool:
    """TRITIUM_INTERPRET_BATCH (on by default): many programs per NumPy step."""
    return flag("TRITIUM_INTERPRET_BATCH", default=True)


def sanitize_races() -> bool:
    """TRITIUM_SANITIZE_RACES: report data races between interpreted programs."""
    return flag("TRITIUM_SANITIZE_RACES")


def allow_non_constexpr_globals() -> bool:
    """TRITON_ALLOW_NON_CONSTEXPR_GLOBALS: kernels may read any global."""
    return flag("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS")


def always_compile() -> bool:
    """TRITIUM_ALWAYS_COMPILE: compile even when the disk cache has the kernel."""
    return flag("TRITIUM_ALWAYS_COMPILE")


def cache_dir() -> Path:
    """TRITIUM_CACHE_DIR, else ~/.cache/tritium."""
    d = os.environ.get("TRITIUM_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "tritium"


def ptxas_choice() -> str:
    """TRITIUM_PTXAS: a ptxas path; empty or unset means search for one."""
    return os.environ.get("TRITIUM_PTXAS", "")


# -- the remote cache (runtime/remote_cache.py) and autotuning ------------------
# Triton's TRITON_* names work; tritium's TRITIUM_* names win when both are set.

def _either(name: str, default: str | None = None) -> str | None:
    for prefix in ("TRITIUM_", "TRITON_"):
        v = os.environ.get(prefix + name)
        if v and v.strip():
            return v.strip()
    return default


def _number(name: str, default: float) -> float:
    raw = _either(name)
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        raise ValueError(f"TRITIUM_{name}/TRITON_{name} must be a number, got {raw!r}") from None


def remote_cache_backend() -> str | None:
    """TRITIUM_/TRITON_REMOTE_CACHE_BACKEND: "redis", Triton's
    "triton.runtime.cache:RedisRemoteCacheBackend", or "module:Class"."""
    return _either("REMOTE_CACHE_BACKEND")


def redis_address() -> tuple[str, int, str | None]:
    """(host, port, password): TRITIUM_/TRITON_REDIS_HOST (localhost),
    _REDIS_PORT (6379), TRITIUM_REDIS_PASSWORD."""
    return _either("REDIS_HOST", "localhost"), int(_number("REDIS_PORT", 6379)), _either("REDIS_PASSWORD")


def redis_timeout() -> float:
    """TRITIUM_REDIS_TIMEOUT: seconds a Redis call may take (2)."""
    return _number("REDIS_TIMEOUT", 2.0)


def redis_lock_ttl() -> float:
    """TRITIUM_REDIS_LOCK_TTL: seconds a dead builder's lock outlives it (10)."""
    return _number("REDIS_LOCK_TTL", 10.0)


def remote_cache_wait() -> float:
    """TRITIUM_REMOTE_CACHE_WAIT: seconds to wait for another process's build (60)."""
    return _number("REMOTE_CACHE_WAIT", 60.0)


def print_autotuning() -> bool:
    """TRITIUM_/TRITON_PRINT_AUTOTUNING: print each tuning's choice and timings."""
    return flag("TRITIUM_PRINT_AUTOTUNING") or flag("TRITON_PRINT_AUTOTUNING")


def cache_autotuning() -> bool:
    """TRITIUM_/TRITON_CACHE_AUTOTUNING: keep every autotuner's choice (cache_results)."""
    return flag("TRITIUM_CACHE_AUTOTUNING") or flag("TRITON_CACHE_AUTOTUNING")


def autotune_progress() -> bool:
    """TRITIUM_AUTOTUNE_PROGRESS (on by default): the progress line of long tunings."""
    return flag("TRITIUM_AUTOTUNE_PROGRESS", default=True)
