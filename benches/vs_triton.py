"""Side-by-side compile time of Triton 3.6 and tritium on the same kernel
source (benches/kernels/defs.py), CPU only: Triton compiles for sm_90 without
a GPU. Every measurement runs in a fresh subprocess with empty caches.

    .venv/bin/python benches/vs_triton.py [--kernels a,b] [--warm N] [--cold N]

The first run creates benches/.venv-triton and pip-installs triton==3.6.0
there (the wheel carries its own LLVM, libdevice and ptxas; no torch needed).
tritium runs its whole pipeline: frontend, decode+verify, LLVM IR + O3 + PTX,
and cubin with ptxas. A kernel whose ops the backend cannot lower yet (tl.dot)
is reported with its frontend and IR stages only, and says so.
"""
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
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KERNELS_DIR = HERE / "kernels"
TRITON_VENV = HERE / ".venv-triton"
TRITON_VERSION = "3.6.0"
DEFAULT_KERNELS = ("vector_add", "softmax", "layer_norm_fwd", "matmul")
TRITON_STAGES = ("frontend", "ttir", "ttgir", "llir", "ptx", "cubin", "store")
TRITIUM_STAGES = ("frontend", "decode+verify", "llir+ptx", "cubin")
# What Triton does that tritium cannot do yet; named in the output so nobody
# reads a ratio as more than it is.
TRITIUM_MISSING = "tl.dot lowering (so matmul stops after the IR), software pipelining"


# -- worker side: runs inside the fresh subprocess --------------------------

def _load_defs(compiler: str):
    sys.path.insert(0, str(KERNELS_DIR))
    if compiler == "tritium":
        sys.path.insert(0, str(ROOT / "python"))
        import tritium
        import tritium.language
        sys.modules["triton"] = tritium
        sys.modules["triton.language"] = tritium.language
    import defs
    return defs


class TritonCompiler:
    """Compiles with Triton for an sm_90 target, recording the per-stage
    times Triton's own compilation listener reports (microseconds)."""

    def __init__(self) -> None:
        import triton
        from triton import knobs
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        if triton.__version__ != TRITON_VERSION:
            raise RuntimeError(f"expected triton {TRITON_VERSION}, found {triton.__version__}")
        self.triton, self.knobs, self.ASTSource = triton, knobs, ASTSource
        self.target = GPUTarget("cuda", 90, 32)
        self.last: dict[str, float] = {}
        knobs.compilation.listener = self._listen

    def _listen(self, *, src: Any, metadata: Any, metadata_group: Any, times: Any, cache_hit: bool) -> None:
        if cache_hit:
            raise RuntimeError("Triton hit its cache: the measurement would not be a compile")
        stages = {"frontend": times.ir_initialization / 1e3, "store": times.store_results / 1e3}
        stages.update({name: us / 1e3 for name, us in times.lowering_stages})
        self.last = stages

    def compile(self, spec: Any) -> dict[str, float]:
        fn = spec.fn
        types = iter(spec.signature.split())
        signature = {p.name: "constexpr" if p.is_constexpr else next(types) for p in fn.params}
        src = self.ASTSource(fn, signature, dict(spec.constexprs))
        kernel = self.triton.compile(src, target=self.target)
        if not kernel.asm.get("cubin"):
            raise RuntimeError(f"Triton produced no cubin for {fn.__name__}")
        # later compiles in this process must not be answered from the cache
        self.knobs.compilation.always_compile = True
        return self.last


