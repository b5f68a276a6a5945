"""noinline calls vs inlining, in one run: (1) the same kernel with its helper
inlined and noinline: kernel time ratio (GPU only), PTX size, registers
(ptxas -v: the kernel's registers, the function's stack frame); (2) compile time of a kernel
calling one large function from 4 sites, inlined vs noinline, for tritium
(tensor and scalar arguments) next to Triton's (scalar arguments: Triton
refuses tensor arguments to noinline functions). Prints a table.
Usage: python benches/gpu/calls_bench.py [--dry]  (--dry, or no GPU/Triton:
the columns that need neither)."""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import kernel_time_ms  # noqa: E402  (one kernel-time method for every GPU bench)

KERNELS = '''
import {lib} as triton
import {lib}.language as tl


def make(noinline):
    @triton.jit(noinline=noinline)
    def big_fn(x, s):
        # a deliberately large body: 24 dependent steps with transcendental calls
        for i in tl.static_range(24):
            x = tl.exp(x * s) * 0.25 + tl.sqrt(tl.abs(x) + 1.0) * s
        return x

    @triton.jit
    def four_sites(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m, other=0.0)
        a = big_fn(x, s)
        b = big_fn(a, s * 0.5)
        c = big_fn(x * 0.5, s)
        tl.store(out_ptr + offs, big_fn(b + c, s), mask=m)

    @triton.jit
    def four_sites_scalar(x_ptr, out_ptr, s):
        pid = tl.program_id(0)
        x = tl.load(x_ptr + pid)
        a = big_fn(x, s)
        b = big_fn(a, s * 0.5)
        c = big_fn(x * 0.5, s)
        tl.store(out_ptr + pid, big_fn(b + c, s))

    return four_sites, four_sites_scalar


INLINE = make(False)
NOINLINE = make(True)
'''

BLOCK = 1024
N = 1 << 24


def load(lib: str, tmp: Path):
    path = tmp / f"calls_{lib}.py"
    path.write_text(KERNELS.format(lib=lib))
    spec = importlib.util.spec_from_file_location(f"calls_{lib}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ptxas_info(ptx: str, arch: str, tmp: Path) -> dict[str, int]:
    """From `ptxas -v`: registers of each entry (`name`) and stack frame
    bytes of each function (`name:stack`; a `.func` has no register count of
    its own). Empty without ptxas."""
    from tritium.runtime import driver
    exe = driver.ptxas_path()
    if exe is None:
        return {}
    src = tmp / "k.ptx"
    src.write_text(ptx)
    r = subprocess.run([exe, "-v", "--gpu-name", arch, str(src), "-o", str(tmp / "k.cubin")], capture_output=True, text=True)
    regs, current = {}, None
    for line in r.stderr.splitlines():
        if m := re.search(r"(?:Compiling entry function|Function properties for) '?(\w+)'?", line):
            current = m[1]
        elif (m := re.search(r"(\d+) bytes stack frame", line)) and current:
            regs[f"{current}:stack"] = int(m[1])
        elif (m := re.search(r"Used (\d+) registers", line)) and current:
            regs[current] = int(m[1])
    return regs


def tritium_compile_s(kernel, sig: str, consts: dict, arch: str, reps: int = 5) -> tuple[float, dict]:
    """Frontend + codegen (LLVM O3, PTX) + ptxas, best of `reps` (each from scratch)."""
    from tritium import _core
    from tritium.runtime import driver
    exe = driver.ptxas_path()
    best, out = float("inf"), None
    with tempfile.TemporaryDirectory() as d:
        for _ in range(reps):
            t = time.perf_counter()
            out = _core.compile_ptx(kernel.compile_ir(signature=sig, constexprs=consts), arch, 4)
            if exe is not None:
                Path(d, "k.ptx").write_text(out["ptx"])
                subprocess.run([exe, "--gpu-name", arch, str(Path(d, "k.ptx")), "-o", str(Path(d, "k.cubin"))], check=True)
            best = min(best, time.perf_counter() - t)
    return best, out


TRITON_COMPILE = '''
import sys, time, torch
sys.path.insert(0, {tmp!r})
import calls_triton as K
k = (K.NOINLINE if {noinline} else K.INLINE)[1]
x = torch.randn(1024, device="cuda"); y = torch.empty_like(x)
t = time.perf_counter(); k[(1024,)](x, y, 0.5); torch.cuda.synchronize()
print(time.perf_counter() - t)
'''


def triton_compile_s(tmp: Path, noinline: bool) -> float | None:
    """Triton's cold compile (+ first launch) of the scalar form, in a fresh process with an empty cache."""
    env = {**os.environ, "TRITON_CACHE_DIR": tempfile.mkdtemp()}
    r = subprocess.run([sys.executable, "-c", TRITON_COMPILE.format(tmp=str(tmp), noinline=noinline)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print(f"triton ({'noinline' if noinline else 'inline'}): {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return float(r.stdout.strip().splitlines()[-1])


def fmt(v, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry", action="store_true", help="no GPU and no Triton: compile-side columns only")
    ap.add_argument("--arch", default="sm_90a")
    args = ap.parse_args()
    torch = None
    if not args.dry:
        try:
            import torch as _torch
            torch = _torch if _torch.cuda.is_available() else None
        except ImportError:
            torch = None
    has_triton = not args.dry and torch is not None and importlib.util.find_spec("triton") is not None
    tmp = Path(tempfile.mkdtemp())
    sys.path.insert(0, str(tmp))
    mod = load("tritium", tmp)
    if has_triton:
        load("triton", tmp)

    rows = []
    for name, (vec, scal) in (("inline", mod.INLINE), ("noinline", mod.NOINLINE)):
        t_vec, out = tritium_compile_s(vec, "*fp32, *fp32, i32, fp32", {"BLOCK": BLOCK}, args.arch)
        t_scal, _ = tritium_compile_s(scal, "*fp32, *fp32, fp32", {}, args.arch)
        regs = ptxas_info(out["ptx"], args.arch, tmp)
        ms = None
        if torch is not None:
            x = torch.randn(N, device="cuda")
            y = torch.empty_like(x)
            grid = (N // BLOCK,)
            ms = kernel_time_ms(lambda: vec[grid](x, y, N, 0.01, BLOCK=BLOCK, num_warps=4), torch)
        t_triton = triton_compile_s(tmp, name == "noinline") if has_triton else None
        rows.append(dict(variant=name, ms=ms, ptx_kb=len(out["ptx"]) / 1024,
                         regs_kernel=regs.get("four_sites"), regs_fn=regs.get("big_fn:stack"),
                         compile_vec=t_vec, compile_scal=t_scal, compile_triton=t_triton))

    head = ["variant", "kernel ms", "ratio", "PTX KiB", "regs kernel", "big_fn stack B",
            "tritium compile s (tensor)", "tritium compile s (scalar)", "Triton compile s (scalar)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    base = rows[0]["ms"]
    for r in rows:
        ratio = None if r["ms"] is None or base is None else r["ms"] / base
        print("| " + " | ".join([r["variant"], fmt(r["ms"]), fmt(ratio, ".2f"), fmt(r["ptx_kb"], ".1f"),
                                 fmt(r["regs_kernel"], "d"), fmt(r["regs_fn"], "d"), fmt(r["compile_vec"]),
                                 fmt(r["compile_scal"]), fmt(r["compile_triton"])]) + " |")
    if torch is None or not has_triton:
        print(f"(dry: {'no GPU' if torch is None else 'no Triton'}; kernel time and Triton columns need both; "
              "compile times include ptxas when found)")


if __name__ == "__main__":
    main()
