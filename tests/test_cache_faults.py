"""Fault injection for the whole disk-cache path (`compiled.compiled_for`: key,
lookup, decode, compile, store): each fault is made on purpose in a temporary
cache directory, and every launch-to-be must still get the kernel a fresh
compile gives (the same PTX), with a warning where something was dropped and
never a raw OSError/AttributeError. Also the stale-key cases across two
processes (constexpr globals, closure cells). Needs no GPU: the kernels are
compiled to PTX; tests/gpu/test_cache_gpu.py runs them."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime import cache
from tritium.runtime import compiled as compiled_module
from tritium.runtime.specialization import specializer

SCALE = tl.constexpr(3.0)


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)


ARGS = (np.zeros(64, np.float32), 64)


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITIUM_ALWAYS_COMPILE", raising=False)
    cache._warned_dirs.clear()
    return tmp_path / "cache"


class Builds:
    """Counts real compiles (kernels given to compile_ir_many)."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = compiled_module.compile_ir_many

        def counting(jobs, *a, **k):
            self.count += len(jobs)
            return real(jobs, *a, **k)
        monkeypatch.setattr(compiled_module, "compile_ir_many", counting)


def compiled(fn=scale_kernel, args=ARGS):
    spec = specializer(fn, "cuda")
    key, _, _ = spec.bind(*args, BLOCK=64)
    return compiled_module.compiled_for(fn, spec, key, "cuda:90", 4, 3, None)


def entry_of(fn=scale_kernel, args=ARGS) -> Path:
    spec = specializer(fn, "cuda")
    key, _, _ = spec.bind(*args, BLOCK=64)
    options = {"num_warps": 4, "num_stages": 3, "debug": False}
    return cache.cache_dir() / cache.kernel_key(fn, "cuda:90", options, spec.key_text(key))


@pytest.fixture(scope="module")
def reference_ptx():
    """The PTX a fresh compile gives, with no cache involved."""
    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("TRITIUM_CACHE_DIR")
        os.environ["TRITIUM_CACHE_DIR"] = d
        try:
            return compiled().asm["ptx"]
        finally:
            if old is None:
                del os.environ["TRITIUM_CACHE_DIR"]
            else:
                os.environ["TRITIUM_CACHE_DIR"] = old


def run_recorded(fn=compiled):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = fn()
    return result, [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]


def test_a_clean_cache_compiles_once(monkeypatch, reference_ptx):
    builds = Builds(monkeypatch)
    for _ in range(3):
        k, warned = run_recorded()
        assert k.asm["ptx"] == reference_ptx and not warned
    assert builds.count == 1


MANIFEST_FAULTS = {
    "files is a list": {"files": []},
    "size is an int": {"files": {"kernel.ptx": 5}},
    "not an object": [1, 2, 3],
    "no file table": {"key": "x"},
    "size is a string": {"files": {"kernel.ptx": {"size": "12", "sha256": "00"}}},
    "bad file name": {"files": {"../escape": {"size": 0, "sha256": ""}}},
}


@pytest.mark.parametrize("fault", sorted(MANIFEST_FAULTS))
def test_malformed_manifest_is_dropped_and_rebuilt(fault, monkeypatch, reference_ptx):
    compiled()
    entry = entry_of()
    (entry / cache.MANIFEST).write_text(json.dumps(MANIFEST_FAULTS[fault]))
    builds = Builds(monkeypatch)
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx
    assert builds.count == 1 and len(warned) == 1 and "dropping corrupt entry" in warned[0]
    k, warned = run_recorded()                       # rebuilt for good: no more warnings or builds
    assert k.asm["ptx"] == reference_ptx and not warned and builds.count == 1


@pytest.mark.parametrize("metadata", [b"{not json", b"[]", b'{"name": 5}', b'"text"',
                                      json.dumps({"name": "k", "num_warps": 4, "params": 7,
                                                  "dynamic_shared": 0}).encode()])
def test_checksum_consistent_but_unreadable_metadata_is_replaced(metadata, monkeypatch, reference_ptx):
    """A broken writer's entry passes its checksums; it must still be
    replaced once, not recompiled silently on every launch."""
    files = compiled().to_files()
    files["metadata.json"] = metadata
    entry = entry_of()
    cache._remove(entry)
    cache.put(entry.name, files)
    builds = Builds(monkeypatch)
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx and builds.count == 1
    assert len(warned) == 1 and "do not decode" in warned[0]
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx and not warned and builds.count == 1