class TritiumCompiler:
    """Runs tritium's pipeline: Python AST -> IR bytes, decode+verify in Rust,
    LLVM IR + O3 + PTX (one Rust call), then cubin with ptxas."""

    def __init__(self) -> None:
        from tritium import _core
        from tritium.runtime import driver
        self.core = _core
        self.ptxas = driver.ptxas_path()

    def compile(self, spec: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        data = spec.fn.compile_ir(signature=spec.signature, constexprs=dict(spec.constexprs))
        t1 = time.perf_counter()
        self.core.verify(data)
        t2 = time.perf_counter()
        stages: dict[str, Any] = {"frontend": (t1 - t0) * 1e3, "decode+verify": (t2 - t1) * 1e3}
        try:
            out = self.core.compile_ptx(data, arch="sm_90", num_warps=4)
        except self.core.CodegenError as e:
            stages["unsupported"] = str(e).splitlines()[0]
            return stages
        t3 = time.perf_counter()
        stages["llir+ptx"] = (t3 - t2) * 1e3
        if self.ptxas is not None:
            self.core.ptxas_compile(self.ptxas, out["ptx"], "sm_90", spec.fn.__name__)
            stages["cubin"] = (time.perf_counter() - t3) * 1e3
        return stages


def worker(compiler: str, kernel: str, warm: int) -> None:
    """Imports, compiles `kernel` once (the first compile), then `warm` more
    times; prints one JSON line with every timing in milliseconds."""
    t_start = time.perf_counter()
    defs = _load_defs(compiler)
    comp = TritonCompiler() if compiler == "triton" else TritiumCompiler()
    t_imported = time.perf_counter()
    if kernel not in defs.KERNELS:
        raise SystemExit(f"unknown kernel {kernel!r}; defs.py has {', '.join(defs.KERNELS)}")
    spec = defs.KERNELS[kernel]
    t0 = time.perf_counter()
    first_stages = comp.compile(spec)
    first = (time.perf_counter() - t0) * 1e3
    warm_totals, warm_stages = [], []
    for _ in range(warm):
        t0 = time.perf_counter()
        warm_stages.append(comp.compile(spec))
        warm_totals.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"import_ms": (t_imported - t_start) * 1e3, "first_ms": first, "first_stages": first_stages,
                      "warm_ms": warm_totals, "warm_stages": warm_stages}))


# -- driver side ------------------------------------------------------------

def triton_python() -> Path:
    return TRITON_VENV / "bin" / "python"


def ensure_triton_venv(extra: tuple[str, ...] = ()) -> Path:
    """The private venv with triton==3.6.0 (and any `extra` requirements, such
    as the numpy<2.4 Triton's interpreter needs), created on first use."""
    py = triton_python()
    check = [str(py), "-c", f"import triton, sys; sys.exit(triton.__version__ != {TRITON_VERSION!r})"]
    pins = [f"triton=={TRITON_VERSION}", *extra]
    record = TRITON_VENV / ".installed-requirements"   # what the last pip install here was asked for
    done = set(record.read_text().split("\n")) if record.exists() else set()
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0 and set(extra) <= done:
        return py
    print(f"setting up {TRITON_VENV.relative_to(ROOT)} with {' '.join(pins)} (one time)...", file=sys.stderr)
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TRITON_VENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", *pins], check=True)
    if subprocess.run(check, capture_output=True).returncode != 0:
        raise SystemExit(f"triton {TRITON_VERSION} did not install into {TRITON_VENV}")
    record.write_text("\n".join(sorted(done | set(pins))))
    return py


def run_worker(python: Path, compiler: str, kernel: str, warm: int) -> dict[str, Any]:
    """One fresh process with fresh, empty cache directories."""
    with tempfile.TemporaryDirectory(prefix="vs-triton-") as tmp:
        env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(tmp, "triton"),
                   TRITIUM_CACHE_DIR=os.path.join(tmp, "tritium"), TRITON_HOME=tmp)
        env.pop("TRITON_ALWAYS_COMPILE", None)
        cmd = [str(python), str(Path(__file__).resolve()), "--worker", compiler, "--kernels", kernel,
               "--warm", str(warm)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp)
        wall = (time.perf_counter() - t0) * 1e3
    if proc.returncode != 0:
        raise SystemExit(f"{compiler} worker failed on {kernel}:\n{proc.stderr.strip()}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_ms"] = wall
    return result


def measure(python: Path, compiler: str, kernel: str, cold: int, warm: int) -> dict[str, Any]:
    colds = [run_worker(python, compiler, kernel, 0) for _ in range(cold)]
    hot = run_worker(python, compiler, kernel, warm)
    stage_names = TRITON_STAGES if compiler == "triton" else TRITIUM_STAGES
    return {
        "process_ms": statistics.median(r["process_ms"] for r in colds),
        "import_ms": statistics.median(r["import_ms"] for r in colds),
        "first_ms": statistics.median(r["first_ms"] for r in colds),
        "warm_ms": statistics.median(hot["warm_ms"]),
        "warm_stages": {s: statistics.median(st.get(s, 0.0) for st in hot["warm_stages"]) for s in stage_names},
        "first_stages": {s: statistics.median(r["first_stages"].get(s, 0.0) for r in colds) for s in stage_names},
        "unsupported": hot["warm_stages"][0].get("unsupported") if hot["warm_stages"] else None,
    }


