"""GPU checks for AxisInfo-driven vector widths and rematerialized layouts:
the kernels of tests/test_codegen_axis.py (2-D tiles with aranges expanded
both ways, masks, loops with vectorised accesses, row reductions stored in
their slice layout, noinline callees) run compiled on CUDA tensors and are
compared with torch."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import test_codegen_axis as K

pytestmark = pytest.mark.gpu


def dev_rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


@pytest.mark.parametrize("m,n,stride,bm,bn", [(64, 64, 64, 32, 64), (50, 60, 64, 32, 64), (33, 17, 19, 16, 32),
                                              (128, 256, 256, 8, 256)])
def test_tile_copy_with_masks(m, n, stride, bm, bn):
    torch.manual_seed(0)
    x = dev_rand(m * stride)
    y = torch.full_like(x, -7.0)
    K.tile_copy[(triton_cdiv(m, bm),)](x, y, m, n, stride, BM=bm, BN=bn)
    torch.cuda.synchronize()
    ref = torch.full_like(x, -7.0).view(m, stride)
    ref[:, :n] = x.view(m, stride)[:, :n]
    torch.testing.assert_close(y.view(m, stride), ref)


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


@pytest.mark.parametrize("bm,bn,stride", [(32, 32, 64), (16, 64, 70), (64, 16, 129)])
def test_aranges_expanded_both_ways(bm, bn, stride):
    # offs = c[None, :] * stride + r[:, None] with r = 2 * i + 1 (as i64)
    torch.manual_seed(0)
    size = (bn - 1) * stride + 2 * bm
    x = dev_rand(size)
    y = torch.zeros_like(x)
    K.tile_transposed_index[(1,)](x, y, stride, BM=bm, BN=bn)
    torch.cuda.synchronize()
    r = torch.arange(bm, device="cuda") * 2 + 1
    c = torch.arange(bn, device="cuda")
    offs = c[None, :] * stride + r[:, None]
    ref = torch.zeros_like(x)
    ref[offs.flatten()] = (x[offs] + c[None, :].float()).flatten()
    torch.testing.assert_close(y, ref)


@pytest.mark.parametrize("rows,cols,bm,bn", [(64, 128, 16, 128), (37, 100, 16, 128), (20, 256, 8, 256)])
@pytest.mark.parametrize("aligned_stride", [True, False])
def test_row_sum_stored_from_its_slice_layout(rows, cols, bm, bn, aligned_stride):
    torch.manual_seed(0)
    stride = cols if aligned_stride else cols + 3
    x = dev_rand(rows, stride)
    out = torch.full((rows,), -1.0, device="cuda")
    K.row_sum_2d[(triton_cdiv(rows, bm),)](x, out, rows, cols, stride, BM=bm, BN=bn)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x[:, :cols].sum(dim=1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("rows,cols,bm,bn", [(64, 256, 8, 256), (21, 200, 8, 256), (16, 64, 4, 64)])
def test_layer_norm_2d(rows, cols, bm, bn):
    torch.manual_seed(0)
    x = dev_rand(rows, cols)
    y = torch.zeros_like(x)
    K.layer_norm_2d[(triton_cdiv(rows, bm),)](x, y, rows, cols, cols, BM=bm, BN=bn)
    torch.cuda.synchronize()
    ref = torch.nn.functional.layer_norm(x, (cols,), eps=1e-5)
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows,cols,block", [(8, 4096, 1024), (5, 1000, 256), (3, 5000, 1024)])
def test_layer_norm_column_loop(rows, cols, block):
    torch.manual_seed(0)
    x = dev_rand(rows, cols)
    w = dev_rand(cols)
    y = torch.zeros_like(x)
    K.ln_columns_loop[(rows,)](x, y, w, cols, cols, BLOCK=block)
    torch.cuda.synchronize()
    ref = (x - x.mean(dim=1, keepdim=True)) * w
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n_iter", [1, 5])
def test_loop_carried_pointers(n_iter):
    torch.manual_seed(0)
    x = dev_rand(512 * n_iter)
    y = torch.zeros_like(x)
    K.loop_carried_pointer[(1,)](x, y, n_iter, BLOCK=512)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, x + 1.0)


@pytest.mark.parametrize("stride", [1, 3, 16])
def test_strided_copy(stride):
    torch.manual_seed(0)
    x = dev_rand(512 * stride)
    y = torch.zeros_like(x)
    K.strided_copy[(1,)](x, y, stride, BLOCK=512)
    torch.cuda.synchronize()
    ref = torch.zeros_like(x)
    ref[::stride] = x[::stride]
    torch.testing.assert_close(y, ref)


@pytest.mark.parametrize("start", [0, 16, 48])
def test_multiple_of_hint(start):
    torch.manual_seed(0)
    x = dev_rand(2048, dtype=torch.float16)
    y = torch.zeros_like(x)
    K.hinted_copy[(1,)](x, y, start, BLOCK=1024)
    torch.cuda.synchronize()
    ref = torch.zeros_like(x)
    ref[start:start + 1024] = x[start:start + 1024]
    torch.testing.assert_close(y, ref)


@pytest.mark.parametrize("kernel", [K.two_aligned_sites, K.one_misaligned_site], ids=["aligned", "misaligned"])
def test_noinline_callee_vector_widths_are_correct(kernel):
    torch.manual_seed(0)
    x = dev_rand(2048)
    y = torch.zeros_like(x)
    kernel[(1,)](x, y, BLOCK=512)
    torch.cuda.synchronize()
    ref = torch.zeros_like(x)
    second = 512 if kernel is K.two_aligned_sites else 1
    ref[second:second + 512] = x[second:second + 512] * 2.0
    ref[:512] = x[:512] * 2.0
    torch.testing.assert_close(y, ref)
