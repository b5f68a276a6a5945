"""tritium vs Triton on one GPU, same kernels and sizes, in one run: memory
bandwidth (kernel time: 20 launches per CUDA-event pair, median of 15
windows), launch overhead (µs per launch of a tiny kernel, 20,000 back to
back), both with the two libraries alternating over 5 rounds, median round
reported, and cold compile time (first call in a fresh process with an
empty cache). Kernels a library cannot
compile yet are reported as skipped. Usage: python benches/gpu/bench.py"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNELS = '''
import {lib} as triton
import {lib}.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def tiny_kernel(out_ptr, v):
    tl.store(out_ptr, v)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(m, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=m).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=m).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (d * rstd * w + b).to(tl.float16), mask=m)


@triton.jit
def row_sum_atomic(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * stride + cols, tl.cumsum(tl.load(x_ptr + row * stride + cols), axis=0))
'''

LIBS = ("tritium", "triton")


def write_kernels(tmp: Path) -> None:
    for lib in LIBS:
        (tmp / f"bench_kernels_{lib}.py").write_text(KERNELS.format(lib=lib))


def kernel_time_ms(fn, torch, per_pair: int = 20, reps: int = 15) -> float:
    """Median kernel time of `fn` in ms: `per_pair` launches back to back
    between two CUDA events (so one launch's jitter is spread over many and
    the GPU never idles between kernels), `reps` such windows."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(per_pair):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / per_pair)
    return statistics.median(times)


class Case:
    """A prepared, checked bandwidth benchmark: `run` launches once and moves `nbytes`."""

    unit = "TB/s"

    def __init__(self, run, nbytes: int):
        self.run, self.nbytes = run, nbytes

    def measure(self, torch) -> float:
        return self.nbytes / (kernel_time_ms(self.run, torch) * 1e-3) / 1e12


class LaunchCase:
    """A prepared launch benchmark: µs per launch of `run`, `n` back to back."""

    unit = "us/launch"

    def __init__(self, run, n: int = 20000):
        self.run, self.n = run, n

    def measure(self, torch) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(self.n):
            self.run()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / self.n * 1e6


