"""TMA on the GPU (sm_90a): host TensorDescriptor loads and stores through
tensor maps, compared with the interpreter on the same inputs: boxes that
hang over every edge (TMA fills what is outside with zeros or NaN, and
stores nothing there), every swizzle and split boxes; the encoded-map cache;
a matmul through descriptors (tutorial 09's shape, B as [K, N] and as
[N, K] transposed), pipelined with 2-4 stages over 1..32 K iterations;
flash attention's forward (tutorial 06's pattern, square K tiles included).
Device-side descriptors (tl.make_tensor_descriptor, TRITIUM_TMA_DEVICE on;
`-k device`): maps built by the kernel in set_allocator memory, boxes over
every edge, the masked fallback, tutorial 09's persistent matmul."""
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
from tritium.runtime._allocation import NullAllocator
from tritium.tools.tensor_descriptor import TensorDescriptor

from compiled_vs_interpreted import interpreted
from test_tma import attention_desc, persistent_matmul_device_desc

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


def attention_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, heads: int, scale: float) -> torch.Tensor:
    qh, kh, vh = (t.float().reshape(heads, -1, t.shape[-1]) for t in (q, k, v))
    p = torch.softmax(qh @ kh.transpose(1, 2) * scale, -1)
    return (p.half().float() @ vh).reshape(q.shape).half()


@pytest.mark.parametrize("D,BN,warps", [(64, 64, 4), (64, 32, 4), (128, 64, 4), (128, 128, 8)])
@pytest.mark.parametrize("v_t", [False, True])
@pytest.mark.parametrize("stages", [2, 3])
def test_attention_through_descriptors(D, BN, warps, v_t, stages):
    # tutorial 06's forward pattern (test_tma.py's kernel): q once, K read
    # transposed and V through pipelined descriptor loads; square K tiles
    # ([64, 64], [128, 128]) were read untransposed before the fix
    heads, n_ctx, BM = 2, 512, 128
    q, k, v = (torch.empty(heads * n_ctx, D, device="cuda", dtype=torch.float16).normal_(0, 0.5) for _ in range(3))
    o = torch.empty_like(q)
    scale = 0.5
    if v_t:
        vt = v.t().contiguous()
        v_desc = TensorDescriptor.from_tensor(vt, [D, BN])
    else:
        v_desc = TensorDescriptor.from_tensor(v, [BN, D])
    attention_desc[(n_ctx // BM, heads)](TensorDescriptor.from_tensor(q, [BM, D]), TensorDescriptor.from_tensor(k, [BN, D]),
                                         v_desc, TensorDescriptor.from_tensor(o, [BM, D]), n_ctx, scale * 1.4426950408889634,
                                         D=D, BM=BM, BN=BN, STAGES=stages, V_T=v_t, num_warps=warps)
    torch.testing.assert_close(o, attention_reference(q, k, v, heads, scale), rtol=1e-2, atol=1e-2)


# -- device-side descriptors (tl.make_tensor_descriptor) ----------------------
# With TRITIUM_TMA_DEVICE on (the default) the kernel builds each tensor map itself, in
# 128 bytes per program of the global scratch the set_allocator allocator
# gives the launch (tensormap.replace, then the tensormap-proxy fences); the
# loads and stores then go through TMA as a host descriptor's do. Where the
# compiler cannot prove the map legal (16-byte aligned base, strides and box
# columns) the access keeps the masked path, which these tests run too.


@pytest.fixture
def device_tma(monkeypatch):
    monkeypatch.setenv("TRITIUM_TMA_DEVICE", "1")
    sizes = []

    def alloc(size, alignment, stream):
        assert alignment == 128
        sizes.append(size)
        return torch.empty(size, dtype=torch.int8, device="cuda")

    tritium.set_allocator(alloc)
    yield sizes
    tritium.set_allocator(NullAllocator())


@tritium.jit
def device_shift_copy(x_ptr, y_ptr, M, N, DM: tl.constexpr, DN: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                      PAD: tl.constexpr):
    # as tma_shift_copy, through descriptors made in the kernel
    pm, pn = tl.program_id(0), tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PAD)
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    v = xd.load([pm * BM + DM, pn * BN + DN])
    yd.store([pm * BM, pn * BN], v * 2 + 1)


def shifted_reference(x: torch.Tensor, DM: int, DN: int, BM: int, BN: int, pad: str) -> torch.Tensor:
    """y[i, j] = 2 * x[i + DM, j + DN] + 1, the padding outside x."""
    M, N = x.shape
    fill = 0.0 if pad == "zero" else float("nan")
    src = torch.full((M + 2 * BM + 16, N + 2 * BN + 16), fill, device="cuda", dtype=torch.float32)
    src[BM:BM + M, BN:BN + N] = x.float()
    return (src[BM + DM:BM + DM + M, BN + DN:BN + DN + N] * 2 + 1).to(x.dtype)


