"""Ahead-of-time compilation: `tritium.compile(fn, signature=..., constexprs=...)`
and the CLI `python -m tritium.compile path.py:kernel ...`. Also the one
IR → PTX → cubin pipeline the JIT launcher uses, so AOT and JIT artefacts are
the same. Needs no GPU: only the code generator and, for cubins, ptxas."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# code generator architectures; a newer device gets the newest one not above it
_CODEGEN_ARCHS = (80, 89, 90)


@dataclass(frozen=True)
class Target:
    """A compilation target: "cuda:90" (sm_90), "cuda:90a", "cuda:86", ..."""
    capability: int
    suffix: str = ""

    @staticmethod
    def parse(text: str) -> "Target":
        family, _, arch = str(text).partition(":")
        if family.lower() not in ("cuda", "nvidia") or not arch:
            raise ValueError(f"unknown target {text!r} (expected e.g. 'cuda:90' or 'cuda:90a')")
        arch = arch.lower().removeprefix("sm_")
        suffix = arch[-1] if arch and arch[-1] in "af" else ""
        digits = arch[:-1] if suffix else arch
        if not digits.isdigit():
            raise ValueError(f"unknown target {text!r} (expected e.g. 'cuda:90' or 'cuda:90a')")
        cc = int(digits)
        if cc < _CODEGEN_ARCHS[0]:
            raise ValueError(f"target {text!r}: tritium generates code for sm_80 and newer")
        return Target(cc, suffix)

    def __str__(self) -> str:
        return f"cuda:{self.capability}{self.suffix}"

    @property
    def codegen_arch(self) -> str:
        """What the code generator targets (PTX is forward compatible)."""
        if self.suffix == "a" and self.capability == 90:
            return "sm_90a"
        return f"sm_{max(a for a in _CODEGEN_ARCHS if a <= self.capability)}"

    @property
    def sass_arch(self) -> str:
        """What ptxas assembles for: the device itself."""
        return f"sm_{self.capability}{self.suffix}"


class KernelMetadata(dict):
    """A compiled kernel's metadata: a dict (what the cache stores) whose keys
    also read as attributes, as Triton's `kernel.metadata.shared` does."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"kernel metadata has no field '{name}' (fields: {', '.join(sorted(self))})") \
                from None


