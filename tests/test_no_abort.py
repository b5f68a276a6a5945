"""Inputs that once took the process down (an abort from an allocation
failure in LLVM, LLVM exiting on an inline-asm constraint it cannot
allocate) must end in a typed Python exception. Each case runs in a
subprocess under a memory limit, so a regression shows as a signal or an
exit code here rather than killing the test run; and messages name the
parameter or the place."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from tritium import _core

LIMIT = 3 << 30    # bytes of address space: the old failure grew to 7.9 GB

PRELUDE = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))
import tritium as triton
import tritium.language as tl
from tritium import _core
"""


def run_limited(body: str) -> str:
    """Runs `body` in a memory-limited subprocess (from a file, so kernels
    have source); returns its last line, which must be the name of the
    exception it caught (or 'ok')."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(PRELUDE + textwrap.dedent(body))
    out = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=300)
    os.unlink(f.name)
    assert out.returncode == 0, f"the process died (exit {out.returncode}):\n{out.stderr[-2000:]}"
    return out.stdout.strip().splitlines()[-1]


def test_huge_arange_is_a_compile_error_at_its_line(tmp_path):
    src = tmp_path / "huge.py"
    src.write_text(textwrap.dedent("""
        import tritium as triton
        import tritium.language as tl

        @triton.jit
        def k(x):
            a = tl.arange(0, 2**30)
            tl.store(x + a, a)
        """))
    last = run_limited(f"""
        sys.path.insert(0, {str(tmp_path)!r})
        import huge
        try:
            triton.compile(huge.k, signature="*i32")
            print("ok")
        except triton.CompilationError as e:
            print(str(e).splitlines()[0])
            print(type(e).__name__)
        """)
    assert last == "CompilationError"


def test_huge_tensor_in_ir_text_is_a_verify_error():
    last = run_limited("""
        text = '''func @k(%0: ptr<i32>) attributes {kernel} {
          %1 = "arange"() {end = 2147483648, start = 0} : () -> tensor<2147483648xi32>
          "return"() : () -> ()
        }'''
        try:
            _core.compile_ptx(_core.parse_text(text))
            print("ok")
        except _core.IRVerifyError as e:
            assert "more than the 1048576" in str(e), e
            print("IRVerifyError")
        """)
    assert last == "IRVerifyError"


@pytest.mark.parametrize("constraints", ["=r,{r5}", "=*m,r", "=r,1", "=x,r", "=r,s", "=r,m", "=r,N"])
def test_unallocatable_asm_constraints_are_codegen_errors(constraints):
    last = run_limited(f"""
        @triton.jit
        def k(x, C: tl.constexpr):
            a = tl.arange(0, 128)
            y = tl.inline_asm_elementwise("mov.b32 $0, $1;", C, [tl.load(x + a)], dtype=tl.int32,
                                          is_pure=True, pack=1)
            tl.store(x + a, y)
        try:
            triton.compile(k, signature="*i32", constexprs={{"C": {constraints!r}}})
            print("ok")
        except _core.CodegenError as e:
            assert "constraint" in str(e) and ":" in str(e).split("`")[0], e
            print("CodegenError")
        """)
    assert last == "CodegenError"


@pytest.mark.parametrize("num_warps", [-1, 0, 3, 64, 2**70, "4"])
def test_bad_num_warps_names_the_option(num_warps):
    with pytest.raises(_core.CodegenError, match=r"num_warps must be a power of two from 1 to 32, got"):
        _core.compile_ptx(b"", num_warps=num_warps)


def test_closure_cells_follow_the_globals_rule(tmp_path):
    import importlib.util
    import tritium as triton
    src = tmp_path / "captures.py"
    src.write_text(textwrap.dedent("""
        import tritium as triton
        import tritium.language as tl
        AS_GLOBAL = [2, 3]

        def make(c):
            @triton.jit
            def k(x):
                a = tl.arange(0, 16)
                tl.store(x + a, a * c[0])
            return k

        @triton.jit
        def g(x):
            a = tl.arange(0, 16)
            tl.store(x + a, a * AS_GLOBAL[0])
        """))
    spec = importlib.util.spec_from_file_location("captures", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    triton.compile(mod.make((2, 3)), signature="*i32")          # an immutable tuple: a compile-time value
    with pytest.raises(triton.CompilationError, match=r"captures.py:10:.*closure variable 'c' \(list\)"):
        triton.compile(mod.make([2, 3]), signature="*i32")
    with pytest.raises(triton.CompilationError, match=r"captures.py:16:.*global variable 'AS_GLOBAL'"):
        triton.compile(mod.g, signature="*i32")
