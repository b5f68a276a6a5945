"""GPU checks of device_print and device_assert. The assert test runs in a
child process, since a device-side assert leaves the CUDA context unusable."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tritium
import tritium.language as tl

pytestmark = pytest.mark.gpu


@tritium.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_print("val", tl.load(x_ptr + offs))


def test_device_print_output(capfd):
    x = torch.tensor([3, 1, 4, 1], device="cuda", dtype=torch.int32)
    print_kernel[(2,)](x, BLOCK=4)
    torch.cuda.synchronize()
    lines = [l for l in capfd.readouterr().out.splitlines() if "val:" in l]
    got = sorted(lines)
    want = sorted(f"pid ({p}, 0, 0) idx ({i}) val: {v}" for p in range(2) for i, v in enumerate([3, 1, 4, 1]))
    assert got == want, lines


def test_device_assert_raises_on_host(tmp_path):
    script = tmp_path / "assert_kernel.py"
    script.write_text(textwrap.dedent("""
        import torch, tritium
        import tritium.language as tl

        @tritium.jit(debug=True)
        def k(x_ptr, BLOCK: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            tl.device_assert(x < 10, "x stays below ten")

        x = torch.arange(16, device="cuda", dtype=torch.int32)
        try:
            k[(1,)](x, BLOCK=16)
            torch.cuda.synchronize()
        except Exception as e:
            print("RAISED", type(e).__name__, e)
        else:
            print("NO ERROR")
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "TRITIUM_ALWAYS_COMPILE": "1"})
    out = r.stdout + r.stderr
    assert "RAISED" in out, out
    assert "x stays below ten" in out, out
