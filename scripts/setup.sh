#!/usr/bin/env bash
# One-time (and cheap to repeat) set-up of a development checkout: system
# packages, the .venv virtualenv with the Python tools, and the Rust extension
# `tritium._core` built in release mode. Each step checks first and skips work
# that is already done, so scripts/main.sh and scripts/test.sh can call it every time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMP="$VENV/.tritium-core.stamp"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# --- system packages ---------------------------------------------------------
# Debian packages the build needs. Installed only when missing.
APT_PACKAGES=(
  # >>> LLVM 19 (codegen issue): tritium-codegen links it statically
  #     (.cargo/config.toml points llvm-sys at /usr/lib/llvm-19)
  llvm-19-dev libpolly-19-dev lld-19 zlib1g-dev libzstd-dev
  # <<<
  # >>> AMDGPU (issue 17): lld's ELF driver linked into tritium-lld statically,
  #     so HSACO code objects are linked in-process
  liblld-19-dev
  # <<<
  # >>> the interpreter's visualizer: tests render its HTML page headless
  chromium
  # <<<
  # >>> the remote cache: tests start a throwaway redis-server on a loopback port
  redis-server
  # <<<
)

pick_python() {
  local candidate
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

PYTHON="$(pick_python)" || die "Python >= 3.10 not found (install python3.11)"

# Debian splits venv/ensurepip out of the interpreter package; only needed
# when the virtualenv does not exist yet.
if [[ ! -x "$VENV/bin/python" ]] && ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  APT_PACKAGES+=("python3-venv")
fi

missing=()
for pkg in "${APT_PACKAGES[@]+"${APT_PACKAGES[@]}"}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  say "installing system packages: ${missing[*]}"
  command -v apt-get >/dev/null || die "apt-get not found; install by hand: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]+"${sudo_cmd[@]}"}" apt-get update -qq ||
    die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]+"${sudo_cmd[@]}"}" apt-get install -y -qq "${missing[@]}" >/dev/null ||
    die "apt-get install failed for: ${missing[*]}"
fi

command -v cargo >/dev/null 2>&1 ||
  die "cargo not found: install Rust stable (https://rustup.rs) and put ~/.cargo/bin on PATH"

# --- virtualenv and Python tools ---------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating virtualenv .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV" || die "could not create .venv with $PYTHON"
fi
PY="$VENV/bin/python"

# matplotlib: the visualizer's PNGs and perf_report's plots; pandas: perf_report's tables
if ! "$PY" -c 'import numpy, pytest, hypothesis, pandas, matplotlib' 2>/dev/null || [[ ! -x "$VENV/bin/maturin" ]]; then
  say "installing numpy, pytest, hypothesis, pandas, matplotlib, maturin into .venv"
  "$PY" -m pip install -q --disable-pip-version-check numpy pytest hypothesis pandas matplotlib 'maturin>=1.5,<2' ||
    die "pip install failed (network? see the pip output above)"
fi

# ptxas for the compile-only PTX tests (tests/test_codegen_*.py find it in the wheel)
if ! compgen -G "$VENV/lib/python*/site-packages/nvidia/cuda_nvcc/bin/ptxas" >/dev/null; then
  say "installing nvidia-cuda-nvcc-cu12 (ptxas) into .venv"
  "$PY" -m pip install -q --disable-pip-version-check nvidia-cuda-nvcc-cu12 ||
    die "pip install of nvidia-cuda-nvcc-cu12 failed (network? see the pip output above)"
fi

# --- the Rust extension --------------------------------------------------------
# Rebuild only when a Rust input changed: hash every file under crates/ plus the
# workspace manifests, cargo configuration and the toolchain version, and
# compare with the hash recorded by the last successful build.
sources_hash() {
  {
    rustc --version
    # a crate's own build directory (crates/<name>/target) is not a source;
    # src/target/ (codegen's targets) is
    find crates -regextype posix-extended -regex 'crates/[^/]+/target' -prune -o -type f -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum
    sha256sum Cargo.toml pyproject.toml
    local optional
    for optional in Cargo.lock .cargo/config.toml rust-toolchain.toml; do
      if [[ -f "$optional" ]]; then sha256sum "$optional"; fi
    done
  } | sha256sum | cut -d' ' -f1
}

have_core() {
  compgen -G "python/tritium/_core*.so" >/dev/null &&
    compgen -G "$VENV/lib/python*/site-packages/tritium-*.dist-info" >/dev/null
}

hash="$(sources_hash)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$hash" ]] && have_core; then
  :  # up to date
else
  say "building tritium._core (maturin develop --release)"
  log="$(mktemp)"
  build() { VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$VENV/bin/maturin" develop --release --quiet >"$log" 2>&1; }
  # Another build in the same target/ (a second checkout user, an IDE) can move
  # the library maturin is staging; that race is worth one retry.
  if ! build && ! { grep -q "Failed to stage" "$log" && say "retrying after a concurrent build" && build; }; then
    cat "$log" >&2
    rm -f "$log" "$STAMP"
    die "building the Rust extension failed (output above)"
  fi
  rm -f "$log"
  # The hash taken before the build: a file edited while cargo ran makes the
  # next run rebuild instead of being marked as built.
  echo "$hash" >"$STAMP"
fi

# TRITIUM_AS_TRITON=1's start-up hook: a wheel installs it at site-packages'
# top level; `maturin develop` links the sources instead, so copy it there
site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
cmp -s python/tritium_as_triton.pth "$site/tritium_as_triton.pth" ||
  cp python/tritium_as_triton.pth "$site/tritium_as_triton.pth"
