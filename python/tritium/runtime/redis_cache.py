"""The Redis cache backend: each entry one value (cache_backend.encode_entry)
under "tritium:<key>", and a build lock "tritium:<key>:lock" taken with
SET NX PX. The lock lives `lock_ttl` seconds and a keeper thread extends it
while this process still builds, so a process that dies mid-compile blocks
the others for at most `lock_ttl` (TRITIUM_REDIS_LOCK_TTL, default 10 s).

Redis is a shared convenience, never a dependency: when the server cannot
be reached or drops the connection, every call answers as a miss (and a
granted lock), one warning is printed per process, and the server is tried
again after a few seconds."""
from __future__ import annotations

import threading
import time
import uuid
import warnings
from typing import Any

from .cache_backend import CacheBackend, decode_entry, encode_entry
from .resp import RedisClient, RedisConnectionError, RedisError

# compare-and-delete / compare-and-extend: only the holder's token may touch the lock
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
_EXTEND = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) "
           "else return 0 end")

RETRY_AFTER_S = 5.0


class _Down(Exception):
    pass


class RedisCache(CacheBackend):
    name = "redis"

    def __init__(self, host: str = "localhost", port: int = 6379, password: str | None = None,
                 timeout: float = 2.0, lock_ttl: float = 10.0, prefix: str = "tritium:"):
        self.client = RedisClient(host, port, timeout=timeout, password=password)
        self.where = f"{host}:{port}"
        self.lock_ttl_ms = max(100, int(lock_ttl * 1000))
        self.prefix = prefix
        self._retry_at = 0.0
        self._warned = False
        self._held: dict[str, str] = {}          # lock key -> our token
        self._held_cv = threading.Condition()
        self._keeper: threading.Thread | None = None

    # -- outages ----------------------------------------------------------
    def _call(self, *args: Any) -> Any:
        if time.monotonic() < self._retry_at:
            raise _Down()
        try:
            return self.client.command(*args)
        except (RedisConnectionError, RedisError) as e:
            self._retry_at = time.monotonic() + RETRY_AFTER_S
            if not self._warned:
                self._warned = True
                warnings.warn(f"tritium cache: the redis cache at {self.where} is unavailable ({e}); kernels are "
                              "cached locally only until it is back", RuntimeWarning, stacklevel=4)
            raise _Down() from None

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._retry_at

    # -- entries ----------------------------------------------------------
    def get(self, key: str) -> dict[str, bytes] | None:
        try:
            blob = self._call("GET", self.prefix + key)
        except _Down:
            return None
        if blob is None:
            return None
        try:
            return decode_entry(blob)
        except ValueError as e:
            warnings.warn(f"tritium cache: dropping corrupt redis entry {self.prefix + key} ({e}); the kernel "
                          "will be recompiled", RuntimeWarning, stacklevel=3)
            self.drop(key)
            return None

    def put(self, key: str, files: dict[str, bytes]) -> None:
        try:
            self._call("SET", self.prefix + key, encode_entry(files))
        except _Down:
            pass

    def drop(self, key: str) -> None:
        try:
            self._call("DEL", self.prefix + key)
        except _Down:
            pass

    # -- build locks --------------------------------------------------------
    def acquire(self, key: str) -> tuple[bool, Any]:
        lock, token = self.prefix + key + ":lock", uuid.uuid4().hex
        try:
            got = self._call("SET", lock, token, "NX", "PX", self.lock_ttl_ms)
        except _Down:
            return True, None
        if got is None:
            return False, None
        with self._held_cv:
            self._held[lock] = token
            if self._keeper is None or not self._keeper.is_alive():
                self._keeper = threading.Thread(target=self._keep, name="tritium-redis-locks", daemon=True)
                self._keeper.start()
            self._held_cv.notify()
        return True, token

    def release(self, key: str, token: Any) -> None:
        if token is None:
            return
        lock = self.prefix + key + ":lock"
        with self._held_cv:
            self._held.pop(lock, None)
        try:
            self._call("EVAL", _RELEASE, 1, lock, token)
        except _Down:
            pass          # it expires by itself

    def locked(self, key: str) -> bool:
        try:
            return bool(self._call("EXISTS", self.prefix + key + ":lock"))
        except _Down:
            return False

    def _keep(self) -> None:
        """Extends every lock this process holds, a third of the TTL apart."""
        period = self.lock_ttl_ms / 3000
        while True:
            with self._held_cv:
                while not self._held:
                    if not self._held_cv.wait(timeout=30):
                        self._keeper = None
                        return
                held = list(self._held.items())
            for lock, token in held:
                try:
                    self._call("EVAL", _EXTEND, 1, lock, token, self.lock_ttl_ms)
                except _Down:
                    break
            time.sleep(period)


__all__ = ["RedisCache"]
