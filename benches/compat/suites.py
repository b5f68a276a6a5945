"""The test suites of public Triton kernel libraries, run with pytest under
real Triton and under tritium (TRITIUM_AS_TRITON=1), pass counts side by side.

    python benches/compat/suites.py [--suite NAME=TESTS_DIR[:PYTHONPATH]] ... [--timeout 1800] [-- pytest args]

Without --suite, every library unpacked by fetch_inputs.py under
benches/compat/inputs/suites/<name>/ is run (its `test` or `tests` folder,
its `src` or top folder on PYTHONPATH). Prints the table of passed /
failed / skipped / errors per library and per Triton implementation.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def parse_summary(text: str) -> dict[str, int]:
    """Counts from pytest's last summary line (`3 failed, 10 passed, 1 skipped in 2.0s`)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0, "xfailed": 0, "xpassed": 0}
    lines = [ln for ln in text.splitlines() if SUMMARY.search(ln) and (" in " in ln or ln.startswith("="))]
    if not lines:
        return counts
    for n, what in SUMMARY.findall(lines[-1]):
        key = "errors" if what.startswith("error") else what
        if key in counts:
            counts[key] = int(n)
    return counts


def discover(root: Path) -> dict[str, tuple[Path, Path]]:
    suites = {}
    for lib in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        tests = next((lib / d for d in ("test", "tests") if (lib / d).is_dir()), None)
        if tests is not None:
            suites[lib.name] = (tests, lib / "src" if (lib / "src").is_dir() else lib)
    return suites


def run(tests: Path, pythonpath: Path, as_tritium: bool, timeout: int, extra: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pythonpath), os.environ.get("PYTHONPATH", "")]))
    env.pop("TRITIUM_AS_TRITON", None)
    if as_tritium:
        env["TRITIUM_AS_TRITON"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)] + extra
    start = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(tests.parent))
        out = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or "") if isinstance(e.stdout, str) else ""
        out += f"\nsuites: timed out after {timeout} s"
    counts = parse_summary(out)
    counts["seconds"] = int(time.time() - start)
    counts["output"] = out
    return counts


def main() -> int:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", action="append", default=[], help="NAME=TESTS_DIR[:PYTHONPATH]")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--logs", default="")
    opts = ap.parse_args(argv)
    suites = {}
    for s in opts.suite:
        name, _, spec = s.partition("=")
        tests, _, path = spec.partition(":")
        suites[name] = (Path(tests), Path(path) if path else Path(tests).parent)
    if not suites:
        suites = discover(HERE / "inputs" / "suites")
    if not suites:
        print("suites: nothing to run (give --suite or run benches/compat/fetch_inputs.py)", file=sys.stderr)
        return 2
    print("| library | implementation | passed | failed | errors | skipped | time (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, (tests, path) in suites.items():
        for impl, as_tritium in (("triton", False), ("tritium", True)):
            r = run(tests, path, as_tritium, opts.timeout, extra)
            if opts.logs:
                Path(opts.logs).mkdir(parents=True, exist_ok=True)
                (Path(opts.logs) / f"{name}.{impl}.log").write_text(r["output"])
            print(f"| {name} | {impl} | {r['passed']} | {r['failed']} | {r['errors']} | {r['skipped']} | "
                  f"{r['seconds']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