@dataclass
class CompiledKernel:
    """A compiled kernel: `.asm` (ir, llir, ptx, cubin when ptxas ran) and
    `.metadata` (name, num_warps, shared bytes, registers, spills, params;
    readable as attributes). `n_regs` and `n_spills` (local memory words per
    thread) are ptxas's counts, or the driver's when it assembled the PTX."""
    name: str
    asm: dict
    metadata: dict
    _loaded: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.metadata, KernelMetadata):
            self.metadata = KernelMetadata(self.metadata)

    @property
    def params(self) -> list:
        return [tuple(p) for p in self.metadata["params"]]

    @property
    def n_regs(self) -> int:
        if self.metadata.get("registers") is None:   # the driver assembles the PTX: ask it
            self._init_handles()
        return int(self.metadata["registers"])

    @property
    def n_spills(self) -> int:
        """Local memory per thread in 4-byte words, as Triton counts spills."""
        if self.metadata.get("registers") is None:
            self._init_handles()
        return int(self.metadata.get("local_bytes", self.metadata.get("stack_bytes", 0))) // 4

    @property
    def kernel(self) -> bytes | str:
        """The binary the driver loads: the cubin, or the PTX without ptxas."""
        return self.asm.get("cubin") or self.asm["ptx"]

    def _init_handles(self) -> None:
        """Loads the kernel on the current device (Triton's name for it);
        raises OutOfResources when the device cannot run it."""
        from .runtime import driver
        self.load(driver.current_device())

    def to_files(self) -> dict[str, bytes]:
        # "stages" (--dump-stages' IR after each pass) is a debugging view, not cached
        files = {f"kernel.{k}": (v if isinstance(v, bytes) else v.encode()) for k, v in self.asm.items()
                 if k not in ("ir_bytes", "stages")}
        if "ir_bytes" in self.asm:
            files["kernel.tir"] = self.asm["ir_bytes"]
        files["metadata.json"] = json.dumps(self.metadata, sort_keys=True).encode()
        return files

    @staticmethod
    def from_files(files: dict[str, bytes]) -> "CompiledKernel":
        """The kernel `to_files` wrote; ValueError (or KeyError) for anything
        else, so the cache drops the entry instead of loading a broken one."""
        meta = json.loads(files["metadata.json"])
        _check_metadata(meta)
        asm: dict[str, Any] = {}
        for name, data in files.items():
            if name == "kernel.cubin":
                asm["cubin"] = data
            elif name == "kernel.tir":
                asm["ir_bytes"] = data
            elif name.startswith("kernel."):
                asm[name[len("kernel."):]] = data.decode()
        if "ptx" not in asm:
            raise ValueError("cache entry has no PTX")
        return CompiledKernel(meta["name"], asm, meta)

    def load(self, device: int = 0) -> Any:
        """The kernel loaded on `device` (a `_core.CudaKernel`), loaded once."""
        k = self._loaded.get(device)
        if k is None:
            from . import _core
            image = self.asm.get("cubin") or self.asm["ptx"]
            k = _core.CudaKernel(image, self.metadata.get("symbol", self.name), self.params, num_warps=self.metadata["num_warps"],
                                 shared_bytes=self.metadata.get("dynamic_shared", 0), device=device)
            if self.metadata.get("registers") is None:   # driver JIT: only the driver knows
                self.metadata["registers"] = k.num_regs
                self.metadata["local_bytes"] = k.local_bytes
            self._loaded[device] = k
        return k

    def __getitem__(self, grid: Any):
        """`compiled[grid](*args, stream=None)`: every parameter, constexprs included (ignored)."""
        def launch(*args: Any, stream: int | None = None) -> None:
            from .runtime import driver
            from .runtime.jit import _normalize_grid
            dev = driver.current_device()
            g = _normalize_grid(grid)
            self.load(dev).launch(g[0], g[1], g[2], driver.current_stream(dev) if stream is None else stream,
                                  tuple(args))
        return launch


# metadata fields a loaded kernel reads, with their types
_METADATA_FIELDS = {"name": str, "num_warps": int, "params": list, "dynamic_shared": int}


def _check_metadata(meta: Any) -> None:
    if not isinstance(meta, dict):
        raise ValueError("metadata.json is not an object")
    for name, kind in _METADATA_FIELDS.items():
        if type(meta.get(name)) is not kind:
            raise ValueError(f"metadata.json: '{name}' is missing or not a {kind.__name__}")
    if not 1 <= meta["num_warps"] <= 32 or meta["dynamic_shared"] < 0:
        raise ValueError("metadata.json: num_warps or dynamic_shared out of range")
    for p in meta["params"]:
        if not (isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                and (p[1] is None or isinstance(p[1], str))):
            raise ValueError(f"metadata.json: bad parameter entry {p!r}")
    if not isinstance(meta.get("symbol", meta["name"]), str):
        raise ValueError("metadata.json: 'symbol' is not a string")


def param_kinds(signature: dict) -> list[list]:
    """[name, "ptr" | dtype name | "tensordesc<...>" | None (constexpr)] per parameter, in order."""
    from .language.blocks import tensor_descriptor_type
    from .language.dtypes import dtype, pointer_type
    out = []
    for name, t in signature.items():
        if isinstance(t, tensor_descriptor_type):
            out.append([name, str(t)])
        elif isinstance(t, pointer_type):
            out.append([name, "ptr"])
        elif isinstance(t, dtype):
            out.append([name, t.name])
        else:
            out.append([name, None])
    return out


