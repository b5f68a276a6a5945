"""Fetches the acceptance harness's inputs into benches/compat/inputs/
(ignored by git; they are other projects' files, used only as test inputs):

- triton/python/tutorials/: Triton's tutorials 01-09 as published for
  Triton 3.6 (the `release/3.6.x` branch, from GitHub), laid out as in a
  Triton checkout, with `triton/third_party/nvidia/backend/lib/libdevice.10.bc`
  (a copy of the libdevice found locally) where tutorial 07 looks for it;
- suites/<name>/: the source distribution, test suite included, of each
  public Triton kernel library in SUITES (from PyPI, through pip).

    python benches/compat/fetch_inputs.py [--tutorials-only | --suites-only] [--ref release/3.6.x]

Needs network access; on a machine without it (the GPU machine), copy the
inputs folder over (the run tool's `carry`).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
TUTORIALS_DIR = INPUTS / "triton" / "python" / "tutorials"
TUTORIALS = ["01-vector-add.py", "02-fused-softmax.py", "03-matrix-multiplication.py", "04-low-memory-dropout.py",
             "05-layer-norm.py", "06-fused-attention.py", "07-extern-functions.py", "08-grouped-gemm.py",
             "09-persistent-matmul.py"]
RAW = "https://raw.githubusercontent.com/triton-lang/triton/{ref}/python/tutorials/{name}"
# libraries whose source distributions carry their test suites
SUITES = {"liger-kernel": "liger-kernel==0.5.10"}


def place_libdevice() -> int:
    """Tutorial 07 passes `<checkout>/third_party/nvidia/backend/lib/libdevice.10.bc`."""
    import shutil
    sys.path.insert(0, str(HERE.parents[1] / "python"))
    from tritium.backends.libdevice import libdevice_path
    found = libdevice_path()
    if found is None:
        print("fetch_inputs: no libdevice.10.bc here (pip install nvidia-cuda-nvcc-cu12)", file=sys.stderr)
        return 1
    dest = INPUTS / "triton" / "third_party" / "nvidia" / "backend" / "lib" / "libdevice.10.bc"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(found, dest)
    print(f"fetch_inputs: {dest.relative_to(INPUTS)} (from {found})")
    return 0


def fetch_tutorials(ref: str) -> int:
    out = TUTORIALS_DIR
    out.mkdir(parents=True, exist_ok=True)
    failed = place_libdevice()
    for name in TUTORIALS:
        try:
            with urllib.request.urlopen(RAW.format(ref=ref, name=name), timeout=30) as r:
                (out / name).write_bytes(r.read())
            print(f"fetch_inputs: {(out / name).relative_to(INPUTS)}")
        except OSError as e:
            failed += 1
            print(f"fetch_inputs: {name}: {e}", file=sys.stderr)
    return failed


def fetch_suites() -> int:
    failed = 0
    for name, spec in SUITES.items():
        dest = INPUTS / "suites" / name
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d",
                                tmp, spec], capture_output=True, text=True)
            archives = list(Path(tmp).glob("*.tar.gz"))
            if r.returncode or not archives:
                failed += 1
                print(f"fetch_inputs: {spec}: {r.stderr.strip()[-300:]}", file=sys.stderr)
                continue
            with tarfile.open(archives[0]) as tar:
                tar.extractall(tmp, filter="data")
            top = next(p for p in Path(tmp).iterdir() if p.is_dir())
            if dest.exists():
                subprocess.run(["rm", "-rf", str(dest)], check=True)
            dest.parent.mkdir(parents=True, exist_ok=True)
            top.rename(dest)
        print(f"fetch_inputs: suites/{name} ({spec})")
    return failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tutorials-only", action="store_true")
    ap.add_argument("--suites-only", action="store_true")
    ap.add_argument("--ref", default="release/3.6.x")
    opts = ap.parse_args()
    failed = 0
    if not opts.suites_only:
        failed += fetch_tutorials(opts.ref)
    if not opts.tutorials_only:
        failed += fetch_suites()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
