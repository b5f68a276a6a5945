#!/usr/bin/env bash
# The whole test suite: set-up, the Rust workspace tests, then pytest. Both
# suites always run so one report shows every failure; the exit status is
# non-zero if either failed. The pytest summary line is printed last.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh

PY="$ROOT/.venv/bin/python"
# The same environment maturin gives cargo, so `cargo test --release` reuses
# the release build of the extension instead of recompiling pyo3 (its build
# script reruns whenever these variables differ).
export PYO3_PYTHON="$PY" PYTHON_SYS_EXECUTABLE="$PY" PYO3_BUILD_EXTENSION_MODULE=1
PYO3_ENVIRONMENT_SIGNATURE="$("$PY" -c 'import sys; print(f"cpython-{sys.version_info[0]}.{sys.version_info[1]}-64bit")')"
export PYO3_ENVIRONMENT_SIGNATURE

cargo_rc=0
echo "== cargo test --workspace --release"
cargo test --workspace --release --quiet || cargo_rc=$?
echo "== fuzz smoke"
bash scripts/fuzz_smoke.sh || cargo_rc=$?

echo "== pytest tests"
pytest_log="$(mktemp)"
trap 'rm -f "$pytest_log"' EXIT
pytest_rc=0
"$PY" -m pytest -q tests benches/tests 2>&1 | tee "$pytest_log" || pytest_rc=${PIPESTATUS[0]}

if ((cargo_rc != 0)); then
  echo "test.sh: cargo test FAILED (exit $cargo_rc, output above)" >&2
  # keep the pytest summary as the last line
  tail -n 1 "$pytest_log"
fi
if ((cargo_rc != 0 || pytest_rc != 0)); then
  exit 1
fi
