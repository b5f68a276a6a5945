"""Ahead-of-time compilation: `tritium.compile(fn, signature=..., constexprs=...)`
and the CLI `python -m tritium.compile path.py:kernel ...`. The IR → PTX →
cubin pipeline is runtime/compiled.py's, the one the JIT launcher uses, so AOT
and JIT artefacts are the same; AMD targets (`hip:gfx942`) go IR → AMDGCN →
HSACO (backends/amd_compile.py). Needs no GPU: only the code generator and,
for cubins, ptxas."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

from .ast_source import ASTSource
from .ast_source import compile as compile_source
from .compiler.errors import CompilationError
# Triton's and tritium's names at tritium.compile (the pipeline lives in runtime/compiled.py)
from .runtime.compiled import (CompiledKernel, KernelMetadata, Target, compile_ir_bytes,  # noqa: F401
                               compile_with_target, param_kinds, signature_arg, target_of)
from .runtime.jit import JITFunction

def compile(fn: Any, signature: Any = None, constexprs: dict | None = None, target: Any = None,
            num_warps: int = 4, num_stages: int = 3, attrs: dict | None = None,
            debug: bool = False, dump_stages: bool = False, options: dict | None = None,
            enable_fp_fusion: bool = True) -> CompiledKernel:
    """Compiles the @jit function `fn` for `signature` ("x_ptr=*fp32,n=i32",
    "*fp32, i32", a list, or a dict by name) and `constexprs` (by name);
    `attrs` names specialization properties ({"divisibility": ["x_ptr", "n"]}).
    `target` is "cuda:90", a GPUTarget, or None (the current device's; sm_90
    without a GPU). `dump_stages` keeps the tile IR after each pass in
    `.asm["stages"]`. `enable_fp_fusion=False` keeps every float multiply
    and add rounded on its own (Triton's option; by default `a * b + c` may
    become one fma). Triton's form, `compile(ASTSource(...), target=...,
    options={...})`, is accepted too (tritium/ast_source.py)."""
    if isinstance(fn, ASTSource):
        return compile_source(fn, target=target, options=options)
    if options:
        raise TypeError("compile: options={...} goes with an ASTSource; pass num_warps=... etc. for a @jit function")
    return compile_with_target(fn, signature, constexprs, target, num_warps, num_stages, attrs, debug, dump_stages,
                               enable_fp_fusion)


def _load_kernel(spec: str) -> Any:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"error: expected path.py:kernel, got {spec!r}")
    p = Path(path)
    if not p.is_file():
        raise SystemExit(f"error: no such file: {path}")
    mod_name = f"_tritium_aot_{p.stem}"
    loader = importlib.util.spec_from_file_location(mod_name, p)
    if loader is None or loader.loader is None:
        raise SystemExit(f"error: cannot import {path}")
    module = importlib.util.module_from_spec(loader)
    sys.modules[mod_name] = module       # inspect.getsource needs the module registered
    sys.path.insert(0, str(p.resolve().parent))
    loader.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(f"error: {path} has no attribute {name!r}")
    return getattr(module, name)


def _parse_constexprs(items: list[str]) -> dict:
    import ast
    out = {}
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            k, sep, v = part.partition("=")
            if not sep:
                raise SystemExit(f"error: bad --constexprs entry {part!r} (expected NAME=VALUE)")
            try:
                out[k.strip()] = ast.literal_eval(v.strip())
            except (ValueError, SyntaxError):
                out[k.strip()] = v.strip()
    return out


def _dump_stages(compiled: CompiledKernel, out: Any) -> None:
    # tile IR from the frontend and after each pass, then LLVM IR and PTX, the
    # metadata and the time each stage took
    for stage, text in compiled.asm.get("stages", [("frontend", compiled.asm["ir"])]):
        title = "ir" if stage == "frontend" else f"ir after {stage}"
        out.write(f"// ----- {title} -----\n{text}\n")
    for stage in ("llir", "ptx", "amdgcn"):
        if stage not in compiled.asm:
            continue
        out.write(f"// ----- {stage} -----\n{compiled.asm[stage]}\n")
    out.write(f"// ----- metadata -----\n{json.dumps(compiled.metadata, indent=1, sort_keys=True)}\n")
    if compiled.timings:
        lines = "".join(f"// {stage:14} {t * 1e3:9.2f} ms\n" for stage, t in compiled.timings.items())
        out.write(f"// ----- compile times -----\n{lines}// {'total':14} {sum(compiled.timings.values()) * 1e3:9.2f} ms\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tritium.compile",
                                 description="Compile a @tritium.jit kernel ahead of time (no GPU needed).")
    ap.add_argument("kernel", help="path.py:kernel_name")
    ap.add_argument("--signature", "-s", default=None, help='e.g. "x_ptr=*fp32,n=i32" or "*fp32,i32"')
    ap.add_argument("--constexprs", "-c", action="append", default=[], help="e.g. BLOCK=1024 (repeatable)")
    ap.add_argument("--target", default="cuda:90")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--no-fp-fusion", action="store_true",
                    help="enable_fp_fusion=False: no float multiply-add is fused into an fma")
    ap.add_argument("--emit", choices=("ir", "llir", "ptx", "cubin", "amdgcn", "hsaco", "metadata"), default=None,
                    help="what to print or write (default: ptx for cuda targets, amdgcn for hip ones)")
    ap.add_argument("--dump-stages", action="store_true",
                    help="print the tile IR after the frontend and after each pass, then LLVM IR, PTX, "
                         "the metadata and each compiler stage's time")
    ap.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")
    args = ap.parse_args(argv)
    fn = _load_kernel(args.kernel)
    constexprs = _parse_constexprs(args.constexprs)
    try:
        hip = target_of(args.target).backend == "hip"
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.emit is None:
        args.emit = "amdgcn" if hip else "ptx"
    wrong = {"ptx", "cubin"} if hip else {"amdgcn", "hsaco"}
    if args.emit in wrong:
        print(f"error: --emit {args.emit} does not exist for target {args.target} "
              f"(it makes {'amdgcn and hsaco' if hip else 'ptx and cubin'})", file=sys.stderr)
        return 1
    try:
        if args.emit == "ir" and not args.dump_stages:
            jf = fn if isinstance(fn, JITFunction) else getattr(fn, "fn", fn)
            if not isinstance(jf, JITFunction):
                raise SystemExit(f"error: {args.kernel} is not a @jit function")
            text = jf.ir_text(signature=signature_arg(args.signature), constexprs=constexprs,
                              enable_fp_fusion=not args.no_fp_fusion)
            return _write(args.output, text)
        compiled = compile(fn, signature=args.signature, constexprs=constexprs, target=args.target,
                           num_warps=args.num_warps, num_stages=args.num_stages, dump_stages=args.dump_stages,
                           enable_fp_fusion=not args.no_fp_fusion)
    except (CompilationError, ValueError, TypeError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.dump_stages:
        _dump_stages(compiled, sys.stdout)
    if args.emit == "metadata":
        return _write(args.output, json.dumps(compiled.metadata, indent=1, sort_keys=True) + "\n")
    if args.emit == "hsaco":
        if args.output is None:
            print("error: --emit hsaco writes binary data; give --output FILE", file=sys.stderr)
            return 1
        Path(args.output).write_bytes(compiled.asm["hsaco"])
        return 0
    if args.emit == "cubin":
        if "cubin" not in compiled.asm:
            print("error: --emit cubin needs ptxas (set TRITIUM_PTXAS, put ptxas on PATH, or "
                  "pip install nvidia-cuda-nvcc-cu12)", file=sys.stderr)
            return 1
        if args.output is None:
            print("error: --emit cubin writes binary data; give --output FILE", file=sys.stderr)
            return 1
        Path(args.output).write_bytes(compiled.asm["cubin"])
        return 0
    if not args.dump_stages or args.output:
        return _write(args.output, compiled.asm[args.emit])
    return 0


def _write(output: str | None, text: str) -> int:
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


class _CallableModule(types.ModuleType):
    """`tritium.compile` is both this module and the function: importing the
    submodule (e.g. for the CLI) rebinds the package attribute to it."""

    def __call__(self, *args: Any, **kwargs: Any) -> CompiledKernel:
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    raise SystemExit(main())