def compile_ir_bytes(ir: bytes, name: str, params: list, target: Target | str, num_warps: int = 4,
                     num_stages: int = 3, use_ptxas: bool = True, dump_stages: bool = False) -> CompiledKernel:
    """Binary tile IR → LLVM IR → PTX → cubin (when ptxas is found). With
    `dump_stages`, `.asm["stages"]` lists (stage, tile IR text): the frontend's
    IR, then the IR after each tile-level pass (fold, canonicalize, cse, dce)."""
    from . import _core
    target = Target.parse(target) if isinstance(target, str) else target
    asm: dict[str, Any] = {"ir_bytes": ir, "ir": _core.to_text(ir)}
    meta: dict[str, Any] = {"name": name, "target": str(target), "num_warps": num_warps, "num_stages": num_stages,
                            "params": params, "shared": 0, "dynamic_shared": 0, "registers": None,
                            "spill_stores": 0, "spill_loads": 0, "stack_bytes": 0, "ptxas": None}
    from .backends.libdevice import libdevice_path
    out = _core.compile_ptx(ir, arch=target.codegen_arch, num_warps=num_warps, dump_stages=dump_stages,
                            libdevice=libdevice_path())
    if dump_stages:
        asm["stages"] = [(str(stage), str(text)) for stage, text in out["stages"]]
    asm["llir"], asm["ptx"] = out["llir"], out["ptx"]
    # per function: its shared-memory buffers (scratch, virtual per call site) and each call path's base
    asm["allocation"] = out["allocation"]
    # the PTX entry name: the kernel's name unless it is not a valid PTX identifier
    meta["symbol"] = out["kernels"][0] if out["kernels"] else name
    # scratch for reductions and layout conversions: the kernel's dynamic shared memory
    meta["dynamic_shared"] = int(out["shared"])
    meta["shared"] = meta["dynamic_shared"]
    if use_ptxas:
        from .runtime import driver
        ptxas = driver.ptxas_path()
        if ptxas is not None:
            try:
                cubin, info = _core.ptxas_compile(ptxas, asm["ptx"], target.sass_arch, meta["symbol"])
            except _core.PtxasError as e:
                from .runtime.errors import PTXASError
                raise PTXASError(str(e)) from None
            asm["cubin"] = cubin
            meta.update(registers=info["registers"], spill_stores=info["spill_stores"],
                        spill_loads=info["spill_loads"], stack_bytes=info["stack_bytes"],
                        shared=meta["dynamic_shared"] + info["shared_bytes"], ptxas=driver.ptxas_version())
    meta["spills"] = meta["spill_stores"] + meta["spill_loads"]
    return CompiledKernel(name, asm, meta)


def compile(fn: Any, signature: Any = None, constexprs: dict | None = None, target: Any = None,
            num_warps: int = 4, num_stages: int = 3, attrs: dict | None = None,
            debug: bool = False, dump_stages: bool = False, options: dict | None = None) -> CompiledKernel:
    """Compiles the @jit function `fn` for `signature` ("x_ptr=*fp32,n=i32",
    "*fp32, i32", a list, or a dict by name) and `constexprs` (by name);
    `attrs` names specialization properties ({"divisibility": ["x_ptr", "n"]}).
    `target` is "cuda:90", a GPUTarget, or None (the current device's; sm_90
    without a GPU). `dump_stages` keeps the tile IR after each pass in
    `.asm["stages"]`. Triton's form, `compile(ASTSource(...), target=...,
    options={...})`, is accepted too (tritium/ast_source.py)."""
    from .ast_source import ASTSource
    if isinstance(fn, ASTSource):
        from .ast_source import compile as compile_source
        return compile_source(fn, target=target, options=options)
    if options:
        raise TypeError("compile: options={...} goes with an ASTSource; pass num_warps=... etc. for a @jit function")
    return compile_with_target(fn, signature, constexprs, target, num_warps, num_stages, attrs, debug, dump_stages)


def target_of(target: Any) -> Target:
    """"cuda:90", a Target, a GPUTarget-like object (backend, arch) or None
    (the current device's target; cuda:90 without a GPU)."""
    if target is None:
        from .runtime import driver
        target = driver.target_for(driver.current_device()) if driver.available() else "cuda:90"
    if isinstance(target, Target):
        return target
    if hasattr(target, "backend") and hasattr(target, "arch"):
        if target.backend != "cuda":
            raise ValueError(f"target {target!r}: tritium compiles for NVIDIA GPUs only (backend 'cuda')")
        target = f"cuda:{target.arch}"
    return Target.parse(target)


