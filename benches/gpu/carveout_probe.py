"""What the driver's shared-memory settings do to the autotune bench's chosen
matmul (128x128x64, 3 stages, 4 warps: 96 KiB of dynamic shared memory a
program), for tritium's kernel and Triton's kernel of the same source side by
side. Each kernel's cubin (from `warmup` with the bench's arguments, so the
same specialization) is loaded once per setting straight through the driver
(ctypes), and each such function is timed at 4096^3 (kernel_time_ms, as the
autotune bench times the chosen config) in interleaved rounds:

  default        only the opt-in to the kernel's dynamic shared size
  max-dynamic    the opt-in raised to all the device allows but the static part
  prefer-shared  Triton 3.6's loader: cuFuncSetCacheConfig(PREFER_SHARED) and
                 that raised opt-in (tritium's launcher does the same)
  carveout-100   the largest shared carveout, the opt-in to the kernel's size
                 (what tritium's launcher did from 69ccb2a)
  own-launcher   each library's own launch path (kernel[grid](...))

with the programs per SM the occupancy API reports. The row that matches
own-launcher tells which setting each library really runs with; the
difference between the kernels at equal settings is the code's.
Usage: python benches/gpu/carveout_probe.py [--rounds N]"""
from __future__ import annotations

import argparse
import ctypes
import importlib
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from autotune_bench import KERNELS  # noqa: E402
from bench import kernel_time_ms  # noqa: E402

FUNC_SHARED_SIZE_BYTES = 1
FUNC_NUM_REGS = 4
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
DEV_MAX_SHARED_PER_BLOCK_OPTIN = 97
DEV_MAX_SHARED_PER_SM = 81
FUNC_CACHE_PREFER_SHARED = 1
SETTINGS = ("default", "max-dynamic", "prefer-shared", "carveout-100")
META = {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}
M = N = K = 4096


def check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA error {rc}")


class Loaded:
    """One kernel image: its cubin, entry name, dynamic shared size and the
    order of its runtime parameters (Triton's ends with two scratch pointers)."""

    def __init__(self, lib: str, cubin: bytes, name: str, shared: int, params: list[str], scratch: int):
        self.lib, self.cubin, self.name, self.shared, self.params, self.scratch = (
            lib, cubin, name, shared, params, scratch)


def tritium_image(mod, args: tuple) -> Loaded:
    k = mod.matmul.warmup(*args, grid=(1,), num_warps=4, num_stages=3, **META)
    # the parameters its entry keeps: the non-constexpr ones (a None type is
    # a constexpr, the strides equal to 1 among them)
    params = [name for name, ty in k.metadata["params"] if ty is not None]
    return Loaded("tritium", k.asm["cubin"], k.metadata["symbol"], int(k.metadata["dynamic_shared"]), params, 0)


def triton_image(mod, args: tuple) -> Loaded:
    k = mod.matmul.warmup(*args, grid=(1,), num_warps=4, num_stages=3, **META)
    params = [n for n, ty in k.src.signature.items() if ty != "constexpr"]
    scratch = 2   # Triton 3.6 appends global_scratch and profile_scratch
    if getattr(k.metadata, "global_scratch_size", 0) or getattr(k.metadata, "profile_scratch_size", 0):
        raise RuntimeError("Triton's kernel asks for global scratch; this probe passes null scratch pointers")
    return Loaded("triton", k.asm["cubin"], k.metadata.name, int(k.metadata.shared), params, scratch)


def load(cuda, img: Loaded, setting: str, optin: int) -> ctypes.c_void_p:
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), img.cubin), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(func), module, img.name.encode()), "cuModuleGetFunction")
    static = ctypes.c_int()
    check(cuda.cuFuncGetAttribute(ctypes.byref(static), FUNC_SHARED_SIZE_BYTES, func), "cuFuncGetAttribute")
    limit = img.shared if setting in ("default", "carveout-100") else optin - static.value
    if setting == "prefer-shared":
        check(cuda.cuFuncSetCacheConfig(func, FUNC_CACHE_PREFER_SHARED), "cuFuncSetCacheConfig")
    check(cuda.cuFuncSetAttribute(func, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit), "cuFuncSetAttribute")
    if setting == "carveout-100":
        check(cuda.cuFuncSetAttribute(func, FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT, 100), "cuFuncSetAttribute")
    return func


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    mods = {}
    with tempfile.TemporaryDirectory() as d:
        # the kernels' source stays readable until the last launch (the own
        # launchers compile and key from it)
        sys.path.insert(0, d)
        for lib in ("tritium", "triton"):
            (Path(d) / f"probe_kernels_{lib}.py").write_text(KERNELS.format(lib=lib))
            mods[lib] = importlib.import_module(f"probe_kernels_{lib}")
        if "tritium" in (getattr(mods["triton"].triton, "__file__", "") or ""):
            raise SystemExit("`import triton` gives tritium here (TRITIUM_AS_TRITON?): unset it to compare with Triton")
        probe(mods, opts.rounds)


