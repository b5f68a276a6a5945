"""Checks that a tritium wheel installs on manylinux_2_28 systems (glibc 2.28:
RHEL 8/9, Ubuntu 20.04+, Debian 10+) and prints what it found.

    python scripts/wheel/check_wheel.py dist/tritium-*.whl [--json]

Reads the extension module inside the wheel with binutils' readelf and fails
(exit 1, one line per problem) when:
- the file name's or WHEEL's tag is not cp310-abi3-manylinux_2_28_x86_64;
- the module needs a shared library other than glibc's own (libstdc++, libffi,
  zlib, zstd and LLVM must be linked in statically);
- a symbol binds to a glibc version newer than 2.28, or to any GLIBCXX,
  CXXABI or GCC version (libstdc++/libgcc_s would be needed);
- a symbol is undefined, not weak and unversioned and is not Python's C API:
  it would be looked up at import time in whatever libc is there (glibc 2.28
  has no arc4random, mallinfo2, __libc_single_threaded).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TAG = "cp310-abi3-manylinux_2_28_x86_64"
MAX_GLIBC = (2, 28)
# glibc's libraries: what a manylinux policy lets a wheel need from the system
# (libgcc_s and libstdc++ too, but tritium links its C++ runtime statically)
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                  "libutil.so.1", "ld-linux-x86-64.so.2"}
# Python's C API: resolved against the interpreter that imports the module
PYTHON_API = re.compile(r"_?Py")

_DYNSYM = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+\d+\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _some(names: list[str], limit: int = 8) -> str:
    names = sorted(set(names))
    return ", ".join(names[:limit]) + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def inspect_library(so: Path) -> dict:
    """NEEDED entries, glibc versions and the problems of one ELF shared object."""
    dynamic = subprocess.run(["readelf", "-d", "-W", str(so)], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(so)], check=True, capture_output=True, text=True).stdout
    problems = [f"needs {lib} (only glibc's libraries may be needed)" for lib in needed if lib not in ALLOWED_NEEDED]
    glibc: dict[str, list[str]] = {}
    other: dict[str, list[str]] = {}     # version namespace (GLIBCXX, CXXABI, GCC, ...) -> symbols
    unversioned = []
    for line in syms.splitlines():
        m = _DYNSYM.match(line)
        if not m or m.group(3) != "UND":
            continue
        bind, name = m.group(2), m.group(4)
        sym, sep, ver = name.partition("@")
        ver = ver.lstrip("@")
        if not sep:
            if bind != "WEAK" and not PYTHON_API.match(sym):
                unversioned.append(sym)
        elif ver.startswith("GLIBC_") and ver[len("GLIBC_"):][:1].isdigit():
            glibc.setdefault(ver[len("GLIBC_"):], []).append(sym)
        else:
            other.setdefault(ver.rstrip("0123456789.").rstrip("_"), []).append(f"{sym}@{ver}")
    if unversioned:
        problems.append(f"{len(unversioned)} undefined symbols with no version, looked up in whatever "
                        f"libc imports the module: {_some(unversioned)}")
    for space, names in sorted(other.items()):
        problems.append(f"{len(names)} symbols from {space}_* (a library other than glibc): {_some(names)}")
    for ver, names in glibc.items():
        if _version(ver) > MAX_GLIBC:
            problems.append(f"GLIBC_{ver} > 2.28: {_some(names)}")
    highest = max(glibc, key=_version) if glibc else None
    return {"needed": needed, "highest_glibc": highest, "glibc_versions": sorted(glibc, key=_version),
            "problems": problems}


def check_wheel(wheel: Path) -> dict:
    """Everything check_wheel.py reports about `wheel`, with `problems` empty when it passes."""
    problems = []
    if not wheel.name.endswith(f"-{TAG}.whl"):
        problems.append(f"file name {wheel.name} is not tagged {TAG}")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        wheel_meta = next((n for n in names if n.endswith(".dist-info/WHEEL")), None)
        tags = re.findall(r"^Tag: (\S+)$", zf.read(wheel_meta).decode(), re.M) if wheel_meta else []
        if tags != [TAG]:
            problems.append(f"WHEEL tags {tags}, expected [{TAG!r}]")
        libs = [n for n in names if re.search(r"\.so(\.\d+)*$", n)]
        if libs != ["tritium/_core.abi3.so"]:
            problems.append(f"shared objects {libs}, expected only tritium/_core.abi3.so (no LLVM or C++ runtime library)")
        with tempfile.TemporaryDirectory() as tmp:
            found = {}
            for lib in libs:
                path = Path(zf.extract(lib, tmp))
                found[lib] = inspect_library(path)
                found[lib]["size"] = path.stat().st_size
                problems += [f"{lib}: {p}" for p in found[lib]["problems"]]
    core = found.get("tritium/_core.abi3.so", {})
    return {"wheel": str(wheel), "tag": tags[0] if tags else None, "wheel_bytes": wheel.stat().st_size,
            "core_bytes": core.get("size"), "needed": core.get("needed"),
            "highest_glibc": core.get("highest_glibc"), "problems": problems}


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    wheels = [Path(a) for a in argv if a != "--json"]
    if len(wheels) != 1:
        print("usage: check_wheel.py WHEEL [--json]", file=sys.stderr)
        return 2
    report = check_wheel(wheels[0])
    if as_json:
        print(json.dumps(report))
    else:
        print(f"{report['wheel']}: tag {report['tag']}, {report['wheel_bytes'] / 2**20:.1f} MiB "
              f"(_core {(report['core_bytes'] or 0) / 2**20:.1f} MiB), highest glibc symbol version "
              f"GLIBC_{report['highest_glibc']}, needs {', '.join(report['needed'] or [])}")
        for p in report["problems"]:
            print(f"  problem: {p}", file=sys.stderr)
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
