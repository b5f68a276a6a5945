"""AOT compilation without a GPU: tritium.compile's artefacts and metadata,
ptxas discovery and its resource report, the CLI, and the JIT launcher's
key → table → disk cache → compile path with the launch itself recorded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.compile import CompiledKernel, Target, compile as tcompile
from tritium.runtime import driver

HAS_PTX = hasattr(_core, "compile_ptx")
needs_ptx = pytest.mark.skipif(not HAS_PTX, reason="the extension has no compile_ptx")
needs_ptxas = pytest.mark.skipif(driver.ptxas_path() is None, reason="no ptxas found")


@tritium.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x + y * alpha, mask=m)


SIG = "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32,alpha=fp32"


def test_target_parsing():
    # a 9.0 device is compiled for as sm_90a (wgmma), as Triton does
    assert Target.parse("cuda:90").codegen_arch == "sm_90a"
    assert Target.parse("cuda:90").sass_arch == "sm_90a"
    assert Target.parse("cuda:90a").codegen_arch == "sm_90a"
    assert Target.parse("cuda:86").codegen_arch == "sm_80"
    assert Target.parse("cuda:86").sass_arch == "sm_86"
    assert Target.parse("cuda:100").codegen_arch == "sm_90"
    for bad in ("hip:90", "cuda:", "cuda:xx", "cuda:70"):
        with pytest.raises(ValueError):
            Target.parse(bad)


@needs_ptx
def test_compile_gives_ir_llir_ptx_and_metadata():
    ck = tcompile(add_kernel, signature=SIG, constexprs={"BLOCK": 1024}, num_warps=4)
    assert ck.asm["ir"].startswith("func @add_kernel")
    assert ".entry add_kernel" in ck.asm["ptx"]
    assert "define" in ck.asm["llir"]
    m = ck.metadata
    assert m["num_warps"] == 4 and m["name"] == "add_kernel" and m["target"] == "cuda:90"
    assert m["params"] == [["x_ptr", "ptr"], ["y_ptr", "ptr"], ["out_ptr", "ptr"], ["n", "int32"],
                           ["alpha", "fp32"], ["BLOCK", None]]
    assert ".maxntid 128" in ck.asm["ptx"]


@needs_ptx
def test_attrs_reach_the_ir_and_vectorize():
    plain = tcompile(add_kernel, signature=SIG, constexprs={"BLOCK": 1024})
    aligned = tcompile(add_kernel, signature=SIG, constexprs={"BLOCK": 1024},
                       attrs={"divisibility": ["x_ptr", "y_ptr", "out_ptr", "n"]})
    assert "divisibility" in aligned.asm["ir"] and "divisibility" not in plain.asm["ir"]
    assert "ld.global.v4.f32" in aligned.asm["ptx"]


@needs_ptx
@needs_ptxas
def test_ptxas_cubin_and_resource_report():
    ck = tcompile(add_kernel, signature=SIG, constexprs={"BLOCK": 1024}, target="cuda:80")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert isinstance(ck.metadata["registers"], int) and ck.metadata["registers"] > 0
    assert ck.metadata["spills"] == 0 and ck.metadata["ptxas"]


@needs_ptx
def test_files_roundtrip():
    ck = tcompile(add_kernel, signature=SIG, constexprs={"BLOCK": 256})
    back = CompiledKernel.from_files(ck.to_files())
    assert back.asm["ptx"] == ck.asm["ptx"] and back.metadata == ck.metadata
    assert back.asm.get("cubin") == ck.asm.get("cubin")


def test_bad_signature_is_a_clear_error():
    with pytest.raises(TypeError, match="out_ptr"):
        tcompile(add_kernel, signature="x_ptr=*fp32,y_ptr=*fp32", constexprs={"BLOCK": 16})
    with pytest.raises(ValueError, match="name=type"):
        tcompile(add_kernel, signature="x_ptr=*fp32,=i32", constexprs={"BLOCK": 16})
    with pytest.raises(TypeError, match="@jit"):
        tcompile(lambda: None)


def test_ptxas_env_override(tmp_path, monkeypatch):
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 99.9, V99.9.1'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TRITIUM_PTXAS", str(fake))
    assert driver.ptxas_path() == str(fake)
    assert driver.ptxas_version() == "Cuda compilation tools, release 99.9, V99.9.1"
    monkeypatch.setenv("TRITIUM_PTXAS", str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="not an executable"):
        driver.ptxas_path()


def test_ptxas_failure_names_the_kernel(tmp_path):
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho 'ptxas fatal: something broke' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(_core.PtxasError, match="(?s)'k'.*something broke"):
        _core.ptxas_compile(str(fake), ".version 8.0", "sm_90", "k")


def test_no_driver_is_graceful():
    ok, why = _core.cuda_driver_status()
    if ok:
        pytest.skip("this machine has a CUDA driver")
    assert "no CUDA driver found" in why
    with pytest.raises(_core.CudaUnavailableError, match="no CUDA driver"):
        _core.cuda_device_count()
    with pytest.raises(_core.CudaUnavailableError):
        _core.CudaKernel(".version 8.0", "k", [("x", "ptr")])


def test_cuda_kernel_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="fp8e4nv"):
        _core.CudaKernel(".version 8.0", "k", [("x", "fp8e4nv")])


def test_launch_without_gpu_keeps_the_ir_error(monkeypatch):
    if driver.available():
        pytest.skip("this machine has a GPU")
    import numpy as np
    x = np.zeros(16, np.float32)
    with pytest.raises(RuntimeError, match="TRITIUM_INTERPRET=1"):
        add_kernel[(1,)](x, x, x, 16, 1.0, BLOCK=16)


# -- the launcher, with the device faked ----------------------------------------

class _FakeTensor:
    def __init__(self, addr, dtype="float32"):
        import numpy as np
        self.addr, self.dtype, self.ndim = addr, np.dtype(dtype), 1

    def data_ptr(self):
        return self.addr


class _Recorder:
    def __init__(self, compiled):
        self.compiled, self.launches = compiled, []

    def launch(self, gx, gy, gz, stream, args):
        self.launches.append(((gx, gy, gz), stream, args))


@needs_ptx
def test_launcher_compiles_once_caches_and_launches(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(driver, "available", lambda: True)
    monkeypatch.setattr(driver, "target_for", lambda device: "cuda:90")
    loads = []

    def fake_load(self, device=0):
        loads.append(self)
        return _Recorder(self)
    monkeypatch.setattr(CompiledKernel, "load", fake_load)

    @tritium.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x, y = _FakeTensor(4096), _FakeTensor(8192)
    r1 = k[(4,)](x, y, 100, BLOCK=32)
    r2 = k[lambda meta: (meta["n"] // meta["BLOCK"],)](x, y, 64, BLOCK=32, stream=7)
    assert r1 is not r2 or len(loads) == 1
    assert len(loads) == 2      # n=100 and n=64 differ in divisibility: two specializations
    assert r1.launches == [((4, 1, 1), 0, (x, y, 100, 32))]
    assert r2.launches[-1] == ((2, 1, 1), 7, (x, y, 64, 32))
    assert "divisibility" in r2.compiled.asm["ir"]
    k[(4,)](x, y, 100, BLOCK=32)
    assert len(loads) == 2 and len(r1.launches) == 2     # in-memory table hit
    entries = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert len(entries) == 2
    # a fresh launcher (new process, in effect) finds the disk entry instead of compiling
    k.__dict__.pop("_cuda_launcher")
    import tritium.runtime.compiled as tc
    monkeypatch.setattr(tc, "compile_ir_many", lambda *a, **kw: pytest.fail("recompiled despite a cache hit"))
    r3 = k[(4,)](x, y, 100, BLOCK=32)
    assert r3.compiled.asm["ptx"] == r1.compiled.asm["ptx"]
    with pytest.raises(TypeError, match="unexpected keyword"):
        k[(1,)](x, y, 100, BLOCK=32, bogus=1)


SCALE_KERNEL = textwrap.dedent('''
    import tritium
    import tritium.language as tl

    @tritium.jit
    def scale(x_ptr, n, s, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)
''')


def run_cli(tmp_path, *args) -> subprocess.CompletedProcess:
    """`python -m tritium.compile kern.py:scale ARGS` on a small scale kernel in tmp_path."""
    src = tmp_path / "kern.py"
    if not src.exists():
        src.write_text(SCALE_KERNEL)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "tritium.compile", f"{src}:scale", *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


@needs_ptx
def test_cli(tmp_path):
    def run(*args):
        return run_cli(tmp_path, *args)
    sig = ["--signature", "x_ptr=*fp32,n=i32,s=fp32", "--constexprs", "BLOCK=512"]
    r = run(*sig, "--emit", "ir")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("func @scale")
    r = run(*sig, "--emit", "ptx", "--num-warps", "8")
    assert r.returncode == 0, r.stderr
    assert ".entry scale" in r.stdout and ".maxntid 256" in r.stdout
    r = run(*sig, "--emit", "metadata")
    assert json.loads(r.stdout)["num_warps"] == 4
    r = run(*sig, "--dump-stages")
    assert all(f"----- {s} -----" in r.stdout for s in ("ir", "llir", "ptx"))
    r = run("--signature", "x_ptr=*fp32", "--constexprs", "BLOCK=512")
    assert r.returncode == 1 and "error:" in r.stderr and "n" in r.stderr
    if driver.ptxas_path() is not None:
        out = tmp_path / "scale.cubin"
        r = run(*sig, "--emit", "cubin", "-o", str(out))
        assert r.returncode == 0, r.stderr
        assert out.read_bytes()[:4] == b"\x7fELF"