def probe(mods: dict, rounds: int) -> None:
    import torch
    torch.empty(1, device="cuda")
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    images = {"tritium": tritium_image(mods["tritium"], args), "triton": triton_image(mods["triton"], args)}
    cuda = ctypes.CDLL("libcuda.so.1")
    dev = ctypes.c_int()
    check(cuda.cuCtxGetDevice(ctypes.byref(dev)), "cuCtxGetDevice")
    optin, per_sm = ctypes.c_int(), ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(optin), DEV_MAX_SHARED_PER_BLOCK_OPTIN, dev), "cuDeviceGetAttribute")
    check(cuda.cuDeviceGetAttribute(ctypes.byref(per_sm), DEV_MAX_SHARED_PER_SM, dev), "cuDeviceGetAttribute")
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}: {props.multi_processor_count} SMs, {per_sm.value} bytes of shared memory an SM, "
          f"{optin.value} a block at most; Triton {mods['triton'].triton.__version__}")
    named = dict(zip(mods["tritium"].matmul.arg_names, args))
    grid = (M // META["BM"]) * (N // META["BN"])
    ref = a.float() @ b.float()

    def correct() -> bool:
        return (c.float() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()

    launches, notes = {}, {}
    for lib, img in images.items():
        values = [ctypes.c_uint64(v.data_ptr()) if hasattr(v, "data_ptr") else ctypes.c_int32(v)
                  for v in (named[p] for p in img.params)]
        values += [ctypes.c_uint64(0) for _ in range(img.scratch)]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        for setting in SETTINGS:
            func = load(cuda, img, setting, optin.value)
            fits, regs = ctypes.c_int(), ctypes.c_int()
            check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(fits), func, 128,
                                                                   ctypes.c_size_t(img.shared)),
                  "cuOccupancyMaxActiveBlocksPerMultiprocessor")
            check(cuda.cuFuncGetAttribute(ctypes.byref(regs), FUNC_NUM_REGS, func), "cuFuncGetAttribute")

            def launch(func=func, params=params, shared=img.shared, keep=values) -> None:
                stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
                check(cuda.cuLaunchKernel(func, grid, 1, 1, 128, 1, 1, shared, stream, params, None),
                      "cuLaunchKernel")
            c.zero_()
            launch()
            torch.cuda.synchronize()
            launches[lib, setting] = launch
            notes[lib, setting] = f"{fits.value}/SM {'ok' if correct() else 'WRONG'}"
            notes.setdefault((lib, "regs"), f"{img.shared} B shared, {regs.value} registers")
        own = mods[lib].matmul
        launches[lib, "own-launcher"] = lambda own=own: own[(grid,)](*args, num_warps=4, num_stages=3, **META)
        c.zero_()
        launches[lib, "own-launcher"]()
        torch.cuda.synchronize()
        notes[lib, "own-launcher"] = "ok" if correct() else "WRONG"
    times = {key: [] for key in launches}
    for _ in range(rounds):   # interleaved, so clock drift hits every row alike
        for key, fn in launches.items():
            times[key].append(kernel_time_ms(fn, torch))
    print(f"tritium: {notes['tritium', 'regs']}; triton: {notes['triton', 'regs']}")
    print(f"{'setting':<14} {'tritium ms':>10} {'triton ms':>10} {'ratio':>6}   tritium / triton "
          f"(programs per SM, result); median of {rounds} rounds, [min]")
    for setting in (*SETTINGS, "own-launcher"):
        t, r = (statistics.median(times[lib, setting]) for lib in ("tritium", "triton"))
        tm, rm = (min(times[lib, setting]) for lib in ("tritium", "triton"))
        print(f"{setting:<14} {t:>10.4f} {r:>10.4f} {t / r:>6.3f}   [{tm:.4f} {rm:.4f}]  "
              f"{notes['tritium', setting]} / {notes['triton', setting]}")


if __name__ == "__main__":
    main()
