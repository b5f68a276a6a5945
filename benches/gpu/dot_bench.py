"""Tensor-core kernels, tritium vs Triton on one GPU in one run, the two
alternating over rounds (median round reported), cuBLAS (torch.matmul) as
the ceiling: matmul fp16 and bf16 at 4096^3 and 8192^3, fp8 (e4m3) at 8192^3,
tutorial 09's matmul through host tensor descriptors (TMA) at fp16 4096^3
and 8192^3 (`--only tma`; TRITIUM_TMA=0 gives tritium's cp.async path),
a grouped GEMM (many independent small matmuls in one launch), and flash
attention forward (causal and not, head dim 64 and 128, sequence 1k..16k,
fp16). Both libraries compile the same kernel source with the same block
sizes, warps and stages. Also the cold compile time of the matmul kernel
(import and first launch, benches/gpu/cold_compile.py).
Usage: python benches/gpu/dot_bench.py [--only NAME] [--quick]"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import kernel_time_ms  # noqa: E402

LIBS = ("tritium", "triton")

KERNELS = '''
import {lib} as triton
import {lib}.language as tl
from {lib}.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def matmul_kernel_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # tutorial 09's host-descriptor matmul (B given as [N, K], read transposed)
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BLOCK_K)):
        offs_k = k * BLOCK_K
        a = a_desc.load([offs_am, offs_k])
        b = b_desc.load([offs_bn, offs_k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([offs_am, offs_bn], acc.to(tl.float16))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def grouped_matmul_kernel(a_ptrs_ptr, b_ptrs_ptr, c_ptrs_ptr, sizes_ptr, group_size, num_sms,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last = 0
    for g in range(group_size):
        m = tl.load(sizes_ptr + g * 3)
        n = tl.load(sizes_ptr + g * 3 + 1)
        k = tl.load(sizes_ptr + g * 3 + 2)
        tiles = tl.cdiv(m, BLOCK_M) * tl.cdiv(n, BLOCK_N)
        while tile_idx >= last and tile_idx < last + tiles:
            a_ptr = tl.load(a_ptrs_ptr + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_ptrs_ptr + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_ptrs_ptr + g).to(tl.pointer_type(tl.float16))
            local = tile_idx - last
            tile_m = local // tl.cdiv(n, BLOCK_N)
            tile_n = local % tl.cdiv(n, BLOCK_N)
            offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_tile = a_ptr + offs_m[:, None] * k + offs_k[None, :]
            b_tile = b_ptr + offs_k[:, None] * n + offs_n[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_K)):
                a = tl.load(a_tile)
                b = tl.load(b_tile)
                acc += tl.dot(a, b)
                a_tile += BLOCK_K
                b_tile += BLOCK_K * n
            c_tile = c_ptr + offs_m[:, None] * n + offs_n[None, :]
            tl.store(c_tile, acc.to(tl.float16))
            tile_idx += num_sms
        last = last + tiles


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, stride_h, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16))
'''

# the matmul configuration Triton's tutorial autotuner picks for these sizes on an H100
MM_CFG = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)
MM_LAUNCH = dict(num_warps=8, num_stages=3)
FP8_CFG = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=128, GROUP_M=8)


def matmul_case(mod, torch, n: int, dtype_name: str):
    dtype = getattr(torch, dtype_name)
    a = torch.randn(n, n, device="cuda", dtype=torch.float16).to(dtype)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16).to(dtype)
    out_dtype = torch.float16 if dtype_name.startswith("float8") else dtype
    c = torch.empty(n, n, device="cuda", dtype=out_dtype)
    cfg = FP8_CFG if dtype_name.startswith("float8") else MM_CFG
    grid = (triton_cdiv(n, cfg["BLOCK_M"]) * triton_cdiv(n, cfg["BLOCK_N"]),)

    def run():
        mod.matmul_kernel[grid](a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1), **cfg, **MM_LAUNCH)
    run()
    ref = (a.float() @ b.float())
    err = (c.float() - ref).abs().max().item() / ref.abs().max().item()
    if err > 2e-2:
        raise RuntimeError(f"wrong result (max relative error {err:.3g})")
    return run, 2 * n ** 3


def tma_matmul_case(mod, torch, n: int):
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)   # [N, K]
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    bm, bn, bk = MM_CFG["BLOCK_M"], MM_CFG["BLOCK_N"], MM_CFG["BLOCK_K"]
    descs = (mod.TensorDescriptor.from_tensor(a, [bm, bk]), mod.TensorDescriptor.from_tensor(b, [bn, bk]),
             mod.TensorDescriptor.from_tensor(c, [bm, bn]))
    grid = (triton_cdiv(n, bm) * triton_cdiv(n, bn),)

    def run():
        mod.matmul_kernel_tma[grid](*descs, n, n, n, **MM_CFG, **MM_LAUNCH)
    run()
    ref = a.float() @ b.float().T
    err = (c.float() - ref).abs().max().item() / ref.abs().max().item()
    if err > 2e-2:
        raise RuntimeError(f"wrong result (max relative error {err:.3g})")
    return run, 2 * n ** 3


def grouped_case(mod, torch):
    sizes = [(1024, 1024, 1024), (512, 512, 512), (256, 256, 256), (128, 128, 128)] * 4
    As = [torch.randn(m, k, device="cuda", dtype=torch.float16) for m, n, k in sizes]
    Bs = [torch.randn(k, n, device="cuda", dtype=torch.float16) for m, n, k in sizes]
    Cs = [torch.empty(m, n, device="cuda", dtype=torch.float16) for m, n, k in sizes]
    ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)  # noqa: E731
    a_p, b_p, c_p = ptrs(As), ptrs(Bs), ptrs(Cs)
    sz = torch.tensor([x for s in sizes for x in s], device="cuda", dtype=torch.int32)
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def run():
        mod.grouped_matmul_kernel[(sms,)](a_p, b_p, c_p, sz, len(sizes), sms, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32,
                                          num_warps=4, num_stages=3)
    run()
    for a, b, c in zip(As, Bs, Cs):
        ref = a.float() @ b.float()
        if (c.float() - ref).abs().max().item() > 2e-2 * ref.abs().max().item():
            raise RuntimeError("wrong result")
    return run, sum(2 * m * n * k for m, n, k in sizes)


def attention_case(mod, torch, n_ctx: int, head_dim: int, causal: bool):
    heads = max(1, 32768 // n_ctx) * 4
    q, k, v = (torch.randn(heads, n_ctx, head_dim, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    scale = head_dim ** -0.5
    block_m, block_n = 128, 64 if head_dim <= 64 else 32

    def run():
        mod.attn_fwd[(triton_cdiv(n_ctx, block_m), heads)](q, k, v, o, scale, n_ctx, q.stride(0), HEAD_DIM=head_dim,
                                                         BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
                                                         num_warps=8 if head_dim == 128 else 4, num_stages=3)
    run()
    s = (q[:1].float() @ k[:1].float().transpose(1, 2)) * scale
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    ref = torch.softmax(s, -1) @ v[:1].float()
    if (o[:1].float() - ref).abs().max().item() > 2e-2:
        raise RuntimeError("wrong result")
    flops = 4 * heads * n_ctx * n_ctx * head_dim * (0.5 if causal else 1.0)
    return run, flops


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def cases(quick: bool):
    out = [("matmul fp16 4096^3", lambda m, t: matmul_case(m, t, 4096, "float16")),
           ("matmul bf16 4096^3", lambda m, t: matmul_case(m, t, 4096, "bfloat16")),
           ("tma matmul fp16 4096^3", lambda m, t: tma_matmul_case(m, t, 4096))]
    if not quick:
        out += [("matmul fp16 8192^3", lambda m, t: matmul_case(m, t, 8192, "float16")),
                ("matmul bf16 8192^3", lambda m, t: matmul_case(m, t, 8192, "bfloat16")),
                ("matmul fp8e4m3 8192^3", lambda m, t: matmul_case(m, t, 8192, "float8_e4m3fn")),
                ("tma matmul fp16 8192^3", lambda m, t: tma_matmul_case(m, t, 8192)),
                ("grouped gemm fp16 x16", grouped_case)]
    seqs = (1024, 4096) if quick else (1024, 4096, 16384)
    for hd in (64, 128):
        for causal in (False, True):
            for s in seqs:
                out.append((f"attention d{hd} {'causal' if causal else 'full'} {s}",
                            lambda m, t, s=s, hd=hd, c=causal: attention_case(m, t, s, hd, c)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=None)
    ap.add_argument("--quick", action="store_true", help="fewer sizes (a smoke run)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import torch
    tmp = Path(tempfile.mkdtemp(prefix="tritium-dot-bench-"))
    for lib in LIBS:
        (tmp / f"dot_kernels_{lib}.py").write_text(KERNELS.format(lib=lib))
    sys.path.insert(0, str(tmp))
    mods = {lib: importlib.import_module(f"dot_kernels_{lib}") for lib in LIBS}
    rows = []
    for name, make in cases(args.quick):
        if args.only and args.only not in name:
            continue
        runs, res, flops = {}, {}, None
        for lib in LIBS:
            try:
                runs[lib], flops = make(mods[lib], torch)
            except Exception as e:
                msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
                res[lib] = f"skipped: {type(e).__name__}: {msg[:100]}"
        samples = {lib: [] for lib in runs}
        for _ in range(args.rounds):
            for lib, run in runs.items():
                samples[lib].append(flops / (kernel_time_ms(run, torch, per_pair=5, reps=7) * 1e-3) / 1e12)
        for lib, xs in samples.items():
            res[lib] = statistics.median(xs)
        if name.startswith("matmul") and "fp8" not in name:
            n = int(name.split()[2].split("^")[0])
            dt = getattr(torch, "float16" if "fp16" in name else "bfloat16")
            a = torch.randn(n, n, device="cuda", dtype=dt)
            res["cublas"] = 2 * n ** 3 / (kernel_time_ms(lambda: a @ a, torch, per_pair=5, reps=7) * 1e-3) / 1e12
        rows.append((name, res))
    print()
    print(f"{'kernel':34} {'tritium':>10} {'triton':>10} {'ratio':>7} {'cublas':>8}   (TFLOP/s)")
    print("-" * 78)
    for name, res in rows:
        cell = lambda v: f"{v:10.1f}" if isinstance(v, float) else f"{'n/a':>10}"  # noqa: E731
        a, b = res.get("tritium"), res.get("triton")
        ratio = f"{a / b:7.2f}" if isinstance(a, float) and isinstance(b, float) else f"{'':>7}"
        cb = f"{res['cublas']:8.1f}" if "cublas" in res else ""
        print(f"{name:34} {cell(a)} {cell(b)} {ratio} {cb}")
    for name, res in rows:
        for lib in LIBS:
            if isinstance(res.get(lib), str):
                print(f"  {name} [{lib}]: {res[lib]}")
    if not args.only or "cold" in args.only:
        # benches/gpu/cold_compile.py: fresh processes whose CUDA context exists before the clock starts
        import cold_compile
        print("\ncold compile of the matmul kernel (fresh process, empty cache, CUDA context made first):")
        cold_compile.report(3, tmp)
    print(f"device: {torch.cuda.get_device_name(0)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
