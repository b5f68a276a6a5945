"""GPU checks for `tl.inline_asm_elementwise` (named apart from tests/test_inline_asm.py,
whose kernels it reuses): the asm runs per element (or per `pack` elements, packed
into 32-bit registers) and the results match torch on the same inputs."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

from test_inline_asm import half_kernel, shl_kernel, two_results_kernel

pytestmark = pytest.mark.gpu


@tritium.jit
def bfi_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    # bit-field insert of y's low byte into x's bits 8..15; 7 broadcasts as a scalar
    out = tl.inline_asm_elementwise("bfi.b32 $0, $2, $1, 8, 8; add.s32 $0, $0, $3;", "=r,r,r,r",
                                    [x, y, 7], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, out, mask=m)


@tritium.jit
def xor_halves_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # pack=2 on 16-bit: two elements share one 32-bit register
    y = tl.inline_asm_elementwise("xor.b32 $0, $1, 0x7fff7fff;", "=r,r", [x], dtype=tl.int16, is_pure=True, pack=2)
    tl.store(out_ptr + offs, y)


def test_shl():
    x = torch.randint(-2**20, 2**20, (512,), dtype=torch.int32, device="cuda")
    y = torch.empty_like(x)
    shl_kernel[(1,)](x, y, BLOCK=512)
    assert torch.equal(y, x << 3)


def test_scalar_broadcast_and_bfi():
    n = 3000
    x = torch.randint(-2**30, 2**30, (n,), dtype=torch.int32, device="cuda")
    y = torch.randint(-2**30, 2**30, (n,), dtype=torch.int32, device="cuda")
    out = torch.empty_like(x)
    bfi_kernel[((n + 1023) // 1024,)](x, y, out, n, BLOCK=1024)
    want = ((x & ~0xFF00) | ((y & 0xFF) << 8)) + 7
    assert torch.equal(out, want)


def test_two_results_pack4():
    a = torch.randint(0, 256, (1024,), dtype=torch.uint8, device="cuda")
    b = torch.randn(1024, device="cuda") * 200
    c = torch.empty(1024, dtype=torch.int32, device="cuda")
    d = torch.empty(1024, dtype=torch.float32, device="cuda")
    two_results_kernel[(1,)](a, b, c, d, BLOCK=1024)
    assert torch.equal(c, a.to(torch.int32))
    assert torch.equal(d, torch.maximum(a.to(torch.float32), b))


@tritium.jit
def xor_bytes_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("xor.b32 $0, $1, 0x5a3c0ff0;", "=r,r", [x], dtype=tl.int8, is_pure=True, pack=4)
    tl.store(y_ptr + offs, y)


def test_pack4_bytes():
    """Which elements share a register is unspecified (as in Triton); byte j of
    every register is xor-ed with the same mask byte, so check the multiset
    of results per mask byte and that every element got one of the four masks."""
    x = torch.randint(-128, 128, (2048,), dtype=torch.int8, device="cuda")
    y = torch.empty_like(x)
    xor_bytes_kernel[(1,)](x, y, BLOCK=2048)
    diff = (x ^ y).view(torch.uint8).cpu()
    masks = torch.tensor([0xF0, 0x0F, 0x3C, 0x5A], dtype=torch.uint8)
    assert bool(torch.isin(diff, masks).all())
    counts = torch.stack([(diff == m).sum() for m in masks])
    assert bool((counts == 2048 // 4).all()), counts  # one element per byte position per register


def test_pack2_halfwords():
    x = torch.randint(-2**15, 2**15 - 1, (512,), dtype=torch.int16, device="cuda")
    y = torch.empty_like(x)
    xor_halves_kernel[(1,)](x, y, BLOCK=512)
    assert torch.equal(y, x ^ 0x7FFF)


def test_f16_with_scalar():
    x = torch.randn(128, dtype=torch.float16, device="cuda")
    y = torch.empty_like(x)
    half_kernel[(1,)](x, 0.5, y, BLOCK=128)
    assert torch.equal(y, x + torch.tensor(0.5, dtype=torch.float16, device="cuda"))