@pytest.mark.parametrize("BM,BN", [(16, 64), (64, 128), (32, 16), (8, 8)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pad", ["zero", "nan"])
@pytest.mark.parametrize("DN", [8, 7])
def test_device_descriptor_boxes_over_every_edge(device_tma, BM, BN, dtype, pad, DN):
    # N = 96: the row stride is a multiple of 16 elements (specialized), so
    # both maps are built on the device; 45 rows and 96 columns are no
    # multiple of the boxes, and DM = -5 hangs the boxes over the top. DN = 7
    # is no 16-byte column for any dtype: that load takes the masked path
    M, N, DM = 45, 96, -5
    x = torch.randn(M, N, device="cuda").to(dtype)
    y = torch.full((M, N), -9.0, device="cuda").to(dtype)
    grid = (tritium.cdiv(M, BM), tritium.cdiv(N, BN))
    consts = dict(DM=DM, DN=DN, BM=BM, BN=BN, PAD=pad)
    compiled = device_shift_copy.warmup(x, y, M, N, grid=grid, **consts)
    assert compiled.metadata["global_scratch"] == (256 if DN == 8 else 128)
    device_shift_copy[grid](x, y, M, N, **consts)
    torch.testing.assert_close(y, shifted_reference(x, DM, DN, BM, BN, pad), equal_nan=True)
    # the launch asked the allocator for one slot set per program
    assert device_tma[-1] == compiled.metadata["global_scratch"] * grid[0] * grid[1]


def test_device_descriptors_without_divisible_strides_keep_the_masked_path(device_tma):
    # N = 88: no multiple of 16, so nothing proves the row stride 16-byte
    # aligned; no map is built and no scratch is asked for
    M, N, BM, BN = 45, 88, 16, 64
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    y = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = (tritium.cdiv(M, BM), tritium.cdiv(N, BN))
    consts = dict(DM=0, DN=0, BM=BM, BN=BN, PAD="zero")
    assert device_shift_copy.warmup(x, y, M, N, grid=grid, **consts).metadata["global_scratch"] == 0
    before = len(device_tma)
    device_shift_copy[grid](x, y, M, N, **consts)
    torch.testing.assert_close(y, x * 2 + 1)
    assert len(device_tma) == before


def test_device_descriptor_launch_without_an_allocator_is_an_error(monkeypatch):
    monkeypatch.setenv("TRITIUM_TMA_DEVICE", "1")
    tritium.set_allocator(NullAllocator())
    x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    with pytest.raises(RuntimeError, match="no allocator was set"):
        device_shift_copy[(1, 1)](x, y, 64, 64, DM=0, DN=0, BM=64, BN=64, PAD="zero")
    # an allocator returning something without data_ptr: named, not a bare AttributeError
    tritium.set_allocator(lambda size, alignment, stream: bytearray(size))
    try:
        with pytest.raises(TypeError, match="kernel 'device_shift_copy': .* returned bytearray, which has no data_ptr"):
            device_shift_copy[(1, 1)](x, y, 64, 64, DM=0, DN=0, BM=64, BN=64, PAD="zero")
    finally:
        tritium.set_allocator(NullAllocator())


def test_device_maps_are_rebuilt_for_every_launch(device_tma):
    # the same scratch slots (PyTorch's allocator hands the same block back)
    # describe another tensor each launch: the acquire fence drops the map
    # the TMA unit cached for that address
    M, N, BM, BN = 64, 64, 32, 64
    consts = dict(DM=0, DN=0, BM=BM, BN=BN, PAD="zero")
    y = torch.empty(M, N, device="cuda", dtype=torch.float16)
    for i in range(4):
        x = torch.full((M, N), float(i), device="cuda", dtype=torch.float16) + torch.arange(N, device="cuda")
        device_shift_copy[(2, 1)](x, y, M, N, **consts)
        torch.testing.assert_close(y, x * 2 + 1)


# (M, N, K, maps built on the device): K = 328 and N = 136 are no multiples
# of 16, so their descriptors keep the masked path
PERSISTENT = [(512, 512, 512, 3), (200, 144, 320, 3), (1000, 384, 1024, 3), (200, 136, 328, 0), (256, 256, 64, 3)]


@pytest.mark.parametrize("M,N,K,maps", PERSISTENT)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_persistent_matmul_through_device_descriptors(device_tma, M, N, K, maps, dtype):
    BM, BN, BK = 128, 128, 64
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    a = torch.randn(M, K, device="cuda").to(dtype)
    b = torch.randn(N, K, device="cuda").to(dtype)
    c = torch.full((M, N), -1.0, device="cuda").to(dtype)
    tiles = tritium.cdiv(M, BM) * tritium.cdiv(N, BN)
    grid = (min(num_sms, tiles),)
    consts = dict(BM=BM, BN=BN, BK=BK, NUM_SMS=grid[0])
    compiled = persistent_matmul_device_desc.warmup(a, b, c, M, N, K, grid=grid, num_warps=8, num_stages=3, **consts)
    assert compiled.metadata["global_scratch"] == 128 * maps
    persistent_matmul_device_desc[grid](a, b, c, M, N, K, num_warps=8, num_stages=3, **consts)
    want = (a.float() @ b.float().T).to(dtype)
    torch.testing.assert_close(c, want, rtol=2e-2, atol=1e-1)