def fmt(ms: float) -> str:
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


def ratio(a: float, b: float) -> str:
    if b <= 0:
        return "n/a"
    return f"{a / b:.1f}x" if a / b < 10 else f"{a / b:.0f}x"


def report(kernel: str, tri: dict[str, Any], ours: dict[str, Any]) -> str:
    ours_label = "tritium (full pipeline)" if not ours.get("unsupported") else "tritium (frontend + IR only)"
    rows = [f"### {kernel}", "",
            f"| | Triton 3.6 (sm_90, full pipeline) | {ours_label} | Triton / tritium |",
            "|---|---:|---:|---:|"]
    for key, label in (("process_ms", "fresh process: total wall (imports + first compile + exit)"),
                       ("import_ms", "fresh process: imports"),
                       ("first_ms", "fresh process: first compile call"),
                       ("warm_ms", "warm process: compile, median (cache off)")):
        rows.append(f"| {label} | {fmt(tri[key])} | {fmt(ours[key])} | {ratio(tri[key], ours[key])} |")
    if ours.get("unsupported"):
        rows += ["", f"tritium stops after the IR: {ours['unsupported']}"]
    rows += ["", "Per stage, warm process, median ms (first compile in a fresh process in parentheses):", "",
             "| stage | Triton | tritium |", "|---|---:|---:|"]
    pairs = [("frontend", "frontend (Triton: setup + AST→TTIR; tritium: AST→IR bytes)", "frontend"),
             ("ttir", "TTIR passes", None), ("", "decode + verify (tritium, Rust)", "decode+verify"),
             ("ttgir", "TTGIR (layouts)", None), ("llir", "LLVM IR (tritium: IR → LLVM → O3 → PTX)", "llir+ptx"),
             ("ptx", "PTX", None), ("cubin", "cubin (ptxas)", "cubin"), ("store", "cache store", None)]
    for tkey, label, okey in pairs:
        t = f"{fmt(tri['warm_stages'][tkey])} ({fmt(tri['first_stages'][tkey])})" if tkey else "—"
        if okey and not (ours.get("unsupported") and okey in ("llir+ptx", "cubin")):
            o = f"{fmt(ours['warm_stages'][okey])} ({fmt(ours['first_stages'][okey])})"
        else:
            o = "—" if okey is None else "not lowered yet"
        rows.append(f"| {label} | {t} | {o} |")
    front = tri["warm_stages"]["frontend"], ours["warm_stages"]["frontend"]
    rows += ["", f"Like for like (frontend only, warm): Triton {fmt(front[0])} ms, tritium {fmt(front[1])} ms "
             f"({ratio(*front)}).", ""]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=",".join(DEFAULT_KERNELS), help="comma-separated names from defs.py")
    ap.add_argument("--warm", type=int, default=10, help="compiles timed in the warm process (median)")
    ap.add_argument("--cold", type=int, default=3, help="fresh processes per first-compile measurement (median)")
    ap.add_argument("--json", type=Path, help="also write all numbers to this file")
    ap.add_argument("--worker", choices=("triton", "tritium"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    if args.worker:
        worker(args.worker, kernels[0], args.warm)
        return 0
    if args.warm < 1 or args.cold < 1:
        ap.error("--warm and --cold must be at least 1")
    tri_py = ensure_triton_venv()
    results = {}
    print(f"# tritium vs Triton {TRITON_VERSION}: compile time on the CPU ({time.strftime('%Y-%m-%d')}, "
          f"{os.cpu_count()} cores)\n")
    print(f"tritium does NOT yet have: {TRITIUM_MISSING}; a kernel that needs them is marked below.\n")
    for kernel in kernels:
        tri = measure(tri_py, "triton", kernel, args.cold, args.warm)
        ours = measure(Path(sys.executable), "tritium", kernel, args.cold, args.warm)
        results[kernel] = {"triton": tri, "tritium": ours}
        print(report(kernel, tri, ours), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
