"""The disk cache and the in-memory table: keys (arch, options, sources of
reached @jit functions, specialization), atomic entries, corrupt and
truncated entries, TRITIUM_ALWAYS_COMPILE, concurrent writers."""
from __future__ import annotations

import importlib.util
import multiprocessing as mp
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime import cache
from tritium.runtime.specialization import specializer


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITIUM_ALWAYS_COMPILE", raising=False)
    return tmp_path / "cache"


@triton.jit
def helper_add(a, b):
    return a + b


@triton.jit
def kern(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, helper_add(tl.load(x_ptr + offs, mask=offs < n), 1.0), mask=offs < n)


def spec_text(fn, *args, **kw):
    s = specializer(fn)
    key, _, _ = s.bind(*args, **kw)
    return s.key_text(key)


def key_for(target="cuda:90", options=None, fn=kern, args=None):
    args = args or (np.zeros(64, np.float32), 64)
    return cache.kernel_key(fn, target, options or {"num_warps": 4, "num_stages": 3},
                            spec_text(fn, *args, BLOCK=64))


def test_put_get_roundtrip(cache_in_tmp):
    k = key_for()
    assert cache.get(k) is None
    files = {"kernel.ptx": b".version 8.0\n", "kernel.cubin": bytes(range(256)) * 10, "meta.json": b"{}"}
    path = cache.put(k, files)
    assert path == cache_in_tmp / k and path.is_dir()
    assert cache.get(k) == files
    assert not [p for p in cache_in_tmp.iterdir() if p.name.startswith(".")]   # no temp dirs left


