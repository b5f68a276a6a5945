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


# four instructions of the autotune bench's matmul loop as cuobjdump -sass prints them
# (sm_90a): the control bits are the top 23 bits of each second word
MATMUL_LOOP_SASS = """
        /*2660*/                   FENCE.VIEW.ASYNC.S ;                                             /* 0x00000000000073c6 */
                                                                                                    /* 0x002e620000000000 */
        /*2670*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                                    /* 0x0000000000007b1d */
                                                                                                    /* 0x002fe20000010000 */
        /*2680*/                   UIADD3.64 UR12, UR8, 0x2, URZ ;                                  /* 0x00000002080c7897 */
                                                                                                    /* 0x000fd6000fffe03f */
        /*2690*/                   LDGSTS.E.BYPASS.128 [R225+0x800], desc[UR26][R22.64], P3 ;       /* 0x0080000016e17fae */
                                                                                                    /* 0x0005e80009901c5a */
        /*26a0*/              @!P1 BRA 0x2660 ;                                                     /* 0xfffffff400fc9947 */
                                                                                                    /* 0x000fea000383ffff */
"""


def test_sass_ctrl_decodes_stalls_scoreboards_and_loops(capsys):
    import sass_ctrl
    ins = sass_ctrl.parse(MATMUL_LOOP_SASS)
    assert [x["off"] for x in ins] == [0x2660, 0x2670, 0x2680, 0x2690, 0x26A0]
    fence, bar, add, copy, branch = ins
    # the fence waits on scoreboard 1 (the MEMBAR before it in the kernel) and sets it again; the
    # barrier waits on it
    assert (fence["wbar"], fence["wait"]) == (1, [1]) and (bar["wbar"], bar["wait"]) == (7, [1])
    # a fixed 11-cycle stall after the uniform add (the gap ptxas keeps between HGMMAs), no yield
    assert (add["stall"], add["yield"]) == (11, 0)
    # the copy's source registers are released through read scoreboard 2
    assert (copy["stall"], copy["rbar"], copy["wbar"]) == (4, 2, 7)
    assert branch["stall"] == 5 and branch["yield"] == 1
    assert sass_ctrl.loops(ins) == [(0x2660, 0x26A0)]
    sass_ctrl.show(ins, 0x2660, 0x26A0)
    assert "5 instructions, stall counts sum 22 cycles" in capsys.readouterr().out


def test_matmul_stalls_marks_the_loop_and_ranks_stalled_instructions(capsys):
    sys.path.insert(0, str(BENCHES / "gpu"))
    import matmul_stalls
    # 12 instructions, the middle five executed 64 times as often; samples by reason
    rows = {str(0x7000 + 16 * i): {"reasons": {"wait": i, "selected": 2, "barrier": 5 - i % 3}, "not_issued": {},
                                   "executed": 640 if 3 <= i < 8 else 10, "sass": f"OP{i} R{i}"} for i in range(12)}
    matmul_stalls.show("tritium", {"kernel": "matmul", "exec_metric": "inst_executed", "stall_metrics": 3,
                                   "rows": rows})
    out = capsys.readouterr().out
    assert "K loop: 5 instructions, offsets 0x30..0x70" in out
    top = out.split("top 15 stalled instructions")[1].splitlines()[1:4]
    # OP9..OP11 stall most (wait 9..11 plus barrier), outside the loop; selected samples do not count
    assert [line.split()[1:3] for line in top] == [["14", "OP9"], ["14", "OP10"], ["14", "OP11"]]
    assert "tritium loop samples by reason: wait 25 (44.6%), barrier 21 (37.5%), selected 10 (17.9%)" in out
    # ncu's source page CSV, without a per-reason split: stalled = not-issued samples
    text = '"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",' \
           '"Instructions Executed"\n' + "\n".join(
               f'"0x{0x7000 + 16 * i:x}","OP{i} R1, R2","{i * 3}","{i * 2}","{640 if 3 <= i < 8 else 10}"'
               for i in range(12))
    data = matmul_stalls.from_csv(text)
    assert matmul_stalls.stalled(data["rows"][str(0x7000 + 16 * 11)]) == 22
    assert data["rows"][str(0x7030)]["executed"] == 640


def test_matmul_variants_ptx_rewrites():
    sys.path.insert(0, str(BENCHES / "gpu"))
    import matmul_variants
    ptx = ("\tmul.wide.s32 \t%rd7, %r3, 2;\n\tadd.s64 \t%rd8, %rd1, %rd7;\n"
           "\tmul.wide.s32 \t%rd9, %r4, 2;\n\tadd.s64 \t%rd10, %rd2, %rd9;\n\tadd.s64 \t%rd11, %rd3, %rd9;\n"
           "\tcp.async.wait_group 1;\n\tbar.sync 0;\n\tcp.async.wait_group 0;\n")
    out = matmul_variants.mad_wide(ptx)
    # the single-use product is fused; the one two adds share stays a mul.wide
    assert "\tmad.wide.s32 \t%rd8, %r3, 2, %rd1;" in out and "%rd7" not in out
    assert "mul.wide.s32 \t%rd9, %r4, 2;" in out and out.count("add.s64") == 2
    with pytest.raises(RuntimeError, match="no mul.wide"):
        matmul_variants.mad_wide(out.replace("mul.wide", "mul.lo"))
    fenced = matmul_variants.fence_after_wait(ptx).splitlines()
    assert [fenced[i + 1].strip() for i, x in enumerate(fenced) if "cp.async.wait_group" in x] == \
        ["fence.proxy.async.shared::cta;"] * 2
