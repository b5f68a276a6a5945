"""tritium's environment settings, read in one place.

Settings are read from the environment each time they are needed (tests and
users set them after import), so each is a function. A flag is on when its
variable is 1, true, yes or on, in any case.
`knobs.py` offers the same variables as Triton's `triton.knobs`.
"""
from __future__ import annotations

import os
from pathlib import Path

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
