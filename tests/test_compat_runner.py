"""benches/compat, issue 14's acceptance harness, on the CPU: the suite runner
counts per-test outcomes through its pytest plugin (also for a run stopped at
its budget and for a file that fails to import), runs pytest with tritium under
the name `triton`, and the input fetcher checks git blob ids and keeps only the
pinned paths of an archive."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

COMPAT = Path(__file__).resolve().parents[1] / "benches" / "compat"
sys.path.insert(0, str(COMPAT))

import fetch_inputs  # noqa: E402
import run_all  # noqa: E402
import tutorials  # noqa: E402

FAKE_SUITE = '''
import time
import pytest
import triton

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_pass():
    assert "tritium" in triton.__file__

def test_fail():
    assert 1 == 2

def test_skip():
    pytest.skip("not here")

def test_error(broken):
    pass

def test_zz_slow():
    time.sleep(120)
'''


def test_suite_runner_counts_outcomes_and_stops_at_budget(tmp_path: Path) -> None:
    tests = tmp_path / "suite" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_a.py").write_text(textwrap.dedent(FAKE_SUITE))
    (tests / "test_b.py").write_text("import no_such_module_here\n\ndef test_x():\n    pass\n")
    logs = tmp_path / "logs"
    out = subprocess.run([sys.executable, str(COMPAT / "suites.py"), "--suite", f"fake={tests}", "--libs", "tritium",
                          "--budget", "15", "--logs", str(logs)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    row = next(ln for ln in out.stdout.splitlines() if ln.startswith("| fake | tritium |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # collected (test_b does not import) | finished | passed | failed | errors | skipped
    assert cells[2] == "5"
    assert cells[3].startswith("5 (stopped at the 15 s budget)")
    assert cells[4:8] == ["1", "1", "2", "1"]
    assert "/tritium" in out.stdout.split("`import triton` gave")[1].splitlines()[0]
    outcomes = json.loads((logs / "fake.tritium.outcomes.json").read_text())
    assert outcomes["tests/test_a.py::test_fail"][0] == "failed"
    assert "assert 1 == 2" in outcomes["tests/test_a.py::test_fail"][1]
    assert outcomes["tests/test_b.py"][0] == "error"
    assert "no_such_module_here" in outcomes["tests/test_b.py"][1]
    assert "tests/test_a.py::test_zz_slow" not in outcomes


def test_git_blob_id_is_gits() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert fetch_inputs.git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_unpack_keeps_only_the_pinned_paths(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("top/src/lib.py", "top/test/conftest.py", "top/test/resources/big.bin", "top/docs/x.md"):
            info = tarfile.TarInfo(name)
            info.size = 3
            tar.addfile(info, io.BytesIO(b"abc"))
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        fetch_inputs.unpack_kept(tar, ["src", "test/conftest.py"], tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == \
        ["src/lib.py", "test/conftest.py"]


def test_tutorial_results_leave_out_benchmark_tables() -> None:
    out = ("RUN_ONE: triton 3.6.0 from x\ntensor([1., 2.])\nThe maximum difference is 0.0\n"
           "RUN_ONE: benchmark begins\n   size  Triton\n0  4096.0  8.5\nRUN_ONE: benchmark ends\n✅ match\nRUN_ONE: ok\n")
    assert tutorials.result_lines(out) == ["tensor([1., 2.])", "The maximum difference is 0.0", "✅ match"]


def test_manifest_pins_every_tutorial() -> None:
    spec = fetch_inputs.MANIFEST["tutorials"]
    assert len(spec["commit"]) == 40
    assert sorted(f[:3] for f in spec["files"]) == [f"{i:02d}-" for i in range(1, 10)]
    assert all(len(p["blob"]) == 40 for p in spec["files"].values())


@pytest.mark.skipif(not (COMPAT / "inputs" / "triton" / "python" / "tutorials").is_dir(),
                    reason="inputs not fetched (benches/compat/fetch_inputs.py)")
def test_fetched_tutorials_match_their_pins() -> None:
    folder = COMPAT / "inputs" / "triton" / "python" / "tutorials"
    for name, pin in fetch_inputs.MANIFEST["tutorials"]["files"].items():
        assert fetch_inputs.git_blob_id((folder / name).read_bytes()) == pin["blob"], name


SEEDED_TUTORIAL = """
import random
import numpy as np
print("random", random.random())
print("numpy", np.random.rand())
print("file", __file__)
"""


def test_tutorials_relative_folder_runs_each_file_seeded(tmp_path: Path) -> None:
    # a relative --tutorials is resolved once (run_one.py changes into the
    # file's folder), and Python's and numpy's generators start at seed 0
    folder = tmp_path / "a" / "tutorials"
    folder.mkdir(parents=True)
    (folder / "01-seeded.py").write_text(SEEDED_TUTORIAL)
    logs = tmp_path / "logs"
    out = subprocess.run([sys.executable, str(COMPAT / "tutorials.py"), "--tutorials", "a/tutorials", "--libs",
                          "tritium", "--logs", "logs"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| 01-seeded.py | pass" in out.stdout, out.stdout
    log = (logs / "01-seeded.tritium.log").read_text()
    import numpy as np
    np.random.seed(0)
    import random
    assert f"random {random.Random(0).random()}" in log
    assert f"numpy {np.random.rand()}" in log
    assert f"file {folder / '01-seeded.py'}" in log


def test_run_all_archives_every_log(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "tutorials").mkdir(parents=True)
    (logs / "tutorials.out").write_text("| tutorial |")
    (logs / "tutorials" / "06-fused-attention.tritium.log").write_text("trace")
    archive = run_all.archive_logs(logs)
    run_all.archive_logs(logs)  # again: the archive never holds itself
    assert archive == logs / "compat_logs.tar.gz"
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["tutorials.out", "tutorials/06-fused-attention.tritium.log"]
        assert tar.extractfile("tutorials/06-fused-attention.tritium.log").read() == b"trace"
    assert (logs / "tutorials.out").read_text() == "| tutorial |"
    assert not (logs / "compat_logs.tar.gz.part").exists()
