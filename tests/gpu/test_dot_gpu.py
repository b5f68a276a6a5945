"""`tl.dot` on the GPU against torch: every input type and precision, f32
and f16 accumulators, acc= chaining, batched 3-D dots, edge tiles with
masks, transposed operands, a dot inside a noinline function, and the
project's matmul and attention kernels (tests/kernels); the dots wgmma
cannot take (mma.sync on Hopper too) also check their PTX reads the
operand fragments with ldmatrix."""
from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl
from kernels.attention import attention_fwd_kernel
from kernels.matmul import matmul_kernel

pytestmark = pytest.mark.gpu

CAP = torch.cuda.get_device_capability()


@tritium.jit
def tile_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr,
             OUT: tl.constexpr, TRANS_B: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    if TRANS_B:
        b = tl.trans(tl.load(b_ptr + rn[:, None] * K + rk[None, :]))
    else:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def _inputs(dtype, m, n, k, trans_b=False):
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    if dtype in (torch.int8,):
        a = torch.randint(-8, 8, (m, k), device="cuda", generator=g, dtype=torch.int8)
        b = torch.randint(-8, 8, (n, k) if trans_b else (k, n), device="cuda", generator=g, dtype=torch.int8)
        return a, b
    a = torch.randn(m, k, device="cuda", generator=g).to(dtype)
    b = torch.randn((n, k) if trans_b else (k, n), device="cuda", generator=g).to(dtype)
    return a, b


CASES = [
    # dtype, precision, out dtype, tolerance
    (torch.float16, "tf32", torch.float32, 1e-2),
    (torch.bfloat16, "tf32", torch.float32, 1e-2),
    (torch.float16, "tf32", torch.float16, 5e-2),
    (torch.float32, "tf32", torch.float32, 5e-2),
    (torch.float32, "tf32x3", torch.float32, 1e-4),
    (torch.float32, "ieee", torch.float32, 1e-4),
    (torch.int8, "tf32", torch.int32, 0),
]


@pytest.mark.parametrize("dtype,prec,out,tol", CASES, ids=lambda x: str(x).replace("torch.", ""))
@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 64, 32), (64, 32, 64), (128, 128, 64)])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("warps", [1, 4, 8])
def test_tile_dot(dtype, prec, out, tol, shape, trans_b, warps):
    m, n, k = shape
    if dtype == torch.int8 and k < 32:
        k = 32
    a, b = _inputs(dtype, m, n, k, trans_b)
    c = torch.empty(m, n, device="cuda", dtype=out)
    tl_out = {torch.float32: tl.float32, torch.float16: tl.float16, torch.int32: tl.int32}[out]
    tile_dot[(1,)](a, b, c, M=m, N=n, K=k, PREC=prec, OUT=tl_out, TRANS_B=trans_b, num_warps=warps)
    bb = b.T if trans_b else b
    if dtype == torch.int8:
        ref = (a.int().cpu() @ bb.int().cpu()).cuda()
        assert torch.equal(c, ref)
        return
    ref = (a.double() @ bb.double())
    torch.testing.assert_close(c.double(), ref, rtol=tol, atol=tol * k ** 0.5)


