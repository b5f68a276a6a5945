"""Triton's tutorials 01-09 run unchanged under real Triton and under
tritium (through the switch, `tritium.install_as_triton()`), side by side.

    python benches/compat/tutorials.py [--tutorials DIR] [--full] [--only 01,07] [--timeout S] [--budget S]
        [--logs DIR]

DIR holds the tutorial files as published for Triton 3.6 (`python/tutorials`
of a Triton checkout; fetch_inputs.py puts them in
benches/compat/inputs/triton/python/tutorials, the default). Each file runs
in a fresh subprocess per library (run_one.py), the two libraries at once
(the tutorials' correctness checks do not depend on speed); `--quick`, the
default, shortens only the benchmark sweeps. A run passes when the file
finishes without an exception. The file's printed output outside its
benchmark tables (printed tensors, maximum differences, match marks) is
compared line for line between the two libraries: "equal" means the same
printed results. `--budget` stops starting tutorials after that many seconds
(the rest are listed as not run). Exits non-zero when tritium fails a
tutorial that Triton passes.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIXES = [f"{i:02d}-" for i in range(1, 10)]


def tutorial_files(folder: Path, only: set[str]) -> list[Path]:
    """01-09's files, one per number: the shortest name when a folder holds
    variants (`02-fused-softmax.py` before `02-fused-softmax-cpu.py`)."""
    out = []
    for prefix in PREFIXES:
        if only and prefix[:2] not in only:
            continue
        found = sorted(folder.glob(f"{prefix}*.py"), key=lambda p: (len(p.name), p.name))
        out.extend(found[:1])
    return out


def result_lines(stdout: str) -> list[str]:
    """What the tutorial printed, less its benchmark tables and run_one's own lines."""
    out, in_bench = [], False
    for line in stdout.splitlines():
        if line.startswith("RUN_ONE: benchmark begins"):
            in_bench = True
        elif line.startswith("RUN_ONE: benchmark ends"):
            in_bench = False
        elif not in_bench and not line.startswith("RUN_ONE: ") and line.strip():
            out.append(line.rstrip())
    return out


def run(lib: str, path: Path, quick: bool, timeout: float) -> dict:
    cmd = [sys.executable, str(HERE / "run_one.py"), "--lib", lib] + (["--quick"] if quick else []) + [str(path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("TRITIUM_AS_TRITON", None)
    start = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        decode = lambda b: b.decode(errors="replace") if isinstance(b, bytes) else (b or "")  # noqa: E731
        out, err, rc = decode(e.stdout), decode(e.stderr) + f"\nRUN_ONE: timed out after {timeout:.0f} s", -1
    status = [ln[len("RUN_ONE: "):] for ln in (out + "\n" + err).splitlines()
              if ln.startswith("RUN_ONE: ") and "benchmark" not in ln and not ln.startswith("RUN_ONE: triton ")]
    return {"ok": rc == 0, "why": status[-1] if status else f"exit {rc}", "seconds": time.time() - start,
            "lines": result_lines(out), "output": out + ("\n--- stderr ---\n" + err if err else "")}


def first_difference(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: {x[:100]!r} vs {y[:100]!r}"
    return f"{len(a)} vs {len(b)} lines"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tutorials", default=str(HERE / "inputs" / "triton" / "python" / "tutorials"))
    ap.add_argument("--full", action="store_true", help="run the benchmark sweeps in full")
    ap.add_argument("--only", default="", help="tutorial numbers, e.g. 01,07")
    ap.add_argument("--timeout", type=int, default=600, help="seconds for one tutorial run")
    ap.add_argument("--budget", type=int, default=0, help="start no tutorial after this many seconds (0: no limit)")
    ap.add_argument("--libs", default="triton,tritium")
    ap.add_argument("--logs", default="", help="folder for each run's full output")
    opts = ap.parse_args()
    # absolute once: run_one.py changes into the file's folder
    files = tutorial_files(Path(opts.tutorials).resolve(), set(filter(None, opts.only.split(","))))
    if not files:
        print(f"tutorials: no 01-09 files in {opts.tutorials} (run benches/compat/fetch_inputs.py)", file=sys.stderr)
        return 2
    libs = opts.libs.split(",")
    rows, regressions, start = [], 0, time.time()
    for f in files:
        left = opts.budget - (time.time() - start) if opts.budget else opts.timeout
        if left <= 5:
            rows.append((f.name, None, False))
            continue
        with ThreadPoolExecutor(max_workers=len(libs)) as pool:
            futures = {lib: pool.submit(run, lib, f, not opts.full, min(opts.timeout, left)) for lib in libs}
            res = {lib: fut.result() for lib, fut in futures.items()}
        if opts.logs:
            Path(opts.logs).mkdir(parents=True, exist_ok=True)
            for lib, r in res.items():
                (Path(opts.logs) / f"{f.stem}.{lib}.log").write_text(r["output"])
        same = len(libs) == 2 and res[libs[0]]["lines"] == res[libs[1]]["lines"]
        if "triton" in res and "tritium" in res and res["triton"]["ok"] and not res["tritium"]["ok"]:
            regressions += 1
        rows.append((f.name, res, same))
        print(f"{f.name}: " + ", ".join(f"{lib} {'pass' if r['ok'] else 'FAIL'} ({r['seconds']:.0f} s)"
                                        for lib, r in res.items()), file=sys.stderr, flush=True)
    print("| tutorial | " + " | ".join(libs) + " | printed results equal |")
    print("| --- | " + " | ".join("---" for _ in libs) + " | --- |")
    for name, res, same in rows:
        if res is None:
            print(f"| {name} | " + " | ".join("not run (budget)" for _ in libs) + " | - |")
            continue
        cells = [(f"pass ({res[lib]['seconds']:.0f} s)" if res[lib]["ok"] else f"FAIL: {res[lib]['why'][:80]}")
                 for lib in libs]
        print(f"| {name} | " + " | ".join(cells) + f" | {'yes' if same else 'no'} |")
    ran = [r for r in rows if r[1] is not None]
    print("\n" + ", ".join(f"{lib}: {sum(res[lib]['ok'] for _, res, _ in ran)}/{len(rows)} pass" for lib in libs)
          + (f"; printed results equal in {sum(s for _, _, s in ran)}/{len(rows)}" if len(libs) == 2 else ""))
    for name, res, same in ran:
        if not same and len(libs) == 2:
            a, b = (res[lib]["lines"] for lib in libs)
            print(f"{name}: printed results differ at {first_difference(a, b)}")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
