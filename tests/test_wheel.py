"""The release wheel (scripts/build_wheel.sh): tagged manylinux_2_28 abi3, with
no symbol newer than glibc 2.28 and no shared library beyond glibc's, and it
works when installed alone in a fresh virtual environment: a kernel runs in
the interpreter and compiles to PTX and to an AMD code object (LLVM and lld
linked into the wheel).

The wheel is built into target/wheel/ (about a minute after scripts/setup.sh:
only tritium-py's crate is compiled and linked again) unless the one there is
newer than every source file; TRITIUM_WHEEL=path tests a given wheel instead.
`-m "not wheel"` leaves these tests out."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                       reason="the wheel is built for x86-64 Linux"),
]

ROOT = Path(__file__).resolve().parents[1]
WHEEL_DIR = ROOT / "target" / "wheel"
# what the wheel is made of: a file newer than the wheel means it is rebuilt
SOURCES = ["crates", "python", "scripts/wheel", "scripts/build_wheel.sh", "Cargo.toml", "Cargo.lock",
           "pyproject.toml"]


def _newest_source_mtime() -> float:
    newest = 0.0
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else path.rglob("*")
        for f in files:
            rel = f.relative_to(ROOT).parts
            build_output = "__pycache__" in rel or rel[0] == "crates" and rel[2:3] == ("target",) \
                or f.suffix in (".pyc", ".so")    # python/tritium/_core*.so: maturin develop's
            if f.is_file() and not build_output:
                newest = max(newest, f.stat().st_mtime)
    return newest


@pytest.fixture(scope="module")
def wheel() -> Path:
    given = os.environ.get("TRITIUM_WHEEL")
    if given:
        return Path(given)
    built = sorted(WHEEL_DIR.glob("tritium-*.whl"))
    if len(built) == 1 and built[0].stat().st_mtime > _newest_source_mtime():
        return built[0]
    run = subprocess.run(["bash", str(ROOT / "scripts" / "build_wheel.sh"), str(WHEEL_DIR)],
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, f"scripts/build_wheel.sh failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    built = sorted(WHEEL_DIR.glob("tritium-*.whl"))
    assert len(built) == 1, built
    return built[0]


def _check(wheel: Path) -> dict:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "wheel" / "check_wheel.py"), str(wheel), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_wheel_is_manylinux_2_28_with_only_glibc_needed(wheel: Path) -> None:
    report = _check(wheel)
    assert report["problems"] == [], "\n".join(report["problems"])
    assert report["tag"] == "cp310-abi3-manylinux_2_28_x86_64"
    assert tuple(int(p) for p in report["highest_glibc"].split(".")) <= (2, 28), report
    assert set(report["needed"]) <= {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                                     "ld-linux-x86-64.so.2"}, report["needed"]


def test_check_wheel_refuses_a_plain_linux_build(tmp_path: Path) -> None:
    """The checker itself fails on what `maturin develop` builds here (Debian 12:
    glibc 2.36 symbols, libstdc++.so.6 and libffi needed), so the test above can
    fail."""
    import zipfile

    import tritium._core as core
    fake = tmp_path / "tritium-0.1.0-cp310-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.write(core.__file__, "tritium/_core.abi3.so")
        zf.writestr("tritium-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp310-abi3-manylinux_2_28_x86_64\n")
    problems = "\n".join(_check(fake)["problems"])
    assert "needs libstdc++.so.6" in problems
    assert "GLIBC_2.3" in problems and "> 2.28" in problems
    assert "GLIBCXX_*" in problems


KERNEL_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import tritium
    import tritium.language as tl
    from tritium import _core

    site = sys.argv[1]
    for mod in (tritium, _core):
        assert mod.__file__.startswith(site), f"{mod.__name__} from {mod.__file__}, not the wheel"

    @tritium.jit(interpret=True)
    def add_interp(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + tl.load(y_ptr + offs, mask=mask),
                 mask=mask)

    @tritium.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + tl.load(y_ptr + offs, mask=mask),
                 mask=mask)

    x = np.arange(1000, dtype=np.float32)
    y = np.full(1000, 0.5, dtype=np.float32)
    out = np.zeros_like(x)
    add_interp[(tritium.cdiv(1000, 256),)](x, y, out, 1000, BLOCK=256)
    np.testing.assert_array_equal(out, x * 2.0 + y)

    sig = "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32"
    ptx = tritium.compile(add, signature=sig, constexprs={"BLOCK": 256}, target="cuda:90").asm["ptx"]
    assert ".visible .entry add(" in ptx and ".target sm_90" in ptx, ptx[:2000]
    hsaco = tritium.compile(add, signature=sig, constexprs={"BLOCK": 256}, target="hip:gfx942").asm["hsaco"]
    assert hsaco[:4] == b"\\x7fELF", hsaco[:16]
    print("ok", len(ptx), len(hsaco))
''')


def test_wheel_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # NumPy, the wheel's one dependency, linked in from this environment: no index is needed
    import numpy
    numpy_dir = Path(numpy.__file__).parent
    here = Path(sysconfig.get_paths()["purelib"])
    for entry in [numpy_dir, *here.glob("numpy.libs"), *here.glob("numpy-*.dist-info")]:
        (Path(site) / entry.name).symlink_to(entry)
    install = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                              "--disable-pip-version-check", str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL_SCRIPT)
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TRITIUM_", "VIRTUAL_ENV"))}
    clean_env["TRITIUM_CACHE_DIR"] = str(tmp_path / "cache")
    # -I: neither the checkout (python/) nor PYTHONPATH nor the user's site is on sys.path
    run = subprocess.run([str(py), "-I", str(script), site], capture_output=True, text=True, timeout=600,
                         env=clean_env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("ok "), run.stdout
