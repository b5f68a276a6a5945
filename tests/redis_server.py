"""A throwaway redis-server on a loopback port for the remote-cache tests
(Debian's `redis-server`, installed by scripts/setup.sh): no persistence,
started and stopped by the test that needs it."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time

from tritium.runtime.resp import RedisClient, RedisConnectionError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @staticmethod
    def binary() -> str | None:
        return shutil.which("redis-server")

    def start(self) -> "RedisServer":
        self.proc = subprocess.Popen([self.binary(), "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--save", "", "--appendonly", "no", "--protected-mode", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = RedisClient("127.0.0.1", self.port, timeout=0.5)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.command("PING")
                client.close()
                return self
            except RedisConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"redis-server did not start on port {self.port}")
                time.sleep(0.02)

    def stop(self) -> None:
        """Kills the server (SIGKILL: as a crash, nothing flushed)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def client(self) -> RedisClient:
        return RedisClient("127.0.0.1", self.port, timeout=2.0)
