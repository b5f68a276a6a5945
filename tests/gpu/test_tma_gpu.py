"""TMA on the GPU (sm_90a): host TensorDescriptor loads and stores through
tensor maps, compared with the interpreter on the same inputs: boxes that
hang over every edge (TMA fills what is outside with zeros or NaN, and
stores nothing there), every swizzle and split boxes; the encoded-map cache;
a matmul through descriptors (tutorial 09's shape, B as [K, N] and as
[N, K] transposed), pipelined with 2-4 stages over 1..32 K iterations."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() < (9, 0):
    pytest.skip("TMA needs sm_90", allow_module_level=True)

import tritium
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

from compiled_vs_interpreted import interpreted

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _tma_on(monkeypatch):
    # these tests are about TMA, whatever the default (TRITIUM_TMA)
    monkeypatch.setenv("TRITIUM_TMA", "1")


@tritium.jit
def tma_shift_copy(src, dst, DM: tl.constexpr, DN: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # every program reads a box shifted by (DM, DN) from its own, so the
    # edge programs' boxes hang over the array on all four sides
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = src.load([pm * BM + DM, pn * BN + DN])
    dst.store([pm * BM, pn * BN], v * 2 + 1)


def aligned_like(t: torch.Tensor) -> np.ndarray:
    """A 64-byte aligned NumPy copy of `t` (descriptors need 16)."""
    a = t.cpu().numpy() if t.dtype != torch.bfloat16 else t.view(torch.int16).cpu().numpy()
    raw = np.zeros(a.nbytes + 64, np.uint8)
    off = -raw.ctypes.data % 64
    out = raw[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


DTYPES = [torch.float16, torch.float32, torch.bfloat16]


@pytest.mark.parametrize("BM,BN", [(16, 64), (64, 128), (32, 16), (8, 8)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pad", ["zero", "nan"])
@pytest.mark.parametrize("DN", [8, 7])
def test_out_of_bounds_boxes_match_the_interpreter(BM, BN, dtype, pad, DN):
    # DN = 8: the load's boxes start 16 or 32 bytes into a row (TMA); DN = 7
    # is not 16-byte aligned for any dtype, which TMA cannot start a box at
    # (the H100 faults), so that load takes the masked path
    M, N = 45, 88          # rows of 176/352 bytes: a multiple of 16, not of the box
    DM = -5
    x = torch.randn(M, N, device="cuda").to(dtype)
    y = torch.full((M, N), -9.0, device="cuda").to(dtype)
    grid = (tritium.cdiv(M, BM), tritium.cdiv(N, BN))
    kernel_args = dict(DM=DM, DN=DN, BM=BM, BN=BN)
    maps = tma_shift_copy.warmup(TensorDescriptor.from_tensor(x, [BM, BN], padding=pad),
                                 TensorDescriptor.from_tensor(y, [BM, BN]), grid=grid, **kernel_args).metadata["tensormaps"]
    assert [m[0] for m in maps] == ([0, 5] if DN == 8 else [5])
    if dtype == torch.bfloat16:
        # the interpreter runs bf16 through its own storage; compare with torch instead
        tma_shift_copy[grid](TensorDescriptor.from_tensor(x, [BM, BN], padding=pad),
                             TensorDescriptor.from_tensor(y, [BM, BN]), **kernel_args)
        fill = 0.0 if pad == "zero" else float("nan")
        src = torch.full((M + 2 * BM + 16, N + 2 * BN + 16), fill, device="cuda", dtype=torch.float32)
        src[BM:BM + M, BN:BN + N] = x.float()
        want = (src[BM + DM:BM + DM + M, BN + DN:BN + DN + N] * 2 + 1).to(dtype)
        torch.testing.assert_close(y, want, equal_nan=True)
        return
    xn, yn = aligned_like(x), aligned_like(y)
    tma_shift_copy[grid](TensorDescriptor.from_tensor(x, [BM, BN], padding=pad),
                         TensorDescriptor.from_tensor(y, [BM, BN]), **kernel_args)
    interpreted(tma_shift_copy)[grid](TensorDescriptor.from_tensor(xn, [BM, BN], padding=pad),
                                      TensorDescriptor.from_tensor(yn, [BM, BN]), **kernel_args)
    np.testing.assert_array_equal(y.cpu().numpy(), yn)


def test_tensor_maps_are_encoded_once_per_descriptor():
    x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    y = torch.zeros(64, 64, device="cuda", dtype=torch.float16)
    args = dict(DM=0, DN=0, BM=32, BN=64)
    for _ in range(3):   # the Python path, then the Rust entry twice
        tma_shift_copy[(2, 1)](TensorDescriptor.from_tensor(x, [32, 64]), TensorDescriptor.from_tensor(y, [32, 64]),
                               **args)
    torch.testing.assert_close(y, x * 2 + 1)
    assert tma_shift_copy._fast is not None
    # the CompiledKernel's own launches: one map per descriptor, reused
    dx, dy = TensorDescriptor.from_tensor(x, [32, 64]), TensorDescriptor.from_tensor(y, [32, 64])
    compiled = tma_shift_copy.warmup(dx, dy, grid=(2, 1), **args)
    assert compiled.metadata["tensormaps"] == [[0, [32, 64], 128], [5, [32, 64], 128]]
    y.zero_()
    for _ in range(3):
        compiled[(2, 1)](dx, dy, *args.values())
    torch.testing.assert_close(y, x * 2 + 1)
    assert compiled.load(torch.cuda.current_device()).tensormaps_cached == [1, 1]
    # another tensor is another map
    x2 = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    tma_shift_copy[(2, 1)](TensorDescriptor.from_tensor(x2, [32, 64]), TensorDescriptor.from_tensor(y, [32, 64]),
                           **args)
    torch.testing.assert_close(y, x2 * 2 + 1)


def test_misaligned_descriptor_is_a_clear_error():
    # a view whose rows are 16-byte multiples but whose base is not 16-byte
    # aligned is refused by the host descriptor before any map is encoded
    x = torch.randn(64, 72, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="16-byte aligned"):
        TensorDescriptor(x[:, 1:], [64, 71], [72, 1], [32, 64])


@tritium.jit
def matmul_desc(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                B_T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=3):
        a = a_desc.load([pid_m * BM, k * BK])
        if B_T:
            b = b_desc.load([pid_n * BN, k * BK]).T
        else:
            b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@pytest.mark.parametrize("M,N,K", [(256, 256, 512), (200, 136, 328), (1024, 512, 256)])
@pytest.mark.parametrize("b_t", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matmul_through_descriptors(M, N, K, b_t, dtype):
    BM, BN, BK = 128, 128, 64
    a = torch.randn(M, K, device="cuda").to(dtype)
    b = torch.randn(K, N, device="cuda").to(dtype)
    c = torch.empty(M, N, device="cuda", dtype=dtype)
    bt = b.t().contiguous()
    b_desc = TensorDescriptor.from_tensor(bt, [BN, BK]) if b_t else TensorDescriptor.from_tensor(b, [BK, BN])
    grid = (tritium.cdiv(M, BM), tritium.cdiv(N, BN))
    matmul_desc[grid](TensorDescriptor.from_tensor(a, [BM, BK]), b_desc, TensorDescriptor.from_tensor(c, [BM, BN]),
                      K, BM=BM, BN=BN, BK=BK, B_T=b_t)
    want = (a.float() @ b.float()).to(dtype)
    torch.testing.assert_close(c, want, rtol=2e-2, atol=1e-1)


def test_small_matmul_through_descriptors_matches_the_interpreter():
    M, N, K = 64, 64, 96
    BM, BN, BK = 64, 64, 32
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    an, bn, cn = aligned_like(a), aligned_like(b), aligned_like(c)
    consts = dict(BM=BM, BN=BN, BK=BK, B_T=False)
    matmul_desc[(1, 1)](TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
                        TensorDescriptor.from_tensor(c, [BM, BN]), K, **consts)
    interpreted(matmul_desc)[(1, 1)](TensorDescriptor.from_tensor(an, [BM, BK]), TensorDescriptor.from_tensor(bn, [BK, BN]),
                                     TensorDescriptor.from_tensor(cn, [BM, BN]), K, **consts)
    np.testing.assert_allclose(c.cpu().numpy().astype(np.float32), cn.astype(np.float32), rtol=1e-2, atol=1e-2)


@tritium.jit
def matmul_desc_staged(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("k", [64, 128, 192, 320, 1000, 2048])
def test_pipelined_descriptor_matmul_every_trip_count(stages, k):
    # the TMA ring's phases over 1..32 K iterations (fewer than, equal to
    # and many more than the stages; K = 1000 ends on a partial tile the
    # hardware zero-fills), each program its own loop
    M, N, BM, BN, BK = 256, 256, 128, 128, 64
    a = torch.randn(M, k, device="cuda", dtype=torch.float16)
    b = torch.randn(N, k, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = (M // BM, N // BN)
    matmul_desc_staged[grid](TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]),
                             TensorDescriptor.from_tensor(c, [BM, BN]), k, BM=BM, BN=BN, BK=BK, STAGES=stages)
    torch.testing.assert_close(c, (a.float() @ b.float().T).to(torch.float16), rtol=2e-2, atol=1e-1)
