#!/usr/bin/env bash
# Builds the release wheel, tagged cp310-abi3-manylinux_2_28_x86_64: one
# file for CPython >= 3.10 on any x86-64 Linux with glibc >= 2.28 (RHEL 8/9,
# Ubuntu 20.04+, Debian 10+), with LLVM 19, lld, libstdc++, libffi, zlib and
# zstd linked in, so it needs nothing but glibc. Then checks it
# (scripts/wheel/check_wheel.py: tag, libraries needed, symbol versions).
#
# Usage: bash scripts/build_wheel.sh [OUT_DIR]     (default dist/)
#
# How: LLVM comes from Debian 12's static archives, built against glibc 2.36,
# so a plain link binds symbols such as pthread_create, stat and dlopen to
# 2.33-2.36 versions. The final link of tritium._core alone goes through
# scripts/wheel/zig_link.sh (`zig cc` against zig's glibc 2.28 stubs, from the
# `ziglang` package on PyPI, installed into .venv here); every other crate is
# the release build scripts/setup.sh already made, so after setup.sh this
# takes about a minute. `maturin build --zig` is not used: it makes zig the C
# and C++ compiler of every build script too, with libc++ in place of the
# libstdc++ that Debian's LLVM archives were built for.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:-dist}"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

say() { printf 'build_wheel: %s\n' "$*"; }

bash scripts/setup.sh
command -v g++ >/dev/null || { echo "build_wheel: g++ not found (apt-get install g++)" >&2; exit 1; }
if ! "$PY" -c 'import ziglang' 2>/dev/null; then
  say "installing ziglang (zig's linker and glibc 2.28 stubs) into .venv"
  "$PY" -m pip install -q --disable-pip-version-check ziglang
fi

mkdir -p "$OUT"
rm -f "$OUT"/tritium-*.whl
start=$SECONDS
# The same environment as setup.sh's `maturin develop`, so cargo reuses its
# build of every dependency; the flags after `--` reach tritium-py's crate only.
VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" TRITIUM_WHEEL_PYTHON="$PY" \
  "$VENV/bin/maturin" build --release --compatibility manylinux_2_28 --out "$OUT" \
  -- -C linker="$ROOT/scripts/wheel/zig_link.sh" -C strip=symbols
wheel="$(ls "$OUT"/tritium-*.whl)"
say "built $wheel in $((SECONDS - start)) s"
"$PY" scripts/wheel/check_wheel.py "$wheel"
if "$PY" -c 'import auditwheel' 2>/dev/null; then
  "$PY" -m auditwheel show "$wheel"
fi
