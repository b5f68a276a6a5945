"""A compiled kernel and how one is made: the target (`Target`; AMD's
`hip:gfx942` is backends/amd_compile.py's `HipTarget`), binary tile IR →
LLVM IR → PTX → cubin or → AMDGCN → HSACO (`compile_ir_bytes`), the result with its
metadata (`CompiledKernel`, what the disk cache stores and the launcher
loads), and the compiled kernel for one specialization of a @jit function,
through the cache stack (`compiled_for`, `warmup_compile`; many at once on
the Rust compile pool: `compile_ir_many`, `compiled_many`, `warmup_many`), or for a given
signature and target ahead of time (`compile_with_target`, tritium.compile's)."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..backends.libdevice import libdevice_path
from ..compiler import frontend
from ..grid import normalize_grid
from ..language.blocks import tensor_descriptor_type
from ..language.dtypes import dtype, pointer_type
from ..language.kernel_function import KernelFunction
from ..language.signature import split_signature
from ..settings import debug_requested, fp_fusion_requested
from . import cache, driver
from .dependencies import check_unchanged
from .errors import PTXASError
from .specialization import attrs_from_user, specializer
from .tensors import MockTensor

# code generator architectures; a newer device gets the newest one not above it
_CODEGEN_ARCHS = (80, 89, 90)


@dataclass(frozen=True)
class Target:
    """A compilation target: "cuda:90" (sm_90), "cuda:90a", "cuda:86", ..."""
    capability: int
    suffix: str = ""

    backend = "cuda"

    @staticmethod
    def parse(text: str) -> Any:
        """"cuda:90" → Target; "hip:gfx942" → backends.amd_compile.HipTarget."""
        family, _, arch = str(text).partition(":")
        if family.lower() in ("hip", "amd", "rocm"):
            from ..backends.amd_compile import HipTarget
            return HipTarget.parse(text)
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
        """What the code generator targets (PTX is forward compatible). A
        compute-capability-9.0 device gets sm_90a, as in Triton: the kernel
        is compiled for that device, so its arch-specific instructions
        (wgmma) are available."""
        if self.capability == 90:
            return "sm_90a"
        return f"sm_{max(a for a in _CODEGEN_ARCHS if a <= self.capability)}"

    @property
    def sass_arch(self) -> str:
        """What ptxas assembles for: the device itself (sm_90a on a 9.0 device)."""
        return "sm_90a" if self.capability == 90 else f"sm_{self.capability}{self.suffix}"


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
    thread) are ptxas's counts, or the driver's when it assembled the PTX.
    `timings` ({stage: seconds}, pipeline order) says where a compilation's
    time went; empty for a kernel read from the cache."""
    name: str
    asm: dict
    metadata: dict
    _loaded: dict = field(default_factory=dict, repr=False)
    timings: dict = field(default_factory=dict, repr=False, compare=False)

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
        """The binary the driver loads: the cubin (or PTX without ptxas), or the HSACO."""
        return self.asm.get("cubin") or self.asm.get("hsaco") or self.asm["ptx"]

    def _init_handles(self) -> None:
        """Loads the kernel on the current device (Triton's name for it);
        raises OutOfResources when the device cannot run it."""
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
            if name in ("kernel.cubin", "kernel.hsaco"):
                asm[name[len("kernel."):]] = data
            elif name == "kernel.tir":
                asm["ir_bytes"] = data
            elif name.startswith("kernel."):
                asm[name[len("kernel."):]] = data.decode()
        if "ptx" not in asm and "hsaco" not in asm:
            raise ValueError("cache entry has no PTX and no HSACO")
        if "hsaco" in asm:      # its AMDGCN text, when not cached, is made when read
            from ..backends.amd_compile import AmdAsm
            asm = AmdAsm(meta.get("target", ""), asm)
        return CompiledKernel(meta["name"], asm, meta)

    def load(self, device: int = 0) -> Any:
        """The kernel loaded on `device` (a `_core.CudaKernel`), loaded once."""
        k = self._loaded.get(device)
        if k is None and "hsaco" in self.asm:
            from .hip import HipKernel
            k = self._loaded[device] = HipKernel(self.asm["hsaco"], self.metadata.get("symbol", self.name), self.params,
                                                 self.metadata["num_warps"], self.metadata.get("warp_size", 64))
        if k is None:
            image = self.asm.get("cubin") or self.asm["ptx"]
            k = _core.CudaKernel(image, self.metadata.get("symbol", self.name), self.params, num_warps=self.metadata["num_warps"],
                                 shared_bytes=self.metadata.get("dynamic_shared", 0), device=device,
                                 tensormaps=[tuple(m) for m in self.metadata.get("tensormaps", [])],
                                 global_scratch=self.metadata.get("global_scratch", 0))
            if self.metadata.get("registers") is None:   # driver JIT: only the driver knows
                self.metadata["registers"] = k.num_regs
                self.metadata["local_bytes"] = k.local_bytes
            self._loaded[device] = k
        return k

    def __getitem__(self, grid: Any):
        """`compiled[grid](*args, stream=None)`: every parameter, constexprs included (ignored)."""
        def launch(*args: Any, stream: int | None = None) -> None:
            g = normalize_grid(grid)
            if "hsaco" in self.asm:      # AMD: the HIP runtime, PyTorch ROCm's current stream
                from . import hip
                self.load(0).launch(g[0], g[1], g[2], hip.current_stream() if stream is None else stream, tuple(args))
                return
            dev = driver.current_device()
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
    for m in meta.get("tensormaps", []):
        if not (isinstance(m, list) and len(m) == 3 and type(m[0]) is int and isinstance(m[1], list)
                and all(type(d) is int for d in m[1]) and type(m[2]) is int):
            raise ValueError(f"metadata.json: bad tensor map entry {m!r}")
    scratch = meta.get("global_scratch", 0)
    if type(scratch) is not int or scratch < 0:
        raise ValueError(f"metadata.json: bad global_scratch {scratch!r}")