def test_default_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("TRITIUM_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / ".cache" / "tritium"


def test_arch_is_in_the_key():
    k80, k90 = key_for("cuda:80"), key_for("cuda:90")
    assert k80 != k90
    cache.put(k80, {"kernel.cubin": b"sm_80 code"})
    assert cache.get(k90) is None                    # an sm_80 entry is never served for sm_90
    assert cache.get(k80) == {"kernel.cubin": b"sm_80 code"}


def test_options_and_specialization_are_in_the_key():
    base = key_for()
    assert key_for(options={"num_warps": 8, "num_stages": 3}) != base
    assert key_for(options={"num_stages": 3, "num_warps": 4}) == base      # order does not matter
    a = np.zeros(64, np.float32)
    assert key_for(args=(a[1:], 64)) != base                              # alignment differs
    assert key_for(args=(a, 63)) != base                                  # divisibility of n differs
    assert key_for(args=(np.zeros(64, np.float16), 64)) != base           # dtype differs
    s = specializer(kern)
    assert cache.kernel_key(kern, "cuda:90", {}, spec_text(kern, a, 64, BLOCK=128)) != \
        cache.kernel_key(kern, "cuda:90", {}, spec_text(kern, a, 64, BLOCK=64))
    assert s.key_text(s.bind(a, 64, BLOCK=64)[0]) == spec_text(kern, a, 64, BLOCK=64)


@pytest.mark.parametrize("switch", ["TRITIUM_DEBUG_NO_CROSS_CALL_BARRIER", "TRITIUM_DEBUG_NO_PROXY_FENCE", "TRITIUM_DEBUG_NO_LDMATRIX", "TRITIUM_TMA"])
def test_codegen_debug_switches_are_in_the_key(monkeypatch, switch):
    monkeypatch.delenv(switch, raising=False)
    base = key_for()
    monkeypatch.setenv(switch, "1")
    assert key_for() != base          # a debug build is never served to a normal run
    monkeypatch.setenv(switch, "")
    assert key_for() == base


def test_key_text_is_process_independent():
    code = ("import numpy as np, sys; sys.path.insert(0, %r); import test_cache as t; "
            "print(t.key_for())" % str(Path(__file__).parent))
    import subprocess
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == key_for()


def test_compiler_code_is_in_the_key(tmp_path):
    """The compiler's own hash (`compiler_version`) follows every .py file's
    bytes and path and each extension's size and modification time; files
    it does not read (bytecode, other suffixes) leave it as it was."""
    import os
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    (pkg / "sub" / "mod.py").write_text("def f():\n    return 1\n")
    (pkg / "_core.so").write_bytes(b"\x7fELF" + bytes(64))
    base = cache._code_digest(pkg)
    assert cache._code_digest(pkg) == base
    (pkg / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"junk")
    (pkg / "notes.txt").write_text("unrelated")
    assert cache._code_digest(pkg) == base
    (pkg / "sub" / "mod.py").write_text("def f():\n    return 2\n")    # same size, new bytes
    edited = cache._code_digest(pkg)
    assert edited != base
    (pkg / "sub" / "mod.py").rename(pkg / "sub" / "mod2.py")         # same bytes, new path
    moved = cache._code_digest(pkg)
    assert moved not in (base, edited)
    (pkg / "extra.py").write_text("")                                  # a new, empty source
    added = cache._code_digest(pkg)
    assert added not in (base, edited, moved)
    st = os.stat(pkg / "_core.so")                                     # a rebuilt extension
    os.utime(pkg / "_core.so", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert cache._code_digest(pkg) not in (base, edited, moved, added)
    # the real package: version first, then the digest of python/tritium
    v = cache.compiler_version()
    assert v == f"{triton.__version__}+{cache._code_digest(Path(cache.__file__).parent.parent)}"


def _load(tmp_path: Path, name: str, src: str):
    p = tmp_path / f"{name}.py"
    p.write_text(textwrap.dedent(src))
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


KERNEL_SRC = """
import tritium as triton
import tritium.language as tl
import {helpers} as h

@triton.jit
def inner(x):
    return h.twice(x) + OFFSET

@triton.jit
def k(p, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(p + o, inner(tl.load(p + o)))

OFFSET = 1
"""


def test_sources_of_reached_functions_are_in_the_key(tmp_path):
    h1 = _load(tmp_path, "h12_helpers_a", """
        import tritium as triton
        @triton.jit
        def twice(x):
            return x * 2
        """)
    h2 = _load(tmp_path, "h12_helpers_b", """
        import tritium as triton
        @triton.jit
        def twice(x):
            return x + x
        """)
    m1 = _load(tmp_path, "h12_kmod_a", KERNEL_SRC.format(helpers="h12_helpers_a"))
    m2 = _load(tmp_path, "h12_kmod_b", KERNEL_SRC.format(helpers="h12_helpers_b"))
    reached = {f.__qualname__ for f in cache.reached_functions(m1.k)}
    assert reached == {"k", "inner", "twice"}
    assert h1.twice in cache.reached_functions(m1.k)
    # same kernel source, different helper source: different digests
    assert m1.k.src == m2.k.src
    assert cache.source_digest(m1.k) != cache.source_digest(m2.k)
    a = np.zeros(16, np.float32)
    t1 = spec_text(m1.k, a, BLOCK=16)
    assert cache.kernel_key(m1.k, "cuda:90", {}, t1) != cache.kernel_key(m2.k, "cuda:90", {}, t1)
    assert h2.twice not in cache.reached_functions(m1.k)


def test_corrupt_entry_is_dropped_with_a_warning_and_rebuilt():
    k = key_for()
    path = cache.put(k, {"kernel.cubin": b"A" * 1000})
    data = bytearray((path / "kernel.cubin").read_bytes())
    data[500] ^= 0xFF
    (path / "kernel.cubin").write_bytes(bytes(data))
    builds = []
    with pytest.warns(RuntimeWarning, match=str(path).replace("\\", "\\\\") + ".*checksum"):
        got = cache.get_or_build(k, lambda: builds.append(1) or {"kernel.cubin": b"B" * 10})
    assert got == {"kernel.cubin": b"B" * 10} and builds == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(k) == {"kernel.cubin": b"B" * 10}                 # the rebuilt entry is valid


@pytest.mark.parametrize("damage", ["truncate", "delete_file", "manifest_garbage", "manifest_missing",
                                    "manifest_truncated"])
def test_truncated_or_incomplete_entries(damage):
    k = key_for()
    path = cache.put(k, {"kernel.ptx": b"x" * 4096, "meta.json": b'{"shared": 0}'})
    if damage == "truncate":
        (path / "kernel.ptx").write_bytes(b"x" * 100)
    elif damage == "delete_file":
        (path / "meta.json").unlink()
    elif damage == "manifest_garbage":
        (path / cache.MANIFEST).write_bytes(b"\x00\x01not json")
    elif damage == "manifest_missing":
        (path / cache.MANIFEST).unlink()
    else:
        m = (path / cache.MANIFEST).read_bytes()
        (path / cache.MANIFEST).write_bytes(m[: len(m) // 2])
    with pytest.warns(RuntimeWarning, match="dropping corrupt entry"):
        assert cache.get(k) is None
    assert not path.exists()
    assert cache.get(k) is None                      # gone: no second warning


def test_put_replaces_a_corrupt_entry_in_the_way():
    k = key_for()
    path = cache.put(k, {"a": b"1"})
    (path / "a").write_bytes(b"2")
    cache.put(k, {"a": b"3"})
    assert cache.get(k) == {"a": b"3"}


def test_always_compile_bypasses_reads(monkeypatch):
    k = key_for()
    cache.put(k, {"a": b"1"})
    monkeypatch.setenv("TRITIUM_ALWAYS_COMPILE", "1")
    assert cache.get(k) is None
    assert cache.get_or_build(k, lambda: {"a": b"2"}) == {"a": b"2"}
    monkeypatch.setenv("TRITIUM_ALWAYS_COMPILE", "0")
    assert cache.get(k) == {"a": b"2"}               # writes still happen


def test_bad_keys_and_names():
    with pytest.raises(ValueError, match="invalid cache key"):
        cache.get("../etc")
    with pytest.raises(ValueError, match="invalid cache file name"):
        cache.put(key_for(), {"../x": b""})
    with pytest.raises(ValueError, match="invalid cache file name"):
        cache.put(key_for(), {cache.MANIFEST: b""})
    with pytest.raises(TypeError, match="expected bytes"):
        cache.put(key_for(), {"a": "text"})


def _writer(args):
    cache_dir, key, barrier_state, i = args
    import os
    os.environ["TRITIUM_CACHE_DIR"] = cache_dir
    from tritium.runtime import cache as c
    files = {"kernel.cubin": b"K" * 200_000, "kernel.ptx": b"P" * 50_000, "meta.json": b"{}"}
    barrier_state.wait()
    path = c.put(key, files)
    return str(path), c.get(key) == files


def test_two_processes_write_the_same_key(cache_in_tmp):
    k = key_for()
    ctx = mp.get_context("spawn")
    with ctx.Manager() as m:
        barrier = m.Barrier(2)
        with ctx.Pool(2) as pool:
            results = pool.map(_writer, [(str(cache_in_tmp), k, barrier, i) for i in range(2)])
    assert [ok for _, ok in results] == [True, True]
    assert {p for p, _ in results} == {str(cache_in_tmp / k)}
    got = cache.get(k)
    assert got is not None and got["kernel.cubin"] == b"K" * 200_000
    assert sorted(p.name for p in cache_in_tmp.iterdir()) == [k]          # no temp or trash dirs left
