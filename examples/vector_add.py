"""The sample kernel, end to end: a Triton vector add compiled to tritium's tile
IR (checked by the Rust verifier) and to PTX (and a cubin, with ptxas), launched on
the GPU when there is one, then run in the NumPy interpreter
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


def show_ptx(arch: str = "cuda:90") -> None:
    """Ahead-of-time compile for an NVIDIA GPU with `tritium.compile`: needs no
    GPU; with ptxas (the nvidia-cuda-nvcc wheel set-up installs) also a cubin."""
    compiled = triton.compile(add_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                                     "n_elements": "i32"},
                              constexprs={"BLOCK_SIZE": BLOCK_SIZE}, target=arch, num_warps=4)
    ptx = compiled.asm["ptx"]
    header = [line.strip() for line in ptx.splitlines()
              if line.lstrip().startswith((".version", ".target")) or ".entry" in line]
    print(f"== PTX for {arch}: {len(ptx.splitlines())} lines")
    print("\n".join(header))
    meta = compiled.metadata
    if "cubin" in compiled.asm:
        print(f"== cubin: {len(compiled.asm['cubin'])} bytes, {meta['registers']} registers, "
              f"{meta['spills']} spills, {meta['shared']} bytes of shared memory")


def run_on_gpu(x: np.ndarray, y: np.ndarray) -> None:
    """Launches on the GPU when there is one and PyTorch is installed."""
    from tritium.runtime import driver
    if not driver.available():
        print(f"== GPU: none ({driver.status()[1]}); running in the interpreter only")
        return
    try:
        import torch
    except ImportError:
        print("== GPU: found, but PyTorch is not installed; running in the interpreter only")
        return
    xd, yd = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    out = torch.empty_like(xd)
    add_kernel[(triton.cdiv(x.size, BLOCK_SIZE),)](xd, yd, out, x.size, BLOCK_SIZE=BLOCK_SIZE)
    ok = torch.equal(out.cpu(), xd.cpu() + yd.cpu())
    print(f"== GPU ({torch.cuda.get_device_name()}): {'matches' if ok else 'DOES NOT match'} NumPy")
    if not ok:
        raise SystemExit(1)


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
    show_ptx()
    run_on_gpu(x, y)

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
