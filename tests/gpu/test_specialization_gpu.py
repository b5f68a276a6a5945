"""Specialization on the GPU: the same kernel launched with arguments that
differ in a specialization fact compiles one variant per fact set, each with
the code the fact allows, and every variant gives the right answer."""
import pytest

import tritium
import tritium.language as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


@tritium.jit
def strided_copy(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride))


@tritium.jit
def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


def test_stride_equal_to_1_and_2_are_two_correct_variants():
    x = torch.randn(4096, device="cuda")
    for stride in (1, 2, 1):
        y = torch.empty(1024, device="cuda")
        strided_copy[(1,)](x, y, stride, BLOCK=1024)
        torch.testing.assert_close(y, x[::stride][:1024], rtol=0, atol=0)
    assert len(strided_copy._cuda_launcher.table) == 2


def test_aligned_and_misaligned_pointers_are_two_correct_variants():
    base = torch.randn(1 << 16, device="cuda")
    out = torch.empty_like(base)
    n = 4096
    for off in (0, 1, 0):   # x[1:] is 4 bytes past a 16-byte boundary
        x, y = base[off:off + n], out[off:off + n]
        add_one[(n // 1024,)](x, y, n, BLOCK=1024)
        torch.testing.assert_close(y, x + 1.0, rtol=0, atol=0)
    assert len(add_one._cuda_launcher.table) == 2
