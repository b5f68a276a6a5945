"""`@jit` and JITFunction: binds launch arguments to a kernel's parameters,
decides what is runtime (IR function arguments) and what is specialized
(constexprs), and hands the kernel to the frontend, or to the interpreter
when TRITIUM_INTERPRET/TRITON_INTERPRET is set."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .. import _core
from ..compiler import frontend
from ..grid import normalize_grid
from ..interpreter import runner
from ..language import core
from ..language.builder import _state as _builder_state
from ..language.kernel_function import KernelFunction, register_maker
from ..language.signature import arg_type, parse_signature, specialize
from ..language.source import parse_function
from ..settings import debug_requested, fp_fusion_requested, interpret_requested
from . import driver, launch_hooks
from .compiled import warmup_compile
from .dependencies import dependencies_digest
from .launcher import launch as gpu_launch
from .specialization import LAUNCH_OPTIONS, specializer
from .tensors import MockTensor, TensorWrapper, reinterpret  # noqa: F401  Triton imports them from here

class KernelInterface:
    """What `kernel[grid](...)` needs; shared by JITFunction and the tuners."""

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return functools.partial(self.run, grid=grid)   # C-level call forwarding: cheaper than a lambda


class JITFunction(KernelInterface, KernelFunction):
    def __init__(self, fn: Callable, noinline: bool | None = None, do_not_specialize=(),
                 do_not_specialize_on_alignment=(), debug: bool | None = None, interpret: bool | None = None,
                 repr: Callable | None = None, launch_metadata: Callable | None = None):
        if not inspect.isfunction(fn):
            raise TypeError(f"@jit expects a Python function, got {fn!r}")
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.noinline = bool(noinline)
        self.debug = debug
        self.repr = repr
        self.launch_metadata = launch_metadata
        # also sets `_fast`, the Rust launch entry (None until runtime/driver.py
        # makes one at the first GPU launch); it checks TRITIUM_INTERPRET itself
        self.interpret = bool(interpret) or interpret_requested()
        KernelFunction.__init__(self, fn)   # signature, params, constexprs
        self.do_not_specialize = [self._param_index(d) for d in do_not_specialize]
        self.do_not_specialize_on_alignment = [self._param_index(d) for d in do_not_specialize_on_alignment]
        self._source = None
        try:
            self.src = inspect.getsource(fn)
        except OSError:
            self.src = None

    @property
    def interpret(self) -> bool:
        return self._interpret

    @interpret.setter
    def interpret(self, value: Any) -> None:
        self._interpret = bool(value)
        self._attach_fast()

    def _attach_fast(self) -> None:
        """Points `_fast` at the GPU launcher's Rust entry, if there is one.
        The entry never looks at `interpret`: it is detached while the kernel
        runs in the interpreter, and while a profiler watches launches
        (launch_hooks.py), and put back when it runs compiled again."""
        launcher = self.__dict__.get("_cuda_launcher")
        detached = self._interpret or launch_hooks.hook is not None
        self._fast = None if detached else getattr(launcher, "fast", None)

    def _param_index(self, d: Any) -> int:
        if isinstance(d, int) and 0 <= d < len(self.params):
            return d
        if isinstance(d, str) and d in self.arg_names:
            return self.arg_names.index(d)
        raise ValueError(f"do_not_specialize: '{fn_name(self)}' has no parameter {d!r}")

    def source(self):
        if self._source is None:
            try:
                self._source = parse_function(self.fn)
            except OSError as e:
                raise RuntimeError(f"cannot compile '{self.__name__}': its source is not available ({e})") from None
        return self._source

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    def specialize(self, bound: dict[str, Any]) -> dict[str, Any]:
        """Each parameter as an IR dtype (runtime argument) or a constexpr."""
        return specialize(self.params, bound)

    # -- compiling --------------------------------------------------------
    def compile_ir(self, *args: Any, signature: Any = None, constexprs: dict | None = None,
                   arg_attrs: dict | None = None, debug: bool | None = None, enable_fp_fusion: bool | None = None,
                   **kwargs: Any) -> bytes:
        """The kernel's tile IR (binary, docs/ir.md), specialized either for
        example arguments or for `signature` (+ `constexprs` by name)."""
        return frontend.compile_kernel(self, self._params_for(args, kwargs, signature, constexprs), arg_attrs,
                                       debug=debug_requested(debug, self.debug),
                                       enable_fp_fusion=fp_fusion_requested(enable_fp_fusion)).encode()

    def launch_ir(self, bound: dict[str, Any], debug: bool | None = None, enable_fp_fusion: bool | None = None) -> bytes:
        """The IR a launch with these bound arguments compiles: specialized as
        the backend's rules specialize them (divisibility, equal_to_1)."""
        spec = specializer(self)
        attrs = spec.specialization(spec.key(tuple(bound.values()))).arg_attrs()
        return frontend.compile_kernel(self, self.specialize(bound), attrs, debug=debug_requested(debug, self.debug),
                                       enable_fp_fusion=fp_fusion_requested(enable_fp_fusion)).encode()

    def ir_text(self, *args: Any, signature: Any = None, constexprs: dict | None = None,
                arg_attrs: dict | None = None, debug: bool | None = None, enable_fp_fusion: bool | None = None,
                **kwargs: Any) -> str:
        data = self.compile_ir(*args, signature=signature, constexprs=constexprs, arg_attrs=arg_attrs,
                               debug=debug, enable_fp_fusion=enable_fp_fusion, **kwargs)
        _core.verify(data)
        return _core.to_text(data)

    def _params_for(self, args, kwargs, signature, constexprs) -> dict[str, Any]:
        if signature is None:
            return self.specialize(self.bind_call(args, {**kwargs, **(constexprs or {})}))
        if args or kwargs:
            raise TypeError("compile_ir: pass either example arguments or signature=..., not both")
        types = parse_signature(signature, [p.name for p in self.params if not p.is_constexpr]
                                if not isinstance(signature, dict) else self.arg_names)
        constexprs = dict(constexprs or {})
        out = {}
        for p in self.params:
            if p.name in constexprs:
                out[p.name] = core.constexpr(constexprs[p.name])
            elif p.name in types:
                out[p.name] = types[p.name]
            elif p.has_default:
                out[p.name] = core.constexpr(p.default) if p.is_constexpr else arg_type(p.name, p.default)
            else:
                raise TypeError(f"{self.__name__}: no type or constexpr value given for parameter '{p.name}'")
        for k in constexprs:
            if k not in self.arg_names:
                raise TypeError(f"{self.__name__}() has no parameter '{k}'")
        return out

    # -- launching --------------------------------------------------------
    def _split_launch(self, kwargs: dict) -> tuple[dict, dict]:
        options, params = {}, {}
        for k, v in kwargs.items():
            if k in self.arg_names:
                params[k] = v
            elif k in LAUNCH_OPTIONS:
                options[k] = v
            else:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}' "
                                "(neither a kernel parameter nor a launch option)")
        return options, params

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        fast = self._fast
        if fast is not None:
            return fast[grid]       # a Rust callable: the whole launch is one call
        return functools.partial(self.run, grid=grid)

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        fast = self._fast
        if fast is not None:
            return fast(grid, args, kwargs)
        return self._run_slow(grid, args, kwargs)

    def _run_slow(self, grid: Any, args: tuple, kwargs: dict) -> Any:
        """Every launch the Rust entry does not take: the first one, options,
        callable grids, the interpreter, errors."""
        interpreting = self.interpret or interpret_requested()
        if not interpreting:
            launcher = self.__dict__.get("_cuda_launcher")
            if launcher is not None:        # the hot path: this kernel launched on the GPU before
                return launcher(grid, args, kwargs)
            if driver.available():   # the GPU launch path (runtime/launcher.py) binds for itself
                return gpu_launch(self, grid, args, kwargs)
        options, params = self._split_launch(kwargs)
        bound = self.bind_call(args, params)
        if interpreting:
            hook = launch_hooks.hook
            if hook is not None:
                return hook.interpreted_launch(self, normalize_grid(grid, {**options, **bound}), bound,
                                               lambda: runner.run_grid(self, grid, bound, **options))
            return runner.run_grid(self, grid, bound, **options)
        normalize_grid(grid, dict(bound))
        self.launch_ir(bound, options.get("debug"), options.get("enable_fp_fusion"))
        if options.get("warmup"):
            return None
        raise RuntimeError(f"cannot launch '{self.__name__}': no CUDA GPU is available ({driver.status()[1]}); "
                           "the kernel compiled to IR successfully. Set TRITIUM_INTERPRET=1 to run it "
                           "with the NumPy interpreter")

    @property
    def cache_key(self) -> str:
        """Hash of the kernel's source, of every @jit function it reaches and
        of the global and closure values they read (Triton's `cache_key`)."""
        return dependencies_digest(self)

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> Any:
        """Compiles for these arguments without launching and returns the
        CompiledKernel (`asm`, `metadata`, `n_regs`, `n_spills`), for the
        current device (sm_90 without a GPU). Tensor arguments may be given
        as torch dtypes or MockTensors."""
        options, params = self._split_launch(kwargs)
        options.pop("warmup", None)
        return warmup_compile(self, args, params, options)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = getattr(getattr(_builder_state, "builder", None), "call_jit_function", None)
        if call is not None:
            # inside a kernel: the compiler inlines the call, the interpreter
            # runs the function's checked Python body
            return call(self, args, kwargs)
        raise RuntimeError(f"@jit functions cannot be called directly ('{self.__name__}'); "
                           "launch with kernel[grid](...)")


def fn_name(f: Any) -> str:
    return getattr(f, "__name__", repr(f))


def jit(fn: Callable | None = None, *, noinline: bool | None = None, do_not_specialize=(),
        do_not_specialize_on_alignment=(), debug: bool | None = None, interpret: bool | None = None,
        repr: Callable | None = None, launch_metadata: Callable | None = None) -> Any:
    """Decorator: `@jit` or `@jit(noinline=True, ...)`."""
    def decorate(f: Callable) -> JITFunction:
        return JITFunction(f, noinline=noinline, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug,
                           interpret=interpret, repr=repr, launch_metadata=launch_metadata)
    return decorate(fn) if fn is not None else decorate


register_maker(JITFunction)   # @aggregate makes its methods @jit functions through this