def param_kinds(signature: dict) -> list[list]:
    """[name, "ptr" | dtype name | "tensordesc<...>" | None (constexpr)] per parameter, in order."""
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
    IR, then the IR after each tile-level pass (fold, canonicalize, cse, dce).
    A "hip:gfx942" target compiles to AMDGCN and HSACO instead."""
    target = Target.parse(target) if isinstance(target, str) else target
    if target.backend == "hip":
        from ..backends.amd_compile import AmdAsm, compile_hsaco
        asm: dict[str, Any] = AmdAsm(target, {"ir_bytes": ir, "ir": _core.to_text(ir)})
        meta = _base_metadata(name, params, target, num_warps, num_stages)
        compile_hsaco(ir, asm, meta, target, num_warps, dump_stages)
        meta["spills"] = meta["spill_stores"] + meta["spill_loads"]
        return CompiledKernel(name, asm, meta)
    out = _core.compile_ptx(ir, arch=target.codegen_arch, num_warps=num_warps, dump_stages=dump_stages,
                            libdevice=libdevice_path(), num_stages=num_stages)
    ptxas = driver.ptxas_path() if use_ptxas else None
    if ptxas is not None:
        symbol = out["kernels"][0] if out["kernels"] else name
        start = time.perf_counter()
        try:
            out["cubin"], out["ptxas"] = _core.ptxas_compile(ptxas, out["ptx"], target.sass_arch, symbol)
        except _core.PtxasError as e:
            raise PTXASError(str(e)) from None
        out["timings"].append(("ptxas", time.perf_counter() - start))
    return _assemble(ir, name, params, target, num_warps, num_stages, out)


def compile_ir_many(jobs: list[tuple], threads: int | None = None) -> list[Any]:
    """`compile_ir_bytes(ir, name, params, target, num_warps, num_stages)` for
    every job at once: code generation and ptxas run on Rust worker threads
    with the GIL released (`_core.compile_batch`). Returns, per job in order,
    its CompiledKernel or the exception compiling it raised (PTXASError for
    ptxas), so one failing kernel does not fail the others."""
    ptxas, libdevice = driver.ptxas_path(), libdevice_path()
    targets = [Target.parse(j[3]) if isinstance(j[3], str) else j[3] for j in jobs]
    nvidia = [i for i, t in enumerate(targets) if t.backend != "hip"]
    native = [(jobs[i][0], targets[i].codegen_arch, jobs[i][4], ptxas, targets[i].sass_arch, jobs[i][1], libdevice,
               jobs[i][5]) for i in nvidia]
    outs = dict(zip(nvidia, _core.compile_batch(native, threads) if native else []))
    results: list[Any] = []
    for i, ((ir, name, params, _t, nw, ns), t) in enumerate(zip(jobs, targets)):
        if i not in outs:       # AMD: one at a time (compile_hsaco links in-process)
            try:
                results.append(compile_ir_bytes(ir, name, params, t, nw, ns))
            except Exception as e:  # noqa: BLE001  reported in this job's place
                results.append(e)
            continue
        out = outs[i]
        if isinstance(out, _core.PtxasError):
            results.append(PTXASError(str(out)))
        elif isinstance(out, BaseException):
            results.append(out)
        else:
            results.append(_assemble(ir, name, params, t, nw, ns, out))
    return results


def _base_metadata(name: str, params: list, target: Any, num_warps: int, num_stages: int) -> dict[str, Any]:
    return {"name": name, "target": str(target), "num_warps": num_warps, "num_stages": num_stages,
            "params": params, "shared": 0, "dynamic_shared": 0, "registers": None,
            "spill_stores": 0, "spill_loads": 0, "stack_bytes": 0, "ptxas": None}


def _assemble(ir: bytes, name: str, params: list, target: Target, num_warps: int, num_stages: int,
              out: dict) -> CompiledKernel:
    """The CompiledKernel from the Rust compile's output (`compile_ptx`'s
    dict, plus "cubin" and "ptxas" when ptxas ran)."""
    asm: dict[str, Any] = {"ir_bytes": ir, "ir": _core.to_text(ir)}
    meta = _base_metadata(name, params, target, num_warps, num_stages)
    if "stages" in out:
        asm["stages"] = [(str(stage), str(text)) for stage, text in out["stages"]]
    asm["llir"], asm["ptx"] = out["llir"], out["ptx"]
    # per function: its shared-memory buffers (scratch, virtual per call site) and each call path's base
    asm["allocation"] = out["allocation"]
    # the PTX entry name: the kernel's name unless it is not a valid PTX identifier
    meta["symbol"] = out["kernels"][0] if out["kernels"] else name
    # scratch for reductions and layout conversions: the kernel's dynamic shared memory
    meta["dynamic_shared"] = int(out["shared"])
    # TMA (sm_90a): tensor maps the launch appends, as [descriptor base argument, box, swizzle bytes]
    meta["tensormaps"] = [[int(b), [int(d) for d in box], int(s)] for b, box, s in out.get("tensormaps", [])]
    # tensor maps built on the device (sm_90a): bytes of global scratch per
    # program, which the launch asks of the set_allocator allocator
    meta["global_scratch"] = int(out.get("global_scratch", 0))
    meta["shared"] = meta["dynamic_shared"]
    if "cubin" in out:
        info = out["ptxas"]
        asm["cubin"] = out["cubin"]
        meta.update(registers=info["registers"], spill_stores=info["spill_stores"],
                    spill_loads=info["spill_loads"], stack_bytes=info["stack_bytes"],
                    shared=meta["dynamic_shared"] + info["shared_bytes"], ptxas=driver.ptxas_version())
    meta["spills"] = meta["spill_stores"] + meta["spill_loads"]
    return CompiledKernel(name, asm, meta, timings={str(k): float(t) for k, t in out.get("timings", [])})


def compiled_for(jit_fn: Any, spec: Any, key: tuple, target: str, num_warps: int, num_stages: int,
                 debug: Any, enable_fp_fusion: Any = None) -> Any:
    """The CompiledKernel for one specialization: from the disk cache (or
    the remote one), or compiled and stored. Needs no GPU (tests drive the
    cache through it)."""
    result = compiled_many([(jit_fn, spec, key, target, num_warps, num_stages, debug, enable_fp_fusion)])[0]
    if isinstance(result, BaseException):
        raise result
    return result


def compiled_many(requests: list[tuple], threads: int | None = None) -> list[Any]:
    """`compiled_for(*request)` for every request at once (each request
    `(jit_fn, spec, key, target, num_warps, num_stages, debug,
    enable_fp_fusion)`): cache look-ups
    first, then the frontend (Python) for each kernel missing, then code
    generation and ptxas for all of them together on Rust worker threads
    (`compile_ir_many`). Returns, in order, a CompiledKernel or the
    exception that request raised, so one failing config fails alone."""
    keys, plans = [], []
    for jit_fn, spec, key, target, num_warps, num_stages, debug, fp_fusion in requests:
        check_unchanged(jit_fn)
        dbg = debug_requested(debug, jit_fn.debug)
        fusion = fp_fusion_requested(fp_fusion)
        options = {"num_warps": num_warps, "num_stages": num_stages, "debug": dbg}
        if not fusion:      # default-option keys stay as they were
            options["enable_fp_fusion"] = False
        keys.append(cache.kernel_key(jit_fn, target, options, spec.key_text(key)))
        plans.append((jit_fn, spec, key, target, num_warps, num_stages, dbg, fusion))

    def build_many(todo: list[int]) -> list[Any]:
        jobs, where, failed = [], [], {}
        for i in todo:
            jit_fn, spec, key, target, num_warps, num_stages, dbg, fusion = plans[i]
            try:
                s = spec.specialization(key)
                ir = frontend.compile_kernel(jit_fn, s.signature, s.arg_attrs(), debug=dbg,
                                             enable_fp_fusion=fusion).encode()
            except Exception as e:  # noqa: BLE001  reported in this request's place
                failed[i] = e
                continue
            jobs.append((ir, jit_fn.__name__, param_kinds(s.signature), target, num_warps, num_stages))
            where.append(i)
        built = dict(zip(where, compile_ir_many(jobs, threads) if jobs else []))
        out = []
        for i in todo:
            r = failed.get(i, built.get(i))
            if isinstance(r, CompiledKernel):
                r.metadata["enable_fp_fusion"] = plans[i][7]
            out.append(r.to_files() if isinstance(r, CompiledKernel) else r)
        return out
    return cache.load_or_build_many(keys, build_many, CompiledKernel.from_files)


def current_target() -> str:
    """The current device's target; "cuda:90" without a GPU (ahead-of-time work)."""
    return driver.target_for(driver.current_device()) if driver.available() else "cuda:90"


