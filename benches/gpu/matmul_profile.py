"""Where tritium's autotune-bench matmul (128x128x64 w4 s3, fp16 4096^3)
loses to Triton's kernel of the same source, in one GPU run.

1. Timing variants, each library in its own process: K = 4096, 512 and 64
   (the per-iteration slope and the fixed per-program cost, prologue plus
   epilogue, fall out of the three), GROUP = 1 (program order: how much
   the grouped order's L2 reuse is worth to each) and M = N = 2048 at K =
   4096 and 512 (one wave of programs: the loop's slope without the skew
   between waves).
2. Nsight Compute, when an `ncu` is found (/usr/local/cuda*/bin, PATH,
   /opt/nvidia/nsight-compute): each library's 4096^3 kernel profiled once
   (duration, DRAM throughput, L1 and L2 hit rates, achieved occupancy, the
   shared carveout the driver chose, the top 5 warp stall reasons, shared
   bank conflicts), side by side. The reports are left under $OUT (or
   /tmp/out) as matmul_<lib>.ncu-rep.

Usage: python benches/gpu/matmul_profile.py [--no-ncu] [--rounds N]"""
from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBS = ("tritium", "triton")
META = {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}
M = N = 4096
# name: (K, GROUP, M = N); 2048^2 is 256 programs, one wave on 132 SMs at two
# programs an SM: its slope is the loop's own cost, without the skew and L2
# sharing between waves of programs that 4096^2 (1024 programs) has
VARIANTS = {"K=4096": (4096, 8, 4096), "K=512": (512, 8, 4096), "K=64": (64, 8, 4096),
            "K=4096 GROUP=1": (4096, 1, 4096), "2048^2 K=4096": (4096, 8, 2048), "2048^2 K=512": (512, 8, 2048)}
SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats", "MemoryWorkloadAnalysis",
            "MemoryWorkloadAnalysis_Tables", "SchedulerStats", "InstructionStats")
