"""Issue 16's matmul (the autotune bench's 128x128x64, GROUP 8, 4 warps, 3
stages, fp16 4096^3 on sm_90a): tritium's kernel built several ways against
Triton 3.6's, timed in one process, interleaved, so the rows compare code
alone. Every image is loaded straight through the driver (ctypes) with the
setting both libraries' own launchers use (cache config PREFER_SHARED, the
dynamic-shared opt-in raised to the device's limit; carveout_probe.py's
`prefer-shared` row) and checked against torch's matmul before timing.

Variants (each a cubin with the same entry and parameters as its library's):

  tritium            the default build (the baseline of the `/base` column)
  no-fence           TRITIUM_DEBUG_NO_PROXY_FENCE=1: no fence.proxy.async after
                     each cp.async wait (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S)
  per-load           TRITIUM_DEBUG_COMMIT_PER_LOAD=1: one cp.async group per
                     operand and stage (A, commit, B, commit; wait_group 2), as
                     Triton 3.6 commits
  no-fence+per-load  both switches
  mad-wide           the default PTX with each `mul.wide.s32 d, x, 2; add.s64
                     e, b, d` (d used once) written `mad.wide.s32 e, x, 2, b`,
                     as Triton's LLVM emits the B addresses; ptxas then builds
                     the loop's addresses from LEA/IADD3 pairs instead of 16
                     IMAD.WIDE (207 registers instead of 230)
  mad-wide+no-fence  the same on the no-fence PTX
  triton             Triton's own cubin
  triton+fence       Triton's PTX with tritium's fence after each cp.async
                     wait, assembled by Triton's ptxas (what the fence costs in
                     Triton's instruction schedule)
  triton-reasm       Triton's PTX assembled again by the same ptxas (control:
                     must match `triton`)

Extra PTX files of tritium's kernel (hand edits of `--dump-ptx`'s output)
time beside them with `--ptx NAME=FILE`.

Usage: python benches/gpu/matmul_variants.py [--rounds 5] [--only a,b] [--dump-ptx DIR]
       python benches/gpu/matmul_variants.py --static [--only ...]   (no GPU: SASS loop
       summaries of every variant with benches/sass_ctrl.py, compiled for sm_90a)"""
from __future__ import annotations

import argparse
import ctypes
import importlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from autotune_bench import KERNELS  # noqa: E402

META = {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}
M = N = K = 4096
FUNC_SHARED_SIZE_BYTES = 1
FUNC_NUM_REGS = 4
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
DEV_MAX_SHARED_PER_BLOCK_OPTIN = 97
FUNC_CACHE_PREFER_SHARED = 1

NO_FENCE = {"TRITIUM_DEBUG_NO_PROXY_FENCE": "1"}
PER_LOAD = {"TRITIUM_DEBUG_COMMIT_PER_LOAD": "1"}
# name: (library, environment of the tritium compile, PTX rewrite or None)
VARIANTS = {
    "tritium": ("tritium", {}, None),
    "no-fence": ("tritium", NO_FENCE, None),
    "per-load": ("tritium", PER_LOAD, None),
    "no-fence+per-load": ("tritium", {**NO_FENCE, **PER_LOAD}, None),
    "mad-wide": ("tritium", {}, "mad_wide"),
    "mad-wide+no-fence": ("tritium", NO_FENCE, "mad_wide"),
    "triton": ("triton", {}, None),
    "triton+fence": ("triton", {}, "fence_after_wait"),
    "triton-reasm": ("triton", {}, "same"),
}


def mad_wide(ptx: str) -> str:
    """`mul.wide.s32 d, x, 2;` directly followed by `add.s64 e, b, d;`, with d
    used nowhere else, becomes `mad.wide.s32 e, x, 2, b;`."""
    lines = ptx.split("\n")
    uses: dict[str, int] = {}
    for tok in re.findall(r"%rd\d+\b", ptx):
        uses[tok] = uses.get(tok, 0) + 1
    out, i, fused = [], 0, 0
    while i < len(lines):
        m = re.match(r"\s*mul\.wide\.s32\s+(%rd\d+), (%r\d+), 2;", lines[i])
        if m and i + 1 < len(lines) and uses.get(m.group(1)) == 2:
            a = re.match(r"\s*add\.s64\s+(%rd\d+), (%rd\d+), " + re.escape(m.group(1)) + r";", lines[i + 1])
            if a:
                out.append(f"\tmad.wide.s32 \t{a.group(1)}, {m.group(2)}, 2, {a.group(2)};")
                i, fused = i + 2, fused + 1
                continue
        out.append(lines[i])
        i += 1
    if not fused:
        raise RuntimeError("mad_wide: no mul.wide.s32 + add.s64 pair found (the PTX changed?)")
    return "\n".join(out)


def fence_after_wait(ptx: str) -> str:
    out, n = re.subn(r"(\n\s*cp\.async\.wait_group\s+\d+;)", r"\1\n\tfence.proxy.async.shared::cta;", ptx)
    if not n:
        raise RuntimeError("fence_after_wait: no cp.async.wait_group in the PTX")
    return out


