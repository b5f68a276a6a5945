"""Instructions per launch key, counted by valgrind's callgrind: a figure
that does not move with machine load, for comparing two builds of the key
path (the same 12-argument kernel as key_bench.py, NumPy-based tensors).

    .venv/bin/python benches/key_instructions.py [--n 20000]

Callgrind counts only inside the Rust function named (`--toggle-collect`,
callees included), so Python's start-up and the loop around it are left out:

- `key`: `KeyPlan::keyed`, the launch path's key (driven n + 1 times by
  `KeyPlanProbe.time_keys`);
- `bind`: `KeyPlan.bind(*args)` as Python calls it (binding, the key as a
  Python object, the launch options: the Python path's call), n times.
"""
from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def workload(which: str, n: int) -> None:
    sys.path.insert(0, str(HERE))
    from key_bench import make_args, tritium_keyer
    from tritium import _core

    args, _ = make_args(use_torch=False)
    spec, native = tritium_keyer()
    if not native:
        raise SystemExit("no Rust KeyPlan in this build")
    spec.bind(*args)  # a dtype's first sight goes through Python
    plan = spec._plan
    gc.collect()
    gc.disable()  # no collection inside a counted call
    if which == "key":
        _core.KeyPlanProbe(plan).time_keys(tuple(args), n)
    else:
        bind = plan.bind
        for _ in range(n):
            bind(*args)


# (function callgrind counts in, calls per `n`)
FIGURES = {"key": ("*KeyPlan::keyed", 1), "bind": ("*PyMethods<_core::key::KeyPlan>*trampoline", 1)}


def instructions(which: str, n: int) -> float:
    symbol, _ = FIGURES[which]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--toggle-collect={symbol}",
               sys.executable, __file__, "--run", which, "--n", str(n)]
        env = dict(os.environ, PYTHONHASHSEED="0")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-2000:])
        m = re.search(r"Collected : (\d+)", proc.stderr)
        calls = n + 1 if which == "key" else n
        return int(m.group(1)) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--run", choices=["key", "bind"], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run:
        return workload(a.run, a.n)
    for which in FIGURES:
        print(f"{which:5s} {instructions(which, a.n):10.1f} instructions per call")


if __name__ == "__main__":
    main()
