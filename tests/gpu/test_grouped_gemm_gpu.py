"""The grouped GEMM (tests/kernels/grouped_gemm.py) on the GPU against
torch: Triton's tutorial 08 problems and check (torch.rand inputs, fp16
outputs near 256 compared with atol=1e-2, rtol=0: only results bit-equal to
cuBLAS's pass, so K must be accumulated in the tensor cores in cuBLAS's
order) at each of the tutorial's tile configurations, dot_bench's 16
problems on randn inputs, and the two ways of writing the accumulation
giving the same bits."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from kernels.grouped_gemm import grouped_gemm_kernel  # noqa: E402

pytestmark = pytest.mark.gpu

# tutorial 08's autotune configurations: (BM, BN, BK, programs); None is the SM count
CONFIGS = [(128, 128, 32, 84), (128, 128, 32, 128), (64, 64, 32, 84), (64, 64, 32, 128), (128, 128, 64, None),
           (64, 128, 64, None)]


def _launch(a_list, b_list, bm, bn, bk, programs=None, plus_equals=True, warps=4, stages=3, hint=False):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    programs = programs or sms
    c_list = [torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=torch.float16) for a, b in zip(a_list, b_list)]
    table = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)  # noqa: E731
    shapes = torch.tensor([d for a, b in zip(a_list, b_list) for d in (a.shape[0], b.shape[1], a.shape[1])],
                          device="cuda", dtype=torch.int32)
    strides = torch.tensor([s for a, b, c in zip(a_list, b_list, c_list) for s in (a.stride(0), b.stride(0), c.stride(0))],
                           device="cuda", dtype=torch.int32)
    a_t, b_t, c_t = table(a_list), table(b_list), table(c_list)
    grouped_gemm_kernel[(programs,)](a_t, b_t, c_t, a_list[0], b_list[0], c_list[0], shapes, strides, len(a_list),
                                     PROGRAMS=programs, BM=bm, BN=bn, BK=bk, BY_OFFSET=False, PLUS_EQUALS=plus_equals,
                                     HINT=hint, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    return c_list


def _tutorial_problems():
    g = torch.Generator(device="cuda").manual_seed(8)
    sizes = [1024, 512, 256, 128]
    a = [torch.rand((s, s), device="cuda", dtype=torch.float16, generator=g) for s in sizes]
    b = [torch.rand((s, s), device="cuda", dtype=torch.float16, generator=g) for s in sizes]
    return a, b


@pytest.mark.parametrize("hint", [False, True], ids=["unaligned", "multiple_of"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "x".join(map(str, c[:3])) + f"-{c[3] or 'sms'}")
def test_tutorial_08_allclose(config, hint):
    # hinted (as the tutorial is), the K loop is pipelined with cp.async
    bm, bn, bk, programs = config
    a, b = _tutorial_problems()
    out = _launch(a, b, bm, bn, bk, programs, hint=hint)
    for x, y, c in zip(a, b, out):
        ref = torch.matmul(x, y)
        diff = (ref.float() - c.float()).abs()
        assert torch.allclose(ref, c, atol=1e-2, rtol=0), (x.shape, diff.max().item(), int((diff > 1e-2).sum()))


def test_bench_problems_against_fp32():
    g = torch.Generator(device="cuda").manual_seed(16)
    sizes = [1024, 512, 256, 128] * 4
    a = [torch.randn((s, s), device="cuda", generator=g).to(torch.float16) for s in sizes]
    b = [torch.randn((s, s), device="cuda", generator=g).to(torch.float16) for s in sizes]
    out = _launch(a, b, 128, 128, 32)
    for x, y, c in zip(a, b, out):
        ref = x.float() @ y.float()
        assert (c.float() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()


@pytest.mark.parametrize("hint", [False, True], ids=["unaligned", "multiple_of"])
@pytest.mark.parametrize("tile", [(128, 128, 32), (64, 64, 32)], ids=lambda t: "x".join(map(str, t)))
def test_plus_equals_and_acc_operand_give_the_same_bits(tile, hint):
    a, b = _tutorial_problems()
    fused = _launch(a, b, *tile, plus_equals=True, hint=hint)
    chained = _launch(a, b, *tile, plus_equals=False, hint=hint)
    for x, y in zip(fused, chained):
        assert torch.equal(x, y)
