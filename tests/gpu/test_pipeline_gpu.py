"""Software-pipelined loops on the GPU against torch: every stage count
(`tl.range(num_stages=)` and the launch option), loops shorter than the
pipeline (and empty ones), K tails masked off, steps other than one, a
non-zero `other` (copied without cp.async), and loops the pipeliner must
leave alone (pointers used after the loop)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

pytestmark = pytest.mark.gpu


@tritium.jit
def staged_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr,
                  OTHER: tl.constexpr, KSTEP: tl.constexpr, USE_AFTER: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    # KSTEP blocks per step: the loop walks 0, KSTEP, 2*KSTEP, ... and loads block kb only
    for kb in tl.range(0, tl.cdiv(K, BK) * KSTEP, KSTEP, num_stages=STAGES):
        k_left = K - (kb // KSTEP) * BK
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=OTHER)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=OTHER)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    if USE_AFTER:
        # the pointers' final values are read after the loop: not pipelined
        acc += tl.load(a_ptrs - BK * sak).to(tl.float32).sum() * 0
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _run(m, n, k, bm, bn, bk, stages, warps=4, dtype=torch.float16, other=0.0, kstep=1, use_after=False):
    g = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a = torch.randn(m, k, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    b = torch.randn(k, n, device="cuda", dtype=torch.float32, generator=g).to(dtype)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    grid = (tritium.cdiv(m, bm), tritium.cdiv(n, bn))
    staged_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BM=bm, BN=bn, BK=bk, STAGES=stages, OTHER=other, KSTEP=kstep, USE_AFTER=use_after,
                        num_warps=warps)
    ref = a.float() @ b.float()
    if other != 0.0:
        # masked lanes of the last K block read `other` in both operands
        tail = k % bk
        if tail:
            ref = ref + (bk - tail) * other * other
    torch.testing.assert_close(c, ref, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("k", [32, 64, 100, 192, 1000])
@pytest.mark.parametrize("tile", [(64, 64, 32, 4), (128, 128, 64, 4), (128, 256, 64, 8)])
def test_stages_and_tails(stages, k, tile):
    bm, bn, bk, warps = tile
    _run(bm * 2, bn, k, bm, bn, bk, stages, warps)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float8_e5m2])
def test_dtypes(dtype):
    if dtype == torch.float8_e5m2 and torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("fp8 dot needs sm_89+")
    _run(256, 128, 512, 128, 128, 64 if dtype != torch.float32 else 32, 3, 4, dtype)


def test_empty_and_short_loops():
    for k in (0, 1, 16):
        _run(64, 64, k, 64, 64, 32, 4)


def test_step_other_than_one():
    _run(128, 128, 320, 64, 64, 32, 3, kstep=3)


def test_nonzero_other():
    _run(64, 64, 100, 64, 64, 32, 3, other=0.5)


def test_pointers_used_after_the_loop():
    _run(128, 128, 256, 64, 64, 32, 3, use_after=True)


def test_launch_option_num_stages():
    # plain range(): the launch's num_stages applies
    from kernels.matmul import matmul_kernel
    m, n, k = 300, 200, 700
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    for stages in (1, 2, 4):
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        grid = (tritium.cdiv(m, 64) * tritium.cdiv(n, 64),)
        matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1), BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8,
                            ACTIVATION="", num_warps=4, num_stages=stages)
        torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


@tritium.jit
def bt_matmul(a_ptr, bt_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # B given transposed ([N, K] in memory): its [BK, BN] tiles are contiguous along dim 0
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(k0 + rk)[None, :] < K, other=0.0)
        b = tl.load(bt_ptr + rn[None, :] * K + (k0 + rk)[:, None], mask=(k0 + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("tile", [(32, 32, 32, 1), (64, 64, 32, 2), (64, 64, 64, 4), (128, 128, 64, 8)])
@pytest.mark.parametrize("k", [64, 200])
def test_b_loaded_contiguous_along_k(tile, k):
    bm, bn, bk, warps = tile
    m, n = 2 * bm, 2 * bn
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    bt = torch.randn(n, k, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    bt_matmul[(2, 2)](a, bt, c, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=warps)
    torch.testing.assert_close(c, a.float() @ bt.float().T, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("kernel", ["offset_matmul_kernel", "wrapped_matmul_kernel"])
@pytest.mark.parametrize("tile", [(64, 64, 32, 4), (128, 128, 64, 4), (128, 256, 64, 8)])
@pytest.mark.parametrize("mnk", [(200, 136, 80), (256, 264, 208), (130, 260, 1040)])
def test_k_tails_that_are_multiples_of_16(kernel, tile, mnk):
    # K a multiple of 16 but not of BLOCK_K: the K-tail test is shared by the
    # rows axis info proves alike (16 at a time), and the last block is cut
    # mid-tile
    import kernels.matmul as mm
    bm, bn, bk, warps = tile
    m, n, k = mnk
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    grid = (tritium.cdiv(m, bm) * tritium.cdiv(n, bn),)
    getattr(mm, kernel)[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                              c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=3)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


@tritium.jit
def clocked_matmul(a_ptr, b_ptr, c_ptr, t_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # the autotune bench's matmul, recording which SM each program ran on and
    # when it started (the GPU's nanosecond timer, read before any copy)
    start = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rm = ((pid // tiles_n) * BM + tl.arange(0, BM)) % M
    rn = ((pid % tiles_n) * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak, mask=(k0 + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn, mask=(k0 + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty))
    tl.store(t_ptr + 2 * pid, sm.to(tl.int64))
    tl.store(t_ptr + 2 * pid + 1, start)


def test_two_97_kib_matmul_programs_share_each_sm():
    # 128x128x64 with three stages takes 96 KiB of staged tiles (+1 KiB the
    # driver reserves): an H100's 228 KiB holds two such programs when the
    # L1/shared split leaves room for both. The launcher sets what Triton's
    # does (PREFER_SHARED cache config, the opt-in raised to the device's
    # limit), not an explicit carveout; whatever split the driver picks from
    # that must still fit two (this is the config the autotune bench's matmul
    # chooses). Two programs per SM start together; one per SM would start
    # the second half of the grid only as the first half ends.
    from tritium.runtime import driver
    info = driver.device_info(torch.cuda.current_device())
    # a block may opt in to all of an SM's shared memory but the 1 KiB reserved per block
    if info["max_shared_per_block_optin"] + 1024 < 2 * 97 * 1024:
        pytest.skip(f"an SM here holds {info['max_shared_per_block_optin'] + 1024} bytes of shared memory, "
                    "less than two programs need")
    sms = info["multiprocessors"]
    bm = bn = 128
    m, n, k = 2 * bm, sms * bn, 8192
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    t = torch.zeros(2 * 2 * sms, device="cuda", dtype=torch.int64)
    args = (a, b, c, t, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    launch = lambda: clocked_matmul[(2 * sms,)](*args, BM=bm, BN=bn, BK=64, num_warps=4, num_stages=3)  # noqa: E731
    launch()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    launch()
    end.record()
    torch.cuda.synchronize()
    kernel_ns = begin.elapsed_time(end) * 1e6
    starts = t.view(-1, 2)[:, 1].cpu()
    late = int((starts - starts.min() > kernel_ns / 4).sum())
    assert late <= sms // 10, (late, 2 * sms, kernel_ns)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-1)


def test_kernels_over_48_kib_opt_in_to_the_device_limit():
    # the launcher sets what Triton 3.6's loader sets for kernels over 48 KiB:
    # PREFER_SHARED (not readable back) and the dynamic shared limit raised
    # to the block opt-in less the static part; smaller kernels keep the
    # driver's 48 KiB
    from tritium.runtime import driver
    dev = torch.cuda.current_device()
    optin = driver.device_info(dev)["max_shared_per_block_optin"]
    f16 = torch.float16
    big = clocked_matmul.warmup(f16, f16, f16, torch.int64, 256, 256, 256, 256, 1, 256, 1, 256, 1, grid=(1,),
                                BM=128, BN=128, BK=64, num_warps=4, num_stages=3).load(dev)
    small = staged_matmul.warmup(f16, f16, torch.float32, 64, 64, 64, 64, 1, 64, 1, 64, 1, grid=(1,), BM=32, BN=32,
                                 BK=32, STAGES=2, OTHER=0.0, KSTEP=1, USE_AFTER=False, num_warps=4).load(dev)
    assert big.shared_bytes > 48 * 1024 >= small.shared_bytes, (big.shared_bytes, small.shared_bytes)
    assert big.max_dynamic_shared_bytes == optin - big.static_shared_bytes
    assert small.shared_bytes <= small.max_dynamic_shared_bytes <= 48 * 1024
