"""`triton.profiler` and `triton._C.libtriton.nvidia.cublas.CublasLt` on a
real GPU (marked `gpu`): kernel launches through the Python launch path
while a session is active (the Rust fast path detached, then given back),
each timed with CUDA events to within a few times do_bench's figure; a scope
around torch work timed at the scope; cuBLASLt's product equal to torch's
for fp16, bf16, fp32 and fp8 e4m3, on the current stream."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium as triton
import tritium.language as tl
import tritium.profiler as proton
from tritium._C.libtriton import nvidia
from tritium.profiler import viewer
from tritium.runtime import launch_hooks

pytestmark = pytest.mark.gpu


def _bytes(grid, kernel, args):
    return {"name": f"{kernel.name} [n={args['n']}]", "bytes": 12 * args["n"]}


@triton.jit(launch_metadata=_bytes)
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@pytest.fixture(autouse=True)
def in_tmp(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    yield
    proton.finalize()
    assert launch_hooks.hook is None


def _frame(frame, name):
    found = [c for c in frame["children"] if c["frame"]["name"] == name]
    assert len(found) == 1, [c["frame"]["name"] for c in frame["children"]]
    return found[0]


def test_launches_are_recorded_and_timed():
    n = 1 << 24
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    add[grid](x, y, out, n, BLOCK=1024)         # compiles; from now on the Rust fast path launches it
    assert add._fast is not None
    bench_ms = triton.testing.do_bench(lambda: add[grid](x, y, out, n, BLOCK=1024))
    sid = proton.start("gpu", hook="triton")
    assert add._fast is None
    with proton.scope("loop"):
        for _ in range(50):
            add[grid](x, y, out, n, BLOCK=1024)
    proton.deactivate(sid)
    assert add._fast is not None
    add[grid](x, y, out, n, BLOCK=1024)         # not recorded
    proton.finalize()
    torch.testing.assert_close(out, x + y)
    root, devices = json.load(open("gpu.hatchet"))
    kernel = _frame(_frame(root, "loop"), f"add [n={n}]")["metrics"]
    assert kernel["count"] == 50 and kernel["bytes"] == 50 * 12 * n and kernel["device_type"] == "CUDA"
    per_launch_ms = kernel["time (ns)"] / 50 / 1e6
    print(f"add: {per_launch_ms:.4f} ms a launch under the profiler, do_bench {bench_ms:.4f} ms")
    assert bench_ms / 3 < per_launch_ms < bench_ms * 3
    assert set(devices["CUDA"]["0"]) == {"arch", "num_sms", "clock_rate", "memory_clock_rate", "bus_width"}
    tree, cols = viewer.parse(["gbyte/s", "time/ms"], "gpu.hatchet")
    gbps = tree.children[0].values["gbyte/s (inc)"]
    assert 50 < gbps < 20_000, gbps


def test_a_scope_around_torch_work_is_timed_at_the_scope():
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    bench_ms = triton.testing.do_bench(lambda: torch.matmul(a, a))
    proton.start("torch", hook="triton")
    for _ in range(20):
        with proton.scope("torch.matmul", {"flops16": 2.0 * 2048 ** 3}):
            torch.matmul(a, a)
    proton.finalize()
    m = _frame(json.load(open("torch.hatchet"))[0], "torch.matmul")["metrics"]
    assert m["count"] == 20
    per_call_ms = m["time (ns)"] / 20 / 1e6
    print(f"torch.matmul: {per_call_ms:.4f} ms a call in a scope, do_bench {bench_ms:.4f} ms")
    assert bench_ms / 3 < per_call_ms < bench_ms * 3


@pytest.fixture(scope="module")
def cublas():
    return nvidia.cublas.CublasLt(torch.empty(32 * 1024 * 1024, device="cuda", dtype=torch.uint8))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_cublas_matmul_equals_torch(cublas, dtype):
    torch.manual_seed(0)
    M, N, K = 384, 256, 512
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(N, K, device="cuda", dtype=dtype)
    c = torch.empty(M, N, device="cuda", dtype=dtype)
    cublas.matmul(a, b, c)
    want = a.float() @ b.float().T
    tol = {torch.float16: 2e-2, torch.bfloat16: 1e-1, torch.float32: 5e-2}[dtype]   # fp32 may use TF32
    torch.testing.assert_close(c.float(), want, atol=tol * 10, rtol=tol)


def test_cublas_fp8_matmul_equals_torch(cublas):
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("fp8 matmul needs sm_89 or later")
    torch.manual_seed(0)
    M, N, K = 256, 512, 128
    a = (torch.rand(M, K, device="cuda") - 0.5).to(torch.float8_e4m3fn)
    b = (torch.rand(N, K, device="cuda") - 0.5).to(torch.float8_e4m3fn)
    c = torch.empty(M, N, device="cuda", dtype=torch.float8_e4m3fn)
    cublas.matmul(a, b, c)
    exact = a.float() @ b.float().T
    # the fp32 sum rounded once to fp8 (3 mantissa bits: within 1/16 relative), fast accumulation's
    # error on top: within one fp8 step
    torch.testing.assert_close(c.float(), exact, atol=2 ** -8, rtol=1 / 8)


def test_cublas_runs_on_the_current_stream(cublas):
    a = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(128, 256, device="cuda", dtype=torch.float16)
    c = torch.zeros(512, 128, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        cublas.matmul(a, b, c)
        done = torch.cuda.Event()
        done.record()
    done.synchronize()
    torch.testing.assert_close(c, (a.float() @ b.float().T).half(), atol=5e-2, rtol=2e-2)


def test_cublas_refuses_bad_operands(cublas):
    a = torch.zeros(8, 32, device="cuda", dtype=torch.int8)
    with pytest.raises(RuntimeError, match="unsupported dtype torch.int8"):
        cublas.matmul(a, torch.zeros(16, 32, device="cuda", dtype=torch.int8),
                      torch.zeros(8, 16, device="cuda", dtype=torch.int8))
    h = torch.zeros(8, 32, device="cuda", dtype=torch.float16)
    with pytest.raises(RuntimeError, match="b is given transposed"):
        cublas.matmul(h, torch.zeros(32, 16, device="cuda", dtype=torch.float16),
                      torch.zeros(8, 16, device="cuda", dtype=torch.float16))
