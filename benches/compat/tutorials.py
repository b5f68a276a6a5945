"""Triton's tutorials 01-09 run unchanged under real Triton and under
tritium (through the switch, `tritium.install_as_triton()`), side by side.

    python benches/compat/tutorials.py [--tutorials DIR] [--full] [--only 01,07] [--timeout 600]

DIR holds the tutorial files as published for Triton 3.6 (`python/tutorials`
of a Triton checkout; `fetch_inputs.py` puts them in
benches/compat/inputs/triton/python/tutorials, the default). Each file runs in a fresh
subprocess per library (run_one.py; `--quick`, the default, shortens only
the benchmark sweeps). A run passes when the file finishes without an
exception; the lines a tutorial prints about correctness (maximum
differences, match/mismatch marks) are compared between the two libraries.
Prints one table row per tutorial; exits non-zero when tritium fails a
tutorial that Triton passes.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PREFIXES = [f"{i:02d}-" for i in range(1, 10)]
# a line a tutorial prints about its own result, not about speed
CHECK_LINE = re.compile(r"(max(imum)? (abs(olute)? )?diff|match|✅|❌|allclose|error)", re.IGNORECASE)


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


def run(lib: str, path: Path, quick: bool, timeout: int) -> dict:
    cmd = [sys.executable, str(HERE / "run_one.py"), "--lib", lib] + (["--quick"] if quick else []) + [str(path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("TRITIUM_AS_TRITON", None)
    start = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or "") + (e.stderr or "") if isinstance(e.stdout, str) else "", -1
        out += f"\nRUN_ONE: timed out after {timeout} s"
    status = [ln[len("RUN_ONE: "):] for ln in out.splitlines() if ln.startswith("RUN_ONE: ")]
    return {"ok": rc == 0, "why": status[-1] if status else f"exit {rc}", "seconds": time.time() - start,
            "checks": [ln.strip() for ln in out.splitlines() if CHECK_LINE.search(ln) and "RUN_ONE" not in ln],
            "output": out}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tutorials", default=str(HERE / "inputs" / "triton" / "python" / "tutorials"))
    ap.add_argument("--full", action="store_true", help="run the benchmark sweeps in full")
    ap.add_argument("--only", default="", help="tutorial numbers, e.g. 01,07")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--libs", default="triton,tritium")
    ap.add_argument("--logs", default="", help="folder for each run's full output")
    opts = ap.parse_args()
    files = tutorial_files(Path(opts.tutorials), set(filter(None, opts.only.split(","))))
    if not files:
        print(f"tutorials: no 01-09 files in {opts.tutorials} (run benches/compat/fetch_inputs.py)", file=sys.stderr)
        return 2
    libs = opts.libs.split(",")
    rows, regressions = [], 0
    for f in files:
        res = {lib: run(lib, f, not opts.full, opts.timeout) for lib in libs}
        if opts.logs:
            Path(opts.logs).mkdir(parents=True, exist_ok=True)
            for lib, r in res.items():
                (Path(opts.logs) / f"{f.stem}.{lib}.log").write_text(r["output"])
        same = len(libs) == 2 and res[libs[0]]["checks"] == res[libs[1]]["checks"]
        if "triton" in res and "tritium" in res and res["triton"]["ok"] and not res["tritium"]["ok"]:
            regressions += 1
        rows.append((f.name, res, same))
        print(f"{f.name}: " + ", ".join(f"{lib} {'pass' if r['ok'] else 'FAIL'} ({r['seconds']:.0f} s)"
                                        for lib, r in res.items()), file=sys.stderr, flush=True)
    print("| tutorial | " + " | ".join(libs) + " | correctness lines equal |")
    print("| --- | " + " | ".join("---" for _ in libs) + " | --- |")
    for name, res, same in rows:
        cells = [("pass" if res[lib]["ok"] else f"FAIL: {res[lib]['why'][:60]}") for lib in libs]
        print(f"| {name} | " + " | ".join(cells) + f" | {'yes' if same else 'no'} |")
    passed = {lib: sum(res[lib]["ok"] for _, res, _ in rows) for lib in libs}
    print("\n" + ", ".join(f"{lib}: {n}/{len(rows)} pass" for lib, n in passed.items()))
    for name, res, same in rows:
        if not same and len(libs) == 2:
            print(f"\n{name} correctness lines:")
            for lib in libs:
                print(f"  {lib}: {res[lib]['checks'][:6]}")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
