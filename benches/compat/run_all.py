"""Issue 14's acceptance run in one command: the tutorials (tutorials.py) and
the library suites (suites.py) at once, each within a time budget, then
both tables.

    python benches/compat/run_all.py [--inputs DIR] [--budget S] [--logs DIR]

DIR is what fetch_inputs.py wrote (default benches/compat/inputs). Its
wheels/ are installed first with `pip install --no-index --no-deps --target`
into a temporary folder put on PYTHONPATH (after what is there already), for
machines without network. The tutorials run one after another, each under
both libraries at once; the suites run all their pytest processes at once
(suites.py --jobs). Nothing started after `--budget` seconds; a suite's
pytest process is stopped at the budget and counted as far as it got.
Every log (each run's full output and the two tables, `tutorials.out` and
`suites.out`) ends up also in one archive, `LOGS/compat_logs.tar.gz`.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def install_wheels(wheels: Path, target: Path) -> str:
    found = sorted(str(p) for p in wheels.glob("*.whl"))
    if not found:
        return ""
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target",
                        str(target)] + found, capture_output=True, text=True)
    if r.returncode:
        print(f"run_all: installing {wheels}: {r.stderr.strip()[-500:]}", file=sys.stderr)
    return str(target)


def describe(env: dict) -> str:
    code = ("import sys, platform, json\n"
            "out = {'python': platform.python_version()}\n"
            "try:\n import torch; out['torch'] = torch.__version__; out['gpu'] = torch.cuda.get_device_name(0) "
            "if torch.cuda.is_available() else 'none'\n"
            "except Exception as e: out['torch'] = repr(e)\n"
            "for m in ('triton', 'tritium', 'transformers'):\n"
            " try:\n  mod = __import__(m); out[m] = getattr(mod, '__version__', '?') + ' ' + mod.__file__\n"
            " except Exception as e: out[m] = repr(e)[:200]\n"
            "print(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    try:
        return ", ".join(f"{k} {v}" for k, v in json.loads(r.stdout).items())
    except ValueError:
        return r.stderr.strip()[-300:]


ARCHIVE = "compat_logs.tar.gz"


def archive_logs(logs: Path) -> Path:
    """Every file under `logs` in one `logs/compat_logs.tar.gz` (names
    relative to `logs`), for a machine that hands back only a few files; the
    files stay where they are."""
    out = logs / ARCHIVE
    tmp = logs / (ARCHIVE + ".part")
    with tarfile.open(tmp, "w:gz") as tar:
        for p in sorted(logs.rglob("*")):
            if p.is_file() and p not in (out, tmp):
                tar.add(p, arcname=str(p.relative_to(logs)))
    tmp.replace(out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", default=str(HERE / "inputs"))
    ap.add_argument("--budget", type=int, default=400, help="seconds for each part (they run at once)")
    ap.add_argument("--jobs", type=int, default=6, help="suite pytest processes at once")
    ap.add_argument("--logs", default="", help="folder for every run's full output")
    opts = ap.parse_args()
    inputs = Path(opts.inputs).resolve()
    logs = Path(opts.logs).resolve() if opts.logs else Path(tempfile.mkdtemp(prefix="compat-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MPLBACKEND="Agg", PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    env.pop("TRITIUM_AS_TRITON", None)
    extra = install_wheels(inputs / "wheels", Path(tempfile.mkdtemp(prefix="compat-wheels-")))
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH", ""), extra]))
    print(f"run_all: {describe(env)}", flush=True)
    start = time.time()
    parts = {
        "tutorials": [sys.executable, str(HERE / "tutorials.py"), "--tutorials",
                      str(inputs / "triton" / "python" / "tutorials"), "--budget", str(opts.budget),
                      "--logs", str(logs / "tutorials")],
        "suites": [sys.executable, str(HERE / "suites.py"), "--inputs", str(inputs), "--budget", str(opts.budget),
                   "--jobs", str(opts.jobs), "--logs", str(logs / "suites")],
    }
    procs = {}
    for name, cmd in parts.items():
        out = open(logs / f"{name}.out", "w")
        procs[name] = (subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env), out)
    rc = 0
    for name, (proc, out) in procs.items():
        rc |= proc.wait()
        out.close()
    archive = archive_logs(logs)
    print(f"run_all: {time.time() - start:.0f} s; full logs in {logs}, all of them in {archive}\n")
    for name in parts:
        print(f"## {name}\n")
        print((logs / f"{name}.out").read_text())
    return rc


if __name__ == "__main__":
    sys.exit(main())
