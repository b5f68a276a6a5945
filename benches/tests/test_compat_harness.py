"""benches/compat's acceptance harness, without a GPU: run_one.py runs a file
under the switch (and --quick shortens perf_report sweeps without editing
it), tutorials.py picks 01-09 and compares what each run printed outside its
benchmark tables (the suite runner's tests: tests/test_compat_runner.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COMPAT = Path(__file__).resolve().parent.parent / "compat"
sys.path.insert(0, str(COMPAT))

import tutorials  # noqa: E402

FAKE_TUTORIAL = '''
import triton
import triton.language as tl
seen = []

@triton.testing.perf_report(triton.testing.Benchmark(
    x_names=["n"], x_vals=[1, 2, 3, 4, 5], line_arg="p", line_vals=["a"], line_names=["a"],
    plot_name="fake", args={}))
def bench(n, p):
    seen.append(n)
    return float(n)

if __name__ == "__main__":
    print("version", triton.__version__, tl.extra.libdevice.erfinv.__name__)
    print("The maximum difference between torch and triton is 0.0")
    bench.run(print_data=False, show_plots=False)
    print("swept", seen)
'''


@pytest.mark.parametrize("quick,swept", [(True, [1, 2]), (False, [1, 2, 3, 4, 5])])
def test_run_one_runs_a_file_unchanged_under_the_switch(tmp_path, quick, swept):
    f = tmp_path / "01-fake.py"
    f.write_text(FAKE_TUTORIAL)
    cmd = [sys.executable, str(COMPAT / "run_one.py"), "--lib", "tritium"] + (["--quick"] if quick else []) + [str(f)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "version 3.6.0 erfinv" in proc.stdout
    assert f"swept {swept}" in proc.stdout
    assert proc.stdout.strip().endswith("RUN_ONE: ok")
    res = tutorials.run("tritium", f, quick, 120)
    # what the file printed outside its benchmark tables is what two runs compare
    assert res["ok"] and "The maximum difference between torch and triton is 0.0" in res["lines"]
    assert not any(line.startswith("RUN_ONE") for line in res["lines"])


def test_run_one_reports_what_stopped_the_file(tmp_path):
    f = tmp_path / "02-broken.py"
    f.write_text("import triton\nraise ValueError('kernel failed')\n")
    res = tutorials.run("tritium", f, True, 120)
    assert not res["ok"] and res["why"] == "ValueError: kernel failed"


def test_tutorial_files_takes_one_file_per_number(tmp_path):
    for name in ("01-vector-add.py", "02-fused-softmax.py", "02-fused-softmax-cpu.py", "10-x.py", "07-extern.py"):
        (tmp_path / name).write_text("")
    names = [p.name for p in tutorials.tutorial_files(tmp_path, set())]
    assert names == ["01-vector-add.py", "02-fused-softmax.py", "07-extern.py"]
    assert [p.name for p in tutorials.tutorial_files(tmp_path, {"07"})] == ["07-extern.py"]
