"""Cold compile of dot_bench's matmul kernel (128x256x64, 8 warps, 3
stages, fp16, a 512^3 launch), tritium beside Triton, alternating over
rounds: each round is a fresh process with an empty cache whose CUDA
context and tensors exist before the clock starts (the driver's start-up is
neither library's cost). Two stages: `import` of the library and the first
launch (compile, load, run, synchronize). With --profile, a cProfile of
tritium's first launch of round 0.

    python benches/gpu/cold_compile.py [--rounds 3] [--profile]

benches/compile_stages.py splits tritium's compile further, on the CPU."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import dot_bench  # noqa: E402

LIBS = ("tritium", "triton")

CHILD = r'''
import json, sys, time
sys.path.insert(0, {tmp!r})
import torch
a = torch.randn(512, 512, device="cuda", dtype=torch.float16)
c = torch.empty_like(a)
torch.cuda.synchronize()
t0 = time.perf_counter()
import dot_kernels_{lib} as m
t1 = time.perf_counter()
def go():
    m.matmul_kernel[(8,)](a, a, c, 512, 512, 512, 512, 1, 512, 1, 512, 1, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                          GROUP_M=8, num_warps=8, num_stages=3)
    torch.cuda.synchronize()
if {prof}:
    import cProfile, io, pstats
    pr = cProfile.Profile(); pr.enable(); go(); pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(35)
    print(s.getvalue()[:6000], file=sys.stderr)
else:
    go()
t2 = time.perf_counter()
ref = (a.float() @ a.float()).half()
ok = torch.allclose(c, ref, atol=0.5, rtol=0.02)
print(json.dumps([t1 - t0, t2 - t1, ok]))
'''


def write_kernels(tmp: Path) -> None:
    for lib in LIBS:
        (tmp / f"dot_kernels_{lib}.py").write_text(dot_bench.KERNELS.format(lib=lib))


def cold_once(lib: str, tmp: Path, profile: bool = False) -> tuple[float, float, str]:
    """(import seconds, first-launch seconds, cProfile text or "") of one fresh process."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITIUM_CACHE_DIR": cache, "TRITON_CACHE_DIR": cache}
        r = subprocess.run([sys.executable, "-c", CHILD.format(tmp=str(tmp), lib=lib, prof=profile)], env=env,
                           capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise RuntimeError((r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1])
    imp, first, ok = json.loads(r.stdout.strip().splitlines()[-1])
    if not ok:
        raise RuntimeError("the kernel's result does not match torch's matmul")
    return imp, first, r.stderr if profile else ""


def report(rounds: int, tmp: Path, profile: bool = False) -> None:
    """Prints each round's stages per library, then medians and the ratio."""
    totals: dict[str, list[float]] = {lib: [] for lib in LIBS}
    for rnd in range(rounds):
        for lib in LIBS:
            try:
                imp, first, prof = cold_once(lib, tmp, profile and lib == "tritium" and rnd == 0)
            except Exception as e:  # noqa: BLE001  one library failing still reports the other
                print(f"  round {rnd} {lib:8} failed: {e}", flush=True)
                continue
            totals[lib].append(imp + first)
            print(f"  round {rnd} {lib:8} import {imp:.3f} s  first launch {first:.3f} s  total {imp + first:.3f} s",
                  flush=True)
            if prof:
                print(prof[-6000:])
    med = {lib: statistics.median(xs) for lib, xs in totals.items() if xs}
    for lib, m in med.items():
        print(f"  {lib}: median {m:.3f} s")
    if len(med) == 2:
        print(f"  ratio tritium/triton {med['tritium'] / med['triton']:.2f} (target <= 0.25)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="cProfile of tritium's first launch (round 0)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        write_kernels(Path(d))
        print("cold compile of the matmul kernel (fresh process, empty cache, CUDA context made first):")
        report(args.rounds, Path(d), args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
