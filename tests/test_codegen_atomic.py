"""Atomics through the frontend, compile_ptx and ptxas (sm_80, sm_90a), no GPU:
every atomic_rmw kind on its element types, every sem/scope, masks, scalar
atomics (one issuer, old value broadcast through shared memory) and CAS."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from test_codegen_ptx import ARCHS, ptxas, compile_ptx

A16 = {"divisibility": 16}
TL_TYPES = {"i32": "*i32", "u32": "*u32", "i64": "*i64", "u64": "*u64", "f32": "*fp32", "f64": "*fp64",
            "f16": "*fp16", "bf16": "*bf16"}


@tritium.jit
def rmw_kernel(x_ptr, v_ptr, old_ptr, n, KIND: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr,
               BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(v_ptr + offs, mask=m)
    if KIND == "add":
        old = tl.atomic_add(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "max":
        old = tl.atomic_max(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "min":
        old = tl.atomic_min(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "and":
        old = tl.atomic_and(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "or":
        old = tl.atomic_or(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "xor":
        old = tl.atomic_xor(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_xchg(x_ptr + offs, v, mask=m, sem=SEM, scope=SCOPE)
    tl.store(old_ptr + offs, old, mask=m)


def compile_rmw(kind, elem, arch, sem="acq_rel", scope="gpu", block=256, num_warps=4):
    t = TL_TYPES[elem]
    return compile_ptx(rmw_kernel, arch, num_warps, signature=f"{t}, {t}, {t}, i32",
                       constexprs={"KIND": kind, "SEM": sem, "SCOPE": scope, "BLOCK": block},
                       arg_attrs={"x_ptr": A16, "v_ptr": A16, "old_ptr": A16})


CASES = [
    ("add", "i32", "add.u32"), ("add", "u64", "add.u64"), ("add", "f32", "add.f32"), ("add", "f64", "add.f64"),
    ("add", "f16", "add.noftz.f16"), ("max", "i32", "max.s32"), ("max", "u32", "max.u32"),
    ("min", "i64", "min.s64"), ("min", "u64", "min.u64"), ("and", "i32", "and.b32"), ("or", "u64", "or.b64"),
    ("xor", "u32", "xor.b32"), ("xchg", "f32", "exch.b32"), ("xchg", "i64", "exch.b64"),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kind,elem,instr", CASES)
def test_rmw_kinds(kind, elem, instr, arch, tmp_path):
    ptx = compile_rmw(kind, elem, arch)["ptx"]
    # the frontend's default sem/scope are acq_rel/gpu; 2 elements per thread, each predicated
    assert ptx.count(f"atom.acq_rel.gpu.global.{instr}") == 2, ptx
    ptxas(ptx, arch, tmp_path)


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_every_sem_and_scope(sem, scope, tmp_path):
    for arch, (kind, elem) in zip(ARCHS, [("add", "f32"), ("max", "i64")]):
        ptx = compile_rmw(kind, elem, arch, sem=sem, scope=scope)["ptx"]
        assert f"atom.{sem}.{scope}.global." in ptx, ptx
        ptxas(ptx, arch, tmp_path)


def test_float_max_goes_through_integer_atomics(tmp_path):
    # the frontend rewrites float max into signed max / unsigned min on the bits
    ptx = compile_rmw("max", "f32", "sm_90a")["ptx"]
    assert "atom.acq_rel.gpu.global.max.s32" in ptx and "atom.acq_rel.gpu.global.min.u32" in ptx, ptx
    ptxas(ptx, "sm_90a", tmp_path)


def test_bf16_add_on_sm90_only(tmp_path):
    ptx = compile_rmw("add", "bf16", "sm_90a")["ptx"]
    assert "atom.acq_rel.gpu.global.add.noftz.bf16" in ptx
    ptxas(ptx, "sm_90a", tmp_path)
    with pytest.raises(Exception, match="sm_90"):
        compile_rmw("add", "bf16", "sm_80")


@pytest.mark.parametrize("block,num_warps", [(16, 4), (64, 8), (1024, 1)])
def test_small_and_large_tensors(block, num_warps, tmp_path):
    for arch in ARCHS:
        out = compile_rmw("add", "i32", arch, block=block, num_warps=num_warps)
        if block < 32 * num_warps:
            # replicated elements: one owner issues, the copies read the old value from shared memory
            assert "ld.shared" in out["ptx"], out["ptx"]
        ptxas(out["ptx"], arch, tmp_path)


@tritium.jit
def lock_kernel(lock_ptr, count_ptr, out_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") == 1:
        pass
    c = tl.load(count_ptr, volatile=True)
    tl.store(count_ptr, c + 1)
    tl.atomic_xchg(lock_ptr, 0, sem="release")
    t = tl.atomic_add(out_ptr, 1, scope="sys")
    tl.store(out_ptr + 1 + tl.program_id(0), t)


@pytest.mark.parametrize("arch", ARCHS)
def test_scalar_cas_spin_lock(arch, tmp_path):
    out = compile_ptx(lock_kernel, arch, signature="*i32, *i32, *i32")
    ptx = out["ptx"]
    assert "atom.acquire.gpu.global.cas.b32" in ptx, ptx
    assert "atom.release.gpu.global.exch.b32" in ptx, ptx
    assert "atom.acq_rel.sys.global.add.u32" in ptx, ptx
    assert "st.shared" in ptx and "bar.sync" in ptx, ptx
    ptxas(ptx, arch, tmp_path)


@tritium.jit
def cas_tensor_kernel(x_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_cas(x_ptr + offs, offs, offs + 100, sem="relaxed", scope="cta")
    tl.store(old_ptr + offs, old)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("sig", ["*i32, *i32", "*i64, *i64", "*fp32, *fp32", "*i16, *i16"])
def test_tensor_cas(sig, arch, tmp_path):
    ptx = compile_ptx(cas_tensor_kernel, arch, signature=sig, constexprs={"BLOCK": 128})["ptx"]
    bits = {"*i32, *i32": 32, "*i64, *i64": 64, "*fp32, *fp32": 32, "*i16, *i16": 16}[sig]
    assert f"atom.relaxed.cta.global.cas.b{bits}" in ptx, ptx
    ptxas(ptx, arch, tmp_path)