def test_entry_path_that_is_a_file(cache_in_tmp, monkeypatch, reference_ptx):
    cache_in_tmp.mkdir(parents=True)
    entry_of().write_bytes(b"not a directory")
    builds = Builds(monkeypatch)
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx and builds.count == 1 and len(warned) == 1
    assert entry_of().is_dir()
    assert not [p for p in cache_in_tmp.iterdir() if p.name.startswith(".")]   # no .trash-* left behind


def test_put_over_a_file_leaves_no_trash(cache_in_tmp):
    cache_in_tmp.mkdir(parents=True)
    key = "ab" * 32
    (cache_in_tmp / key).write_bytes(b"in the way")
    assert cache.put(key, {"kernel.ptx": b"x"}) == cache_in_tmp / key
    assert cache.get(key) == {"kernel.ptx": b"x"}
    assert sorted(p.name for p in cache_in_tmp.iterdir()) == [key]


@pytest.mark.parametrize("layout", ["dir is a file", "dir under a file"])
def test_cache_dir_that_is_a_file(layout, tmp_path, monkeypatch, reference_ptx):
    blocker = tmp_path / "blocker"
    blocker.write_bytes(b"a file")
    d = blocker if layout == "dir is a file" else blocker / "sub" / "cache"
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(d))
    builds = Builds(monkeypatch)
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx
    assert len(warned) == 1 and "TRITIUM_CACHE_DIR" in warned[0] and str(d) in warned[0]
    k, warned = run_recorded()                       # warned once per directory, still correct
    assert k.asm["ptx"] == reference_ptx and not warned and builds.count == 2


def test_read_only_cache_dir(cache_in_tmp, monkeypatch, reference_ptx):
    """Writes fail with EROFS (as on a read-only mount): the kernel runs
    uncached with one warning."""
    def read_only(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))
    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    builds = Builds(monkeypatch)
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx
    assert len(warned) == 1 and "Read-only file system" in warned[0]
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx and not warned and builds.count == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
def test_read_only_cache_dir_by_permissions(cache_in_tmp, reference_ptx):
    cache_in_tmp.mkdir(parents=True)
    cache_in_tmp.chmod(0o500)
    try:
        k, warned = run_recorded()
        assert k.asm["ptx"] == reference_ptx and len(warned) == 1
    finally:
        cache_in_tmp.chmod(0o700)


def test_entry_with_a_read_only_directory_in_the_way(cache_in_tmp, monkeypatch, reference_ptx):
    """A corrupt entry that cannot be removed: each launch compiles, none fails."""
    compiled()
    entry = entry_of()
    (entry / "kernel.ptx").write_bytes(b"garbage")
    monkeypatch.setattr(os, "rename", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EROFS, "Read-only")))
    for _ in range(2):
        k, warned = run_recorded()
        assert k.asm["ptx"] == reference_ptx