def warmup_compile(jit_fn: Any, args: tuple, params: dict, options: dict) -> Any:
    """`kernel.warmup(...)`: the CompiledKernel for these arguments, through
    the disk cache, without launching (and without a GPU if need be)."""
    result = warmup_many(jit_fn, [(args, params, options)])[0]
    if isinstance(result, BaseException):
        raise result
    return result


def warmup_many(jit_fn: Any, calls: list[tuple[tuple, dict, dict]]) -> list[Any]:
    """`warmup` for many (args, params, options) at once: every kernel not
    cached is compiled in one batch on the compile pool. Per call, its
    CompiledKernel or the exception compiling it raised."""
    spec = specializer(jit_fn, "cuda")
    target = current_target()
    requests: list[Any] = []
    for args, params, options in calls:
        unknown = set(options) - {"num_warps", "num_stages", "debug", "stream", "num_ctas", "warmup", "enable_fp_fusion"}
        if unknown:
            requests.append(TypeError(f"{jit_fn.__name__}.warmup(): unsupported option(s) "
                                      f"{', '.join(sorted(unknown))}"))
            continue
        try:
            bound = jit_fn.bind_call([MockTensor.wrap_dtype(a) for a in args],
                                     {k: MockTensor.wrap_dtype(v) for k, v in params.items()})
            key = spec.key(tuple(bound.values()))
            fusion = fp_fusion_requested(options.get("enable_fp_fusion"))
        except Exception as e:  # noqa: BLE001  reported in this call's place
            requests.append(e)
            continue
        requests.append((jit_fn, spec, key, target, options.get("num_warps", 4), options.get("num_stages", 3),
                         options.get("debug"), fusion))
    todo = [r for r in requests if isinstance(r, tuple)]
    done = iter(compiled_many(todo) if todo else [])
    return [r if isinstance(r, BaseException) else next(done) for r in requests]


