"""`triton.knobs` for the settings tritium has. tritium reads its settings
from the environment each time it needs them, so a knob is a view of its
environment variable: reading gives the variable's value (or the default),
assigning sets the variable (None unsets it). `knobs.<group>.scope()`
restores a group's variables when the block ends, as in Triton."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any, Iterator

from .runtime import driver
from .settings import is_true

class _EnvKnob:
    """One setting: the variables that set it (the first is the one
    assignment writes), how to read it, and its default."""

    def __init__(self, *names: str, kind: type = str, default: Any = None):
        self.names, self.kind, self.default = names, kind, default

    def __set_name__(self, owner: type, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        for name in self.names:
            raw = os.environ.get(name)
            if raw is not None and (self.kind is not bool or raw.strip()):
                return is_true(raw.strip()) if self.kind is bool else self.kind(raw)
        return self.default() if callable(self.default) else self.default

    def __set__(self, obj: Any, value: Any) -> None:
        for name in self.names:
            os.environ.pop(name, None)
        if value is not None:
            os.environ[self.names[0]] = ("1" if value else "0") if self.kind is bool else str(value)


class _Group:
    def knobs(self) -> dict[str, _EnvKnob]:
        return {k: v for cls in reversed(type(self).__mro__) for k, v in vars(cls).items()
                if isinstance(v, _EnvKnob)}

    @contextlib.contextmanager
    def scope(self) -> Iterator["_Group"]:
        """Changes made to this group inside the block are undone after it."""
        names = [n for knob in self.knobs().values() for n in knob.names]
        saved = {n: os.environ.get(n) for n in names}
        try:
            yield self
        finally:
            for n, v in saved.items():
                if v is None:
                    os.environ.pop(n, None)
                else:
                    os.environ[n] = v

    def reset(self) -> "_Group":
        """Every knob of the group back to its default (its variables unset)."""
        for knob in self.knobs().values():
            knob.__set__(self, None)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self.knobs())})"


def _default_cache_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".cache", "tritium")


class cache_knobs(_Group):
    dir = _EnvKnob("TRITIUM_CACHE_DIR", default=_default_cache_dir)
    # the remote cache (runtime/remote_cache.py): "redis" or "module:Class"
    remote_cache_backend = _EnvKnob("TRITIUM_REMOTE_CACHE_BACKEND", "TRITON_REMOTE_CACHE_BACKEND")
    redis_host = _EnvKnob("TRITIUM_REDIS_HOST", "TRITON_REDIS_HOST", default="localhost")
    redis_port = _EnvKnob("TRITIUM_REDIS_PORT", "TRITON_REDIS_PORT", kind=int, default=6379)


class compilation_knobs(_Group):
    always_compile = _EnvKnob("TRITIUM_ALWAYS_COMPILE", kind=bool, default=False)
    allow_non_constexpr_globals = _EnvKnob("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", kind=bool, default=False)


class runtime_knobs(_Group):
    interpret = _EnvKnob("TRITIUM_INTERPRET", "TRITON_INTERPRET", kind=bool, default=False)
    debug = _EnvKnob("TRITIUM_DEBUG", "TRITON_DEBUG", kind=bool, default=False)


class interpreter_knobs(_Group):
    """tritium's own: how the NumPy interpreter runs (docs/debugging.md)."""
    batch = _EnvKnob("TRITIUM_INTERPRET_BATCH", kind=bool, default=True)
    sanitize_races = _EnvKnob("TRITIUM_SANITIZE_RACES", kind=bool, default=False)


@dataclass(frozen=True)
class NvidiaTool:
    path: str
    version: str


class nvidia_knobs(_Group):
    ptxas_path = _EnvKnob("TRITIUM_PTXAS")
    libdevice_path = _EnvKnob("TRITIUM_LIBDEVICE_PATH", "TRITON_LIBDEVICE_PATH")

    @property
    def ptxas(self) -> NvidiaTool | None:
        """The ptxas tritium uses (TRITIUM_PTXAS, PATH, pip's nvidia wheels), or None."""
        path = driver.ptxas_path()
        return NvidiaTool(path, driver.ptxas_version() or "") if path else None

    @ptxas.setter
    def ptxas(self, path: str | None) -> None:
        type(self).ptxas_path.__set__(self, path)


class autotuning_knobs(_Group):
    print = _EnvKnob("TRITIUM_PRINT_AUTOTUNING", "TRITON_PRINT_AUTOTUNING", kind=bool, default=False)
    cache = _EnvKnob("TRITIUM_CACHE_AUTOTUNING", "TRITON_CACHE_AUTOTUNING", kind=bool, default=False)


cache = cache_knobs()
compilation = compilation_knobs()
runtime = runtime_knobs()
interpreter = interpreter_knobs()
nvidia = nvidia_knobs()
autotuning = autotuning_knobs()

__all__ = ["NvidiaTool", "autotuning", "cache", "compilation", "interpreter", "nvidia", "runtime"]
