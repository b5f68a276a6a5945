"""GPU checks for block pointers and tensor descriptors: the kernels of
tests/test_codegen_blocks.py and tests/test_tensor_descriptors.py run
compiled on CUDA tensors against torch, on shapes that are not multiples of
the block, with both paddings; host TensorDescriptors go through
`kernel[grid](...)` twice (the Python path, then the Rust entry)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

import test_codegen_blocks as K

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("M,N,K_", [(64, 64, 64), (37, 50, 29), (1, 17, 130)])
def test_matmul_with_block_pointers(M, N, K_):
    a, b = torch.randn(M, K_, device="cuda"), torch.randn(K_, N, device="cuda")
    c = torch.full((M, N), -1.0, device="cuda")
    BM, BN, BK = 16, 16, 8
    grid = (tritium.cdiv(M, BM), tritium.cdiv(N, BN))
    K.matmul_block_ptr[grid](a, b, c, M, N, K_, *a.stride(), *b.stride(), *c.stride(), BM=BM, BN=BN, BK=BK)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_with_a_transposed_operand():
    M, N, K_ = 33, 40, 70
    a = torch.randn(K_, M, device="cuda").t()      # column-major A: strides (1, M)
    b = torch.randn(K_, N, device="cuda")
    c = torch.empty(M, N, device="cuda")
    K.matmul_block_ptr[(3, 3)](a, b, c, M, N, K_, *a.stride(), *b.stride(), *c.stride(), BM=16, BN=16, BK=8)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@tritium.jit
def _pad_probe(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    q = tl.make_block_ptr(y_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(q, tl.load(p, boundary_check=(0, 1), padding_option=PAD))


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_padding_values(pad):
    x = torch.randn(5, 7, device="cuda")
    y = torch.empty(8, 16, device="cuda")
    _pad_probe[(1,)](x, y, 5, 7, BM=8, BN=16, PAD=pad)
    want = torch.full((8, 16), 0.0 if pad == "zero" else float("nan"), device="cuda")
    want[:5, :7] = x
    torch.testing.assert_close(y, want, equal_nan=True)


def test_block_pointer_into_noinline_function():
    x = torch.randn(13, 16, device="cuda")
    out = torch.empty(8, 16, device="cuda")
    K.via_noinline[(1,)](x, out, 13, 16, BM=8, BN=16)
    want = torch.full((16, 16), float("nan"), device="cuda")
    want[:13] = x
    torch.testing.assert_close(out, want[:8] + want[8:], equal_nan=True)


@pytest.fixture
def torch_allocator():
    # device-side descriptors need set_allocator's memory on sm_90a, as in
    # Triton (their tensor maps are built there); elsewhere it goes unused
    from tritium.runtime._allocation import NullAllocator
    tritium.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    yield
    tritium.set_allocator(NullAllocator())


@pytest.mark.parametrize("M,N", [(64, 64), (45, 100)])
def test_device_descriptors(M, N, torch_allocator):
    x = torch.randn(M, N, device="cuda")
    y = torch.randn(M, N, device="cuda")
    y0 = y.clone()
    BM, BN = 16, 32
    K.descriptor_kernel[(tritium.cdiv(M, BM), tritium.cdiv(N, BN))](x, y, M, N, BM=BM, BN=BN)
    torch.testing.assert_close(y, x.abs() + y0 + x)


@tritium.jit
def _host_desc_copy(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], v * 2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_host_descriptors_through_kernel_launches(dtype, pad):
    M, N, BM, BN = 50, 72, 32, 32
    x = torch.randn(M, N, device="cuda").to(dtype)
    y = torch.zeros(64, 96, device="cuda", dtype=dtype)
    grid = (2, 3)
    for _ in range(2):   # the first launch compiles through Python; the second is the Rust entry's
        _host_desc_copy[grid](TensorDescriptor.from_tensor(x, [BM, BN], padding=pad),
                              TensorDescriptor.from_tensor(y, [BM, BN]), BM=BM, BN=BN)
    want = torch.full((64, 96), 0.0 if pad == "zero" else float("nan"), device="cuda", dtype=dtype)
    want[:M, :N] = x * 2
    torch.testing.assert_close(y, want, equal_nan=True)
    assert _host_desc_copy._fast is not None


def test_gather_and_scatter():
    x = torch.randn(40, 64, device="cuda", dtype=torch.float16)
    idx = torch.tensor([3, 39, 0, 7, 41, -2, 5, 5], device="cuda", dtype=torch.int32)
    out = torch.full((8, 64), 7.0, device="cuda", dtype=torch.float16)
    K.gather_kernel[(1,)](x, idx, out, 40, 64, B=8, C=64)
    want = torch.zeros(8, 64, device="cuda", dtype=torch.float16)
    for i, r in enumerate(idx.tolist()):
        if 0 <= r < 40:
            want[i] = x[r] * 2
    torch.testing.assert_close(out, want)
