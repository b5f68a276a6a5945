"""Compiled kernels on a real GPU (marked `gpu`, skipped without one): results
against torch for float and int elementwise kernels, masking, scalars of every
width, streams, the cache, AOT kernels, CUDA errors as Python exceptions, and
the Rust launch entry (table hits and misses, keywords, options, DLPack)."""
from __future__ import annotations

import sys

import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.compile import compile as tcompile
from tritium.runtime import driver

from test_dlpack import DLPackOnly

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


# -- the Rust launch entry (_core.FastLauncher) ----------------------------------

@tritium.jit
def scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


def fresh(fn):
    """A new JITFunction of the same Python function: empty tables."""
    return tritium.jit(fn.fn)


def test_second_launch_takes_the_rust_entry_and_hits():
    k = fresh(add_kernel)
    x = torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    r1 = k[(4,)](x, x, out, 4096, BLOCK=1024)            # compiles (Python path)
    fast = k._cuda_launcher.fast
    assert k._fast is fast and len(fast) == 1
    assert type(k[(4,)]).__name__ == "GridLaunch"
    out.zero_()
    r2 = k[(4,)](x, x, out, 4096, BLOCK=1024)            # keywords that are parameters stay on the fast path
    r3 = k.run(x, x, out, 4096, 1024, grid=(4,))
    assert r1 is r2 is r3 and len(fast) == 1 and len(k._cuda_launcher.table) == 1
    torch.testing.assert_close(out, 2 * x)


def test_grids_change_between_hits():
    k = fresh(grid2d_kernel)
    for r, c in [(3, 4), (2, 5), (1, 1), (4, 2)]:
        for grid in ((r, c), (r, c, 1)):
            out = torch.full((r * c * 64,), -1, device="cuda", dtype=torch.int32)
            k[grid](out, W=64)
            rr = torch.arange(r).repeat_interleave(c * 64)
            cc = torch.arange(c * 64).repeat(r)
            assert torch.equal(out.cpu(), (rr * 1000 + cc).to(torch.int32))
    assert len(k._cuda_launcher.fast) == 1


def test_new_keys_miss_then_hit():
    k = fresh(scale_kernel)
    fast = None
    seen = set()
    for dtype in (torch.float32, torch.float16):
        for n in (4096, 1000):          # n % 16: two divisibility variants
            for offset in (0, 1):       # aligned / misaligned x
                x = torch.randn(n + 1, device="cuda", dtype=dtype)[offset:offset + n]
                out = torch.empty(n, device="cuda", dtype=dtype)
                for _ in range(2):
                    out.zero_()
                    kern = k[(triton_cdiv(n, 256),)](x, out, n, 3.0, BLOCK=256)
                    torch.testing.assert_close(out, x * 3.0)
                seen.add(id(kern))
                fast = k._cuda_launcher.fast
    assert len(fast) == len(k._cuda_launcher.table) == len(seen) == 8


