"""Triton's device API and timing on the GPU (marked `gpu`): driver.active's
queries against torch's and the driver's own answers, warmup's compiled
kernel (registers from ptxas or the driver), OutOfResources for a kernel
that needs more shared memory than the device has, do_bench and
do_bench_cudagraph on a real kernel, and tensors on the host refused."""
from __future__ import annotations

import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime.errors import OutOfResources

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    # a [M, N] fp32 transpose goes through M*N*4 bytes of shared memory
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(y_ptr + cols * M + rows, tl.trans(x).trans())


def test_driver_queries_agree_with_torch():
    active = triton.runtime.driver.active
    assert active.get_current_device() == torch.cuda.current_device()
    assert active.get_active_torch_device() == torch.device("cuda", torch.cuda.current_device())
    assert active.get_current_stream() == torch.cuda.current_stream().cuda_stream
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        assert active.get_current_stream() == s.cuda_stream
    target = active.get_current_target()
    cap = torch.cuda.get_device_capability()
    assert (target.backend, target.arch, target.warp_size) == ("cuda", cap[0] * 10 + cap[1], 32)
    props = active.utils.get_device_properties(torch.cuda.current_device())
    tprops = torch.cuda.get_device_properties(torch.cuda.current_device())
    assert props["multiprocessor_count"] == tprops.multi_processor_count
    assert props["warpSize"] == 32 and props["max_num_regs"] == 65536
    assert props["max_shared_mem"] >= 99 * 1024 and props["mem_bus_width"] > 0 and props["sm_clock_rate"] > 0
    assert active.get_device_interface() is torch.cuda
    assert triton.testing.get_dram_gbps() > 100


def test_warmup_kernel_reports_registers_and_launches():
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    k = copy_kernel.warmup(x, y, 1000, BLOCK=256, grid=(4,))
    k._init_handles()
    assert k.n_regs > 0 and k.n_spills == 0 and k.metadata.num_warps == 4
    k[(4, 1, 1)](x, y, 1000, 256)
    torch.cuda.synchronize()
    assert torch.equal(x, y)


def test_too_much_shared_memory_is_out_of_resources():
    x = torch.zeros(512 * 256, device="cuda")
    y = torch.empty_like(x)
    with pytest.raises(OutOfResources) as info:
        transpose_kernel[(1,)](x, y, 512, 256)
    assert info.value.name == "shared memory" and info.value.required > info.value.limit


def test_do_bench_times_a_copy():
    x = torch.randn(1 << 24, device="cuda")
    y = torch.empty_like(x)

    def run():
        copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    ms, lo, hi = triton.testing.do_bench(run, quantiles=[0.5, 0.2, 0.8])
    assert 0 < lo <= ms <= hi < 50
    # 128 MiB moved: a modern GPU takes well under 5 ms, and no less than 0.01 ms
    assert 0.01 < triton.testing.do_bench(run, return_mode="min") < 5
    assert len(triton.testing.do_bench(run, rep=10, return_mode="all")) >= 1
    graph_ms = triton.testing.do_bench_cudagraph(run)
    assert 0.01 < graph_ms < 5


def test_host_tensors_are_refused_with_a_clear_error():
    x = torch.zeros(64)          # on the CPU
    y = torch.zeros(64, device="cuda")
    with pytest.raises(ValueError, match="argument .x_ptr.: the tensor is on cpu"):
        copy_kernel[(1,)](x, y, 64, BLOCK=64)
    torch.cuda.synchronize()     # the context is still usable
    copy_kernel[(1,)](y, y, 64, BLOCK=64)
    torch.cuda.synchronize()


class CupyLike:
    """A device array known only by __cuda_array_interface__ (CuPy, Numba)."""

    def __init__(self, t):
        self.t, self.dtype = t, t.dtype

    @property
    def __cuda_array_interface__(self):
        return self.t.__cuda_array_interface__


class DLPackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@pytest.mark.parametrize("wrap", [lambda t: t, CupyLike, DLPackOnly], ids=["torch", "cuda_array_interface", "dlpack"])
def test_array_kinds_launch(wrap):
    x = torch.arange(300, device="cuda", dtype=torch.float32)
    y = torch.zeros_like(x)
    for _ in range(3):     # the first launch is Python's, the next ones the Rust entry's
        y.zero_()
        copy_kernel[(triton.cdiv(300, 128),)](wrap(x), wrap(y), 300, BLOCK=128)
        torch.cuda.synchronize()
        assert torch.equal(x, y)


def test_host_tensor_after_device_launches_is_refused():
    x = torch.ones(64, device="cuda")
    y = torch.zeros(64, device="cuda")
    for _ in range(3):
        copy_kernel[(1,)](x, y, 64, BLOCK=64)
    with pytest.raises(ValueError, match="argument 'y_ptr': the tensor is on cpu"):
        copy_kernel[(1,)](x, torch.zeros(64), 64, BLOCK=64)
    import numpy as np
    with pytest.raises(TypeError, match="argument 'x_ptr'"):
        copy_kernel[(1,)](np.ones(64, np.float32), y, 64, BLOCK=64)
    torch.cuda.synchronize()
    assert torch.equal(x, y)
