"""Flash attention's inner loop compiled for sm_90a without a GPU: the row
statistics (`m_i`, `l_i`) are carried in the layout of the rows of the
`q @ k` accumulator, and `alpha[:, None]` meets the output accumulator
without moving either tile through shared memory. What must be left in the
loop: the cp.async copies and the two dots; P (the first dot's accumulator,
rounded to f16 in pairs) is the second wgmma's A operand in registers, and
the first dot starts from no accumulator at all (scale-d 0)."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from tritium.compile import compile as compile_kernel
from tritium.runtime import driver

if driver.ptxas_path() is None:
    pytest.skip("ptxas not found (pip install nvidia-cuda-nvcc-cu12)", allow_module_level=True)


@tritium.jit
def attn_loop(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * sm_scale)
        p = tl.math.exp2(qk * sm_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    tl.store(Out + offs_m[:, None] * HEAD_DIM + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


def _loop_body(ptx):
    for m in re.finditer(r"^(\$L__BB\d+_\d+):", ptx, re.M):
        back = re.search(r"bra(\.uni)?\s+" + re.escape(m.group(1)) + ";", ptx[m.end():])
        if back and "wgmma.mma_async" in ptx[m.end():m.end() + back.start()]:
            return ptx[m.end():m.end() + back.start()]
    raise AssertionError("no loop with a wgmma")


@pytest.mark.parametrize("head_dim,block_n,warps", [(64, 64, 4), (128, 32, 8)])
def test_attention_loop_keeps_its_tiles_in_registers(head_dim, block_n, warps, capfd):
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32"}
    k = compile_kernel(attn_loop, signature=sig, constexprs={"HEAD_DIM": head_dim, "BLOCK_M": 128, "BLOCK_N": block_n},
                       target="cuda:90a", num_warps=warps, num_stages=3,
                       attrs={"divisibility": ["Q", "K", "V", "Out", "N_CTX"]})
    body = _loop_body(k.asm["ptx"])
    # one wait+barrier for the copies, one before the next copies: P no
    # longer passes through shared memory between the dots
    assert body.count("bar.sync") <= 2, body.count("bar.sync")
    assert not re.search(r"st\.shared", body), "a tile is stored to shared memory inside the loop"
    # the second dot takes A as four b32 registers per instruction
    reg_a = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.f16\.f16 \{[^}]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}", body)
    assert len(reg_a) == 128 // 64 * block_n // 16 // (warps // 4), len(reg_a)
    # P rounded two elements per cvt; exp2 is Triton's flush-to-zero form
    assert "cvt.rn.f16x2.f32" in body and "cvt.rn.f16.f32" not in body
    assert "ex2.approx.ftz.f32" in body
    assert k.n_spills == 0


def test_first_dot_of_a_zero_accumulator_does_not_read_it():
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32"}
    k = compile_kernel(attn_loop, signature=sig, constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64},
                       target="cuda:90a", num_warps=4, num_stages=3,
                       attrs={"divisibility": ["Q", "K", "V", "Out", "N_CTX"]})
    body = _loop_body(k.asm["ptx"])
    # q @ k starts from tl.dot's zero accumulator: its first K step's scale-d
    # predicate is false and no register of the loop is zeroed for it
    preds = re.findall(r"wgmma\.mma_async[^;]*, (%p\d+), 1, 1", body)
    assert preds, "no wgmma with a predicate scale-d"
    assert len(set(preds)) == 2, preds   # false for q @ k's first step, true for the rest
    assert not re.search(r"mov\.(b32|f32)\s+%f\d+, 0f00000000", body)


def test_conversions_left_are_listed(capfd, monkeypatch):
    monkeypatch.setenv("TRITIUM_DEBUG_CONVERTS", "1")
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32"}
    compile_kernel(attn_loop, signature=sig, constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64},
                   target="cuda:90a", num_warps=4, attrs={"divisibility": ["Q", "K", "V", "Out", "N_CTX"]})
    err = capfd.readouterr().err
    targets = re.findall(r"@attn_loop line \d+: convert .*\n\s+to Some\((\w+)", err)
    # q to shared memory for its dot, P to the wgmma A operand registers (a
    # renaming of the accumulator's), the result to a blocked layout for its store
    assert sorted(targets) == ["Blocked", "DotOperand", "Shared"], err


def test_the_softmax_update_is_one_fma_per_element_unless_fusion_is_off():
    """Triton's default (`enable_fp_fusion`): `qk * sm_scale - m_ij[:, None]`
    is one fma.rn per element of the q @ k tile a thread holds; with
    enable_fp_fusion=False the product and the difference round apart."""
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32"}
    bodies = {}
    for fusion in (True, False):
        k = compile_kernel(attn_loop, signature=sig, constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64},
                           target="cuda:90a", num_warps=4, num_stages=3, enable_fp_fusion=fusion,
                           attrs={"divisibility": ["Q", "K", "V", "Out", "N_CTX"]})
        bodies[fusion] = _loop_body(k.asm["ptx"])
    per_thread = 128 * 64 // (4 * 32)
    fused, plain = bodies[True], bodies[False]
    assert fused.count("fma.rn.f32") >= per_thread and fused.count("sub.rn.f32") < per_thread
    assert plain.count("fma.rn.f32") == 0 and plain.count("sub.rn.f32") >= per_thread
    assert plain.count("mul.rn.f32") - fused.count("mul.rn.f32") >= per_thread
    assert len(fused.splitlines()) < len(plain.splitlines())