def target_of(target: Any) -> Any:
    """"cuda:90", "hip:gfx942", a Target, a GPUTarget-like object (backend,
    arch) or None (the current device's target; cuda:90 without a GPU)."""
    from ..backends.amd_compile import HipTarget
    if target is None:
        target = driver.target_for(driver.current_device()) if driver.available() else "cuda:90"
    if isinstance(target, (Target, HipTarget)):
        return target
    if hasattr(target, "backend") and hasattr(target, "arch"):
        if target.backend not in ("cuda", "hip"):
            raise ValueError(f"target {target!r}: tritium compiles for backends 'cuda' (NVIDIA) and 'hip' (AMD)")
        target = f"{target.backend}:{target.arch}"
    return Target.parse(target)


def compile_with_target(fn: Any, signature: Any = None, constexprs: dict | None = None, target: Any = None, num_warps: int = 4,
                        num_stages: int = 3, attrs: dict | None = None, debug: bool = False,
                        dump_stages: bool = False, enable_fp_fusion: bool = True) -> CompiledKernel:
    if not isinstance(fn, KernelFunction):
        fn = getattr(fn, "fn", fn)   # autotuner/heuristics wrappers
        if not isinstance(fn, KernelFunction):
            raise TypeError(f"tritium.compile expects a @jit function, got {fn!r}")
    target_ = target_of(target)
    params = fn._params_for((), {}, signature_arg(signature), constexprs)
    spec = attrs_from_user(fn, attrs, target_.backend, signature=params)
    fusion = fp_fusion_requested(enable_fp_fusion)
    start = time.perf_counter()
    ir = frontend.compile_kernel(fn, params, spec.arg_attrs(), debug=debug, enable_fp_fusion=fusion).encode()
    front = time.perf_counter() - start
    kernel = compile_ir_bytes(ir, fn.__name__, param_kinds(params), target_, num_warps, num_stages,
                              dump_stages=dump_stages)
    kernel.metadata["enable_fp_fusion"] = fusion
    kernel.timings = {"frontend": front, **kernel.timings}
    return kernel


def signature_arg(signature: Any) -> Any:
    """"a=*fp32,n=i32" → dict; other forms pass through to parse_signature."""
    if isinstance(signature, str) and "=" in signature:
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
