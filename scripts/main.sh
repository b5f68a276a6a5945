#!/usr/bin/env bash
# Set up the checkout, then run the sample kernel end to end (examples/vector_add.py).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
exec "$ROOT/.venv/bin/python" examples/vector_add.py "$@"
