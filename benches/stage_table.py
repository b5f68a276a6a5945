"""Turns the criterion results of `cargo bench -p tritium-benches` into one
markdown table: a row per compiler stage, a column per kernel, each cell the
median time in milliseconds. Reads target/criterion/<stage>/<kernel>/new/.

    .venv/bin/python benches/stage_table.py [--criterion-dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Pipeline order; stages not listed here follow in alphabetical order.
STAGE_ORDER = ("parse", "decode", "verify", "encode", "print", "clone")
KERNEL_ORDER = ("vector_add", "softmax", "layer_norm_fwd", "matmul", "noinline_call", "big_elementwise")


def default_criterion_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "criterion"


def read_results(criterion_dir: Path) -> tuple[dict[tuple[str, str], float], dict[str, int]]:
    """(stage, kernel) → median ms, and kernel → op count (criterion's throughput)."""
    medians: dict[tuple[str, str], float] = {}
    ops: dict[str, int] = {}
    for estimates in sorted(criterion_dir.glob("*/*/new/estimates.json")):
        bench = json.loads((estimates.parent / "benchmark.json").read_text())
        stage, kernel = bench["group_id"], bench["function_id"]
        if kernel is None:  # a lone benchmark, not a stage/kernel group
            continue
        median_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
        medians[(stage, kernel)] = median_ns / 1e6
        throughput = bench.get("throughput") or {}
        if "Elements" in throughput:
            ops[kernel] = int(throughput["Elements"])
    return medians, ops


def ordered(names: set[str], order: tuple[str, ...]) -> list[str]:
    return [n for n in order if n in names] + sorted(names - set(order))


def fmt_ms(ms: float) -> str:
    return f"{ms:.4f}" if ms < 1 else f"{ms:.2f}"


def table(medians: dict[tuple[str, str], float], ops: dict[str, int]) -> str:
    stages = ordered({s for s, _ in medians}, STAGE_ORDER)
    kernels = ordered({k for _, k in medians}, KERNEL_ORDER)
    lines = ["| stage \\ kernel (ms, median) | " + " | ".join(kernels) + " |",
             "|---|" + "---:|" * len(kernels)]
    if ops:
        lines.append("| *ops* | " + " | ".join(str(ops.get(k, "")) for k in kernels) + " |")
    for s in stages:
        cells = [fmt_ms(medians[(s, k)]) if (s, k) in medians else "" for k in kernels]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--criterion-dir", type=Path, default=default_criterion_dir())
    args = ap.parse_args(argv)
    if not args.criterion_dir.is_dir():
        print(f"{args.criterion_dir}: no criterion results; run `cargo bench -p tritium-benches` first",
              file=sys.stderr)
        return 1
    medians, ops = read_results(args.criterion_dir)
    if not medians:
        print(f"{args.criterion_dir}: no stage/kernel results found", file=sys.stderr)
        return 1
    print(table(medians, ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
