"""Which instructions of the autotune bench's matmul (128x128x64 w4 s3, fp16
4096^3) stall, tritium's kernel beside Triton's, in one GPU run.

Each library's kernel (built and launched by matmul_profile.py's worker) is
profiled once by Nsight Compute with warp-state PC sampling at the shortest
interval (`--section SourceCounters --section WarpStateStats`, or `--set
full` with --full). Then, per kernel, from the report (ncu's Python report
interface, ncu_report from <nsight-compute>/extras/python):

  - the K loop's SASS (the instructions executed at least half as often as
    the most executed one), each with its execution count, warp samples
    (all / not issued) and its two largest stall reasons;
  - the 15 instructions with the most stalled samples (all but `selected`)
    anywhere in the kernel, with every reason that has >= 5% of its samples;
  - the samples by reason, in the loop and in the whole kernel.

When ncu_report cannot be imported the same listing comes from `ncu --import
--page source --csv --print-source sass` (samples per instruction, without
the per-reason split when that ncu's CSV has none). The reports
(matmul_stalls_<lib>.ncu-rep) and that CSV are left under $OUT (or /tmp/out).

Usage: python benches/gpu/matmul_stalls.py [--full] [--lib tritium|triton]"""
from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import matmul_profile  # noqa: E402

STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
EXEC_METRICS = ("inst_executed", "smsp__inst_executed", "sass__inst_executed")
TOP = 15


def extras_python(ncu: str) -> str | None:
    """The folder holding ncu_report.py for this ncu (the CLI in
    /usr/local/cuda/bin is a link or script into the nsight-compute folder)."""
    real = Path(os.path.realpath(ncu)).parent
    candidates = [real / "extras" / "python", real.parent / "extras" / "python"]
    for pattern in ("/usr/local/cuda*/nsight-compute*/extras/python", "/opt/nvidia/nsight-compute/*/extras/python"):
        candidates += [Path(p) for p in sorted(glob.glob(pattern), reverse=True)]
    return next((str(c) for c in candidates if (c / "ncu_report.py").exists()), None)


def analyse(rep: str, extras: str) -> dict:
    """(Run in its own process.) Per-PC samples by reason, execution counts
    and SASS from one report, as JSON-able rows."""
    sys.path.insert(0, extras)
    import ncu_report
    report = ncu_report.load_report(rep)
    action = report.range_by_idx(0).action_by_idx(0)
    names = list(action.metric_names())
    rows: dict[int, dict] = {}

    def row(pc: int) -> dict:
        return rows.setdefault(pc, {"reasons": {}, "not_issued": {}, "executed": 0})

    stall_metrics = [n for n in names if n.startswith(STALL_PREFIX)]
    for name in stall_metrics:
        metric = action[name]
        if not metric.has_correlation_ids():
            continue
        ids = metric.correlation_ids()
        reason = name[len(STALL_PREFIX):]
        key = "reasons"
        if reason.endswith("_not_issued"):
            reason, key = reason[: -len("_not_issued")], "not_issued"
        for i in range(metric.num_instances()):
            v = metric.as_uint64(i)
            if v:
                r = row(ids.as_uint64(i))
                r[key][reason] = r[key].get(reason, 0) + v
    exec_name = next((n for n in EXEC_METRICS if n in names), None)
    if exec_name is not None and action[exec_name].has_correlation_ids():
        metric = action[exec_name]
        ids = metric.correlation_ids()
        for i in range(metric.num_instances()):
            row(ids.as_uint64(i))["executed"] = metric.as_uint64(i)
    for pc, r in rows.items():
        r["sass"] = str(action.sass_by_pc(pc) or "").strip()
    return {"kernel": action.name(), "exec_metric": exec_name, "stall_metrics": len(stall_metrics),
            "rows": {str(pc): r for pc, r in rows.items()}}