def bench_vector_add(mod, torch) -> Case:
    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = ((n + 1023) // 1024,)
    run = lambda: mod.add_kernel[grid](x, y, out, n, BLOCK=1024)  # noqa: E731
    run()
    torch.testing.assert_close(out, x + y)
    return Case(run, 3 * 4 * n)


def bench_softmax(mod, torch) -> Case:
    rows, cols = 8192, 2048
    x = torch.randn(rows, cols, device="cuda")
    out = torch.empty_like(x)
    run = lambda: mod.softmax_kernel[(rows,)](out, x, x.stride(0), cols, BLOCK=cols, num_warps=8)  # noqa: E731
    run()
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    return Case(run, 2 * 4 * rows * cols)


def bench_layer_norm(mod, torch) -> Case:
    rows, cols = 4096, 8192
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
    w = torch.randn(cols, device="cuda", dtype=torch.float16)
    b = torch.randn(cols, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    run = lambda: mod.layer_norm_fwd[(rows,)](x, y, w, b, x.stride(0), cols, 1e-5, BLOCK=cols, num_warps=8)  # noqa: E731
    run()
    ref = torch.nn.functional.layer_norm(x.float(), (cols,), w.float(), b.float(), 1e-5).half()
    torch.testing.assert_close(y, ref, atol=2e-2, rtol=1e-2)
    return Case(run, 2 * 2 * rows * cols)


def bench_row_sum_atomic(mod, torch) -> Case:
    rows, cols, block = 8192, 8192, 1024
    x = torch.randn(rows, cols, device="cuda")
    out = torch.zeros(rows, device="cuda")
    run = lambda: mod.row_sum_atomic[(rows, cols // block)](x, out, x.stride(0), cols, BLOCK=block)  # noqa: E731
    run()
    torch.testing.assert_close(out, x.sum(dim=1), atol=1e-2, rtol=1e-4)
    # accumulating into `out` across the timed launches is fine: only the time is read
    return Case(run, 4 * rows * cols)


def bench_cumsum(mod, torch) -> Case:
    rows, cols = 8192, 2048
    x = torch.randn(rows, cols, device="cuda")
    out = torch.empty_like(x)
    run = lambda: mod.cumsum_kernel[(rows,)](x, out, x.stride(0), BLOCK=cols, num_warps=8)  # noqa: E731
    run()
    torch.testing.assert_close(out, torch.cumsum(x, dim=1), atol=1e-3, rtol=1e-3)
    return Case(run, 2 * 4 * rows * cols)


def bench_launch(mod, torch) -> LaunchCase:
    out = torch.empty(1, device="cuda", dtype=torch.int32)
    mod.tiny_kernel[(1,)](out, 3)
    torch.cuda.synchronize()
    assert out.item() == 3
    kernel = mod.tiny_kernel
    return LaunchCase(lambda: kernel[(1,)](out, 5))


# First call in a fresh process with an empty cache: import + compile + launch.
COLD = '''
import sys, time, json
sys.path.insert(0, {tmp!r})
import torch
n = 1 << 20
x = torch.randn(n, device="cuda"); y = torch.randn_like(x); out = torch.empty_like(x)
h = torch.randn(64, 1024, device="cuda", dtype=torch.float16); w = torch.ones(1024, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
t0 = time.perf_counter()
import bench_kernels_{lib} as mod
{launch}
torch.cuda.synchronize()
print(json.dumps(time.perf_counter() - t0))
'''

COLD_LAUNCHES = {
    "add": "mod.add_kernel[(1024,)](x, y, out, n, BLOCK=1024)",
    "softmax": "mod.softmax_kernel[(512,)](out, x, 2048, 2048, BLOCK=2048)",
    "layer_norm": "mod.layer_norm_fwd[(64,)](h, h, w, w, 1024, 1024, 1e-5, BLOCK=1024)",
}


def bench_cold(lib: str, tmp: Path, kernel: str) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITIUM_CACHE_DIR": cache, "TRITON_CACHE_DIR": cache}
        code = COLD.format(tmp=str(tmp), lib=lib, launch=COLD_LAUNCHES[kernel])
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1]), "s"


# (name, function, True when higher is better)
BENCHES = [("vector add fp32 2^26", bench_vector_add, True),
           ("softmax fp32 8192x2048", bench_softmax, True),
           ("layer norm fp16 4096x8192", bench_layer_norm, True),
           ("row sums atomic 8192^2", bench_row_sum_atomic, True),
           ("cumsum fp32 8192x2048", bench_cumsum, True),
           ("launch overhead", bench_launch, False)]
COLD_BENCHES = [(f"cold compile ({k})", k) for k in COLD_LAUNCHES]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=None, help="run only benchmarks whose name contains this")
    ap.add_argument("--rounds", type=int, default=5, help="alternating measurement rounds per bandwidth benchmark")
    args = ap.parse_args()
    spread: dict = {}
    round_ratios: dict = {}
    import importlib

    import torch
    tmp = Path(tempfile.mkdtemp(prefix="tritium-bench-"))
    write_kernels(tmp)
    sys.path.insert(0, str(tmp))
    mods = {}
    for lib in LIBS:
        try:
            mods[lib] = importlib.import_module(f"bench_kernels_{lib}")
        except Exception as e:  # a library missing entirely is reported, not fatal
            print(f"{lib}: cannot import ({e})")
    rows = []
    for name, fn, higher in BENCHES + [(n, k, False) for n, k in COLD_BENCHES]:
        if args.only and args.only not in name:
            continue
        res = {}
        cases = {}
        for lib in LIBS:
            if lib not in mods:
                res[lib] = (None, "not installed")
                continue
            try:
                if isinstance(fn, str):
                    res[lib] = bench_cold(lib, tmp, fn)
                else:
                    r = fn(mods[lib], torch)
                    if isinstance(r, (Case, LaunchCase)):
                        cases[lib] = r
                    else:
                        res[lib] = r
            except Exception as e:
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                res[lib] = (None, f"skipped: {type(e).__name__}: {msg[:120]}")
        # the libraries alternate over several rounds so clock, thermal and
        # host drift land on both; the median round is reported
        samples: dict = {lib: [] for lib in cases}
        for _ in range(args.rounds):
            for lib, case in cases.items():
                samples[lib].append(case.measure(torch))
        for lib, xs in samples.items():
            res[lib] = (statistics.median(xs), cases[lib].unit)
            spread[(name, lib)] = (min(xs), max(xs), cases[lib].unit)
        if len(samples) == 2 and all(isinstance(c, LaunchCase) for c in cases.values()):
            # each round's two timings are seconds apart: their ratio drifts least
            per_round = sorted(a / b for a, b in zip(samples["tritium"], samples["triton"]))
            round_ratios[name] = per_round
        rows.append((name, higher, res))
    print()
    print(f"{'benchmark':26} {'tritium':>18} {'triton':>18} {'ratio':>8}")
    print("-" * 74)
    for name, higher, res in rows:
        cells = []
        for lib in LIBS:
            v, unit = res[lib]
            cells.append(f"{v:.3f} {unit}" if v is not None else "n/a")
        a, b = res["tritium"][0], res["triton"][0]
        ratio = "" if a is None or b is None else f"{(a / b if higher else b / a):.2f}x"
        print(f"{name:26} {cells[0]:>18} {cells[1]:>18} {ratio:>8}")
    print("\nratio > 1 means tritium is better (bandwidth: tritium/triton; times: triton/tritium)")
    for name, _, res in rows:
        for lib in LIBS:
            if res[lib][0] is None:
                print(f"  {name} [{lib}]: {res[lib][1]}")
    if spread:
        print("spread over rounds (min..max):")
        for (name, lib), (lo, hi, unit) in spread.items():
            print(f"  {name} [{lib}]: {lo:.3f}..{hi:.3f} {unit}")
    for name, rs in round_ratios.items():
        print(f"{name}: tritium/triton per round {', '.join(f'{r:.3f}' for r in rs)}; "
              f"median {statistics.median(rs):.3f} (target <= 0.333)")
    dev = torch.cuda.get_device_name(0)
    print(f"device: {dev}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
