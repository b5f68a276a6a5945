"""Cold compile of benches/gpu/dot_bench.py's matmul kernel (128x256x64,
8 warps, 3 stages, fp16, the specialization a 512^3 launch makes), on the
CPU, stage by stage: `import tritium`, the cache key (compiler version and
sources), the frontend, then the Rust compiler's stages (`CompiledKernel.
timings`: tile passes, layouts, lowering, LLVM optimize, PTX emission, the
LLVM IR text) and ptxas (which starts right after emission, as in a launch,
so it overlaps the LLVM IR text). Each round is a fresh process, as a user's first launch is; the
table gives each stage's median and fastest round in milliseconds.

    .venv/bin/python benches/compile_stages.py [--rounds N] [--json]

No GPU needed (the cubin needs ptxas: TRITIUM_PTXAS, PATH or the
nvidia-cuda-nvcc wheel). benches/gpu/cold_compile.py times the same
kernel's first launch on a GPU beside Triton's."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent

CHILD = r'''
import json, sys, time
t0 = time.perf_counter()
import tritium
import tritium.language as tl
t1 = time.perf_counter()
sys.path.insert(0, {tmp!r})
import dot_kernels_tritium as m
from tritium.compiler import frontend
from tritium.runtime import cache, compiled
from tritium.runtime.specialization import specializer
from tritium.runtime.tensors import MockTensor

fn = m.matmul_kernel
a = MockTensor(tl.float16, [512, 512])
args = (a, a, a, 512, 512, 512, 512, 1, 512, 1, 512, 1)
t2 = time.perf_counter()
# what a launch does before code generation: the specialization, its cache key
spec = specializer(fn, "cuda")
bound = fn.bind_call(list(args), dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8))
key = spec.key(tuple(bound.values()))
cache.kernel_key(fn, "cuda:90", {{"num_warps": 8, "num_stages": 3, "debug": False}}, spec.key_text(key))
t3 = time.perf_counter()
s = spec.specialization(key)
ir = frontend.compile_kernel(fn, s.signature, s.arg_attrs()).encode()
t4 = time.perf_counter()
# as a launch compiles: compile_batch, whose ptxas assembles while the LLVM IR text is printed
(k,) = compiled.compile_ir_many([(ir, fn.__name__, compiled.param_kinds(s.signature), "cuda:90", 8, 3)])
t5 = time.perf_counter()
out = {{"import": t1 - t0, "key": t3 - t2, "frontend": t4 - t3, **k.timings}}
out["codegen_total"] = t5 - t4
out["total"] = (t1 - t0) + (t5 - t2)
out["registers"] = k.metadata["registers"]
print(json.dumps(out))
'''


def kernel_module(tmp: Path) -> None:
    sys.path.insert(0, str(ROOT / "gpu"))
    import dot_bench
    (tmp / "dot_kernels_tritium.py").write_text(dot_bench.KERNELS.format(lib="tritium"))


def one_round(tmp: Path) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITIUM_CACHE_DIR": cache}
        r = subprocess.run([sys.executable, "-c", CHILD.format(tmp=str(tmp))], env=env, capture_output=True,
                           text=True, timeout=600)
    if r.returncode:
        raise SystemExit(f"the compile failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print every round's numbers as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        kernel_module(tmp)
        rounds = [one_round(tmp) for _ in range(args.rounds)]
    if args.json:
        print(json.dumps(rounds, indent=1))
        return 0
    stages = [k for k in rounds[0] if k != "registers"]
    print(f"cold compile of dot_bench's matmul (128x256x64, 8 warps, 3 stages), {args.rounds} fresh processes; "
          f"ptxas registers {rounds[0]['registers']}")
    print(f"{'stage':16} {'median ms':>10} {'min ms':>8}")
    for s in stages:
        xs = [r[s] * 1e3 for r in rounds if s in r]
        print(f"{s:16} {statistics.median(xs):10.1f} {min(xs):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
