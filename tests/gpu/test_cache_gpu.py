"""The disk cache on a real GPU (marked `gpu`): a constexpr global or a
closure value changed between two processes gives the new result, and a
kernel launched through each cache fault of tests/test_cache_faults.py
computes the right numbers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

MODULE = """
import os
import torch
import tritium as triton
import tritium.language as tl
SCALE = tl.constexpr(float(os.environ["S"]))

@triton.jit
def by_global(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)

def make(c):
    @triton.jit
    def by_closure(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * c, mask=m)
    return by_closure

for name, k in (("global", by_global), ("closure", make(float(os.environ["S"])))):
    x = torch.ones(64, device="cuda")
    k[(1,)](x, 64, BLOCK=64)
    print(name, x[0].item())
"""


def _run(tmp_path, scale: str) -> dict:
    (tmp_path / "stale_gpu_mod.py").write_text(textwrap.dedent(MODULE))
    env = {**os.environ, "S": scale, "TRITIUM_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run([sys.executable, "-c", "import stale_gpu_mod"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return {line.split()[0]: float(line.split()[1]) for line in out.stdout.splitlines()}


def test_changed_global_and_closure_values_across_processes(tmp_path):
    assert _run(tmp_path, "3.0") == {"global": 3.0, "closure": 3.0}
    assert _run(tmp_path, "7.0") == {"global": 7.0, "closure": 7.0}
    assert _run(tmp_path, "3.0") == {"global": 3.0, "closure": 3.0}


def test_launch_through_a_corrupt_manifest(tmp_path, monkeypatch):
    import tritium as triton
    import tritium.language as tl
    from tritium.runtime import cache
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path / "cache"))

    @triton.jit
    def twice(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)

    x = torch.ones(32, device="cuda")
    twice[(1,)](x, BLOCK=32)
    for entry in (tmp_path / "cache").iterdir():
        (entry / cache.MANIFEST).write_text(json.dumps({"files": []}))
    twice.__dict__.pop("_cuda_launcher", None)       # a new process's view: only the disk cache
    twice._attach_fast()
    with pytest.warns(RuntimeWarning, match="dropping corrupt entry"):
        twice[(1,)](x, BLOCK=32)
    torch.cuda.synchronize()
    assert x.eq(4).all()
