#!/usr/bin/env bash
# The linker rustc calls for tritium._core in the manylinux_2_28 wheel
# (scripts/build_wheel.sh passes it as `-C linker=` to the final crate only).
# It runs `zig cc` against zig's glibc 2.28 stub libraries, so every glibc
# symbol binds to a version <= 2.28 whatever the archives were compiled
# against, and turns the C++ runtime and LLVM's system libraries into static
# archives, so the extension needs nothing beyond glibc:
#   -lstdc++              -> GCC's libstdc++.a (zig would take -lstdc++ as its own libc++,
#                            whose ABI LLVM's GCC-built archives do not use)
#   -lffi -lz -lzstd      -> Debian's libffi.a, libz.a, libzstd.a
#   -lz3 -lxml2           -> dropped: llvm-config lists them, nothing tritium links uses them
#   -lgcc_s               -> zig links its static libunwind (Rust panics, C++ exceptions)
# plus glibc_compat.c's definitions of the three glibc > 2.28 symbols the
# Debian archives use (__libc_single_threaded, mallinfo2, arc4random).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${TRITIUM_WHEEL_PYTHON:-$HERE/../../.venv/bin/python}"
GLIBC="${TRITIUM_WHEEL_GLIBC:-2.28}"
ZIG=("$PY" -m ziglang)
TARGET="x86_64-linux-gnu.$GLIBC"
LIBDIR=/usr/lib/x86_64-linux-gnu

libstdcxx="$(g++ -print-file-name=libstdc++.a)"
[[ "$libstdcxx" == /* && -f "$libstdcxx" ]] ||
  { echo "zig_link.sh: GCC's libstdc++.a not found (apt-get install g++)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"${ZIG[@]}" cc -target "$TARGET" -c -O2 -fPIC -Wall "$HERE/glibc_compat.c" -o "$work/glibc_compat.o"

args=()
for a in "$@"; do
  case "$a" in
    -B*/gcc-ld | -fuse-ld=lld | -Wl,-O1) ;;    # rustc's own lld and an option zig's ignores
    -lstdc++) args+=("$libstdcxx") ;;
    -lffi | -lz | -lzstd)
      lib="$LIBDIR/lib${a#-l}.a"
      [[ -f "$lib" ]] || { echo "zig_link.sh: $lib not found" >&2; exit 1; }
      args+=("$lib") ;;
    -lz3 | -lxml2) ;;
    *) args+=("$a") ;;
  esac
done
"${ZIG[@]}" cc -target "$TARGET" "${args[@]}" "$work/glibc_compat.o"
