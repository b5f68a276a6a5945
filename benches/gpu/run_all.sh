#!/usr/bin/env bash
# Everything the H100 session runs, in one call (device time is scarce):
# install the wheel built into .gpu/, then the GPU test suite and every GPU
# benchmark, side by side with the Triton installed on that machine.
# The wheel: `bash scripts/build_wheel.sh .gpu` here first (manylinux_2_28
# abi3, so it installs on the device machine's Python 3.12 and glibc).
# Usage (on the device machine, repo root): bash benches/gpu/run_all.sh [pytest args...]
set -uo pipefail
pip install -q --no-deps --target /tmp/t .gpu/*.whl
export PYTHONPATH=/tmp/t:${PYTHONPATH:-}
pip install -q hypothesis >/dev/null 2>&1
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
python -m pytest -q -p no:cacheprovider tests -rfEs --maxfail=30 "$@" 2>&1 | tail -80 | tee "$out/tests.txt"
for b in benches/gpu/bench.py benches/gpu/launch_profile.py benches/key_bench.py benches/gpu/calls_bench.py; do
    [ -f "$b" ] || continue
    echo "== $b"
    timeout 300 python "$b" 2>&1 | tail -60 | tee "$out/$(basename "$b" .py).txt"
done