REWRITES = {"mad_wide": mad_wide, "fence_after_wait": fence_after_wait, "same": lambda p: p}


class Image:
    def __init__(self, name: str, lib: str, cubin: bytes, ptx: str, symbol: str, shared: int, params: list[str],
                 scratch: int):
        self.name, self.lib, self.cubin, self.ptx, self.symbol = name, lib, cubin, ptx, symbol
        self.shared, self.params, self.scratch = shared, params, scratch


def assemble(ptxas: str, ptx: str, arch: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        r = subprocess.run([ptxas, f"--gpu-name={arch}", str(src), "-o", str(dst)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed:\n{r.stderr[-2000:]}")
        return dst.read_bytes()


def triton_ptxas(mod) -> str:
    p = Path(mod.triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    if not p.exists():
        raise RuntimeError(f"no ptxas in Triton's wheel at {p}")
    return str(p)


def build(mods: dict, args: tuple, names: list[str], extra_ptx: dict[str, str]) -> dict[str, Image]:
    from tritium.runtime import driver
    ours_ptxas = driver.ptxas_path()
    images: dict[str, Image] = {}
    base: dict[str, Image] = {}
    for name in names:
        lib, env, rewrite = VARIANTS[name]
        with mock.patch.dict(os.environ, env):
            k = mods[lib].matmul.warmup(*args, grid=(1,), num_warps=4, num_stages=3, **META)
        if lib == "tritium":
            params = [p for p, ty in k.metadata["params"] if ty is not None]
            img = Image(name, lib, k.asm["cubin"], k.asm["ptx"], k.metadata["symbol"], int(k.metadata["dynamic_shared"]),
                        params, 0)
            arch = re.search(r"^\.target\s+(\w+)", img.ptx, re.M).group(1)
            ptxas = ours_ptxas
        else:
            params = [p for p, ty in k.src.signature.items() if ty != "constexpr"]
            if getattr(k.metadata, "global_scratch_size", 0) or getattr(k.metadata, "profile_scratch_size", 0):
                raise RuntimeError("Triton's kernel asks for global scratch; null scratch pointers are passed")
            img = Image(name, lib, k.asm["cubin"], k.asm["ptx"], k.metadata.name, int(k.metadata.shared), params, 2)
            arch = re.search(r"^\.target\s+(\w+)", img.ptx, re.M).group(1)
            ptxas = triton_ptxas(mods["triton"])
        if rewrite is not None:
            img.ptx = REWRITES[rewrite](img.ptx)
            img.cubin = assemble(ptxas, img.ptx, arch)
        if not env and rewrite is None:
            base[lib] = img
        images[name] = img
    for name, path in extra_ptx.items():
        ref = base.get("tritium") or next(i for i in images.values() if i.lib == "tritium")
        ptx = Path(path).read_text()
        arch = re.search(r"^\.target\s+(\w+)", ptx, re.M).group(1)
        images[name] = Image(name, "tritium", assemble(ours_ptxas, ptx, arch), ptx, ref.symbol, ref.shared,
                             ref.params, 0)
    return images


def static(images: dict[str, Image]) -> None:
    """The K loop of each image: instructions, summed fixed stalls, registers."""
    import sass_ctrl
    tool = shutil.which("cuobjdump") or next(iter(sorted(Path("/usr/local").glob("cuda*/bin/cuobjdump"))), None)
    for img in images.values():
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "k.cubin"
            p.write_bytes(img.cubin)
            exe = str(tool) if tool else sass_ctrl.cuobjdump(None)
            sass = subprocess.run([exe, "-sass", str(p)], capture_output=True, text=True, check=True).stdout
        ins = sass_ctrl.parse(sass)
        lo, hi = sass_ctrl.loops(ins)[0]
        body = [x for x in ins if lo <= x["off"] <= hi]
        ops: dict[str, int] = {}
        for x in body:
            op = re.sub(r"^@!?U?P\w+\s+", "", x["text"]).split()[0].split(".")[0]
            ops[op] = ops.get(op, 0) + 1
        print(f"{img.name:<20} loop {len(body):>3} instructions, fixed stalls {sum(x['stall'] for x in body):>3}; "
              + ", ".join(f"{k} {v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1])[:8]))


def check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA error {rc}")


def time_all(images: dict[str, Image], args: tuple, arg_names: list[str], rounds: int) -> None:
    import torch
    from bench import kernel_time_ms
    a, b, c = args[0], args[1], args[2]
    cuda = ctypes.CDLL("libcuda.so.1")
    dev = ctypes.c_int()
    check(cuda.cuCtxGetDevice(ctypes.byref(dev)), "cuCtxGetDevice")
    optin = ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(optin), DEV_MAX_SHARED_PER_BLOCK_OPTIN, dev), "cuDeviceGetAttribute")
    named = dict(zip(arg_names, args))
    grid = (M // META["BM"]) * (N // META["BN"])
    ref = a.float() @ b.float()
    launches, notes, keep = {}, {}, []
    for name, img in images.items():
        module, func = ctypes.c_void_p(), ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(module), img.cubin), f"{name}: cuModuleLoadData")
        check(cuda.cuModuleGetFunction(ctypes.byref(func), module, img.symbol.encode()), f"{name}: cuModuleGetFunction")
        static_bytes, regs = ctypes.c_int(), ctypes.c_int()
        check(cuda.cuFuncGetAttribute(ctypes.byref(static_bytes), FUNC_SHARED_SIZE_BYTES, func), "cuFuncGetAttribute")
        check(cuda.cuFuncGetAttribute(ctypes.byref(regs), FUNC_NUM_REGS, func), "cuFuncGetAttribute")
        check(cuda.cuFuncSetCacheConfig(func, FUNC_CACHE_PREFER_SHARED), "cuFuncSetCacheConfig")
        check(cuda.cuFuncSetAttribute(func, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin.value - static_bytes.value),
              "cuFuncSetAttribute")
        values = [ctypes.c_uint64(v.data_ptr()) if hasattr(v, "data_ptr") else ctypes.c_int32(v)
                  for v in (named[p] for p in img.params)]
        values += [ctypes.c_uint64(0) for _ in range(img.scratch)]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        keep.append((module, values, params))

        def launch(func=func, params=params, shared=img.shared) -> None:
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            check(cuda.cuLaunchKernel(func, grid, 1, 1, 128, 1, 1, shared, stream, params, None), "cuLaunchKernel")
        c.zero_()
        launch()
        torch.cuda.synchronize()
        ok = (c.float() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()
        launches[name] = launch
        notes[name] = f"{regs.value} regs, {'ok' if ok else 'WRONG'}"
    times: dict[str, list[float]] = {name: [] for name in launches}
    for _ in range(rounds):   # interleaved: clock drift hits every variant alike
        for name, fn in launches.items():
            times[name].append(kernel_time_ms(fn, torch))
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, fp16 {M}x{N}x{K}, median of {rounds} interleaved rounds [min]")
    tri = statistics.median(times["triton"]) if "triton" in times else None
    base = statistics.median(times["tritium"]) if "tritium" in times else None
    print(f"{'variant':<20} {'ms':>8} {'min':>8} {'/triton':>8} {'/base':>7}  notes")
    for name, ts in times.items():
        med = statistics.median(ts)
        r1 = f"{med / tri:.3f}" if tri else "-"
        r2 = f"{med / base:.3f}" if base else "-"
        print(f"{name:<20} {med:>8.4f} {min(ts):>8.4f} {r1:>8} {r2:>7}  {notes[name]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated variants (default: all)")
    ap.add_argument("--ptx", action="append", default=[], help="NAME=FILE: a PTX of tritium's kernel to time too")
    ap.add_argument("--dump-ptx", default=None, help="write each variant's PTX here")
    ap.add_argument("--static", action="store_true", help="no GPU: print each variant's SASS loop summary")
    opts = ap.parse_args()
    names = [n for n in (opts.only.split(",") if opts.only else VARIANTS) if n]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    extra = dict(item.split("=", 1) for item in opts.ptx)
    libs = sorted({VARIANTS[n][0] for n in names} | ({"tritium"} if extra else set()))
    with tempfile.TemporaryDirectory() as d:
        sys.path.insert(0, d)
        mods = {}
        for lib in libs:
            (Path(d) / f"variant_kernels_{lib}.py").write_text(KERNELS.format(lib=lib))
            mods[lib] = importlib.import_module(f"variant_kernels_{lib}")
        if "triton" in mods and "tritium" in (getattr(mods["triton"].triton, "__file__", "") or ""):
            raise SystemExit("`import triton` gives tritium here (TRITIUM_AS_TRITON?): unset it to compare with Triton")
        if opts.static:
            if "triton" in mods:
                raise SystemExit("--static builds tritium's variants only (Triton needs a driver to compile)")
            from tritium.language import float16
            from tritium.runtime.tensors import MockTensor   # no GPU: 16-byte aligned stand-ins
            args = (MockTensor(float16), MockTensor(float16), MockTensor(float16), M, N, K, K, 1, N, 1, N, 1)
        else:
            import torch
            a = torch.randn(M, K, device="cuda", dtype=torch.float16)
            b = torch.randn(K, N, device="cuda", dtype=torch.float16)
            c = torch.empty(M, N, device="cuda", dtype=torch.float16)
            args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        images = build(mods, args, names, extra)
        if opts.dump_ptx:
            Path(opts.dump_ptx).mkdir(parents=True, exist_ok=True)
            for img in images.values():
                (Path(opts.dump_ptx) / f"{img.name}.ptx").write_text(img.ptx)
        if opts.static:
            static(images)
            return
        arg_names = list(mods["tritium" if "tritium" in mods else "triton"].matmul.arg_names)
        time_all(images, args, arg_names, opts.rounds)


if __name__ == "__main__":
    main()
