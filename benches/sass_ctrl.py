"""SASS with each instruction's control bits (sm_70 and later): the fixed
stall count ptxas gives it (cycles before the warp's next issue: what ncu
samples as 'wait'), the yield flag, the scoreboards it sets (W: written
result, R: read operands) and the ones it waits on. Prints a function's
inner loops (backward branches), or an offset range, with the sum of stall
counts, so two compilers' loops can be compared before any GPU run.

Usage: python benches/sass_ctrl.py KERNEL.cubin [--cuobjdump PATH] [--range LO HI]
(cuobjdump: PATH, /usr/local/cuda*/bin, or the one in Triton's wheel)"""
from __future__ import annotations

import argparse
import glob
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/")
WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")
BRANCH = re.compile(r"\bBRA\b.*?(0x[0-9a-f]+)")


def cuobjdump(explicit: str | None) -> str:
    found = [explicit] if explicit else []
    found += [shutil.which("cuobjdump") or ""] + sorted(glob.glob("/usr/local/cuda*/bin/cuobjdump"))
    found += sorted(glob.glob(f"{sys.prefix}/lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump"))
    for path in found:
        if path:
            return path
    raise SystemExit("no cuobjdump (give --cuobjdump)")


def parse(sass: str) -> list[dict]:
    """Instructions in order: offset, text and the control fields, which sit
    in the top 23 bits of the second 64-bit word."""
    lines, out = sass.splitlines(), []
    for i, line in enumerate(lines):
        m = LINE.match(line)
        if not m or i + 1 >= len(lines) or not (hi := WORD.search(lines[i + 1])):
            continue
        ctl = int(hi.group(1), 16) >> 41
        out.append({"off": int(m.group(1), 16), "text": m.group(2).rstrip(" ;"), "stall": ctl & 0xF,
                    "yield": (ctl >> 4) & 1, "wbar": (ctl >> 5) & 7, "rbar": (ctl >> 8) & 7,
                    "wait": [b for b in range(6) if (ctl >> 11) >> b & 1]})
    return out


def loops(ins: list[dict]) -> list[tuple[int, int]]:
    """(target, branch offset) of each backward branch, innermost first."""
    found = []
    for x in ins:
        b = BRANCH.search(x["text"])
        if b and int(b.group(1), 16) < x["off"]:
            found.append((int(b.group(1), 16), x["off"]))
    return sorted(found, key=lambda r: r[1] - r[0])


def show(ins: list[dict], lo: int, hi: int) -> None:
    body = [x for x in ins if lo <= x["off"] <= hi]
    for x in body:
        bars = f"W{x['wbar'] if x['wbar'] != 7 else '-'} R{x['rbar'] if x['rbar'] != 7 else '-'}"
        wait = "".join(map(str, x["wait"]))
        print(f"{x['off']:06x} S{x['stall']:02d} {'Y' if x['yield'] else '-'} {bars} wait[{wait:<6}] {x['text']}")
    ops: dict[str, int] = {}
    for x in body:
        op = re.sub(r"^@!?U?P\w+\s+", "", x["text"]).split()[0].split(".")[0]
        ops[op] = ops.get(op, 0) + 1
    print(f"{lo:#x}..{hi:#x}: {len(body)} instructions, stall counts sum {sum(x['stall'] for x in body)} cycles; "
          + ", ".join(f"{k} {v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1])))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cubin")
    ap.add_argument("--cuobjdump")
    ap.add_argument("--range", nargs=2, metavar=("LO", "HI"))
    opts = ap.parse_args()
    sass = subprocess.run([cuobjdump(opts.cuobjdump), "-sass", opts.cubin], capture_output=True, text=True,
                          check=True).stdout
    ins = parse(sass)
    if not ins:
        raise SystemExit("no instructions parsed from cuobjdump's output")
    ranges = [tuple(int(v, 16) for v in opts.range)] if opts.range else loops(ins)
    if not ranges:
        print("no backward branch: the whole function")
        ranges = [(ins[0]["off"], ins[-1]["off"])]
    for lo, hi in ranges:
        if lo == hi:   # the trailing `BRA self` after EXIT
            continue
        show(ins, lo, hi)


if __name__ == "__main__":
    main()
