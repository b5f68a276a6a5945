"""tritium under the name `triton` (tritium/as_triton.py): each case runs in
a fresh interpreter, since the switch changes process-wide import state.
A fake `triton` package on PYTHONPATH stands in for a real installed Triton,
so the tests also show which one `import triton` finds before, during and
after the switch."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def run_py(code: str, tmp_path: Path, env: dict | None = None, fake_triton: bool = True) -> str:
    """Runs `code` in a new interpreter; returns its stdout (fails on a non-zero exit)."""
    paths = [str(tmp_path / "site")] if fake_triton else []
    if fake_triton:
        pkg = tmp_path / "site" / "triton"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("__version__ = '9.9.9-real'\nREAL = True\n")
        (pkg / "language.py").write_text("REAL = True\n")
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])}
    full_env.pop("TRITIUM_AS_TRITON", None)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def test_import_triton_resolves_to_tritium_until_uninstalled(tmp_path):
    out = run_py("""
        import importlib, importlib.metadata as md, importlib.util
        import tritium
        import triton
        print("before", triton.__version__, getattr(triton, "REAL", False))
        del __import__("sys").modules["triton"]
        tritium.install_as_triton()
        tritium.install_as_triton()                 # a second call changes nothing
        import triton, triton.language as tl
        from triton.language import core
        import triton.runtime.jit, triton.compiler.errors, triton.testing
        print("during", triton.__version__, tritium.__version__, md.version("triton"))
        print("same", tl is tritium.language, triton.jit is tritium.jit, core is tritium.language.core,
              triton.runtime.jit.JITFunction is tritium.JITFunction, triton.testing is tritium.testing)
        print("spec", importlib.util.find_spec("triton") is not None, tritium.language.__spec__.name)
        try:
            import triton.no_such_module
        except ModuleNotFoundError as e:
            print("missing", e.name)
        tritium.uninstall_as_triton()
        import triton
        print("after", triton.__version__, getattr(triton, "REAL", False), md.version("tritium"))
        """, tmp_path)
    assert "before 9.9.9-real True" in out
    assert f"during 3.6.0 {_tritium_version()} 3.6.0" in out
    assert "same True True True True True" in out
    assert "spec True tritium.language" in out         # aliases keep their own spec
    assert "missing triton.no_such_module" in out
    assert f"after 9.9.9-real True {_tritium_version()}" in out


def _tritium_version() -> str:
    import tritium
    return tritium.__version__


def test_install_refuses_when_a_real_triton_is_imported(tmp_path):
    out = run_py("""
        import triton.language, tritium
        try:
            tritium.install_as_triton()
        except RuntimeError as e:
            print("refused:", e)
        import triton
        print(triton.__version__)
        """, tmp_path)
    assert "refused: install_as_triton(): 'triton' is already imported" in out
    assert "TRITIUM_AS_TRITON=1" in out
    assert out.strip().endswith("9.9.9-real")


def test_environment_variable_switches_a_whole_program(tmp_path):
    code = """
        import sys, importlib.metadata as md
        import triton
        try:
            dist_version = md.version("triton")
        except md.PackageNotFoundError:
            dist_version = "none"
        print(triton.__version__, dist_version, "tritium" in sys.modules)
        """
    assert run_py(code, tmp_path, env={"TRITIUM_AS_TRITON": "1"}).split() == ["3.6.0", "3.6.0", "True"]
    # unset: the hook leaves the interpreter alone (tritium is not even imported)
    assert run_py(code, tmp_path).split() == ["9.9.9-real", "none", "False"]
    assert run_py(code, tmp_path, env={"TRITIUM_AS_TRITON": "0"}).split() == ["9.9.9-real", "none", "False"]


def test_an_unedited_triton_kernel_runs_through_the_switch(tmp_path):
    script = tmp_path / "user_kernel.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

        x = np.arange(100, dtype=np.float32)
        y = np.ones(100, dtype=np.float32)
        out = np.zeros_like(x)
        add_kernel[(triton.cdiv(100, 32),)](x, y, out, 100, BLOCK=32)
        triton.testing.assert_close(out, x + 1)
        print("ok", type(add_kernel).__module__)
        """))
    out = run_py(f"exec(open({str(script)!r}).read())", tmp_path,
                 env={"TRITIUM_AS_TRITON": "1", "TRITIUM_INTERPRET": "1"})
    assert out.split() == ["ok", "tritium.runtime.jit"]


def test_import_time_probes_of_libraries_see_a_working_triton(tmp_path):
    """What PyTorch and transformers do when they import: find the spec, read
    the distribution's version, parse `__version__`, import the runtime
    classes they check kernels against."""
    out = run_py("""
        import importlib.util, importlib.metadata as md, tritium
        tritium.install_as_triton()
        assert importlib.util.find_spec("triton") is not None
        version = md.version("triton")
        dist = md.distribution("triton")
        assert dist.metadata["Name"] == "triton" and dist.version == version
        import triton
        major, minor = (int(v) for v in triton.__version__.split(".")[:2])
        from triton.runtime.jit import JITFunction, KernelInterface
        from triton.runtime.autotuner import Autotuner, Config, Heuristics
        from triton.compiler.errors import CompilationError
        from triton.errors import TritonError
        from triton.runtime.errors import OutOfResources, PTXASError, InterpreterError
        assert issubclass(CompilationError, TritonError) and issubclass(OutOfResources, TritonError)
        print(version, (major, minor) >= (3, 0))
        """, tmp_path)
    assert out.split() == ["3.6.0", "True"]


@pytest.mark.parametrize("library", ["transformers", "torch"])
def test_installed_libraries_import_under_the_switch(tmp_path, library):
    pytest.importorskip(library)
    out = run_py(f"""
        import tritium
        tritium.install_as_triton()
        import {library}
        print("imported", {library}.__name__)
        """, tmp_path, fake_triton=False)
    assert out.split() == ["imported", library]
