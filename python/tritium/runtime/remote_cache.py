"""Which remote cache backend the environment asks for, chosen as Triton
chooses its own: TRITON_REMOTE_CACHE_BACKEND (or TRITIUM_REMOTE_CACHE_BACKEND)
names "redis", Triton's "triton.runtime.cache:RedisRemoteCacheBackend", or
any "module:Class" implementing `cache_backend.CacheBackend`; the Redis
server is TRITON_REDIS_HOST / TRITON_REDIS_PORT (or the TRITIUM_ names)."""
from __future__ import annotations

import importlib
import warnings
from typing import Any

from .. import settings
from .cache_backend import CacheBackend
from .redis_cache import RedisCache

REDIS_NAMES = {"redis", "triton.runtime.cache:RedisRemoteCacheBackend",
               "tritium.runtime.cache:RedisRemoteCacheBackend", "tritium.runtime.redis_cache:RedisCache"}

_chosen: tuple[Any, Any] | None = None


def remote_backend() -> CacheBackend | None:
    """The remote backend the environment asks for (made once per value of
    the settings), or None. A name that cannot be loaded is warned about and
    ignored: a misconfigured cache never fails a launch."""
    global _chosen
    spec = settings.remote_cache_backend()
    where = (spec, settings.redis_address(), settings.redis_timeout(), settings.redis_lock_ttl())
    if _chosen is not None and _chosen[0] == where:
        return _chosen[1]
    backend = None
    if spec:
        try:
            backend = _make(spec)
        except Exception as e:  # noqa: BLE001  whatever the user's class raises
            warnings.warn(f"tritium cache: remote cache backend {spec!r} cannot be used ({type(e).__name__}: "
                          f"{e}); using the local cache only", RuntimeWarning, stacklevel=3)
            backend = None
    _chosen = (where, backend)
    return backend


def _make(spec: str) -> CacheBackend:
    if spec in REDIS_NAMES:
        host, port, password = settings.redis_address()
        return RedisCache(host, port, password=password, timeout=settings.redis_timeout(),
                          lock_ttl=settings.redis_lock_ttl())
    module, sep, cls = spec.partition(":")
    if not sep or not module or not cls:
        raise ValueError("expected 'redis' or 'module:Class'")
    backend = getattr(importlib.import_module(module), cls)()
    for method in ("get", "put"):
        if not callable(getattr(backend, method, None)):
            raise TypeError(f"{spec} has no {method}() method (see tritium.runtime.cache_backend.CacheBackend)")
    return _with_defaults(backend)


def _with_defaults(backend: Any) -> Any:
    """A user's backend that is not a CacheBackend subclass gets the
    interface's defaults for what it lacks (drop, locks)."""
    for name in ("drop", "acquire", "release", "locked"):
        if not callable(getattr(backend, name, None)):
            setattr(backend, name, getattr(CacheBackend(), name))
    if not hasattr(backend, "name"):
        backend.name = type(backend).__name__
    return backend


__all__ = ["REDIS_NAMES", "remote_backend"]