# (label, metric names tried in order); the first present in the report is shown
ROWS = (
    ("duration (ns)", ("gpu__time_duration.sum",)),
    ("DRAM throughput (% peak)", ("dram__throughput.avg.pct_of_peak_sustained_elapsed",
                                  "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")),
    ("DRAM bytes read", ("dram__bytes_read.sum",)),
    ("L2 hit rate (%)", ("lts__t_sector_hit_rate.pct",)),
    ("L1 hit rate (%)", ("l1tex__t_sector_hit_rate.pct",)),
    ("SM throughput (% peak)", ("sm__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("achieved occupancy (%)", ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    ("theoretical occupancy (%)", ("sm__maximum_warps_per_active_cycle_pct",)),
    ("registers / thread", ("launch__registers_per_thread",)),
    ("shared config size (B)", ("launch__shared_mem_config_size",)),
    ("blocks / SM (shared limit)", ("launch__occupancy_limit_shared_mem",)),
    ("blocks / SM (register limit)", ("launch__occupancy_limit_registers",)),
    ("instructions issued", ("smsp__inst_issued.sum", "smsp__inst_executed.sum")),
    ("warp cycles / issued inst", ("smsp__average_warp_latency_per_inst_issued.ratio",
                                   "smsp__average_warps_active_per_inst_executed.ratio")),
    ("shared ld bank conflicts", ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",)),
    ("shared st bank conflicts", ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",)),
    ("shared ld wavefronts", ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",)),
    ("shared st wavefronts", ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",)),
)
# warp stall reasons, in warp cycles per issued instruction: the first
# spelling the report has (ncu versions differ)
STALLS = (re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$"),
          re.compile(r"^smsp__average_warp_latency_issue_stalled_(\w+)\.ratio$"))


def worker(lib: str, mode: str, rounds: int) -> None:
    """One library: `time` prints one JSON line of variant -> ms; `ncu`
    launches the 4096^3 kernel twice (the second is the profiled one)."""
    import torch
    sys.path.insert(0, str(HERE))
    from autotune_bench import KERNELS
    from bench import kernel_time_ms
    d = Path(os.environ["MATMUL_PROFILE_DIR"])
    (d / f"profile_kernels_{lib}.py").write_text(KERNELS.format(lib=lib))
    sys.path.insert(0, str(d))
    mod = __import__(f"profile_kernels_{lib}")
    if lib == "triton" and "tritium" in (mod.triton.__file__ or ""):
        raise SystemExit("`import triton` gives tritium here (TRITIUM_AS_TRITON?)")
    a = torch.randn(M, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)

    def launch(k: int, group: int, mn: int = M) -> None:
        # a smaller problem reads the same tensors' leading rows and columns
        g = ((mn // META["BM"]) * (mn // META["BN"]),)
        mod.matmul[g](a, b, c, mn, mn, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                      c.stride(1), num_warps=4, num_stages=3, **{**META, "GROUP": group})
    if mode == "ncu":
        launch(4096, 8)
        torch.cuda.synchronize()
        launch(4096, 8)
        torch.cuda.synchronize()
        return
    out = {}
    for _ in range(rounds):
        for name, (k, group, mn) in VARIANTS.items():
            out.setdefault(name, []).append(kernel_time_ms(lambda: launch(k, group, mn), torch))
    ref = a.float() @ b.float()
    launch(4096, 8)
    torch.cuda.synchronize()
    ok = (c.float() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()
    print(json.dumps({"ok": ok, "ms": {n: statistics.median(v) for n, v in out.items()}}), flush=True)


def run_worker(lib: str, mode: str, rounds: int, env: dict, prefix: list[str] = ()) -> subprocess.CompletedProcess:
    cmd = [*prefix, sys.executable, __file__, "--worker", lib, "--mode", mode, "--rounds", str(rounds)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=580)


def timing(env: dict, rounds: int) -> None:
    rows = {}
    for lib in LIBS:
        r = run_worker(lib, "time", rounds, env)
        lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
        if r.returncode != 0 or not lines:
            print(f"{lib}: timing failed: {(r.stderr.strip().splitlines() or ['?'])[-1][:300]}")
            return
        rows[lib] = json.loads(lines[-1])
    print(f"{'variant':<16} {'tritium ms':>10} {'triton ms':>10} {'ratio':>6}")
    for name in VARIANTS:
        t, r = rows["tritium"]["ms"][name], rows["triton"]["ms"][name]
        print(f"{name:<16} {t:>10.4f} {r:>10.4f} {t / r:>6.3f}")
    for lib in LIBS:
        ms = rows[lib]["ms"]
        # 64 iterations at K=4096, 8 at K=512: the slope per iteration, and
        # what is left at K=512 once its 8 iterations are taken away
        slope = (ms["K=4096"] - ms["K=512"]) / 56
        one_wave = (ms["2048^2 K=4096"] - ms["2048^2 K=512"]) / 56
        print(f"{lib}: {slope * 1e3:.3f} us per K iteration (whole grid), fixed {(ms['K=512'] - 8 * slope) * 1e3:.2f} us; "
              f"one wave (2048^2): {one_wave * 1e3:.3f} us per K iteration; result {'ok' if rows[lib]['ok'] else 'WRONG'}")


def find_ncu() -> str | None:
    found = sorted(glob.glob("/usr/local/cuda*/bin/ncu")) + sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))
    if shutil.which("ncu"):
        found.append(shutil.which("ncu"))
    return found[-1] if found else None


def profile(ncu: str, env: dict, out: Path) -> None:
    reports = {}
    for lib in LIBS:
        rep = out / f"matmul_{lib}"
        sections = [x for s in SECTIONS for x in ("--section", s)]
        prefix = [ncu, "--target-processes", "all", "-k", "regex:^matmul", "--launch-skip", "1",
                  "--launch-count", "1", *sections, "-f", "-o", str(rep)]
        r = run_worker(lib, "ncu", 1, env, prefix)
        if r.returncode != 0 or not Path(f"{rep}.ncu-rep").exists():
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-6:])
            print(f"ncu on {lib} failed (exit {r.returncode}):\n{tail}")
            return
        raw = subprocess.run([ncu, "--import", f"{rep}.ncu-rep", "--csv", "--page", "raw"], capture_output=True,
                             text=True, timeout=120)
        table = list(csv.reader(io.StringIO(raw.stdout)))
        header = next((i for i, row in enumerate(table) if "Kernel Name" in row), None)
        if header is None or len(table) < header + 3:
            print(f"ncu --import of {lib}'s report gave no table:\n{raw.stdout[-600:]}{raw.stderr[-600:]}")
            return
        names, values = table[header], table[header + 2]
        reports[lib] = dict(zip(names, values))
        print(f"{lib}: profiled {reports[lib].get('Kernel Name', '?')}, {rep}.ncu-rep")

    def number(v: str) -> float | None:
        try:
            return float(v.replace(",", ""))
        except (TypeError, ValueError):
            return None

    print(f"{'metric':<30} {'tritium':>16} {'triton':>16}")
    for label, metrics in ROWS:
        name = next((m for m in metrics if m in reports["tritium"] or m in reports["triton"]), metrics[0])
        print(f"{label:<30} {reports['tritium'].get(name, 'n/a'):>16} {reports['triton'].get(name, 'n/a'):>16}")
    for lib in LIBS:
        by_reason: dict[str, float] = {}
        for pattern in STALLS:
            by_reason = {hit.group(1): number(v) for k, v in reports[lib].items()
                         if (hit := pattern.match(k)) and number(v) is not None}
            if by_reason:
                break
        if not by_reason:
            print(f"{lib}: no stall metric matched; those with 'stalled' in the name: "
                  + ", ".join(k for k in reports[lib] if "stalled" in k)[:600])
            continue
        top = sorted(by_reason.items(), key=lambda kv: -kv[1])[:5]
        print(f"{lib} top stalls (warp cycles per issued instruction): "
              + ", ".join(f"{why} {v:.2f}" for why, v in top))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", choices=LIBS)
    ap.add_argument("--mode", choices=("time", "ncu"), default="time")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-ncu", action="store_true")
    opts = ap.parse_args()
    if opts.worker:
        worker(opts.worker, opts.mode, opts.rounds)
        return
    out = Path(os.environ.get("OUT") or "/tmp/out")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if k not in ("TRITIUM_AS_TRITON", "TRITON_INTERPRET")}
        env.update(MATMUL_PROFILE_DIR=d, TRITIUM_CACHE_DIR=f"{d}/cache", TRITON_CACHE_DIR=f"{d}/cache")
        timing(env, opts.rounds)
        ncu = None if opts.no_ncu else find_ncu()
        if ncu is None:
            print("no ncu found (/usr/local/cuda*/bin/ncu, PATH, /opt/nvidia/nsight-compute): timing variants only")
            return
        print(f"ncu: {ncu}")
        profile(ncu, env, out)


if __name__ == "__main__":
    main()
