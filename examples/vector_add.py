"""The sample kernel, end to end: a Triton vector add compiled to tritium's tile
IR (checked by the Rust verifier) and to PTX, then run in the NumPy interpreter
on an input whose size is not a multiple of the block, and compared with NumPy.

Run it with `bash scripts/main.sh` (or `.venv/bin/python examples/vector_add.py`).
"""
from __future__ import annotations

import os
import sys

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium import _core


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block is partial
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


BLOCK_SIZE = 256


def show_ir(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    binary = add_kernel.compile_ir(x, y, out, x.size, BLOCK_SIZE=BLOCK_SIZE)
    _core.verify(binary)
    print("== tile IR (verified)")
    print(_core.to_text(binary))


def show_ptx(x: np.ndarray, y: np.ndarray, out: np.ndarray, arch: str = "sm_90") -> None:
    """PTX for an NVIDIA GPU; compiling needs no GPU, only the extension's LLVM backend."""
    if not hasattr(_core, "compile_ptx"):
        print("== PTX: skipped (this build of tritium._core has no NVPTX backend)")
        return
    binary = add_kernel.compile_ir(x, y, out, x.size, BLOCK_SIZE=BLOCK_SIZE)
    ptx = _core.compile_ptx(binary, arch, 4)["ptx"]
    header = [line.strip() for line in ptx.splitlines()
              if line.lstrip().startswith((".version", ".target")) or ".entry" in line]
    print(f"== PTX for {arch}: {len(ptx.splitlines())} lines")
    print("\n".join(header))


def run_interpreted(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    grid = lambda meta: (triton.cdiv(x.size, meta["BLOCK_SIZE"]),)
    # The interpreter is chosen per launch from the environment, as a user would.
    previous = os.environ.get("TRITIUM_INTERPRET")
    os.environ["TRITIUM_INTERPRET"] = "1"
    try:
        add_kernel[grid](x, y, out, x.size, BLOCK_SIZE=BLOCK_SIZE)
    finally:
        if previous is None:
            del os.environ["TRITIUM_INTERPRET"]
        else:
            os.environ["TRITIUM_INTERPRET"] = previous
    return out


def main() -> int:
    n = 1000  # not a multiple of BLOCK_SIZE: the mask matters
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)

    show_ir(x, y, np.empty_like(x))
    show_ptx(x, y, np.empty_like(x))
    # (launching on a GPU goes here once the runtime can load and launch PTX)

    out = run_interpreted(x, y)
    print(f"== interpreter, n={n}, BLOCK_SIZE={BLOCK_SIZE}")
    print("x[:4]      ", x[:4])
    print("y[:4]      ", y[:4])
    print("out[:4]    ", out[:4])
    print("out[-4:]   ", out[-4:])
    expected = x + y
    if not np.array_equal(out, expected):
        bad = np.flatnonzero(out != expected)
        print(f"MISMATCH at {bad.size} of {n} elements, first at {bad[0]}: "
              f"{out[bad[0]]} != {expected[bad[0]]}", file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
