"""benches/amd_vs_triton.py's own checks: its tritium worker compiles real
HSACO, resources and instruction counts are read from them, and the table
names both sides (the Triton side needs Triton's venv and is not run here)."""
import json
import subprocess
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCHES))

import amd_vs_triton  # noqa: E402


def test_tritium_worker_builds_code_objects_the_table_reads(tmp_path):
    proc = subprocess.run([sys.executable, str(BENCHES / "amd_vs_triton.py"), "--worker", "tritium", "--kernels",
                           "vector_add", "--archs", "gfx942,gfx1100", "--warm", "1", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    for arch in ("gfx942", "gfx1100"):
        r = result[f"vector_add/{arch}"]
        assert r["warm_ms"] > 0 and r["first_ms"] > 0 and r["cpu_ms"] > 0
        r.update(amd_vs_triton.resources((tmp_path / f"tritium.vector_add.{arch}.hsaco").read_bytes(), arch, tmp_path))
        assert r["wave_size"] == amd_vs_triton.WAVE[arch] and r["vgprs"] > 0 and r["instructions"] > 10
    table = amd_vs_triton.table(["vector_add"], ["gfx942", "gfx1100"], {}, result)
    assert table.splitlines()[2].startswith("| vector_add | gfx942 | — |")
