"""Writes the fixed kernels that the compile-time benches run on: each kernel
of defs.py (defined in tests/kernels/) is compiled by tritium's frontend,
verified, and saved as IR text in benches/kernels/<name>.tir (checked in, so
`cargo bench` needs no Python).
Re-run after a frontend or IR change, from the repository root:

    .venv/bin/python benches/kernels/gen.py          # rewrite the .tir files
    .venv/bin/python benches/kernels/gen.py --check  # exit 1 if one is stale
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# Locations name kernel files relative to the repository root, so the .tir
# files do not depend on where the checkout lives.
LOC_PREFIX = f'loc("{ROOT}/'


def load_defs_with_tritium() -> ModuleType:
    """defs.py imported with `triton` meaning tritium, as a user would run a
    Triton kernel file under `import tritium as triton`."""
    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(HERE))
    import tritium
    import tritium.language
    sys.modules["triton"] = tritium
    sys.modules["triton.language"] = tritium.language
    import defs
    return defs


def kernel_text(spec) -> str:
    """The kernel's IR text, verified, with locations made repository-relative."""
    from tritium import _core
    data = spec.fn.compile_ir(signature=spec.signature, constexprs=spec.constexprs)
    _core.verify(data)
    text = _core.to_text(data).replace(LOC_PREFIX, 'loc("')
    # what is written must parse, verify and print back unchanged
    again = _core.parse_text(text)
    _core.verify(again)
    if _core.to_text(again) != text:
        raise RuntimeError("IR text does not round-trip through parse/print")
    return text


def op_count(text: str) -> int:
    return sum(1 for line in text.splitlines() if '"(' in line and line.lstrip().startswith(("%", '"')))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the checked-in files, write nothing")
    args = ap.parse_args(argv)
    defs = load_defs_with_tritium()
    stale = []
    for name, spec in defs.KERNELS.items():
        text = kernel_text(spec)
        path = HERE / f"{name}.tir"
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
            continue
        path.write_text(text)
        print(f"{path.relative_to(ROOT)}: {op_count(text)} ops, {len(text)} bytes of text")
    if stale:
        print("stale kernel IR (re-run benches/kernels/gen.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
