"""Triton's runtime and compiler API on tritium, without a GPU: the error
classes, `warmup()` returning a CompiledKernel, `cache_key`, ASTSource and
`triton.compile`, `triton.knobs`, `driver.active` (and its refusal without
a GPU), MockTensor/reinterpret. The device queries themselves are in
tests/gpu/test_runtime_api_gpu.py."""
from __future__ import annotations

import os
import stat
import textwrap

import numpy as np
import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.compiler import ASTSource, CompiledKernel
from tritium.runtime import driver
from tritium.runtime.device_api import GPUTarget
from tritium.runtime.errors import AutotunerError, InterpreterError, OutOfResources, PTXASError


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def _has_ptxas() -> bool:
    return driver.ptxas_path() is not None


def test_error_classes_follow_triton():
    assert issubclass(triton.CompilationError, triton.TritonError)
    for cls in (OutOfResources, PTXASError, AutotunerError, InterpreterError):
        assert issubclass(cls, triton.TritonError)
    e = OutOfResources(300000, 232448, "shared memory", "k")
    assert str(e).startswith("out of resource: shared memory, Required: 300000, Hardware limit: 232448 (kernel 'k')")
    assert (e.required, e.limit, e.name) == (300000, 232448, "shared memory")
    import pickle
    assert str(pickle.loads(pickle.dumps(e))) == str(e)
    assert str(PTXASError("boom")) == "PTXAS error: boom"
    assert triton.runtime.OutOfResources is OutOfResources and triton.InterpreterError is InterpreterError


def test_warmup_returns_a_compiled_kernel():
    x = np.zeros(256, np.float32)
    k = scale_kernel.warmup(x, x, 256, 2.0, BLOCK=128, grid=(2,), num_warps=2)
    assert isinstance(k, CompiledKernel)
    assert k.metadata.num_warps == 2 and k.metadata.name == "scale_kernel"
    assert k.metadata.shared == k.metadata["shared"] >= 0
    assert ".entry scale_kernel" in k.asm["ptx"] and "ir" in k.asm and "llir" in k.asm
    if _has_ptxas():
        assert k.n_regs > 0 and k.n_spills == 0 and k.asm["cubin"][:4] == b"\x7fELF"
    with pytest.raises(AttributeError, match="no field 'nope'"):
        k.metadata.nope
    # a stand-in where a tensor goes, as Triton's warmup allows (torch dtypes become these)
    mock = triton.MockTensor(tl.float32)
    same = scale_kernel.warmup(mock, mock, 256, 2.0, BLOCK=128, grid=(2,), num_warps=2)
    assert same.asm["ptx"] == k.asm["ptx"]


def test_cache_key_follows_the_source_and_the_values_read(tmp_path, monkeypatch):
    source = textwrap.dedent("""
        import tritium as triton
        import tritium.language as tl
        SCALE = tl.constexpr({scale})

        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr, tl.load(x_ptr) * SCALE)
        """)
    keys = []
    for i, scale in enumerate((2, 2, 3)):
        p = tmp_path / f"copy{i}" / "cache_key_kernels.py"
        p.parent.mkdir()
        p.write_text(source.format(scale=scale))
        import importlib.util
        spec = importlib.util.spec_from_file_location("cache_key_kernels", p)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        keys.append(mod.k.cache_key)
    assert keys[0] == keys[1] != keys[2]
    assert isinstance(keys[0], str) and len(keys[0]) == 64


