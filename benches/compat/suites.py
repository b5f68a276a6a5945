"""The test suites of public Triton kernel libraries, run with pytest under
real Triton and under tritium through the switch, pass counts side by side.

    python benches/compat/suites.py [--inputs DIR] [--only NAME,...] [--budget S] [--jobs N] [--logs DIR]
        [--suite NAME=TESTS[:PYTHONPATH]] [-- pytest args]

Without --suite, the libraries of inputs.json, as fetch_inputs.py unpacked
them under DIR/suites/<name>/ (default benches/compat/inputs), each with its
pinned test selection and pytest arguments. Each library runs twice, as
separate pytest processes: once with `import triton` giving the installed
Triton, once with tritium's switch on (the process calls
`tritium.install_as_triton()` before pytest starts, and TRITIUM_AS_TRITON=1
is set for any process a test starts). `--jobs` runs that many pytest
processes at once (correctness tests only; their speed is not measured).

`--budget` gives each pytest process that many seconds; a process still
running then is stopped, and the table counts the tests it finished (an
outcomes plugin records each test as it ends). Tests run in pytest's
collection order, so a stopped run has run a prefix of the suite; the
comparison lines count only tests that finished under both.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = json.loads((HERE / "inputs.json").read_text())
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
BOOT = {
    "triton": "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
    "tritium": ("import sys, tritium; tritium.install_as_triton(); import pytest; "
                "sys.exit(pytest.main(sys.argv[1:]))"),
}


def suites_from_manifest(inputs: Path, only: set[str]) -> dict[str, dict]:
    out = {}
    for name, spec in MANIFEST["suites"].items():
        if only and name not in only:
            continue
        root = inputs / spec.get("dir", f"suites/{name}")
        out[name] = {"root": root, "tests": spec["tests"], "args": spec["pytest_args"], "pythonpath": [],
                     "selection": spec["selection"]}
    return out


def run(lib: str, suite: dict, budget: int, extra: list[str], log: Path | None) -> dict:
    """One pytest process; the per-test outcomes its plugin wrote."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        outcomes_file = f.name
    path = [str(HERE)] + [str(p) for p in suite["pythonpath"]] + [os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)), COMPAT_OUTCOMES=outcomes_file,
               PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    env.pop("TRITIUM_AS_TRITON", None)
    if lib == "tritium":
        env["TRITIUM_AS_TRITON"] = "1"
    cmd = ([sys.executable, "-c", BOOT[lib], "-p", "outcomes_plugin", "-p", "no:cacheprovider", "-q", "-rN",
            "--continue-on-collection-errors",
            "--tb=short"] + suite["tests"] + suite["args"] + extra)
    if log is None:
        log = Path(tempfile.mkdtemp(prefix="compat-suite-")) / "pytest.log"
    start = time.time()
    stopped = False
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=str(suite["root"]), env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            stopped = True
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
    tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-3:]
    res = {"rc": rc, "stopped": stopped, "seconds": time.time() - start, "collected": None, "triton": "?",
           "tests": {}, "tail": " / ".join(tail)[-300:]}
    for line in Path(outcomes_file).read_text().splitlines():
        rec = json.loads(line)
        if "collected" in rec:
            res["collected"] = rec["collected"]
        elif "triton" in rec:
            res["triton"] = f"{rec['triton']} ({rec['from']})"
        else:
            res["tests"][rec["id"]] = (rec["outcome"], rec["why"])
    os.unlink(outcomes_file)
    log.with_suffix(".outcomes.json").write_text(json.dumps(res["tests"], indent=0))
    return res


def counts(res: dict) -> dict[str, int]:
    c = dict.fromkeys(OUTCOMES, 0)
    for outcome, _ in res["tests"].values():
        c[outcome] += 1
    return c


def main() -> int:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", default=str(HERE / "inputs"))
    ap.add_argument("--only", default="", help="library names from inputs.json, comma separated")
    ap.add_argument("--suite", action="append", default=[], help="NAME=TESTS_DIR[:PYTHONPATH] (instead of inputs.json)")
    ap.add_argument("--libs", default="triton,tritium")
    ap.add_argument("--budget", type=int, default=1800, help="seconds for each pytest process")
    ap.add_argument("--jobs", type=int, default=1, help="pytest processes at once")
    ap.add_argument("--logs", default="")
    opts = ap.parse_args(argv)
    suites = {}
    for s in opts.suite:
        name, _, spec = s.partition("=")
        tests, _, path = spec.partition(":")
        suites[name] = {"root": Path(tests).resolve().parent, "tests": [str(Path(tests).resolve())], "args": [],
                        "pythonpath": [Path(path).resolve()] if path else [], "selection": "as given"}
    if not opts.suite:
        suites = suites_from_manifest(Path(opts.inputs), set(filter(None, opts.only.split(","))))
    missing = [n for n, s in suites.items() if not Path(s["root"]).is_dir()]
    if not suites or missing:
        print(f"suites: nothing to run in {opts.inputs} ({', '.join(missing)} missing: run "
              "benches/compat/fetch_inputs.py)", file=sys.stderr)
        return 2
    libs = opts.libs.split(",")
    logs = Path(opts.logs) if opts.logs else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    jobs = [(name, lib) for name in suites for lib in libs]
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = {job: pool.submit(run, job[1], suites[job[0]], opts.budget, extra,
                                    logs / f"{job[0]}.{job[1]}.log" if logs else None) for job in jobs}
        results = {job: fut.result() for job, fut in futures.items()}
    print(f"| library | implementation | collected | finished | passed | failed | errors | skipped | time (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, lib in jobs:
        r = results[(name, lib)]
        c = counts(r)
        note = f" (stopped at the {opts.budget} s budget)" if r["stopped"] else ""
        if not r["stopped"] and r["rc"] not in (0, 1):
            note = f" (pytest exit {r['rc']})"
        print(f"| {name} | {lib} | {r['collected'] if r['collected'] is not None else '?'} | {len(r['tests'])}{note} | "
              f"{c['passed'] + c['xpassed']} | {c['failed']} | {c['error']} | {c['skipped'] + c['xfailed']} | "
              f"{r['seconds']:.0f} |")
    for name, suite in suites.items():
        print(f"\n{name}: {suite['selection']}; tests: {' '.join(suite['tests'])} {' '.join(suite['args'] + extra)}")
        for lib in libs:
            r = results[(name, lib)]
            print(f"  {lib}: `import triton` gave {r['triton']}")
            if not r["stopped"] and r["rc"] not in (0, 1):
                print(f"  {lib}: pytest exit {r['rc']}: {r['tail']}")
        if len(libs) != 2:
            continue
        a, b = (results[(name, lib)]["tests"] for lib in libs)
        both = [t for t in a if t in b]
        ok = lambda o: o in ("passed", "xpassed")  # noqa: E731
        same = sum(1 for t in both if ok(a[t][0]) and ok(b[t][0]))
        only_a = [t for t in both if ok(a[t][0]) and not ok(b[t][0])]
        only_b = [t for t in both if ok(b[t][0]) and not ok(a[t][0])]
        print(f"  finished under both: {len(both)}; passed under both: {same}; passed under {libs[0]} only: "
              f"{len(only_a)}; passed under {libs[1]} only: {len(only_b)}")
        for t in only_a[:12]:
            print(f"    {libs[1]} {b[t][0]}: {t}: {b[t][1]}")
        if len(only_a) > 12:
            print(f"    ... {len(only_a) - 12} more (every outcome: --logs DIR/*.outcomes.json)")
        for t in only_b[:5]:
            print(f"    {libs[0]} {a[t][0]}: {t}: {a[t][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