@tritium.jit
def affine_kernel(x_ptr, out_ptr, n, SCALE: tl.constexpr, SHIFT: tl.constexpr, FLIP: tl.constexpr,
                  TAG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(x_ptr + offs, mask=m) * SCALE
    if SHIFT is not None:
        y = y + SHIFT
    if FLIP:
        y = -y
    tl.store(out_ptr + offs, y, mask=m)


@pytest.mark.parametrize("scale,shift,flip,tag", [(2, 1, False, None), (2, 1, True, None), (3, None, False, None),
                                                  (2.5, 1, False, None), (2, 1, False, "a")])
def test_constexpr_kinds_hit_the_rust_table(scale, shift, flip, tag):
    """Int, bool and None constexprs are held inline in the native table's
    key; a float or string constexpr keeps the Python key. Either way the
    second launch is served by the Rust entry, without the Python path."""
    k = fresh(affine_kernel)
    x = torch.randn(3000, device="cuda")
    out = torch.empty_like(x)
    want = (x * scale + (0 if shift is None else shift)) * (-1 if flip else 1)

    def go():
        out.zero_()
        k[(3,)](x, out, 3000, SCALE=scale, SHIFT=shift, FLIP=flip, TAG=tag, BLOCK=1024)
        torch.testing.assert_close(out, want)

    go()
    fast = k._cuda_launcher.fast
    assert len(fast) == 1
    calls = []
    real = k._run_slow
    k._run_slow = lambda *a: calls.append(a) or real(*a)
    try:
        go()
        go()
    finally:
        del k._run_slow
    assert calls == [] and len(fast) == 1


def test_launch_options_take_the_python_path_and_stay_correct():
    k = fresh(scale_kernel)
    x = torch.randn(3000, device="cuda")
    out = torch.empty_like(x)
    k[(12,)](x, out, 3000, 2.0, BLOCK=256)
    k[(12,)](x, out, 3000, 2.0, BLOCK=256, num_warps=2)
    torch.testing.assert_close(out, 2 * x)
    assert len(k._cuda_launcher.fast) == 1 and len(k._cuda_launcher.table) == 2
    s = torch.cuda.Stream()
    out.zero_()
    k[(12,)](x, out, 3000, 2.0, BLOCK=256, stream=s.cuda_stream)
    s.synchronize()
    torch.testing.assert_close(out, 2 * x)
    out.zero_()
    k[lambda meta: (triton_cdiv(meta["n"], meta["BLOCK"]),)](x, out, 3000, 2.0, BLOCK=256)
    torch.testing.assert_close(out, 2 * x)


def test_rust_entry_launches_on_torchs_current_stream():
    k = fresh(add_kernel)
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    k[(n // 1024,)](x, x, out, n, BLOCK=1024)
    s = torch.cuda.Stream()
    out.zero_()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)       # keeps s busy for a while
        out.zero_()                         # runs after the sleep, on s
        k[(n // 1024,)](x, x, out, n, BLOCK=1024)
    assert len(k._cuda_launcher.fast) == 1
    torch.cuda.synchronize()
    # launched on any other stream, the kernel would have run before the
    # zero_() above and its result would be gone
    torch.testing.assert_close(out, 2 * x)


def test_torch_tensors_use_the_direct_reads():
    k = fresh(add_kernel)
    x = torch.randn(64, device="cuda")
    k[(1,)](x, x, x, 64, BLOCK=64)
    k[(1,)](x, x, x, 64, BLOCK=64)
    seen = {t: (how, direct, c) for t, how, direct, c in _core.KeyPlanProbe(k._cuda_launcher.spec._plan).type_cache()}
    # on the CPython versions whose descriptor layout cpython.rs knows, the
    # C functions of Tensor.data_ptr and Tensor.dtype are called directly
    assert seen[torch.Tensor] == ("data_ptr", True, (3, 10) <= sys.version_info[:2] <= (3, 13))


def test_errors_are_the_same_on_the_rust_entry():
    k = fresh(add_kernel)
    x = torch.randn(16, device="cuda")
    k[(1,)](x, x, x, 16, BLOCK=16)
    with pytest.raises(TypeError, match="add_kernel"):
        k[(1,)](x, x, x, BLOCK=16)                  # missing n
    with pytest.raises(TypeError, match="add_kernel"):
        k[(1,)](x, x, x, 16, 1, BLOCK=16)           # one too many
    with pytest.raises(ValueError, match="grid"):
        k[(1, 70000)](x, x, x, 16, BLOCK=16)        # too large: the same check on both paths
    with pytest.raises(ValueError, match="grid"):
        k[(-1,)](x, x, x, 16, BLOCK=16)
    with pytest.raises(TypeError, match="unexpected keyword"):
        k[(1,)](x, x, x, 16, BLOCK=16, bogus=1)
    with pytest.raises(TypeError, match="GPU tensor"):
        k[(1,)](x, x, x.cpu().numpy(), 16, BLOCK=16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_dlpack_arguments(dtype):
    k = fresh(add_kernel)
    x = torch.randn(3000, device="cuda", dtype=dtype)
    y = torch.randn(3000, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    for _ in range(2):                              # the Python path, then the Rust entry
        out.zero_()
        k[(3,)](DLPackOnly(x), DLPackOnly(y), DLPackOnly(out), 3000, BLOCK=1024)
        torch.testing.assert_close(out, x + y)
    assert len(k._cuda_launcher.fast) == 1
    # a view starts at its first element (data pointer + byte offset)
    out.zero_()
    k[(3,)](DLPackOnly(x[1:]), DLPackOnly(y[1:]), DLPackOnly(out[1:]), 2999, BLOCK=1024)
    torch.testing.assert_close(out[1:], x[1:] + y[1:])


def test_cpu_dlpack_argument_is_a_type_error():
    x = torch.randn(16, device="cuda")
    with pytest.raises(TypeError, match=r"kernel 'add_kernel', argument 'out_ptr'.*device type 1"):
        add_kernel[(1,)](x, x, DLPackOnly(torch.zeros(16)), 16, BLOCK=16)


def test_interpret_toggle_after_gpu_launches():
    """A kernel launched compiled, then switched to the interpreter with
    `kernel.interpret = True`, runs in the interpreter (NumPy arrays work),
    and compiled again once switched back."""
    import numpy as np
    torch = pytest.importorskip("torch")
    n = 256
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, n, BLOCK=256)
    add_kernel[(1,)](x, y, out, n, BLOCK=256)       # the Rust entry is attached now
    xn, yn = x.cpu().numpy(), y.cpu().numpy()
    on = np.empty_like(xn)
    add_kernel.interpret = True
    try:
        add_kernel[(1,)](xn, yn, on, n, BLOCK=256)
    finally:
        add_kernel.interpret = False
    np.testing.assert_allclose(on, xn + yn)
    out.zero_()
    add_kernel[(1,)](x, y, out, n, BLOCK=256)
    torch.testing.assert_close(out, x + y)