def compile_with_target(fn: Any, signature: Any, constexprs: dict | None, target: Any, num_warps: int = 4,
                        num_stages: int = 3, attrs: dict | None = None, debug: bool = False,
                        dump_stages: bool = False) -> CompiledKernel:
    from .runtime.jit import JITFunction
    from .runtime.specialization import attrs_from_user
    from .compiler.frontend import compile_kernel
    if not isinstance(fn, JITFunction):
        fn = getattr(fn, "fn", fn)   # autotuner/heuristics wrappers
        if not isinstance(fn, JITFunction):
            raise TypeError(f"tritium.compile expects a @jit function, got {fn!r}")
    target_ = target_of(target)
    params = fn._params_for((), {}, _signature_arg(signature), constexprs)
    spec = attrs_from_user(fn, attrs, "cuda", signature=params)
    ir = compile_kernel(fn, params, spec.arg_attrs(), debug=debug).encode()
    return compile_ir_bytes(ir, fn.__name__, param_kinds(params), target_, num_warps, num_stages,
                            dump_stages=dump_stages)


def _signature_arg(signature: Any) -> Any:
    """"a=*fp32,n=i32" → dict; other forms pass through to parse_signature."""
    if isinstance(signature, str) and "=" in signature:
        from .runtime.signature import split_signature
        out = {}
        for item in split_signature(signature, ","):
            if not item.strip():
                continue
            k, sep, v = item.partition("=")
            if not sep or not k.strip() or not v.strip():
                raise ValueError(f"bad signature entry {item.strip()!r} (expected name=type, e.g. x_ptr=*fp32)")
            out[k.strip()] = v.strip()
        return out
    return signature if signature is not None else []


# -- the CLI -------------------------------------------------------------------

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
    # tile IR from the frontend and after each pass, then LLVM IR and PTX
    for stage, text in compiled.asm.get("stages", [("frontend", compiled.asm["ir"])]):
        title = "ir" if stage == "frontend" else f"ir after {stage}"
        out.write(f"// ----- {title} -----\n{text}\n")
    for stage in ("llir", "ptx"):
        out.write(f"// ----- {stage} -----\n{compiled.asm[stage]}\n")
    out.write(f"// ----- metadata -----\n{json.dumps(compiled.metadata, indent=1, sort_keys=True)}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tritium.compile",
                                 description="Compile a @tritium.jit kernel ahead of time (no GPU needed).")
    ap.add_argument("kernel", help="path.py:kernel_name")
    ap.add_argument("--signature", "-s", default=None, help='e.g. "x_ptr=*fp32,n=i32" or "*fp32,i32"')
    ap.add_argument("--constexprs", "-c", action="append", default=[], help="e.g. BLOCK=1024 (repeatable)")
    ap.add_argument("--target", default="cuda:90")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--emit", choices=("ir", "llir", "ptx", "cubin", "metadata"), default="ptx")
    ap.add_argument("--dump-stages", action="store_true",
                    help="print the tile IR after the frontend and after each pass, then LLVM IR and PTX")
    ap.add_argument("--output", "-o", default=None, help="write to this file instead of stdout")
    args = ap.parse_args(argv)
    from .compiler.errors import CompilationError
    fn = _load_kernel(args.kernel)
    constexprs = _parse_constexprs(args.constexprs)
    try:
        if args.emit == "ir" and not args.dump_stages:
            from .runtime.jit import JITFunction
            jf = fn if isinstance(fn, JITFunction) else getattr(fn, "fn", fn)
            if not isinstance(jf, JITFunction):
                raise SystemExit(f"error: {args.kernel} is not a @jit function")
            text = jf.ir_text(signature=_signature_arg(args.signature), constexprs=constexprs)
            return _write(args.output, text)
        compiled = compile(fn, signature=args.signature, constexprs=constexprs, target=args.target,
                           num_warps=args.num_warps, num_stages=args.num_stages, dump_stages=args.dump_stages)
    except (CompilationError, ValueError, TypeError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.dump_stages:
        _dump_stages(compiled, sys.stdout)
    if args.emit == "metadata":
        return _write(args.output, json.dumps(compiled.metadata, indent=1, sort_keys=True) + "\n")
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