def _ldmatrix_variants(kernel):
    ptx = kernel.asm["ptx"]
    assert "mma.sync.aligned" in ptx and "wgmma" not in ptx
    return set(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.(x\d(?:\.trans)?)\.shared\.b16", ptx))


# dots wgmma cannot take run mma.sync on Hopper too, their fragments read
# with ldmatrix (tests/test_codegen_ldmatrix.py counts the variants per
# tiling without a GPU): each case's variants must be in the PTX, and the
# product right. dtype, (m, n, k), B transposed, precision, warps, variants
LDMATRIX_CASES = [
    (torch.float16, (16, 64, 32), False, "tf32", 4, {"x4", "x4.trans"}),      # M < 64
    (torch.bfloat16, (32, 64, 32), False, "tf32", 4, {"x4", "x4.trans"}),
    (torch.float16, (32, 64, 32), True, "tf32", 4, {"x4"}),                   # B K-major: no .trans
    (torch.float16, (32, 16, 32), False, "tf32", 4, {"x4", "x2.trans"}),      # one N tile a warp: x2
    (torch.float16, (64, 64, 64), False, "tf32", 1, {"x4", "x4.trans"}),      # one warp
    (torch.int8, (32, 64, 64), True, "tf32", 4, {"x4"}),
    (torch.int8, (32, 64, 64), False, "tf32", 4, {"x4"}),                     # B on ld.shared
    (torch.float32, (32, 64, 32), True, "tf32", 4, {"x4"}),
    (torch.float32, (64, 64, 32), False, "tf32x3", 4, {"x4"}),                # B on ld.shared
    (torch.float32, (64, 64, 32), True, "tf32x3", 4, {"x4"}),
]


@pytest.mark.parametrize("dtype,shape,trans_b,prec,warps,variants", LDMATRIX_CASES,
                         ids=lambda x: str(x).replace("torch.", "") if not isinstance(x, set) else "")
def test_mma_sync_fragments_from_ldmatrix(dtype, shape, trans_b, prec, warps, variants):
    m, n, k = shape
    a, b = _inputs(dtype, m, n, k, trans_b)
    out = torch.int32 if dtype == torch.int8 else torch.float32
    c = torch.empty(m, n, device="cuda", dtype=out)
    args = dict(M=m, N=n, K=k, PREC=prec, OUT=tl.int32 if dtype == torch.int8 else tl.float32, TRANS_B=trans_b,
                num_warps=warps)
    assert _ldmatrix_variants(tile_dot.warmup(a, b, c, grid=(1,), **args)) == variants
    tile_dot[(1,)](a, b, c, **args)
    bb = b.T if trans_b else b
    if dtype == torch.int8:
        assert torch.equal(c, (a.int().cpu() @ bb.int().cpu()).cuda())
        return
    tol = {"tf32x3": 1e-4}.get(prec, 5e-2 if dtype == torch.float32 else 1e-2)
    torch.testing.assert_close(c.double(), a.double() @ bb.double(), rtol=tol, atol=tol * k ** 0.5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batched_dot_fragments_from_ldmatrix(dtype):
    bsz, m, n, k = 4, 32, 64, 32
    a = torch.randn(bsz, m, k, device="cuda", dtype=dtype)
    b = torch.randn(bsz, k, n, device="cuda", dtype=dtype)
    c = torch.empty(bsz, m, n, device="cuda")
    assert _ldmatrix_variants(batched_dot.warmup(a, b, c, B=bsz, M=m, N=n, K=k, num_warps=4, grid=(1,))) \
        == {"x4", "x4.trans"}
    batched_dot[(1,)](a, b, c, B=bsz, M=m, N=n, K=k, num_warps=4)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("trans", [False, True])
def test_pipelined_mma_sync_matmul_reads_stages_with_ldmatrix(trans):
    # 32-row tiles run mma.sync on Hopper, ldmatrix reading the stages the
    # loop's cp.async fill; column-major operands (trans) stage B K-major,
    # read without .trans
    m, n, k = 96, 160, 208   # K a multiple of 16 (16-byte copies), not of BLOCK_SIZE_K
    a = torch.randn(k, m, device="cuda", dtype=torch.float16).T if trans else torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16).T if trans else torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    meta = dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=4, ACTIVATION="", num_warps=4,
                num_stages=3)
    grid = (tritium.cdiv(m, 32) * tritium.cdiv(n, 64),)
    assert _ldmatrix_variants(matmul_kernel.warmup(*args, grid=grid, **meta)) == ({"x4"} if trans else {"x4", "x4.trans"})
    matmul_kernel[grid](*args, **meta)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


@pytest.mark.skipif(CAP < (8, 9), reason="fp8 mma needs sm_89+")
@pytest.mark.parametrize("fp8", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_dot(fp8):
    dt = getattr(torch, fp8)
    m = n = 64
    k = 64
    a = torch.randn(m, k, device="cuda").to(dt)
    b = torch.randn(k, n, device="cuda").to(dt)
    c = torch.empty(m, n, device="cuda")
    tile_dot[(1,)](a, b, c, M=m, N=n, K=k, PREC="tf32", OUT=tl.float32, TRANS_B=False, num_warps=4)
    ref = a.float() @ b.float()
    # Hopper's fp8 wgmma keeps fewer mantissa bits than f32 while it
    # accumulates (what Triton's max_num_imprecise_acc is about): ~2^-13 of |c|
    atol = 4e-3 if CAP >= (9, 0) else 1e-3
    torch.testing.assert_close(c, ref, rtol=1e-3, atol=atol)


@tritium.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb, rm, rn, rk = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * K * N + rk[None, :, None] * N + rn[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], c)


