"""Flash attention's inner loop compiled for sm_90a without a GPU: the row
statistics (`m_i`, `l_i`) are carried in the layout of the rows of the
`q @ k` accumulator, and `alpha[:, None]` meets the output accumulator
without moving either tile through shared memory. What must be left in the
loop: the cp.async copies, the two dots, and P staged for the second dot."""
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
    # one wait+barrier for the copies, one before P is stored, one before the
    # second dot reads it, one before the next copies
    assert body.count("bar.sync") <= 4, body.count("bar.sync")
    # no f32 tile or row statistic moves through shared memory; P does, as f16
    assert not re.search(r"st\.shared(\.v\d)?\.f32", body)
    assert k.n_spills == 0


def test_conversions_left_are_listed(capfd, monkeypatch):
    monkeypatch.setenv("TRITIUM_DEBUG_CONVERTS", "1")
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32"}
    compile_kernel(attn_loop, signature=sig, constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64},
                   target="cuda:90a", num_warps=4, attrs={"divisibility": ["Q", "K", "V", "Out", "N_CTX"]})
    err = capfd.readouterr().err
    targets = re.findall(r"@attn_loop line \d+: convert .*\n\s+to Some\((\w+)", err)
    # q and P to shared memory for the dots, the result to a blocked layout for its store
    assert sorted(targets) == ["Blocked", "Shared", "Shared"], err
