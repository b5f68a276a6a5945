#!/usr/bin/env bash
# Bounded smoke run of every cargo-fuzz target in fuzz/: each target starts
# from the checked-in seeds (fuzz/seeds/<target>, plus the regression inputs
# of crates/tritium-ir/tests/fuzz_inputs) and fuzzes for FUZZ_SECONDS (default
# 30) into a scratch corpus. Exits non-zero on the first crash, leaving the
# crashing input under fuzz/artifacts/<target>/.
#
# The targets are built once, then each binary is run directly, so the run
# never rebuilds. The toolchain is stable: RUSTC_BOOTSTRAP=1 unlocks the
# nightly flags cargo-fuzz passes. No sanitizer (-s none): tritium-ir has no
# unsafe code, so AddressSanitizer would only slow the run; debug assertions
# (-a) stay on so integer overflow panics instead of wrapping silently.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/fuzz"
SECONDS_EACH="${FUZZ_SECONDS:-30}"
# Kept in step with MAX_INPUT_BYTES in fuzz/seed_corpus.py.
MAX_LEN=16384
BUILD_FLAGS=(-s none -a)

# Only the test command fuzzes, so only it pays for installing cargo-fuzz.
if ! command -v cargo-fuzz >/dev/null 2>&1 && [[ ! -x "$HOME/.cargo/bin/cargo-fuzz" ]]; then
  echo "== fuzz_smoke: installing cargo-fuzz (once)"
  cargo install cargo-fuzz --locked --quiet ||
    { echo "fuzz_smoke: cargo install cargo-fuzz FAILED" >&2; exit 1; }
fi
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1

cd "$FUZZ"
mapfile -t TARGETS < <(cargo fuzz list)
echo "== fuzz_smoke: building ${TARGETS[*]}"
build_log="$(mktemp)"
if ! cargo fuzz build "${BUILD_FLAGS[@]}" >"$build_log" 2>&1; then
  cat "$build_log" >&2
  echo "fuzz_smoke: building the fuzz targets FAILED" >&2
  exit 1
fi
rm -f "$build_log"

TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
BIN_DIR="$FUZZ/target/$TRIPLE/release"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

start=$(date +%s)
for t in "${TARGETS[@]}"; do
  seeds=()
  [[ -d "$FUZZ/seeds/$t" ]] && seeds+=("$FUZZ/seeds/$t")
  regress="$ROOT/crates/tritium-ir/tests/fuzz_inputs/$t"
  [[ -d "$regress" ]] && seeds+=("$regress")
  mkdir -p "$SCRATCH/$t" "$FUZZ/artifacts/$t"
  log="$SCRATCH/$t.log"
  echo "== fuzz_smoke: $t for ${SECONDS_EACH}s"
  rc=0
  "$BIN_DIR/$t" "$SCRATCH/$t" "${seeds[@]}" -max_total_time="$SECONDS_EACH" -max_len="$MAX_LEN" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$FUZZ/artifacts/$t/" >"$log" 2>&1 || rc=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  if ((rc != 0)); then
    tail -n 40 "$log" >&2
    echo "fuzz_smoke: $t FAILED (exit $rc); the input is under fuzz/artifacts/$t/" >&2
    exit 1
  fi
  echo "   $t: ${runs:-?} executions, no crash"
done
echo "fuzz_smoke: ${#TARGETS[@]} targets passed in $(($(date +%s) - start))s"

# The mutated-IR corpus (fuzz/examples/ir_corpus.rs): 25,000 seeded inputs
# (structural edits, byte edits, text edits of generated and checked-in
# modules) through every stage in process, with overflow checks on; any
# input that does not end in a typed error fails the run, naming its index.
echo "== fuzz_smoke: ir_corpus (${IR_CORPUS_COUNT:-25000} mutated inputs)"
CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true \
  cargo build --release --quiet --example ir_corpus ||
  { echo "fuzz_smoke: building ir_corpus FAILED" >&2; exit 1; }
"$FUZZ/target/release/examples/ir_corpus" "${IR_CORPUS_COUNT:-25000}" ||
  { echo "fuzz_smoke: ir_corpus FAILED (inputs above)" >&2; exit 1; }
