"""The interpreter's switches and Python's debugger: TRITON_INTERPRET and
TRITIUM_INTERPRET run kernels interpreted (with pdb working inside),
TRITIUM_INTERPRET_SHUFFLE runs programs out of order, and breakpoint()
stops in each program."""
from __future__ import annotations

import os

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from ir_util import verified_and_interpreted


@triton.jit
def shuffled_tickets(counter, o_ptr):
    tl.store(o_ptr + tl.program_id(0), tl.atomic_add(counter, 1))


def test_interpret_shuffle_env(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET_SHUFFLE", "1")
    orders = [verified_and_interpreted(shuffled_tickets, (64,), [np.zeros(1, np.int32), np.zeros(64, np.int32)])[1]
              for _ in range(2)]
    assert all(sorted(o) == list(range(64)) for o in orders)
    assert any(not np.array_equal(o, np.arange(64)) for o in orders)
    monkeypatch.setenv("TRITIUM_INTERPRET_SHUFFLE", "0")
    o = verified_and_interpreted(shuffled_tickets, (64,), [np.zeros(1, np.int32), np.zeros(64, np.int32)])[1]
    np.testing.assert_array_equal(o, np.arange(64))


@triton.jit
def pid_bump(o_ptr):
    pid = tl.program_id(0)
    breakpoint()
    tl.store(o_ptr + pid, pid + 1)


def test_breakpoint_inside_an_interpreted_kernel(monkeypatch):
    seen = []

    def hook(*args, **kwargs):
        import inspect
        seen.append(int(inspect.currentframe().f_back.f_locals["pid"]))

    # breakpoint() calls sys.breakpointhook, which pdb (or PYTHONBREAKPOINT) normally is
    monkeypatch.setattr("sys.breakpointhook", hook)
    o = np.zeros(3, np.int32)
    triton.jit(interpret=True)(pid_bump.fn)[(3,)](o)
    assert seen == [0, 1, 2] and o.tolist() == [1, 2, 3]


@pytest.mark.parametrize("var", ["TRITON_INTERPRET", "TRITIUM_INTERPRET"])
def test_interpret_env_vars_and_pdb(var, tmp_path):
    import subprocess
    import sys
    script = tmp_path / "k.py"
    script.write_text(
        "import numpy as np\nimport tritium as triton\nimport tritium.language as tl\n"
        "@triton.jit\ndef k(o_ptr):\n    pid = tl.program_id(0)\n    import pdb; pdb.set_trace()\n"
        "    tl.store(o_ptr + pid, pid * 2)\n"
        "o = np.zeros(2, np.int32)\nk[(2,)](o)\nprint('RESULT', o.tolist())\n")
    env = {**os.environ, var: "1"}
    env.pop("TRITON_INTERPRET" if var == "TRITIUM_INTERPRET" else "TRITIUM_INTERPRET", None)
    res = subprocess.run([sys.executable, str(script)], input="p pid * 100\nc\nc\n", capture_output=True,
                         text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "RESULT [0, 2]" in res.stdout and "(Pdb)" in res.stdout