def from_csv(text: str) -> dict:
    """The same rows from `ncu --page source --csv --print-source sass`:
    columns found by name (ncu versions word them differently)."""
    table = list(csv.reader(io.StringIO(text)))
    head = next((i for i, r in enumerate(table) if any(c.strip().lower() == "address" for c in r)), None)
    if head is None:
        raise RuntimeError("no 'Address' column in ncu's source CSV:\n" + text[:800])
    cols = [c.strip() for c in table[head]]
    low = [c.lower() for c in cols]

    def col(*words: str) -> int | None:
        return next((i for i, c in enumerate(low) if all(w in c for w in words)), None)
    a, s = low.index("address"), col("source")
    every, not_issued = col("sampling", "all"), col("sampling", "not")
    executed = col("instructions executed")
    # per-reason columns, where this ncu prints them (stall_<reason> or 'Stall ...')
    reason_cols = {c: i for i, c in enumerate(cols) if c.lower().startswith("stall_")}

    def num(v: str) -> int:
        try:
            return int(float(v.replace(",", "")))
        except ValueError:
            return 0
    rows = {}
    for r in table[head + 1:]:
        if len(r) < len(cols):
            continue
        try:
            pc = int(r[a], 16) if r[a].strip().lower().startswith("0x") else int(r[a])
        except ValueError:
            continue
        reasons = {c[len("stall_"):].lower(): num(r[i]) for c, i in reason_cols.items() if num(r[i])}
        if not reasons and every is not None and num(r[every]):
            reasons = {"(all reasons)": num(r[every])}
            if not_issued is not None:
                reasons["(not issued)"] = num(r[not_issued])
        rows[str(pc)] = {"reasons": reasons, "not_issued": {}, "sass": r[s].strip() if s is not None else "?",
                         "executed": num(r[executed]) if executed is not None else 0}
    return {"kernel": "?", "exec_metric": cols[executed] if executed is not None else None,
            "stall_metrics": len(reason_cols), "rows": rows}


def stalled(r: dict) -> int:
    if "(not issued)" in r["reasons"]:   # the CSV without a per-reason split
        return r["reasons"]["(not issued)"]
    return sum(v for k, v in r["reasons"].items() if k != "selected" and not k.startswith("("))


def top_reasons(r: dict, n: int, floor: float = 0.0) -> str:
    total = sum(v for k, v in r["reasons"].items() if not k.startswith("(not"))
    items = sorted(((k, v) for k, v in r["reasons"].items() if k != "selected"), key=lambda kv: -kv[1])
    shown = [f"{k} {v}" for k, v in items[:n] if total and v >= floor * total]
    return ", ".join(shown)


def show(lib: str, data: dict) -> None:
    rows = {int(pc): r for pc, r in data["rows"].items()}
    if not rows:
        print(f"{lib}: the report has no per-instruction data (stall metrics: {data['stall_metrics']})")
        return
    base = min(rows)
    pcs = sorted(rows)
    print(f"\n===== {lib}: {data['kernel']} ({len(pcs)} instructions with data; per-instruction "
          f"execution from {data['exec_metric']}; {data['stall_metrics']} stall metrics) =====")
    most = max(r["executed"] for r in rows.values())
    loop = [pc for pc in pcs if most and rows[pc]["executed"] >= most / 2]
    if loop:
        lo, hi = loop[0], loop[-1]
        body = [pc for pc in pcs if lo <= pc <= hi]
        samples = sum(sum(v for k, v in rows[pc]["reasons"].items() if not k.startswith("(not")) for pc in body)
        print(f"K loop: {len(body)} instructions, offsets {lo - base:#x}..{hi - base:#x}, {samples} samples "
              f"({stalled_share(rows, body)})")
        print(f"{'offset':>7} {'executed':>9} {'samples':>8} {'stalled':>8}  {'sass':<58} top stalls")
        for pc in body:
            r = rows[pc]
            every = sum(v for k, v in r["reasons"].items() if not k.startswith("(not"))
            print(f"{pc - base:>#7x} {r['executed']:>9} {every:>8} {stalled(r):>8}  {r['sass'][:58]:<58} "
                  f"{top_reasons(r, 2)}")
    else:
        print("no execution counts: the K loop is not marked; all instructions by stalled samples below")
    print(f"\n{lib}: top {TOP} stalled instructions (samples other than 'selected'; reasons >= 5%)")
    for pc in sorted(pcs, key=lambda p: -stalled(rows[p]))[:TOP]:
        r = rows[pc]
        where = "loop" if loop and loop[0] <= pc <= loop[-1] else "    "
        print(f"{pc - base:>#7x} {where} {stalled(r):>7}  {r['sass'][:56]:<56} {top_reasons(r, 6, 0.05)}")
    for label, subset in (("loop", [pc for pc in pcs if loop and loop[0] <= pc <= loop[-1]]), ("kernel", pcs)):
        if not subset:
            continue
        by: dict[str, int] = {}
        for pc in subset:
            for k, v in rows[pc]["reasons"].items():
                by[k] = by.get(k, 0) + v
        total = sum(v for k, v in by.items() if not k.startswith("(not")) or 1
        print(f"{lib} {label} samples by reason: "
              + ", ".join(f"{k} {v} ({100 * v / total:.1f}%)" for k, v in sorted(by.items(), key=lambda kv: -kv[1])[:10]))


