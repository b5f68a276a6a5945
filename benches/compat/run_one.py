"""Runs one Python file (a tutorial) as `__main__` under real Triton or under
tritium through the switch, in this process. Used by tutorials.py, one fresh
subprocess per file and library.

    python benches/compat/run_one.py --lib {triton,tritium} [--quick] FILE

`--quick` keeps each `perf_report` benchmark to its first two x values and
`do_bench` to short warmup/rep, so a tutorial's correctness checks run in
seconds; the file itself is never edited. A benchmark's printed table (speeds,
which differ from run to run) sits between `RUN_ONE: benchmark begins` and
`RUN_ONE: benchmark ends` lines, so tutorials.py can compare the rest of the
output between the two libraries. Python's, numpy's and torch's random
generators are seeded (0) before the file runs, so unseeded inputs are the
same under both libraries. Prints `RUN_ONE: ok` (or the exception) last.
"""
from __future__ import annotations

import argparse
import os
import random
import runpy
import sys
import traceback


def _wrap_benchmarks(triton, quick: bool) -> None:
    """Marks each perf_report run in the output and, with `quick`, shortens it,
    through the library's own objects (either library)."""
    testing = triton.testing
    if quick:
        bench = testing.do_bench

        def short_bench(fn, warmup=25, rep=100, *args, **kwargs):
            return bench(fn, 2, 5, *args, **kwargs)

        testing.do_bench = short_bench
    mark_run = testing.Mark.run

    def marked_run(self, *args, **kwargs):
        if quick:
            for b in self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]:
                b.x_vals = list(b.x_vals)[:2]
        print("RUN_ONE: benchmark begins", flush=True)
        try:
            return mark_run(self, *args, **kwargs)
        finally:
            print("RUN_ONE: benchmark ends", flush=True)

    testing.Mark.run = marked_run


def seed_everything(seed: int = 0) -> None:
    """The same random inputs under both libraries: tutorials draw unseeded
    inputs (04 prints torch.randn/torch.rand values), so Python's, numpy's
    and torch's generators (every device) start from `seed` before the file
    runs, and the printed results compare the libraries' kernels."""
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)   # also seeds every CUDA device


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=("triton", "tritium"), required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("file")
    opts = ap.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    if opts.lib == "tritium":
        import tritium
        tritium.install_as_triton()
    import triton
    print(f"RUN_ONE: triton {triton.__version__} from {os.path.dirname(triton.__file__)}", flush=True)
    _wrap_benchmarks(triton, opts.quick)
    path = os.path.abspath(opts.file)   # once, before the chdir below
    sys.argv = [path]
    os.chdir(os.path.dirname(path))
    seed_everything()
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            print(f"RUN_ONE: exit {e.code}", flush=True)
            return 1
    except BaseException as e:  # noqa: BLE001 - the report names whatever stopped the file
        traceback.print_exc()
        print(f"RUN_ONE: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
        return 1
    print("RUN_ONE: ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
