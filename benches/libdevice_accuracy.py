"""Accuracy of every libdevice function tritium compiles, in ulps, on the GPU.

    .venv/bin/python benches/libdevice_accuracy.py [--n 65536] [--only sin,erf] [--write docs/libdevice_accuracy.md]

(about three minutes on an H100 host for all 313 variants).

Each variant (f32 and f64 versions counted apart) runs compiled, with
libdevice.10.bc linked, on `--n` inputs drawn from the function's domain
(tests/libdevice_cases.py). Its error is measured in ulps of the result type
against an extended-precision answer (np.longdouble, or Python's math
module; sinpi/cospi reduce the argument exactly first, nextafter is exact in
its own format, the rounding conversions are their argument's value);
functions NumPy and math lack (Bessel functions, erfinv, erfcx,
...) are measured against the interpreter's float64 answer, so their f64
rows say "f64 ref" (that answer is correctly rounded for erfcinv, erfcx,
normcdf(inv), lgamma and the Bessel functions near the origin:
interpreter/libdevice_precise.py). Where PyTorch has
the function, its error on the same inputs is printed beside ours. Each row
also names the error NVIDIA documents for the function
(tests/libdevice_bounds.py, the bound tests/gpu/test_libdevice_gpu.py holds
the GPU to) and how many inputs fall outside it. Where that bound is "correctly
rounded" (add/sub/mul/div/rcp/sqrt/fma in a rounding mode, rsqrt_rn, the
rounding conversions into floats), an answer is inside when it is the exact
result rounded in the function's mode, decided exactly
(`libdevice_bounds.correctly_rounded`): the max ulp column of an _rz, _rd or
_ru row is up to 1 by nature, and rn's 0.5.
Integer results are compared exactly with the interpreter.
Prints a Markdown table; `--write` also saves it (the docs table of issue 14).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import libdevice_bounds as B  # noqa: E402
import libdevice_cases as C  # noqa: E402
import libdevice_kernels as K  # noqa: E402
from tritium.interpreter import libdevice_numpy  # noqa: E402
from tritium.language.extra import libdevice  # noqa: E402

TORCH = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
         "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "exp": "exp",
         "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
         "sqrt": "sqrt", "rsqrt": "rsqrt", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "lgamma": "lgamma",
         "cyl_bessel_i0": "special.i0", "cyl_bessel_i1": "special.i1", "j0": "special.bessel_j0",
         "j1": "special.bessel_j1", "y0": "special.bessel_y0", "y1": "special.bessel_y1",
         "erfcx": "special.erfcx", "normcdf": "special.ndtr", "normcdfinv": "special.ndtri", "atan2": "atan2",
         "hypot": "hypot", "pow": "pow", "fmod": "fmod", "copysign": "copysign", "nextafter": "nextafter"}


def torch_fn(torch, name):
    path = TORCH.get(name)
    if path is None:
        return None
    obj = torch
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def answer(name, symbol, args, out_dtype):
    """(the reference answer, what it is): extended precision where
    libdevice_cases has it, else the interpreter's (in f64 for floats)."""
    ref = C.reference(name, args)
    if ref is not None:
        return ref, "extended"
    if np.dtype(out_dtype).kind != "f":
        return libdevice_numpy.call(symbol, args, np.dtype(out_dtype)), "interpreter"
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    return libdevice_numpy.call(symbol, wide, np.dtype(np.float64)), "f64 ref" if out_dtype == np.float64 else "f64"


def float_row(name, ret, args, got, ref, ref_kind, out_dtype):
    """The table row of one variant from its GPU answer `got` and reference
    `ref`: ulps (max, mean), and the inputs outside NVIDIA's documented error."""
    if np.dtype(out_dtype).kind != "f":
        return {"max": float(np.sum(got != ref)), "mean": None, "exact": True, "ref": "interpreter", "torch": None}
    err = C.ulps(got, ref, out_dtype)
    # NVIDIA's figures are distances from the correctly rounded result
    ok, bound = B.within_bounds(name, ret, args, got, np.asarray(ref).astype(out_dtype))
    return {"max": float(err.max()), "mean": float(err[np.isfinite(err)].mean()), "exact": False, "ref": ref_kind,
            "torch": None, "bound": bound, "outside": int(np.sum(~ok))}


def measure(torch, name, types, symbol, ret, n, rng):
    args = C.inputs(name, types, n, rng)
    out_dtype = np.bool_ if name in ("isnan", "isinf") else C.NP[ret]
    dev = [torch.from_numpy(a).cuda() for a in args]
    got = torch.zeros(n, dtype=getattr(torch, "bool" if out_dtype is np.bool_ else np.dtype(out_dtype).name),
                      device="cuda")
    block = 1024
    K.APPLY[len(types)][((n + block - 1) // block,)](*dev, got, n, FN=getattr(libdevice, name), BLOCK=block)
    got = got.cpu().numpy()
    ref, ref_kind = answer(name, symbol, args, out_dtype)
    row = float_row(name, ret, args, got, ref, ref_kind, out_dtype)
    if row["exact"]:
        return row
    fn = torch_fn(torch, name)
    if fn is not None and all(t in ("fp32", "fp64") for t in types):
        with torch.no_grad():
            theirs = fn(*dev).cpu().numpy()
        row["torch"] = float(C.ulps(theirs, ref, out_dtype).max())
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1 << 16, help="inputs per variant (default 65536)")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--write", default="", help="also write the table to this Markdown file")
    opts = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("libdevice_accuracy: needs a CUDA GPU", file=sys.stderr)
        return 2
    only = set(filter(None, opts.only.split(",")))
    rng = np.random.default_rng(2024)
    lines = ["| function | arguments | symbol | max ulp | mean ulp | reference | torch max ulp | NVIDIA's bound | "
             "outside it |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    start = time.time()
    failures = 0
    for name, types, symbol, ret in C.variants():
        if only and name not in only:
            continue
        # the functions computed by Python per element are measured on fewer inputs
        n = opts.n if C.reference(name, [np.ones(1, C.NP[t]) for t in types]) is not None else min(opts.n, 4096)
        try:
            r = measure(torch, name, types, symbol, ret, n, rng)
        except Exception as e:   # one broken function must not hide the others
            failures += 1
            lines.append(f"| {name} | {', '.join(types)} | `{symbol}` | FAILED: {str(e).splitlines()[0][:80]} | | | | | |")
            continue
        if r["exact"]:
            lines.append(f"| {name} | {', '.join(types)} | `{symbol}` | {int(r['max'])} mismatches | exact | "
                         f"interpreter | | exact | {int(r['max'])} |")
            continue
        torch_col = "" if r["torch"] is None else f"{r['torch']:.2f}"
        lines.append(f"| {name} | {', '.join(types)} | `{symbol}` | {r['max']:.2f} | {r['mean']:.3f} | {r['ref']} | "
                     f"{torch_col} | {r['bound']} | {r['outside']} |")
    table = "\n".join(lines)
    print(table)
    print(f"\n{len(lines) - 2} variants in {time.time() - start:.0f} s on {torch.cuda.get_device_name()}, "
          f"{failures} failed", file=sys.stderr)
    if opts.write:
        head = ("# libdevice accuracy\n\nMeasured by `benches/libdevice_accuracy.py` on "
                f"{torch.cuda.get_device_name()} ({opts.n} inputs per variant; see the script for the method).\n\n")
        Path(opts.write).write_text(head + table + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
