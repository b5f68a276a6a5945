"""Where a launch's microseconds go: times each step of `kernel[grid](...)`
on its own (20,000 back-to-back calls, best of 3), next to Triton's full
launch of the same tiny kernel. Usage: python benches/gpu/launch_profile.py"""
from __future__ import annotations

import importlib
import time

import torch

import tritium
import tritium.language as tl
from tritium.runtime import driver

jit = importlib.import_module("tritium.runtime.jit")  # the module; tritium.runtime.jit is the decorator

N = 20000


@tritium.jit
def tiny(out_ptr, v):
    tl.store(out_ptr, v)


def per_call_us(f) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(N):
            f()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / N * 1e6)
    return best


def main() -> None:
    out = torch.empty(1, device="cuda", dtype=torch.int32)
    tiny[(1,)](out, 3)
    torch.cuda.synchronize()
    assert out.item() == 3
    launcher = tiny._cuda_launcher
    kernel = next(iter(launcher.table.values()))
    _, bound, _ = launcher.spec.bind(out, 5)
    stream = driver.current_stream(0)
    rows = [
        ("tiny[(1,)](out, 5)", lambda: tiny[(1,)](out, 5)),
        ("tiny.run(..., grid=)", lambda: tiny.run(out, 5, grid=(1,))),
        ("Launcher.__call__", lambda: launcher((1,), (out, 5), {})),
        ("  spec.bind (key)", lambda: launcher.spec.bind(out, 5)),
        ("  current_device()", driver.current_device),
        ("  current_stream()", lambda: driver.current_stream(0)),
        ("  interpret_requested()", jit.interpret_requested),
        ("  CudaKernel.launch (Rust+driver)", lambda: kernel.launch(1, 1, 1, stream, bound)),
    ]
    try:
        import triton
        import triton.language as ttl

        @triton.jit
        def ttiny(out_ptr, v):
            ttl.store(out_ptr, v)

        ttiny[(1,)](out, 3)
        rows.append(("triton ttiny[(1,)](out, 5)", lambda: ttiny[(1,)](out, 5)))
    except ImportError:
        pass
    for name, f in rows:
        print(f"{name:36} {per_call_us(f):8.2f} us")


if __name__ == "__main__":
    main()
