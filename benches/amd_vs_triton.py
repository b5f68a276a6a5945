"""Side by side with Triton 3.6's AMD backend, CPU only: the same kernels
(benches/kernels/defs.py) compiled for AMD targets by both compilers, with
no GPU and no ROCm. Per kernel and arch it prints compile time (median of
warm compiles in one process, caches off; the first compile in parentheses)
and, read from each HSACO by the same code (tritium.backends.hsaco and
llvm-objdump-19): VGPRs (AGPRs included, as the note counts them on CDNA),
SGPRs, LDS bytes (Triton's from its metadata: it allocates LDS at launch),
spills and instruction count. CPU ms is the median of the same warm
compiles in CPU time (all threads, and child processes: Triton links with
an ld.lld subprocess): on a loaded shared machine wall time waits for the
CPU, and CPU time is what the compile costs.

    .venv/bin/python benches/amd_vs_triton.py [--archs gfx942,gfx1100] [--kernels a,b] [--warm N]

Triton runs from $TRITON_PYTHON when set, else from benches/.venv-triton
(vs_triton.py creates it: pip install triton==3.6.0).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_KERNELS = ("vector_add", "softmax", "layer_norm_fwd", "matmul", "noinline_call")
WAVE = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1100": 32, "gfx1200": 32}


# -- worker side: one process per compiler ----------------------------------

def _spec_signature(spec: Any) -> dict:
    types = iter(spec.signature.split())
    return {p.name: "constexpr" if p.is_constexpr else next(types) for p in spec.fn.params}


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (Triton runs
    ld.lld as a subprocess), user and system, all threads."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def worker(compiler: str, kernels: list[str], archs: list[str], warm: int, out_dir: Path) -> None:
    """Compiles each kernel for each arch 1 + `warm` times; writes each HSACO
    to `out_dir` and prints one JSON line of timings (ms)."""
    sys.path.insert(0, str(HERE / "kernels"))
    lds: dict[tuple, int] = {}      # LDS a launch must allocate, where the code object does not state it
    if compiler == "tritium":
        sys.path.insert(0, str(ROOT / "python"))
        import tritium
        import tritium.language
        sys.modules["triton"] = tritium
        sys.modules["triton.language"] = tritium.language

        def compile_one(spec: Any, arch: str) -> bytes:
            sig = {k: v for k, v in _spec_signature(spec).items() if v != "constexpr"}
            k = tritium.compile(spec.fn, signature=sig, constexprs=dict(spec.constexprs), target=f"hip:{arch}",
                                num_warps=4)
            return k.asm["hsaco"]
    else:
        import triton
        from triton import knobs
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        def compile_one(spec: Any, arch: str) -> bytes:
            src = ASTSource(spec.fn, _spec_signature(spec), dict(spec.constexprs))
            k = triton.compile(src, target=GPUTarget("hip", arch, WAVE[arch]), options={"num_warps": 4})
            knobs.compilation.always_compile = True    # later compiles are compiles, not cache hits
            # Triton allocates LDS at launch (dynamic): its note says 0, its metadata the bytes
            lds[(spec.fn.__name__, arch)] = int(k.metadata.shared)
            return k.asm["hsaco"]
    import defs
    results: dict[str, Any] = {}
    for name in kernels:
        spec = defs.KERNELS[name]
        for arch in archs:
            t0 = time.perf_counter()
            try:
                code = compile_one(spec, arch)
            except Exception as e:  # a kernel one compiler cannot build is reported, not fatal
                results[f"{name}/{arch}"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
                continue
            first = (time.perf_counter() - t0) * 1e3
            times, cpu = [], []
            for _ in range(warm):
                t0, c0 = time.perf_counter(), cpu_seconds()
                compile_one(spec, arch)
                times.append((time.perf_counter() - t0) * 1e3)
                cpu.append((cpu_seconds() - c0) * 1e3)
            (out_dir / f"{compiler}.{name}.{arch}.hsaco").write_bytes(code)
            results[f"{name}/{arch}"] = {"first_ms": first, "warm_ms": statistics.median(times) if times else first,
                                         "cpu_ms": statistics.median(cpu) if cpu else None}
            if (spec.fn.__name__, arch) in lds:
                results[f"{name}/{arch}"]["launch_lds"] = lds[(spec.fn.__name__, arch)]
    print(json.dumps(results))


# -- driver side ------------------------------------------------------------

def instruction_count(code: bytes, symbol: str, arch: str, tmp: Path) -> int | None:
    """Instructions in `symbol`'s body, from llvm-objdump's disassembly
    (the s_nop/s_code_end padding after the last kernel is not counted)."""
    objdump = shutil.which("llvm-objdump-19") or shutil.which("llvm-objdump")
    if objdump is None:
        return None
    f = tmp / "count.hsaco"
    f.write_bytes(code)
    text = subprocess.run([objdump, "-d", f"--mcpu={arch}", str(f)], capture_output=True, text=True).stdout
    mnemonics, inside = [], False
    for line in text.splitlines():
        if re.match(r"^[0-9a-f]+ <.*>:$", line):
            inside = line.endswith(f"<{symbol}>:")
            continue
        if inside and re.search(r"//\s*[0-9A-Fa-f]+:", line):
            mnemonics.append(line.split()[0])
    # the section is padded after the code with s_nop / s_code_end
    while mnemonics and mnemonics[-1] in ("s_nop", "s_code_end"):
        mnemonics.pop()
    return len(mnemonics)


def resources(code: bytes, arch: str, tmp: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "python"))
    from tritium.backends import hsaco
    doc = hsaco.metadata(code)
    kernel = doc["amdhsa.kernels"][0]
    r = hsaco.kernel_resources(code, kernel[".name"])
    r["instructions"] = instruction_count(code, kernel[".name"], arch, tmp)
    return r


def run_worker(python: str, compiler: str, kernels: list[str], archs: list[str], warm: int, out: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="amd-vs-triton-") as cache:
        env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(cache, "triton"),
                   TRITIUM_CACHE_DIR=os.path.join(cache, "tritium"), TRITON_HOME=cache)
        cmd = [python, str(Path(__file__).resolve()), "--worker", compiler, "--kernels", ",".join(kernels),
               "--archs", ",".join(archs), "--warm", str(warm), "--out", str(out)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cache)
    if proc.returncode != 0:
        raise SystemExit(f"{compiler} worker failed:\n{proc.stderr.strip()[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def triton_python() -> str:
    env = os.environ.get("TRITON_PYTHON")
    if env:
        return env
    sys.path.insert(0, str(HERE))
    import vs_triton
    return str(vs_triton.ensure_triton_venv())


def cell(r: dict | None, key: str) -> str:
    if r is None or "error" in r:
        return "—"
    v = r.get(key)
    if v is None:
        return "?"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def table(kernels: list[str], archs: list[str], tri: dict, ours: dict) -> str:
    head = ("| kernel | arch | compile ms Triton | tritium | ratio | CPU ms T | t | ratio | VGPRs T | t | SGPRs T | t "
            "| LDS T | t | spills T | t | instrs T | t |")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    notes = []
    for name in kernels:
        for arch in archs:
            k = f"{name}/{arch}"
            t, o = tri.get(k), ours.get(k)
            for who, r in (("Triton", t), ("tritium", o)):
                if r and "error" in r:
                    notes.append(f"{who} could not compile {k}: {r['error']}")
            ok = t and o and "error" not in t and "error" not in o
            ratio = f"{t['warm_ms'] / o['warm_ms']:.1f}x" if ok else "—"
            cpu_ok = ok and t.get("cpu_ms") and o.get("cpu_ms")
            cpu_ratio = f"{t['cpu_ms'] / o['cpu_ms']:.1f}x" if cpu_ok else "—"
            ct = f"{t['warm_ms']:.1f} ({t['first_ms']:.0f})" if t and "error" not in t else "—"
            co = f"{o['warm_ms']:.1f} ({o['first_ms']:.0f})" if o and "error" not in o else "—"
            spills = [str(r["vgpr_spills"] + r["sgpr_spills"]) if r and "error" not in r else "—" for r in (t, o)]
            rows.append(f"| {name} | {arch} | {ct} | {co} | {ratio} | {cell(t, 'cpu_ms')} | {cell(o, 'cpu_ms')} "
                        f"| {cpu_ratio} | {cell(t, 'vgprs')} | {cell(o, 'vgprs')} "
                        f"| {cell(t, 'sgprs')} | {cell(o, 'sgprs')} | {cell(t, 'lds')} | {cell(o, 'lds')} "
                        f"| {spills[0]} | {spills[1]} | {cell(t, 'instructions')} | {cell(o, 'instructions')} |")
    return "\n".join(rows + ([""] + notes if notes else []))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=",".join(DEFAULT_KERNELS), help="comma-separated names from defs.py")
    ap.add_argument("--archs", default="gfx942,gfx1100")
    ap.add_argument("--warm", type=int, default=5, help="warm compiles per kernel and arch (median)")
    ap.add_argument("--json", type=Path, help="also write all numbers to this file")
    ap.add_argument("--only", choices=("triton", "tritium"), help="run one side (the other's columns stay empty)")
    ap.add_argument("--worker", choices=("triton", "tritium"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    archs = [a.removeprefix("hip:") for a in args.archs.split(",") if a]
    unknown = [a for a in archs if a not in WAVE]
    if unknown:
        ap.error(f"unknown arch {unknown[0]!r} (known: {', '.join(WAVE)})")
    if args.worker:
        worker(args.worker, kernels, archs, args.warm, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="amd-vs-triton-out-") as d:
        out = Path(d)
        sides = {}
        for who, python in (("triton", None), ("tritium", sys.executable)):
            if args.only and args.only != who:
                sides[who] = {}
                continue
            sides[who] = run_worker(python or triton_python(), who, kernels, archs, args.warm, out)
            for key, r in sides[who].items():
                if "error" not in r:
                    name, arch = key.split("/")
                    r.update(resources((out / f"{who}.{name}.{arch}.hsaco").read_bytes(), arch, out))
                    r["lds"] = max(r["lds"], r.pop("launch_lds", 0))
    print(f"# tritium vs Triton 3.6, AMD targets, compile-only on the CPU ({time.strftime('%Y-%m-%d')}, "
          f"{os.cpu_count()} cores); T = Triton, t = tritium; compile ms = warm median (first), wall; CPU ms = warm median, CPU time with children\n")
    print(table(kernels, archs, sides["triton"], sides["tritium"]))
    if args.json:
        args.json.write_text(json.dumps(sides, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
