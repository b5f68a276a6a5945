"""The bench scripts' own checks: the checked-in kernel IR is current,
stage_table.py reads criterion's layout, and vs_triton.py's tritium worker
measures real compiles (the Triton side needs its venv and is not run here).

    .venv/bin/python -m pytest benches/tests
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCHES))

import compile_stages  # noqa: E402
import stage_table  # noqa: E402
import vs_triton  # noqa: E402


def test_checked_in_kernel_ir_is_current():
    proc = subprocess.run([sys.executable, str(BENCHES / "kernels" / "gen.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _fake_result(root: Path, stage: str, kernel: str, median_ns: float, ops: int) -> None:
    d = root / stage / kernel / "new"
    d.mkdir(parents=True)
    (d / "benchmark.json").write_text(json.dumps(
        {"group_id": stage, "function_id": kernel, "throughput": {"Elements": ops}}))
    (d / "estimates.json").write_text(json.dumps({"median": {"point_estimate": median_ns}}))


def test_stage_table_orders_stages_and_kernels(tmp_path):
    _fake_result(tmp_path, "verify", "matmul", 2_500_000, 135)
    _fake_result(tmp_path, "parse", "matmul", 40_000, 135)
    _fake_result(tmp_path, "parse", "vector_add", 12_000, 19)
    _fake_result(tmp_path, "axis_info", "vector_add", 7_000, 19)
    medians, ops = stage_table.read_results(tmp_path)
    assert medians[("verify", "matmul")] == pytest.approx(2.5)
    assert ops == {"matmul": 135, "vector_add": 19}
    lines = stage_table.table(medians, ops).splitlines()
    assert lines[0] == "| stage \\ kernel (ms, median) | vector_add | matmul |"
    assert lines[2] == "| *ops* | 19 | 135 |"
    # pipeline stages first, then new ones alphabetically; missing cells blank
    assert [line.split(" | ")[0] for line in lines[3:]] == ["| parse", "| verify", "| axis_info"]
    assert lines[3] == "| parse | 0.0120 | 0.0400 |"
    assert lines[4] == "| verify |  | 2.50 |"


def test_stage_table_without_results_is_an_error(tmp_path, capsys):
    assert stage_table.main(["--criterion-dir", str(tmp_path / "missing")]) == 1
    assert "cargo bench" in capsys.readouterr().err
    assert stage_table.main(["--criterion-dir", str(tmp_path)]) == 1


def test_tritium_worker_times_each_stage():
    proc = subprocess.run([sys.executable, str(BENCHES / "vs_triton.py"), "--worker", "tritium",
                           "--kernels", "softmax", "--warm", "2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(result["warm_ms"]) == 2 and result["first_ms"] > 0
    for stages in [result["first_stages"], *result["warm_stages"]]:
        assert set(stages) == set(vs_triton.TRITIUM_STAGES)
        assert all(ms > 0 for ms in stages.values())


def test_worker_rejects_unknown_kernel():
    proc = subprocess.run([sys.executable, str(BENCHES / "vs_triton.py"), "--worker", "tritium",
                           "--kernels", "no_such_kernel", "--warm", "1"], capture_output=True, text=True)
    assert proc.returncode != 0 and "unknown kernel 'no_such_kernel'" in proc.stderr


def test_report_labels_missing_stages():
    stages = {s: 1.0 for s in vs_triton.TRITON_STAGES}
    ours_stages = {s: 0.5 for s in vs_triton.TRITIUM_STAGES}
    tri = {"process_ms": 900.0, "import_ms": 100.0, "first_ms": 500.0, "warm_ms": 60.0,
           "warm_stages": stages, "first_stages": stages}
    ours = {"process_ms": 150.0, "import_ms": 60.0, "first_ms": 20.0, "warm_ms": 1.5,
            "warm_stages": ours_stages, "first_stages": ours_stages}
    text = vs_triton.report("k", tri, ours)
    assert "| warm process: compile, median (cache off) | 60.0 | 1.50 | 40x |" in text
    assert "tritium (full pipeline)" in text
    # tritium's PTX is part of its LLVM row; its cubin row is its own ptxas run
    assert "| PTX | 1.00 (1.00) | — |" in text
    assert "| cubin (ptxas) | 1.00 (1.00) | 0.50 (0.50) |" in text
    # a kernel tritium cannot lower yet is labelled, and its codegen rows say so
    ours_ir_only = dict(ours, unsupported="k.py:3:4: `dot` is not supported by the NVPTX sm_90 backend yet")
    text = vs_triton.report("k", tri, ours_ir_only)
    assert "tritium (frontend + IR only)" in text and "tritium stops after the IR: k.py:3:4" in text
    assert "| cubin (ptxas) | 1.00 (1.00) | not lowered yet |" in text


def test_libdevice_accuracy_has_a_reference_for_every_variant():
    import numpy as np
    import libdevice_accuracy
    cases = libdevice_accuracy.C
    rng = np.random.default_rng(0)
    for name, types, symbol, ret in cases.variants():
        args = cases.inputs(name, types, 8, rng)
        out = np.bool_ if name in ("isnan", "isinf") else cases.NP[ret]
        ref, kind = libdevice_accuracy.answer(name, symbol, args, out)
        assert np.shape(ref) == (8,) and kind in ("extended", "interpreter", "f64", "f64 ref"), (name, types)
        # a GPU answer equal to the correctly rounded reference (in the function's own rounding mode) is
        # inside NVIDIA's bound (the row's last column)
        B = libdevice_accuracy.B
        with np.errstate(all="ignore"):
            got = B.rounded_exactly(name, ret, args) if B.has_exact_rounding(name) else np.asarray(ref).astype(out)
            row = libdevice_accuracy.float_row(name, ret, args, got, ref, kind, out)
        assert row["exact"] or (row["outside"] == 0 and row["bound"]), (name, types, row)
        if B.has_exact_rounding(name):   # and one ulp off it is outside
            with np.errstate(all="ignore"):
                off = libdevice_accuracy.float_row(name, ret, args, np.nextafter(got, out(np.inf)), ref, kind, out)
            assert off["outside"] == 8 and off["bound"].startswith("correctly rounded"), (name, types, off)
    bad = libdevice_accuracy.float_row("sin", "fp32", [np.ones(2, np.float32)], np.float32([0.9, 0.8414709]),
                                       np.sin(np.ones(2)), "extended", np.float32)
    assert bad["outside"] == 1 and bad["bound"] == "4 ulps"


def test_autotune_bench_kernels_compile_for_every_config():
    proc = subprocess.run([sys.executable, str(BENCHES / "gpu" / "autotune_bench.py"), "--compile-only",
                           "--only", "layernorm"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "layernorm: 16 configs compiled" in proc.stdout


def test_autotune_bench_table_reports_failures_and_ratios():
    sys.path.insert(0, str(BENCHES / "gpu"))
    import autotune_bench
    ok = {"wall_s": 1.0, "kernel_ms": 0.1, "correct": True, "skipped": [], "config": "ROWS: 1"}
    results = {"softmax": {"tritium": {**ok, "wall_s": 0.2, "notes": ["1 of 16 configs skipped"]},
                           "triton": {**ok, "kernel_ms": 0.1}},
               "matmul": {"tritium": ok, "triton": {"error": "OutOfResources: shared memory"}}}
    text = autotune_bench.table(results)
    assert "wall meets <= 0.25; kernel meets <= 1.02" in text
    assert "error: OutOfResources: shared memory" in text
    assert "softmax/tritium: 1 of 16 configs skipped" in text


def test_compile_stages_times_a_real_cold_compile(capsys):
    assert compile_stages.main(["--rounds", "1", "--json"]) == 0
    (r,) = json.loads(capsys.readouterr().out)
    codegen = ["verify", "tile_passes", "llvm_setup", "layouts", "lower", "link", "llvm_optimize", "emit",
               "llir_text"]
    assert [k for k in r if k in codegen] == codegen
    assert all(r[k] > 0 for k in ("import", "key", "frontend", "llvm_optimize", "emit"))
    # the Rust stages are parts of the code generation the child timed around them (ptxas, when it
    # ran, from right after emission: it overlaps llir_text)
    overlapped = ["llir_text"] if "ptxas" in r else []
    assert sum(r[k] for k in codegen + ["ptxas"] if k in r and k not in overlapped) <= r["codegen_total"]
    assert r["total"] > r["codegen_total"]