def stalled_share(rows: dict, body: list[int]) -> str:
    s = sum(stalled(rows[pc]) for pc in body)
    every = sum(sum(v for k, v in rows[pc]["reasons"].items() if not k.startswith("(not")) for pc in body)
    return f"{100 * s / every:.1f}% stalled" if every else "no samples"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="ncu --set full instead of the two sections")
    ap.add_argument("--lib", choices=matmul_profile.LIBS, action="append")
    ap.add_argument("--analyse", nargs=2, metavar=("REP", "EXTRAS"), help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.analyse:
        print(json.dumps(analyse(*opts.analyse)))
        return
    ncu = matmul_profile.find_ncu()
    if ncu is None:
        raise SystemExit("no ncu found (/usr/local/cuda*/bin/ncu, PATH, /opt/nvidia/nsight-compute)")
    extras = extras_python(ncu)
    print(f"ncu: {ncu}; ncu_report: {extras or 'not found (CSV source page instead)'}")
    out = Path(os.environ.get("OUT") or "/tmp/out")
    out.mkdir(parents=True, exist_ok=True)
    sections = ["--set", "full"] if opts.full else ["--section", "SourceCounters", "--section", "WarpStateStats"]
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if k not in ("TRITIUM_AS_TRITON", "TRITON_INTERPRET")}
        env.update(MATMUL_PROFILE_DIR=d, TRITIUM_CACHE_DIR=f"{d}/cache", TRITON_CACHE_DIR=f"{d}/cache")
        for lib in opts.lib or matmul_profile.LIBS:
            rep = out / f"matmul_stalls_{lib}"
            prefix = [ncu, "--target-processes", "all", "-k", "regex:^matmul", "--launch-skip", "1",
                      "--launch-count", "1", *sections, "--warp-sampling-interval", "0", "-f", "-o", str(rep)]
            cmd = [*prefix, sys.executable, matmul_profile.__file__, "--worker", lib, "--mode", "ncu", "--rounds", "1"]
            try:   # the worker builds the kernel and launches it twice; the second launch is profiled
                r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
            except subprocess.TimeoutExpired:
                print(f"ncu on {lib} ran past 150 s; skipped")
                continue
            if r.returncode != 0 or not Path(f"{rep}.ncu-rep").exists():
                tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-8:])
                print(f"ncu on {lib} failed (exit {r.returncode}):\n{tail}")
                continue
            page = subprocess.run([ncu, "--import", f"{rep}.ncu-rep", "--page", "source", "--csv",
                                   "--print-source", "sass"], capture_output=True, text=True, timeout=120)
            (out / f"matmul_stalls_{lib}_source.csv").write_text(page.stdout + page.stderr)
            data = None
            if extras:
                a = subprocess.run([sys.executable, __file__, "--analyse", f"{rep}.ncu-rep", extras],
                                   capture_output=True, text=True, timeout=120)
                if a.returncode == 0 and a.stdout.strip():
                    data = json.loads(a.stdout.strip().splitlines()[-1])
                else:
                    print(f"ncu_report on {lib} failed: {(a.stderr.strip().splitlines() or ['?'])[-1][:300]}")
            if data is None or not data["rows"]:
                try:
                    data = from_csv(page.stdout)
                except RuntimeError as e:
                    print(f"{lib}: {e}")
                    continue
            (out / f"matmul_stalls_{lib}.json").write_text(json.dumps(data))
            show(lib, data)


if __name__ == "__main__":
    main()