@pytest.mark.parametrize("target", [None, GPUTarget("cuda", 90, 32), "cuda:80"])
def test_ast_source_compiles_like_triton(target):
    src = ASTSource(scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "factor": "fp32",
                                   "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 64}, attrs={(0,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]})
    k = triton.compiler.compile(src, target=target, options={"num_warps": 1})
    assert isinstance(k, CompiledKernel) and k.metadata.num_warps == 1
    assert k.metadata.target == ("cuda:80" if target == "cuda:80" else "cuda:90")
    assert "%0: ptr<f32> {divisibility = 16}, %1: ptr<f32>, %2: i32 {divisibility = 16}" in k.asm["ir"]
    assert triton.compile(src, target=target, options={"num_warps": 1}).asm["ptx"] == k.asm["ptx"]
    assert len(src.hash()) == 64
    # constexprs may also be keyed by argument path, as Triton's are
    by_path = ASTSource(scale_kernel, dict(src.signature), constexprs={(4,): 64})
    assert by_path.constants == {"BLOCK": 64}


def test_ast_source_errors_name_the_problem():
    with pytest.raises(ValueError, match="has no parameter 'nope'"):
        ASTSource(scale_kernel, {"x_ptr": "*fp32"}, constexprs={"nope": 1})
    src = ASTSource(scale_kernel, {"x_ptr": "*fp32"}, attrs={(0,): [["tt.pointer_range", 32]]})
    with pytest.raises(ValueError, match="unknown attribute 'tt.pointer_range'"):
        src.tritium_arguments()
    with pytest.raises(ValueError, match="backends 'cuda' \\(NVIDIA\\) and 'hip' \\(AMD\\)"):
        triton.compile(ASTSource(scale_kernel, {}), target=GPUTarget("metal", "m3", 32))


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for ptxas")
def test_a_failing_ptxas_is_a_ptxas_error(tmp_path, monkeypatch):
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\n"
                    "if [ \"$1\" = \"--version\" ]; then echo 'Cuda compilation tools, release 12.9, V12.9.86'; exit 0; fi\n"
                    "echo \"ptxas fatal   : Out of parameter space\" >&2; exit 255\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("TRITIUM_PTXAS", str(fake))
    with pytest.raises(PTXASError, match="(?s)assembling kernel 'scale_kernel'.*Out of parameter space"):
        tritium.compile(scale_kernel, signature="*fp32,*fp32,i32,fp32", constexprs={"BLOCK": 32})


def test_knobs_are_views_of_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.delenv("TRITIUM_CACHE_DIR", raising=False)
    assert knobs.runtime.interpret is False
    assert knobs.cache.dir.endswith(os.path.join(".cache", "tritium"))
    with knobs.runtime.scope(), knobs.cache.scope():
        knobs.runtime.interpret = True
        knobs.cache.dir = str(tmp_path)
        assert os.environ["TRITIUM_INTERPRET"] == "1" and knobs.runtime.interpret
        import importlib
        jit_module = importlib.import_module("tritium.runtime.jit")
        from tritium.runtime import cache
        assert jit_module.interpret_requested() and cache.cache_dir() == tmp_path
    assert "TRITIUM_INTERPRET" not in os.environ and "TRITIUM_CACHE_DIR" not in os.environ
    monkeypatch.setenv("TRITON_INTERPRET", "1")        # Triton's spelling counts too
    assert knobs.runtime.interpret is True
    knobs.runtime.reset()
    assert knobs.runtime.interpret is False
    if _has_ptxas():
        assert os.path.basename(knobs.nvidia.ptxas.path).startswith("ptxas") and knobs.nvidia.ptxas.version


def test_driver_active_without_a_gpu(monkeypatch):
    if driver.available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="0 active drivers: no CUDA GPU is usable"):
        triton.runtime.driver.active
    sentinel = object()
    triton.runtime.driver.set_active(sentinel)
    try:
        assert triton.runtime.driver.active is sentinel
        from tritium.runtime.driver import driver as config
        assert config.active is sentinel
    finally:
        triton.runtime.driver.reset_active()


def test_mock_tensors_and_reinterpret_key_like_tensors():
    from tritium.runtime.specialization import specializer
    from tritium.runtime.tensors import MockTensor
    spec = specializer(scale_kernel, "cuda")
    x = np.zeros(64, np.uint8)
    as_fp8 = triton.reinterpret(x, tl.float8e5)
    assert as_fp8.dtype is tl.float8e5 and as_fp8.data_ptr() == x.ctypes.data
    assert triton.reinterpret(as_fp8, tl.uint8) is x
    key_mock = spec.key((MockTensor(tl.float32), MockTensor(tl.float32), 64, 1.0, 64))
    key_real = spec.key((np.zeros(64, np.float32), np.zeros(64, np.float32), 64, 1.0, 64))
    # address 0 counts as 16-byte aligned, as Triton's MockTensor does
    assert spec.key_text(key_mock) == spec.key_text(key_real)
    assert spec.key_text(key_mock).count("pointer_type(triton.language.float32)[divisibility]") == 2
    u8 = spec.key((as_fp8, as_fp8, 64, 1.0, 64))
    assert spec.key_text(u8).count("pointer_type(triton.language.float8e5)") == 2
