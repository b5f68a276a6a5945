"""Where a launch's microseconds go. Two views of `kernel[grid](...)` on a
one-store kernel, tritium next to Triton in the same run:

1. per step: each piece of the launch path timed on its own (20,000
   back-to-back calls, best of 3), from the whole `tiny[(1,)](out, 5)` (the
   Rust entry, `_core.FastLauncher`) down to the bare `CudaKernel.launch`;
2. CPU cost vs GPU back-pressure: 20,000 back-to-back launches fill the
   driver's queue, so they time the GPU draining tiny kernels as much as the
   CPU issuing them. Bursts of 200 launches (below the queue depth), with a
   synchronize between bursts and only the launch calls timed, give the CPU
   cost alone;
3. the floor: `cuLaunchKernel` alone, from a Rust loop with the arguments
   packed once, and from C (`driver_floor.c`, built with the host's C
   compiler when it has one) in every configuration a launcher could pick:
   stream kinds, argument passing, `cuLaunchKernelEx`, block size.

Usage: python benches/gpu/launch_profile.py [--bursts 100] [--burst 200]"""
from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import torch

import tritium
import tritium.language as tl
from tritium import _core
from tritium.runtime import driver

jit = importlib.import_module("tritium.runtime.jit")  # the module; tritium.runtime.jit is the decorator

N = 20000


@tritium.jit
def tiny(out_ptr, v):
    tl.store(out_ptr, v)


def per_call_us(f) -> float:
    best = float("inf")
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(N):
            f()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / N * 1e6)
    return best


def burst_us(f, bursts: int, size: int) -> tuple[float, float]:
    """(median, min) over bursts of the per-launch time of `size` launches
    issued into an idle queue; the synchronize is outside the timed part."""
    per = []
    for _ in range(bursts):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(size):
            f()
        per.append((time.perf_counter() - t0) / size * 1e6)
    torch.cuda.synchronize()
    return statistics.median(per), min(per)


def triton_tiny(out):
    try:
        import triton
        import triton.language as ttl
    except ImportError:
        return None

    @triton.jit
    def ttiny(out_ptr, v):
        ttl.store(out_ptr, v)

    ttiny[(1,)](out, 3)
    return lambda: ttiny[(1,)](out, 5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bursts", type=int, default=100)
    ap.add_argument("--burst", type=int, default=200)
    a = ap.parse_args()
    out = torch.empty(1, device="cuda", dtype=torch.int32)
    tiny[(1,)](out, 3)
    tiny[(1,)](out, 4)          # the second launch is the Rust entry's
    torch.cuda.synchronize()
    assert out.item() == 4
    launcher = tiny._cuda_launcher
    fast = launcher.fast
    assert fast is not None and tiny._fast is fast and len(fast) == 1, "the Rust launch entry is not in use"
    kernel = next(iter(launcher.table.values()))
    probe = _core.KeyPlanProbe(launcher.spec._plan)
    _, bound, _ = launcher.spec.bind(out, 5)
    stream = driver.current_stream(0)
    ttiny = triton_tiny(out)
    ours = lambda: tiny[(1,)](out, 5)        # noqa: E731
    bare = lambda: kernel.launch(1, 1, 1, stream, bound)   # noqa: E731
    rows = [
        ("tiny[(1,)](out, 5) (Rust entry)", ours),
        ("tiny.run(out, 5, grid=(1,))", lambda: tiny.run(out, 5, grid=(1,))),
        ("  FastLauncher((1,), (out, 5))", lambda: fast((1,), (out, 5))),
        ("    prepare_only (key+grid+result tuple)", lambda: fast.prepare_only((1,), (out, 5))),
        ("    native_keys (the launch path's key)", lambda: probe.native_keys((out, 5))),
        ("    device_and_stream()", lambda: _core.launch_device_and_stream(fast)),
        ("    interpret check (Rust)", _core.interpret_requested),
        ("Python path: Launcher.__call__", lambda: launcher((1,), (out, 5), {})),
        ("  spec.bind (key)", lambda: launcher.spec.bind(out, 5)),
        ("  current_device()", driver.current_device),
        ("  current_stream()", lambda: driver.current_stream(0)),
        ("  interpret_requested() (Python)", jit.interpret_requested),
        ("CudaKernel.launch (Rust+driver)", bare),
    ]
    if ttiny is not None:
        rows.append(("triton ttiny[(1,)](out, 5)", ttiny))
    print(f"per step: {N} back-to-back calls, best of 3 (us per call)")
    for name, f in rows:
        print(f"  {name:40} {per_call_us(f):8.2f}")
    print(f"\nCPU launch cost vs back-pressure (us per launch): {a.bursts} bursts of {a.burst} "
          f"launches, synchronize between bursts, next to {N} back-to-back")
    print(f"  {'':34} {'burst median':>13} {'burst min':>10} {'back-to-back':>13}")
    sides = [("tritium tiny[(1,)](out, 5)", ours), ("bare CudaKernel.launch", bare)]
    if ttiny is not None:
        sides.append(("triton ttiny[(1,)](out, 5)", ttiny))
    for name, f in sides:
        med, lo = burst_us(f, a.bursts, a.burst)
        print(f"  {name:34} {med:13.2f} {lo:10.2f} {per_call_us(f):13.2f}")
    # the floor: cuLaunchKernel alone, from a Rust loop with the arguments packed once
    floor = sorted(_core.time_driver_launches(kernel, bound, bursts=a.bursts, per_burst=a.burst, stream=stream))
    print(f"  {'cuLaunchKernel alone (Rust loop)':34} {floor[len(floor) // 2]:13.2f} {floor[0]:10.2f} {'':>13}")
    driver_floor()


def driver_floor() -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("\nno C compiler on this host: the C driver floor is skipped")
        return
    src = Path(__file__).resolve().parent / "driver_floor.c"
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "driver_floor"
        subprocess.run([cc, "-O2", "-o", str(exe), str(src), "-ldl"], check=True)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    print("\nthe driver alone, from C (benches/gpu/driver_floor.c):")
    print(r.stdout + r.stderr, end="")


if __name__ == "__main__":
    main()
