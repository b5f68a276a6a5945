"""tritium's NumPy interpreter beside Triton 3.6's interpreter, same kernels,
same sizes, same run (issue #15's target: >= 5x faster on all three):

- vector add, 4M fp32 elements, BLOCK 1024 (4096 programs);
- softmax, 4096 x 1024 fp32, one program per row;
- matmul, fp16 512^3, 64x64x32 tiles (64 programs, 16 K steps each).

    .venv/bin/python benches/interp_vs_triton.py [--kernels a,b] [--repeat N] [--only tritium]

Each interpreter runs in its own process: tritium from this checkout's .venv,
Triton from benches/.venv-triton (created on first use with triton==3.6.0 and
numpy<2.4, which Triton's interpreter needs; no torch: the Triton worker
hands its interpreter NumPy arrays behind the few torch.Tensor methods it
calls). The kernel sources are the shared ones in tests/kernels/, run
unchanged by both; each result is checked against NumPy.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KERNELS = ("vector_add", "softmax", "matmul")


# -- worker side ----------------------------------------------------------------

class _Storage:
    def __init__(self, arr: Any) -> None:
        self.arr = arr

    def data_ptr(self) -> int:
        return self.arr.__array_interface__["data"][0]

    def cpu(self) -> "_Storage":
        return self

    def copy_(self, other: "_Storage") -> "_Storage":
        import numpy as np
        if other.data_ptr() != self.data_ptr():
            np.copyto(self.arr, other.arr)
        return self


class HostTensor:
    """The part of torch.Tensor that Triton's interpreter calls (storage,
    offset, sizes, strides, set_, copy_), over a NumPy array it does not copy."""

    def __init__(self, arr: Any, base: Any = None) -> None:
        self.arr = arr
        if base is None:   # the storage: the array that owns the memory
            base = arr
            while isinstance(base.base, type(arr)):
                base = base.base
        self.base_arr = base
        self.dtype = arr.dtype

    def data_ptr(self) -> int:
        return self.arr.__array_interface__["data"][0]

    def untyped_storage(self) -> _Storage:
        return _Storage(self.base_arr)

    def new_empty(self, *args: Any, **kwargs: Any) -> "HostTensor":
        return HostTensor(self.arr[:0], self.base_arr)

    def storage_offset(self) -> int:
        return (self.data_ptr() - _Storage(self.base_arr).data_ptr()) // self.arr.itemsize

    def size(self) -> tuple:
        return self.arr.shape

    def stride(self) -> tuple:
        return tuple(s // self.arr.itemsize for s in self.arr.strides)

    def set_(self, storage: _Storage, offset: int, size: tuple, stride: tuple) -> "HostTensor":
        import numpy as np
        self.base_arr = storage.arr
        flat = storage.arr.reshape(-1)[offset:]
        self.arr = np.lib.stride_tricks.as_strided(flat, size, [s * flat.itemsize for s in stride])
        return self

    def copy_(self, other: "HostTensor") -> "HostTensor":
        import numpy as np
        if other.data_ptr() != self.data_ptr():
            np.copyto(self.arr, other.arr)
        return self


def _kernels(which: str) -> Any:
    """The shared kernel modules, with `triton` bound to the interpreter under test."""
    if which == "tritium":
        sys.path.insert(0, str(ROOT / "python"))
        os.environ["TRITIUM_INTERPRET"] = "1"
        import tritium as triton
    else:
        os.environ["TRITON_INTERPRET"] = "1"
        import triton
        import triton.language
        sys.modules.setdefault("tritium", triton)
        sys.modules.setdefault("tritium.language", triton.language)
    sys.path.insert(0, str(ROOT / "tests"))
    from kernels import matmul, softmax, vector_add
    return triton, vector_add, softmax, matmul


def _case(name: str, scale: int, which: str) -> tuple[Any, Any]:
    """(launch, check) for one kernel; `scale` < 1 shrinks it for warm-up."""
    import numpy as np
    triton, vector_add, softmax, matmul = _kernels(which)
    wrap = HostTensor if which == "triton" else (lambda a: a)
    rng = np.random.default_rng(0)
    if name == "vector_add":
        n = (1 << 22) // scale
        x, y = rng.random(n, np.float32), rng.random(n, np.float32)
        out = np.zeros(n, np.float32)
        launch = lambda: vector_add.add_kernel[(triton.cdiv(n, 1024),)](wrap(x), wrap(y), wrap(out), n,  # noqa: E731
                                                                        BLOCK_SIZE=1024)
        return launch, lambda: np.array_equal(out, x + y)
    if name == "softmax":
        rows, cols = 4096 // scale, 1024
        x = rng.standard_normal((rows, cols), np.float32)
        out = np.zeros_like(x)
        launch = lambda: softmax.softmax_kernel[(rows,)](wrap(out), wrap(x), cols, cols, cols,  # noqa: E731
                                                         BLOCK_SIZE=1024)

        def check() -> bool:
            e = np.exp(x - x.max(1, keepdims=True))
            return np.allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
        return launch, check
    if name == "matmul":
        m = n = k = 512 // scale
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = np.zeros((m, n), np.float16)
        grid = (triton.cdiv(m, 64) * triton.cdiv(n, 64),)
        launch = lambda: matmul.matmul_kernel[grid](  # noqa: E731
            wrap(a), wrap(b), wrap(c), m, n, k, k, 1, n, 1, n, 1,
            BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="")
        ref = a.astype(np.float32) @ b.astype(np.float32)
        return launch, lambda: np.allclose(c.astype(np.float32), ref, rtol=2e-2, atol=5e-2)
    raise SystemExit(f"unknown kernel {name!r}")


def worker(which: str, kernel: str, repeat: int) -> None:
    warm, _ = _case(kernel, 64, which)
    warm()                                  # imports, first-call set-up
    launch, check = _case(kernel, 1, which)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        launch()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"seconds": min(times), "correct": bool(check())}))


# -- driver side -------------------------------------------------------------------

def _run(python: Path, which: str, kernel: str, repeat: int) -> dict[str, Any]:
    proc = subprocess.run([str(python), __file__, "--worker", which, "--kernel", kernel, "--repeat", str(repeat)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{which} worker failed on {kernel}:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--repeat", type=int, default=3, help="runs per kernel in each interpreter (best is kept)")
    ap.add_argument("--only", choices=("tritium", "triton"))
    ap.add_argument("--worker", choices=("tritium", "triton"), help=argparse.SUPPRESS)
    ap.add_argument("--kernel", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.kernel, args.repeat)
    sys.path.insert(0, str(HERE))
    from vs_triton import ensure_triton_venv
    ours = ROOT / ".venv" / "bin" / "python"
    theirs = ensure_triton_venv(extra=("numpy<2.4",)) if args.only != "tritium" else None
    print("| kernel | Triton 3.6 interpreter (s) | tritium interpreter (s) | speed-up |")
    print("|---|---:|---:|---:|")
    for kernel in args.kernels.split(","):
        t = _run(ours, "tritium", kernel, args.repeat) if args.only != "triton" else None
        r = _run(theirs, "triton", kernel, args.repeat) if theirs is not None else None
        bad = [w for w, res in (("tritium", t), ("Triton", r)) if res is not None and not res["correct"]]
        cells = [f"{res['seconds']:.3f}" if res else "-" for res in (r, t)]
        ratio = f"{r['seconds'] / t['seconds']:.1f}x" if r and t else "-"
        note = f" (WRONG RESULT: {', '.join(bad)})" if bad else ""
        print(f"| {kernel} | {cells[0]} | {cells[1]} | {ratio}{note} |", flush=True)


if __name__ == "__main__":
    main()