@pytest.mark.parametrize("damage", ["truncate ptx", "delete ptx", "delete manifest", "empty manifest"])
def test_damaged_files(damage, monkeypatch, reference_ptx):
    compiled()
    entry = entry_of()
    if damage == "truncate ptx":
        data = (entry / "kernel.ptx").read_bytes()
        (entry / "kernel.ptx").write_bytes(data[: len(data) // 2])
    elif damage == "delete ptx":
        (entry / "kernel.ptx").unlink()
    elif damage == "delete manifest":
        (entry / cache.MANIFEST).unlink()
    else:
        (entry / cache.MANIFEST).write_bytes(b"")
    builds = Builds(monkeypatch)
    k, warned = run_recorded()
    assert k.asm["ptx"] == reference_ptx and builds.count == 1 and len(warned) == 1


# -- stale keys across processes ------------------------------------------------

STALE_SCRIPT = """
import json, os, sys, warnings
import numpy as np
sys.path.insert(0, {here!r})
import tritium as triton
from tritium.runtime import compiled
from tritium.runtime.specialization import specializer
builds = []
real = compiled.compile_ir_many
compiled.compile_ir_many = lambda jobs, *a, **k: builds.extend(jobs) or real(jobs, *a, **k)
import {module} as m
fn = m.{kernel}
spec = specializer(fn, "cuda")
key, _, _ = spec.bind(np.zeros(64, np.float32), 64, BLOCK=64)
k = compiled.compiled_for(fn, spec, key, "cuda:90", 4, 3, None)
print(json.dumps({{"builds": len(builds), "ptx": k.asm["ptx"]}}))
"""

GLOBAL_MODULE = """
import os
import tritium as triton
import tritium.language as tl
SCALE = tl.constexpr(float(os.environ["S"]))

@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)
"""

CLOSURE_MODULE = """
import os
import tritium as triton
import tritium.language as tl

def make(c):
    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * c, mask=m)
    return kernel

made = make(float(os.environ["S"]))
"""


def _run_stale(tmp_path, source: str, kernel: str, scale: str) -> dict:
    mod = tmp_path / "stale_mod.py"
    mod.write_text(textwrap.dedent(source))
    script = STALE_SCRIPT.format(here=str(tmp_path), module="stale_mod", kernel=kernel)
    env = {**os.environ, "S": scale, "TRITIUM_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _float_in_ptx(value: float) -> str:
    return "0f" + np.float32(value).view(np.uint32).item().to_bytes(4, "big").hex().upper()


@pytest.mark.parametrize("source,kernel", [(GLOBAL_MODULE, "kernel"), (CLOSURE_MODULE, "made")],
                         ids=["constexpr global", "closure cell"])
def test_changed_captured_value_is_not_served_stale_across_processes(tmp_path, source, kernel):
    first = _run_stale(tmp_path, source, kernel, "3.0")
    second = _run_stale(tmp_path, source, kernel, "7.0")
    again = _run_stale(tmp_path, source, kernel, "3.0")
    assert first["builds"] == 1 and second["builds"] == 1 and again["builds"] == 0
    assert _float_in_ptx(3.0) in first["ptx"] and _float_in_ptx(7.0) not in first["ptx"]
    assert _float_in_ptx(7.0) in second["ptx"]
    assert again["ptx"] == first["ptx"]


def test_closure_factory_in_one_process(monkeypatch):
    path = Path(tempfile.mkdtemp()) / "factory_mod.py"
    path.write_text(textwrap.dedent(CLOSURE_MODULE))
    monkeypatch.setenv("S", "1.0")
    sys.path.insert(0, str(path.parent))
    try:
        import factory_mod
        builds = Builds(monkeypatch)
        two, five = factory_mod.make(2.5), factory_mod.make(5.5)
        p2, p5 = compiled(two).asm["ptx"], compiled(five).asm["ptx"]
        assert builds.count == 2
        assert _float_in_ptx(2.5) in p2 and _float_in_ptx(5.5) in p5
        assert compiled(factory_mod.make(2.5)).asm["ptx"] == p2 and builds.count == 2   # same value: a hit
    finally:
        sys.path.remove(str(path.parent))
        sys.modules.pop("factory_mod", None)


def test_global_changed_in_process_is_an_error(monkeypatch):
    """As Triton: a kernel compiled with one value of a global must not be
    compiled again (another specialization) with another."""
    compiled()
    monkeypatch.setattr(sys.modules[__name__], "SCALE", tl.constexpr(4.0))
    with pytest.raises(RuntimeError, match=r"'SCALE'.*changed after kernel 'scale_kernel' was compiled.*3\.0.*4\.0"):
        compiled(args=(np.zeros(64, np.float16), 64))


x_local_shadow = np.zeros(4)   # a module global with the name a kernel binds locally


@triton.jit
def shadowing_kernel(p, n, BLOCK: tl.constexpr):
    x_local_shadow = tl.load(p + tl.arange(0, BLOCK))
    tl.store(p + tl.arange(0, BLOCK), x_local_shadow * 2)


def test_names_the_kernel_binds_are_not_globals(monkeypatch):
    """Triton's tutorials bind `a`, `output`... in kernels while the module
    has torch tensors of those names: those globals are no dependency."""
    from tritium.runtime import dependencies
    refs = {c[0] for c in dependencies._references(shadowing_kernel)}
    assert "x_local_shadow" not in refs and "p" not in refs
    monkeypatch.setattr(sys.modules[__name__], "x_local_shadow", np.ones(4))
    dependencies.check_unchanged(shadowing_kernel)   # no error: not read by the kernel
