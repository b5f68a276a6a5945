"""The remote (Redis) cache against a real redis-server on a loopback port:
eight processes asking for the same twenty kernels compile each once; a
server killed mid-run costs nothing but a warning; corrupt values are
recompiled; a dead process's build lock expires; Triton's environment
variables select the backend. Kernels are compiled with `warmup` (PTX and
cubin, no GPU needed)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime import cache, cache_backend, redis_cache, remote_cache
from tritium.runtime.resp import RedisClient, RedisConnectionError, RedisError, encode_command

from redis_server import RedisServer, free_port

pytestmark = pytest.mark.skipif(RedisServer.binary() is None,
                                reason="redis-server is not installed (scripts/setup.sh installs it)")

KERNEL_MODULE = textwrap.dedent('''
    import tritium as triton
    import tritium.language as tl

    @triton.jit
    def scaled(x_ptr, out_ptr, n, S: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * S, mask=m)
''')

WORKER = textwrap.dedent('''
    import hashlib, json, random, sys
    sys.path.insert(0, sys.argv[1])
    import tritium as triton
    import tritium.language as tl
    from tritium.runtime import cache
    import remote_kernels
    order = list(range(int(sys.argv[3])))
    random.Random(int(sys.argv[2])).shuffle(order)
    f32 = triton.MockTensor(tl.float32)
    ptx = {}
    for s in order:
        k = remote_kernels.scaled.warmup(f32, f32, 1024, S=s, BLOCK=128)
        ptx[s] = hashlib.sha256(k.asm["ptx"].encode()).hexdigest()
        print("compiled", s, flush=True)
    print(json.dumps({"stats": cache.stats, "ptx": ptx}), flush=True)
''')


@pytest.fixture
def server():
    s = RedisServer().start()
    yield s
    s.stop()


@pytest.fixture
def kernels_dir(tmp_path):
    d = tmp_path / "mod"
    d.mkdir()
    (d / "remote_kernels.py").write_text(KERNEL_MODULE)
    (d / "worker.py").write_text(WORKER)
    return d


def remote_env(port: int, cache_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITON_", "TRITIUM_"))}
    env.update(TRITIUM_CACHE_DIR=str(cache_dir), TRITIUM_REMOTE_CACHE_BACKEND="redis",
               TRITIUM_REDIS_HOST="127.0.0.1", TRITIUM_REDIS_PORT=str(port))
    return env


@pytest.fixture
def use_remote(monkeypatch, tmp_path):
    """This process on the remote cache at `port`, with a fresh local cache."""
    def on(port: int, local: str = "local") -> Path:
        d = tmp_path / local
        for k, v in remote_env(port, d).items():
            if k.startswith("TRITIUM_"):
                monkeypatch.setenv(k, v)
        monkeypatch.delenv("TRITIUM_ALWAYS_COMPILE", raising=False)
        for k in cache.stats:
            monkeypatch.setitem(cache.stats, k, 0)
        return d
    return on


@pytest.fixture
def scaled(kernels_dir, monkeypatch):
    monkeypatch.syspath_prepend(str(kernels_dir))
    sys.modules.pop("remote_kernels", None)
    import remote_kernels
    yield remote_kernels.scaled
    sys.modules.pop("remote_kernels", None)


F32 = triton.MockTensor(tl.float32)


def compile_scaled(kernel, s: int):
    return kernel.warmup(F32, F32, 1024, S=s, BLOCK=128)


# -- the client ---------------------------------------------------------------

def test_resp_client_round_trips_binary_values(server):
    c = server.client()
    blob = bytes(range(256)) + b"\r\n$3\r\n" * 3
    assert c.command("SET", "k", blob) == "OK"
    assert c.command("GET", "k") == blob
    assert c.command("GET", "missing") is None
    assert c.command("SET", "k", "x", "NX") is None
    assert c.command("INCR", "n") == 1
    assert c.command("KEYS", "*") in (["k", "n"], [b"k", b"n"], [b"n", b"k"])
    with pytest.raises(RedisError, match="wrong number of arguments"):
        c.command("GET")
    assert c.command("PING") == "PONG"            # the connection survived the error reply
    assert encode_command(("GET", "k")) == b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"


def test_resp_client_reports_a_dead_server():
    c = RedisClient("127.0.0.1", free_port(), timeout=0.5)
    with pytest.raises(RedisConnectionError, match="cannot connect"):
        c.command("PING")


# -- many processes, one compile each ---------------------------------------------

def test_eight_processes_compile_each_of_twenty_kernels_once(server, kernels_dir, tmp_path):
    procs = [subprocess.Popen([sys.executable, str(kernels_dir / "worker.py"), str(kernels_dir), str(seed), "20"],
                              env=remote_env(server.port, tmp_path / f"local{seed}"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in range(8)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    builds = [r["stats"]["builds"] for r in results]
    assert sum(builds) == 20, builds
    assert all(r["stats"]["remote_hits"] + r["stats"]["builds"] == 20 for r in results)
    assert all(r["ptx"] == results[0]["ptx"] for r in results)       # every process got the same kernels
    assert len(set(results[0]["ptx"].values())) == 20


# -- outages --------------------------------------------------------------------

def test_redis_killed_mid_run_fails_no_compile(server, kernels_dir, tmp_path):
    p = subprocess.Popen([sys.executable, str(kernels_dir / "worker.py"), str(kernels_dir), "1", "20"],
                         env=remote_env(server.port, tmp_path / "local"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for _ in range(5):
        assert p.stdout.readline().startswith("compiled")
    server.stop()
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert len(result["ptx"]) == 20 and result["stats"]["builds"] == 20
    assert err.count("is unavailable") == 1, err


def test_outage_then_recovery_in_one_process(server, use_remote, scaled, monkeypatch):
    monkeypatch.setattr(redis_cache, "RETRY_AFTER_S", 0.0)
    local = use_remote(server.port)
    compile_scaled(scaled, 0)
    port = server.port
    server.stop()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for s in (1, 2, 3):
            compile_scaled(scaled, s)
    assert len([x for x in w if "unavailable" in str(x.message)]) == 1
    assert cache.stats["builds"] == 4 and len([p for p in local.iterdir() if not p.name.startswith(".")]) == 4
    again = RedisServer(port).start()
    try:
        compile_scaled(scaled, 4)                   # back: stored remotely again
        assert len(again.client().command("KEYS", "tritium:*")) == 1
    finally:
        again.stop()


def test_unreachable_redis_warns_once_and_compiles(use_remote, scaled):
    use_remote(free_port())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for s in (0, 1):
            compile_scaled(scaled, s)
    assert len([x for x in w if "unavailable" in str(x.message)]) == 1
    assert cache.stats["builds"] == 2


# -- bad values and dead builders ---------------------------------------------------

def test_corrupt_values_are_recompiled(server, use_remote, scaled):
    use_remote(server.port, "first")
    ptx = compile_scaled(scaled, 7).asm["ptx"]
    c = server.client()
    (key,) = c.command("KEYS", "tritium:*")
    for bad, why in ((b"garbage", "corrupt redis entry"),
                     (cache_backend.encode_entry({"metadata.json": b"{}"}), "do not decode")):
        c.command("SET", key, bad)
        use_remote(server.port, f"fresh-{len(bad)}")       # another machine: its disk cache is empty
        with pytest.warns(RuntimeWarning, match=why):
            assert compile_scaled(scaled, 7).asm["ptx"] == ptx
        assert cache.stats["builds"] == 1
        assert "metadata.json" in cache_backend.decode_entry(c.command("GET", key))   # replaced by a good one


def test_a_dead_builders_lock_expires(server, use_remote, scaled):
    use_remote(server.port, "first")
    compile_scaled(scaled, 3)
    c = server.client()
    (key,) = c.command("KEYS", "tritium:*")
    c.command("FLUSHALL")
    c.command("SET", (key.decode() if isinstance(key, bytes) else key) + ":lock", "a-dead-process", "PX", 600)
    use_remote(server.port, "second")
    t = time.monotonic()
    compile_scaled(scaled, 3)
    assert time.monotonic() - t >= 0.5 and cache.stats["builds"] == 1 and cache.stats["waited"] == 1


# -- choosing the backend ---------------------------------------------------------

def test_tritons_variables_select_redis(server, monkeypatch):
    for k in ("TRITIUM_REMOTE_CACHE_BACKEND", "TRITIUM_REDIS_HOST", "TRITIUM_REDIS_PORT"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("TRITON_REMOTE_CACHE_BACKEND", "triton.runtime.cache:RedisRemoteCacheBackend")
    monkeypatch.setenv("TRITON_REDIS_HOST", "127.0.0.1")
    monkeypatch.setenv("TRITON_REDIS_PORT", str(server.port))
    b = remote_cache.remote_backend()
    assert isinstance(b, redis_cache.RedisCache) and b.where == f"127.0.0.1:{server.port}"
    b.put("ab12", {"x": b"1"})
    assert b.get("ab12") == {"x": b"1"}
    monkeypatch.setenv("TRITON_REMOTE_CACHE_BACKEND", "no_such_module:Backend")
    with pytest.warns(RuntimeWarning, match="cannot be used"):
        assert remote_cache.remote_backend() is None


def test_tuning_results_are_shared_through_redis(server, use_remote):
    @triton.jit
    def kern(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    ran = []
    kern.run = lambda *a, grid, **kw: ran.append(kw["BLOCK"])
    configs = [triton.Config({"BLOCK": b}) for b in (16, 32)]
    use_remote(server.port, "machine-a")
    a = triton.autotune(configs, key=["n"], cache_results=True,
                        do_bench=lambda fn, quantiles: fn() or [{16: 2.0, 32: 1.0}[ran[-1]]] * 3)(kern)
    a[(1,)](F32, 10)
    use_remote(server.port, "machine-b")
    b = triton.autotune(configs, key=["n"], cache_results=True,
                        do_bench=lambda fn, quantiles: pytest.fail("tuned again"))(kern)
    b[(1,)](F32, 10)
    assert b.best_config.kwargs == {"BLOCK": 32} and cache.stats["remote_hits"] == 1