@pytest.mark.parametrize("bmnk", [(2, 16, 16, 16), (4, 32, 64, 32), (8, 16, 32, 64)])
def test_batched_dot(bmnk):
    bsz, m, n, k = bmnk
    a = torch.randn(bsz, m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(bsz, k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(bsz, m, n, device="cuda")
    batched_dot[(1,)](a, b, c, B=bsz, M=m, N=n, K=k, num_warps=4)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("mnk", [(256, 256, 256), (257, 129, 77), (1000, 384, 96), (64, 1000, 500)])
@pytest.mark.parametrize("blocks", [(32, 32, 32, 4), (64, 64, 32, 4), (128, 128, 32, 8), (128, 64, 64, 4)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matmul_kernel(mnk, blocks, dtype):
    m, n, k = mnk
    bm, bn, bk, warps = blocks
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    grid = (tritium.cdiv(m, bm) * tritium.cdiv(n, bn),)
    matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="",
                        num_warps=warps)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=2e-2, atol=5e-2)


def test_matmul_transposed_operands():
    m, n, k = 192, 160, 96
    a = torch.randn(k, m, device="cuda", dtype=torch.float16).T     # column-major A
    b = torch.randn(n, k, device="cuda", dtype=torch.float16).T     # column-major B
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    matmul_kernel[(tritium.cdiv(m, 64) * tritium.cdiv(n, 64),)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=4, ACTIVATION="leaky_relu", num_warps=4)
    ref = torch.nn.functional.leaky_relu(a.float() @ b.float(), 0.01)
    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=5e-2)


@tritium.jit(noinline=True)
def tile_product(a, b, acc):
    return tl.dot(a, b, acc)


@tritium.jit
def dot_in_callee(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    acc = tl.zeros((N, N), dtype=tl.float32)
    acc = tile_product(a, b, acc)
    acc = tile_product(a, b, acc)
    tl.store(c_ptr + r[:, None] * N + r[None, :], acc)


def test_dot_inside_noinline_function():
    n = 64
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda")
    dot_in_callee[(1,)](a, b, c, N=n, num_warps=4)
    torch.testing.assert_close(c, 2 * (a.float() @ b.float()), rtol=1e-2, atol=2e-2)


def test_callee_dot_at_a_nonzero_shared_offset():
    # the kernel's pipelined stage buffers stay live across the call: the
    # callee's staged operands sit above them (base 49152, see test_codegen_calls)
    from kernels.dot_calls import dot_beside_call
    n, k = 64, 256
    a, x = (torch.randn(n, k, device="cuda", dtype=torch.float16) for _ in range(2))
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda")
    dot_beside_call[(1,)](a, b, x, c, k, N=n, BK=n, num_warps=4, num_stages=3)
    side = sum(x[:, k0:k0 + n].float() @ x[:, k0:k0 + n].float() for k0 in range(0, k, n))
    torch.testing.assert_close(c, a.float() @ b.float() + side, rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_ctx,head_dim", [(128, 64), (300, 64), (256, 128)])
def test_attention(causal, n_ctx, head_dim):
    q, k, v = (torch.randn(n_ctx, head_dim, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    scale = head_dim ** -0.5
    attention_fwd_kernel[(tritium.cdiv(n_ctx, 64),)](q, k, v, o, scale, n_ctx, HEAD_DIM=head_dim, BLOCK_M=64,
                                                     BLOCK_N=64, CAUSAL=causal, num_warps=4)
    s = (q.float() @ k.float().T) * scale
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    ref = torch.softmax(s, -1) @ v.float()
    torch.testing.assert_close(o.float(), ref, rtol=2e-2, atol=2e-2)
