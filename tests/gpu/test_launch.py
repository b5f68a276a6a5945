"""Compiled kernels on a real GPU (marked `gpu`, skipped without one): results
against torch for float and int elementwise kernels, masking, scalars of every
width, streams, the cache, AOT kernels, and CUDA errors as Python exceptions."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium.compile import compile as tcompile
from tritium.runtime import driver

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@tritium.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@tritium.jit
def axpb_kernel(x_ptr, out_ptr, n, a, b, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = x * a + b
    y = tl.where(flag, y, -y)
    tl.store(out_ptr + offs, y, mask=m)


@tritium.jit
def int_kernel(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, (x * 3 + k) // 2 - (x % 5) + tl.maximum(x, k), mask=m)


@tritium.jit
def grid2d_kernel(out_ptr, W: tl.constexpr):
    r = tl.program_id(0)
    c = tl.program_id(1) * W + tl.arange(0, W)
    tl.store(out_ptr + r * (tl.num_programs(1) * W) + c, r * 1000 + c)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [1, 1000, 4096, 98432])
def test_vector_add(dtype, n):
    x = torch.randn(n, device="cuda", dtype=dtype)
    y = torch.randn(n, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    add_kernel[(triton_cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.testing.assert_close(out, x + y)


@pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
def test_masked_tail_and_num_warps(num_warps):
    n = 1000
    x = torch.randn(n + 64, device="cuda")
    out = torch.full((n + 64,), 7.0, device="cuda")
    axpb_kernel[(triton_cdiv(n, 256),)](x, out, n, 2.5, -1.0, True, BLOCK=256, num_warps=num_warps)
    torch.testing.assert_close(out[:n], x[:n] * 2.5 - 1.0)
    assert torch.all(out[n:] == 7.0)        # masked lanes wrote nothing
    axpb_kernel[(triton_cdiv(n, 256),)](x, out, n, 2.5, -1.0, False, BLOCK=256, num_warps=num_warps)
    torch.testing.assert_close(out[:n], -(x[:n] * 2.5 - 1.0))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_int_arithmetic(dtype):
    n = 5000
    x = torch.randint(-1000, 1000, (n,), device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    int_kernel[(triton_cdiv(n, 512),)](x, out, n, 17, BLOCK=512)
    xs = x.cpu()
    expect = torch.div(xs * 3 + 17, 2, rounding_mode="trunc") - torch.fmod(xs, 5) + torch.maximum(xs, torch.tensor(17, dtype=dtype))
    assert torch.equal(out.cpu(), expect)


def test_2d_grid():
    out = torch.empty(3 * 4 * 64, device="cuda", dtype=torch.int32)
    grid2d_kernel[(3, 4)](out, W=64)
    r = torch.arange(3).repeat_interleave(4 * 64)
    c = torch.arange(4 * 64).repeat(3)
    assert torch.equal(out.cpu(), (r * 1000 + c).to(torch.int32))


def test_launch_on_torch_stream():
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        add_kernel[(n // 1024,)](x, x, out, n, BLOCK=1024)
    s.synchronize()
    torch.testing.assert_close(out, 2 * x)


def test_empty_grid_is_a_no_op():
    out = torch.zeros(16, device="cuda")
    add_kernel[(0,)](out, out, out, 16, BLOCK=16)
    assert torch.all(out == 0)


def test_aot_kernel_launch():
    ck = tcompile(add_kernel, signature="x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32",
                                 constexprs={"BLOCK": 256}, target=driver.target_for(0))
    x = torch.randn(1000, device="cuda")
    out = torch.empty_like(x)
    ck[(4,)](x, x, out, 1000, 256)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2 * x)
    assert ck.metadata["registers"] > 0


def test_driver_jit_without_ptxas(monkeypatch, tmp_path):
    monkeypatch.setattr(driver, "ptxas_path", lambda: None)
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    ck = tcompile(add_kernel, signature="*fp32,*fp32,*fp32,i32", constexprs={"BLOCK": 128},
                                 target=driver.target_for(0))
    assert "cubin" not in ck.asm
    x = torch.randn(300, device="cuda")
    out = torch.empty_like(x)
    ck[(3,)](x, x, out, 300, 128)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2 * x)
    assert ck.metadata["registers"] > 0      # read back from cuFuncGetAttribute


def test_bad_arguments_are_python_errors():
    x = torch.randn(16, device="cuda")
    # a string is specialized as a constexpr (as in Triton), so using it as a
    # pointer is a compile error at the line that does so
    with pytest.raises(tritium.CompilationError, match="cannot convert 'nope'"):
        add_kernel[(1,)](x, x, "nope", 16, BLOCK=16)
    with pytest.raises(ValueError, match="grid"):
        add_kernel[(1, 70000)](x, x, x, 16, BLOCK=16)


def test_device_info():
    info = driver.device_info(0)
    assert info["capability"][0] >= 8 and info["multiprocessors"] > 0
    assert info["max_shared_per_block_optin"] >= info["max_shared_per_block"]


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b
