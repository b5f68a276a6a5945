"""Block pointers and tensor descriptors through the whole compiler (no GPU):
the frontend keeps each access as one block memory op, `expand_block_memory`
turns it into masked loads and stores, and ptxas accepts the PTX for sm_80
and sm_90a. Vector widths show the expansion keeps what axis info needs."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium import _core

from test_codegen_ptx import ARCHS, ptxas


def _ptx(kernel, arch, **kw) -> str:
    return _core.compile_ptx(kernel.compile_ir(**kw), arch, 4)["ptx"]


@tritium.jit
def matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Triton's matmul-with-block-pointers shape of kernel (the product is
    # formed with broadcasts while `dot` has no lowering yet)
    pm, pn = tl.program_id(0), tl.program_id(1)
    a = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pm * BM, 0), (BM, BK), (1, 0))
    b = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, pn * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        x = tl.load(a, boundary_check=(0, 1), padding_option="zero")
        y = tl.load(b, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(x[:, :, None] * y[None, :, :], 1)
        a = tl.advance(a, (0, BK))
        b = tl.advance(b, (BK, 0))
    c = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(c, acc, boundary_check=(0, 1))


MATMUL_SIG = "*fp32, *fp32, *fp32, i32, i32, i32, i32, i32, i32, i32, i32, i32"


def test_ir_keeps_one_block_op_per_access():
    text = tritium.compile(matmul_block_ptr, signature=MATMUL_SIG, constexprs={"BM": 16, "BN": 16, "BK": 8},
                           target="cuda:80").asm["ir"]
    assert text.count('"block_load"') == 2 and text.count('"block_store"') == 1
    assert "boundary_check = [0, 1]" in text and "order = [1, 0]" in text


@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_block_ptr_through_ptxas(arch, tmp_path):
    ptx = _ptx(matmul_block_ptr, arch, signature=MATMUL_SIG, constexprs={"BM": 16, "BN": 16, "BK": 8})
    ptxas(ptx, arch, tmp_path)


@tritium.jit
def copy_rows(x_ptr, y_ptr, M, N: tl.constexpr, BM: tl.constexpr):
    pm = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pm * BM, 0), (BM, N), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (pm * BM, 0), (BM, N), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0,)), boundary_check=(0,))


def test_row_checked_block_vectorises():
    # only rows are checked and the rows are contiguous: 16-byte accesses
    ptx = _ptx(copy_rows, "sm_80", signature="*fp32, *fp32, i32", constexprs={"N": 64, "BM": 32},
               arg_attrs={"x_ptr": {"divisibility": 16}, "y_ptr": {"divisibility": 16}})
    assert "ld.global.v4.f32" in ptx and "st.global.v4.f32" in ptx


@tritium.jit(noinline=True)
def load_tile(p):
    return tl.load(p, boundary_check=(0, 1), padding_option="nan")


@tritium.jit
def via_noinline(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    t = load_tile(p)
    t2 = load_tile(tl.advance(p, (BM, 0)))
    o = tl.make_block_ptr(out_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(o, t + t2)


@pytest.mark.parametrize("arch", ARCHS)
def test_block_pointer_into_noinline_function(arch, tmp_path):
    ir = via_noinline.compile_ir(signature="*fp32, *fp32, i32, i32", constexprs={"BM": 8, "BN": 16})
    text = _core.to_text(ir)
    assert "call" in text and '"block_load"' in text.split("func @load_tile")[1]
    ptxas(_core.compile_ptx(ir, arch, 4)["ptx"], arch, tmp_path)


@tritium.jit
def descriptor_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN],
                                   padding_option="nan")
    v = xd.load([pm * BM, pn * BN])
    yd.store([pm * BM, pn * BN], tl.abs(v) + yd.load([pm * BM, pn * BN]))
    yd.atomic_add([pm * BM, pn * BN], v)


@pytest.mark.parametrize("arch", ARCHS)
def test_device_descriptor_through_ptxas(arch, tmp_path):
    ir = descriptor_kernel.compile_ir(signature="*fp32, *fp32, i32, i32", constexprs={"BM": 16, "BN": 32})
    text = _core.to_text(ir)
    assert text.count("descriptor = true") == 4 and '"block_atomic"' in text
    ptxas(_core.compile_ptx(ir, arch, 4)["ptx"], arch, tmp_path)


@tritium.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, M, N, B: tl.constexpr, C: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, C])
    rows = tl.load(idx_ptr + tl.arange(0, B))
    g = d.gather(rows, 0)
    o = tl.make_tensor_descriptor(out_ptr, [B, C], [C, 1], [1, C])
    o.scatter(g * 2, tl.arange(0, B), 0)


@pytest.mark.parametrize("arch", ARCHS)
def test_gather_scatter_through_ptxas(arch, tmp_path):
    ir = gather_kernel.compile_ir(signature="*fp16, *i32, *fp16, i32, i32", constexprs={"B": 8, "C": 64})
    ptxas(_core.compile_ptx(ir, arch, 4)["ptx"], arch, tmp_path)


@tritium.jit(noinline=True)
def scale_block(d, i, f):
    d.store([i, 0], d.load([i, 0]) * f)


@tritium.jit
def descriptor_into_noinline(d, f, BM: tl.constexpr):
    scale_block(d, tl.program_id(0) * BM, f)


@pytest.mark.parametrize("arch", ARCHS)
def test_host_descriptor_into_noinline_function(arch, tmp_path):
    ir = descriptor_into_noinline.compile_ir(signature="tensordesc<fp16[32, 64]>, fp32", constexprs={"BM": 32})
    callee = _core.to_text(ir).split("func @scale_block")[1]
    assert callee.count('"block_load"') == 1 and callee.count('"block_store"') == 1
    ptxas(_core.compile_ptx(ir, arch, 4)["ptx"], arch, tmp_path)


@tritium.jit
def checked_copy(x_ptr, y_ptr, M, N, sm, sn, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    p = tl.make_block_ptr(x_ptr, (M, N), (sm, sn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    q = tl.make_block_ptr(y_ptr, (M, N), (sm, sn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(q, tl.load(p, boundary_check=(0, 1)), boundary_check=(0, 1))


def test_checked_block_vectorises_with_specialized_arguments():
    # the launch's facts (16-divisible pointers, sizes and row stride; a unit
    # column stride) reach the expanded masks: 16-byte accesses though both
    # dimensions are checked
    d = {"divisibility": 16}
    ir = checked_copy.compile_ir(signature="*fp32, *fp32, i32, i32, i32, i32", constexprs={"BM": 32, "BN": 64},
                                 arg_attrs={"x_ptr": d, "y_ptr": d, "M": d, "N": d, "sm": d,
                                            "sn": {"equal_to_1": True}})
    ptx = _core.compile_ptx(ir, "sm_90a", 4)["ptx"]
    assert "ld.global.v4.f32" in ptx and "st.global.v4.f32" in ptx


@pytest.mark.parametrize("div16,vector", [((True, True), True), ((False, False), False)])
def test_host_descriptor_vectorises_when_its_extents_allow(div16, vector):
    from tritium.language import float32, tensor_descriptor_type
    from test_tensor_descriptors import _host_desc_kernel
    t = tensor_descriptor_type(float32, (16, 32), div16)
    ir = _host_desc_kernel.compile_ir(signature={"a": t, "b": t}, constexprs={"BM": 16, "BN": 32})
    # the ordinary path (sm_80; on sm_90a these accesses go through TMA, tests/test_tma.py)
    ptx = _core.compile_ptx(ir, "sm_80", 4)["ptx"]
    assert ("ld.global.v4.f32" in ptx and "st.global.v4.f32" in ptx) == vector
