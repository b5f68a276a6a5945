"""What the shared-memory carveout does to the autotune bench's chosen matmul
(128x128x64, 3 stages, 4 warps: 97 KiB of shared memory a program): tritium's
cubin of that kernel loaded twice straight through the driver (ctypes), one
function left at the driver's default carveout, the other asking for the
largest (what tritium's launcher does for kernels over 48 KiB, as Triton's
does), each timed at 4096^3 (kernel_time_ms, as the autotune bench times
the chosen config), with the programs the occupancy API says fit on an SM.
One program per SM where two fit shows as the default's time well above
the largest's. Usage: python benches/gpu/carveout_probe.py"""
from __future__ import annotations

import ctypes
import importlib
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from autotune_bench import KERNELS  # noqa: E402
from bench import kernel_time_ms  # noqa: E402

FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT = 8, 9
SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "sam": "i32",
       "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32"}


def check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA error {rc}")


def load(cuda, cubin: bytes, name: str, shared: int, carveout: int | None) -> ctypes.c_void_p:
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(func), module, name.encode()), "cuModuleGetFunction")
    check(cuda.cuFuncSetAttribute(func, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared), "cuFuncSetAttribute")
    if carveout is not None:
        check(cuda.cuFuncSetAttribute(func, FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT, carveout), "cuFuncSetAttribute")
    return func


def main() -> None:
    import torch
    with tempfile.TemporaryDirectory() as d:
        # the kernel's source must stay readable while it compiles
        (Path(d) / "probe_kernels.py").write_text(KERNELS.format(lib="tritium"))
        sys.path.insert(0, d)
        mod = importlib.import_module("probe_kernels")
        k = mod.triton.compile(mod.matmul, signature=SIG, target="cuda:90a", num_warps=4, num_stages=3,
                               constexprs={"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "sak": 1, "sbn": 1, "scn": 1},
                               attrs={"divisibility": ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "sam", "sbk", "scm"]})
    shared = int(k.metadata["shared"])
    torch.empty(1, device="cuda")
    cuda = ctypes.CDLL("libcuda.so.1")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    m = n = kk = 4096
    a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
    b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    values = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(c.data_ptr())]
    values += [ctypes.c_int32(v) for v in (m, n, kk, a.stride(0), b.stride(0), c.stride(0))]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    print(f"tritium matmul 128x128x64 w4 s3: {shared} bytes of dynamic shared memory, "
          f"{k.metadata['registers']} registers; {sms} SMs")
    for label, carveout in (("driver default", None), ("largest (100)", 100)):
        func = load(cuda, k.asm["cubin"], k.metadata["symbol"], shared, carveout)
        fits = ctypes.c_int()
        check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(fits), func, 128, ctypes.c_size_t(shared)),
              "cuOccupancyMaxActiveBlocksPerMultiprocessor")

        def launch() -> None:
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            grid = (m // 128) * (n // 128)
            check(cuda.cuLaunchKernel(func, grid, 1, 1, 128, 1, 1, shared, stream, params, None), "cuLaunchKernel")
        ms = kernel_time_ms(launch, torch)
        ref = a.float() @ b.float()
        ok = (c.float() - ref).abs().max().item() <= 2e-2 * ref.abs().max().item()
        print(f"  carveout {label:>15}: {ms:.4f} ms at 4096^3 (correct: {ok}), occupancy API {fits.value} "
              "program(s)/SM")


if __name__ == "__main__":
    main()
