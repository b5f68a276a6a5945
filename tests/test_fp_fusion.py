"""Triton's `enable_fp_fusion` option (on by default): float add, sub and mul
carry the IR's `contract` attribute, so `a * b + c` becomes one fma.rn in PTX;
with False every product and sum rounds on its own. The option reaches the
frontend from every entry Triton users pass it to (launch, warmup,
tritium.compile, triton.compile's options), keys the disk cache and the
launcher's table apart, and changes nothing in the interpreter."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.ast_source import ASTSource
from tritium.compile import compile as tritium_compile
from tritium.compile import main as compile_main
from tritium.runtime import cache
from tritium.runtime import launcher as launcher_module
from tritium.runtime.compiled import warmup_many


@triton.jit
def muladd(a_ptr, b_ptr, c_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    c = tl.load(c_ptr + offs, mask=m)
    tl.store(o_ptr + offs, a * b + c, mask=m)


@triton.jit
def int_muladd(a_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    tl.store(o_ptr + offs, a * a + 3 - a)


SIG = "*fp32,*fp32,*fp32,*fp32,i32"
CONSTS = {"BLOCK": 128}


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITIUM_ALWAYS_COMPILE", raising=False)
    return tmp_path / "cache"


def fused(ptx: str) -> bool:
    """Whether the PTX computes a*b+c as one fma, checking the other form is absent."""
    has_fma = "fma.rn.f32" in ptx
    separate = "mul.rn.f32" in ptx and "add.rn.f32" in ptx
    assert has_fma != separate, ptx
    return has_fma


def arrays(n: int = 256):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    return a, b, c, np.zeros(n, np.float32)


def test_fusion_is_on_by_default_and_off_with_false():
    on = tritium_compile(muladd, signature=SIG, constexprs=CONSTS, target="cuda:90")
    off = tritium_compile(muladd, signature=SIG, constexprs=CONSTS, target="cuda:90", enable_fp_fusion=False)
    assert fused(on.asm["ptx"]) and not fused(off.asm["ptx"])
    assert "fmul contract float" in on.asm["llir"] and "contract" not in off.asm["llir"]
    assert on.metadata.enable_fp_fusion is True and off.metadata.enable_fp_fusion is False
    # only the float ops are marked: the index arithmetic stays plain
    marked = [line for line in on.asm["ir"].splitlines() if "contract = true" in line]
    assert [re.search(r'"(\w+)"', line).group(1) for line in marked] == ["mul", "add"]
    assert all("xf32>" in line for line in marked)
    assert "contract" not in off.asm["ir"]


def test_integer_kernels_are_the_same_either_way():
    on = int_muladd.ir_text(signature="*i32,*i32", constexprs={"BLOCK": 64})
    off = int_muladd.ir_text(signature="*i32,*i32", constexprs={"BLOCK": 64}, enable_fp_fusion=False)
    assert on == off and "contract" not in on


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp64"])
def test_every_float_width_is_marked(dtype):
    sig = ",".join([f"*{dtype}"] * 4 + ["i32"])
    text = muladd.ir_text(signature=sig, constexprs=CONSTS)
    assert text.count("contract = true") == 2
    assert "contract" not in muladd.ir_text(signature=sig, constexprs=CONSTS, enable_fp_fusion=False)


def test_warmup_takes_the_option_and_caches_each_form_apart(cache_in_tmp):
    a, b, c, o = arrays()
    default = muladd.warmup(a, b, c, o, 256, BLOCK=128, grid=(2,))
    off = muladd.warmup(a, b, c, o, 256, BLOCK=128, grid=(2,), enable_fp_fusion=False)
    assert fused(default.asm["ptx"]) and not fused(off.asm["ptx"])
    assert len(list(cache_in_tmp.iterdir())) == 2
    # True is the default: the same entry, nothing compiled again
    on = muladd.warmup(a, b, c, o, 256, BLOCK=128, grid=(2,), enable_fp_fusion=True)
    assert on.asm["ptx"] == default.asm["ptx"] and len(list(cache_in_tmp.iterdir())) == 2
    # and a cached False entry is read back as False
    again = muladd.warmup(a, b, c, o, 256, BLOCK=128, grid=(2,), enable_fp_fusion=False)
    assert not fused(again.asm["ptx"]) and again.metadata.enable_fp_fusion is False


def test_the_cache_key_changes_only_for_false(monkeypatch):
    keys = []
    real = cache.kernel_key
    monkeypatch.setattr(cache, "kernel_key", lambda fn, target, options, spec: keys.append(dict(options)) or
                        real(fn, target, options, spec))
    a, b, c, o = arrays()
    for option in ({}, {"enable_fp_fusion": True}, {"enable_fp_fusion": False}):
        muladd.warmup(a, b, c, o, 256, BLOCK=128, grid=(2,), **option)
    assert "enable_fp_fusion" not in keys[0] and keys[0] == keys[1]
    assert keys[2] == {**keys[0], "enable_fp_fusion": False}


def test_triton_compile_options_dict():
    src = ASTSource(muladd, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32",
                             "BLOCK": "constexpr"}, constexprs={"BLOCK": 128})
    assert fused(triton.compiler.compile(src, target="cuda:90").asm["ptx"])
    off = triton.compiler.compile(src, target="cuda:90", options={"enable_fp_fusion": False})
    assert not fused(off.asm["ptx"])


def test_compile_cli_flag(tmp_path, capsys):
    kernel_file = tmp_path / "k.py"
    kernel_file.write_text(
        "import tritium as triton\nimport tritium.language as tl\n\n"
        "@triton.jit\ndef k(a, b, c, o, BLOCK: tl.constexpr):\n"
        "    i = tl.arange(0, BLOCK)\n"
        "    tl.store(o + i, tl.load(a + i) * tl.load(b + i) + tl.load(c + i))\n")
    args = [f"{kernel_file}:k", "-s", "*fp32,*fp32,*fp32,*fp32", "-c", "BLOCK=64", "--emit", "ptx"]
    assert compile_main(args) == 0
    assert fused(capsys.readouterr().out)
    assert compile_main(args + ["--no-fp-fusion"]) == 0
    assert not fused(capsys.readouterr().out)
    assert compile_main(args[:-2] + ["--emit", "ir", "--no-fp-fusion"]) == 0
    assert "contract" not in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["no", 0, 1.0])
def test_a_value_that_is_not_a_bool_is_refused(bad):
    a, b, c, o = arrays()
    with pytest.raises(TypeError, match="enable_fp_fusion must be True or False"):
        muladd.warmup(a, b, c, o, 256, BLOCK=128, grid=(2,), enable_fp_fusion=bad)
    with pytest.raises(TypeError, match="enable_fp_fusion must be True or False"):
        triton.jit(interpret=True)(muladd.fn)[(2,)](a, b, c, o, 256, BLOCK=128, enable_fp_fusion=bad)
    with pytest.raises(TypeError, match="enable_fp_fusion must be True or False"):
        tritium_compile(muladd, signature=SIG, constexprs=CONSTS, target="cuda:90", enable_fp_fusion=bad)


def test_a_bad_value_fails_only_its_own_call_in_a_batch():
    a, b, c, o = arrays()
    args, params = (a, b, c, o, 256), {"BLOCK": 128}
    bad, good = warmup_many(muladd, [(args, params, {"enable_fp_fusion": "off"}),
                                     (args, params, {"enable_fp_fusion": False})])
    assert isinstance(bad, TypeError) and not fused(good.asm["ptx"])


def test_interpreter_results_do_not_depend_on_it():
    run = triton.jit(interpret=True)(muladd.fn)
    a, b, c, _ = arrays()
    outs = []
    for option in ({}, {"enable_fp_fusion": True}, {"enable_fp_fusion": False}):
        o = np.zeros_like(a)
        run[(2,)](a, b, c, o, 256, BLOCK=128, **option)
        outs.append(o)
    # NumPy rounds the product and the sum each to f32
    want = (a * b).astype(np.float32) + c
    for o in outs:
        np.testing.assert_array_equal(o, want)


class FakeKernel:
    """What the launcher loads, recording its launches."""

    def __init__(self, fusion: bool):
        self.fusion = fusion
        self.launches = 0

    def launch(self, *args) -> None:
        self.launches += 1


class FakeTensor:
    def __init__(self, ptr: int):
        self._ptr = ptr
        self.dtype = np.dtype("f4")

    def data_ptr(self) -> int:
        return self._ptr


def test_the_launcher_never_reuses_one_form_for_the_other(monkeypatch):
    """The launcher's table is keyed by the resolved option, and only
    default-option kernels reach the Rust table (which only launches calls
    without options), so a launch with False never runs the fused kernel nor
    leaves its kernel where a default launch would find it."""
    compiles = []

    class Compiled:
        def __init__(self, fusion):
            self.fusion = fusion

        def load(self, device):
            return FakeKernel(self.fusion)

    def compiled_for(jit_fn, spec, key, target, num_warps, num_stages, debug, fp_fusion):
        compiles.append(fp_fusion)
        return Compiled(fp_fusion)

    def compiled_many(requests):
        return [compiled_for(*r) for r in requests]

    launcher = launcher_module.Launcher(muladd)
    inserted = []
    launcher.fast = type("Fast", (), {"insert": lambda self, key, device, k: inserted.append(k)})()
    monkeypatch.setattr(launcher_module, "compiled_for", compiled_for)
    monkeypatch.setattr(launcher_module, "compiled_many", compiled_many)
    monkeypatch.setattr(launcher_module, "torch_queries", lambda: None)
    monkeypatch.setattr(launcher_module.driver, "target_for", lambda device: "cuda:90")
    monkeypatch.setattr(launcher_module, "_core", type("Core", (), {"CudaKernel": FakeKernel}))
    args = tuple(FakeTensor(256 * i) for i in range(1, 5)) + (256,)

    off = launcher((2,), args, {"BLOCK": 128, "enable_fp_fusion": False})
    assert off.fusion is False and compiles == [False] and inserted == []
    default = launcher((2,), args, {"BLOCK": 128})
    assert default.fusion is True and compiles == [False, True] and inserted == [default]
    assert launcher((2,), args, {"BLOCK": 128, "enable_fp_fusion": True}) is default
    assert launcher((2,), args, {"BLOCK": 128, "enable_fp_fusion": False}) is off
    assert (off.launches, default.launches) == (2, 2) and compiles == [False, True]
    # precompile (the autotuner's batch) keys alike and refuses a bad value in its call's place
    got = launcher.precompile([(args, {"BLOCK": 128, "enable_fp_fusion": False}), (args, {"BLOCK": 128}),
                               (args, {"BLOCK": 128, "enable_fp_fusion": "off"})])
    assert got[0] is off and got[1] is default and isinstance(got[2], TypeError)
    assert compiles == [False, True]


def test_the_rust_entry_leaves_the_option_to_python():
    if not hasattr(_core, "FastLauncher"):
        pytest.skip("extension built without FastLauncher")
    launcher = launcher_module.Launcher(muladd)
    args = tuple(FakeTensor(256 * i) for i in range(1, 5)) + (256,)
    launcher.spec.key_python(args + (128,))
    assert launcher.fast.prepare_only((2,), args, {"BLOCK": 128}) is not None
    assert launcher.fast.prepare_only((2,), args, {"BLOCK": 128, "enable_fp_fusion": False}) is None
