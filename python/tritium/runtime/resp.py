"""A small Redis client speaking RESP2 over a socket: what the remote cache
needs (GET, SET with NX/PX, DEL, PEXPIRE, EVAL, PING, AUTH) and nothing
else. Our own rather than the `redis` package, because the machines that
share a cache (GPU nodes without network access to PyPI) have no extra
packages: only our wheel. One connection, serialized by a lock, so the
build-lock keeper thread and the launching thread can share it."""
from __future__ import annotations

import socket
import threading
from typing import Any


class RedisError(Exception):
    """An error reply from the server (its message is the server's)."""


class RedisConnectionError(OSError):
    """The server cannot be reached, closed the connection, or sent something
    that is not RESP: the connection is dropped and the next command redials."""


def encode_command(args: tuple) -> bytes:
    """A command as RESP: an array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        elif not isinstance(a, (bytes, bytearray, memoryview)):
            raise TypeError(f"redis command argument of type {type(a).__name__}")
        a = bytes(a)
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class _Reader:
    """Parses replies from a socket's byte stream."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise RedisConnectionError("the redis server closed the connection")
        self.buf += chunk

    def _line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            self._fill()
        if self.buf[n:n + 2] != b"\r\n":
            raise RedisConnectionError("malformed bulk string in a redis reply")
        data = bytes(self.buf[:n])
        del self.buf[:n + 2]
        return data

    def reply(self) -> Any:
        line = self._line()
        if not line:
            raise RedisConnectionError("empty line in a redis reply")
        kind, rest = line[:1], line[1:]
        try:
            if kind == b"+":
                return rest.decode()
            if kind == b"-":
                return RedisError(rest.decode(errors="replace"))
            if kind == b":":
                return int(rest)
            if kind == b"$":
                n = int(rest)
                return None if n < 0 else self._exact(n)
            if kind == b"*":
                n = int(rest)
                return None if n < 0 else [self.reply() for _ in range(n)]
        except ValueError:
            raise RedisConnectionError(f"malformed redis reply {line[:40]!r}") from None
        raise RedisConnectionError(f"unknown redis reply type {line[:40]!r}")


class RedisClient:
    """`command(*args)` sends one command and returns its reply: str for
    status replies, bytes or None for bulk strings, int, list. Raises
    RedisError for an error reply and RedisConnectionError (an OSError) when
    the server is gone; a timed-out or broken connection is closed, so a
    half-read reply is never taken for the next command's."""

    def __init__(self, host: str = "localhost", port: int = 6379, timeout: float = 2.0,
                 password: str | None = None):
        self.host, self.port, self.timeout, self.password = host, int(port), float(timeout), password
        self._sock: socket.socket | None = None
        self._reader: _Reader | None = None
        self._lock = threading.Lock()

    def _connect(self) -> _Reader:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as e:
            raise RedisConnectionError(f"cannot connect to redis at {self.host}:{self.port}: "
                                       f"{e.strerror or e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock, self._reader = sock, _Reader(sock)
        if self.password:
            reply = self._roundtrip(("AUTH", self.password))
            if isinstance(reply, RedisError):
                self.close()
                raise reply
        return self._reader

    def _roundtrip(self, args: tuple) -> Any:
        reader = self._reader if self._reader is not None else self._connect()
        try:
            self._sock.sendall(encode_command(args))
            return reader.reply()
        except RedisConnectionError:
            self.close()
            raise
        except OSError as e:     # timeouts, resets, broken pipes
            self.close()
            raise RedisConnectionError(f"redis at {self.host}:{self.port}: {e.strerror or e}") from None

    def command(self, *args: Any) -> Any:
        with self._lock:
            reply = self._roundtrip(args)
        if isinstance(reply, RedisError):
            raise reply
        return reply

    def close(self) -> None:
        sock, self._sock, self._reader = self._sock, None, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass


__all__ = ["RedisClient", "RedisConnectionError", "RedisError", "encode_command"]
