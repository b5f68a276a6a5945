"""Entry point of interpreted launches: `run_grid` maps the kernel's arguments
into the interpreter's memory, then runs the Python kernel over the grid in
batches of programs (batches.py) under a `NumpyBuilder`, as plain Python (so
`print` and `pdb` work inside; a kernel that calls a debugger, and
TRITIUM_INTERPRET_BATCH=0, run one program at a time).

Programs are taken in Triton's interpreter order (x fastest, then y, then z),
or shuffled with TRITIUM_INTERPRET_SHUFFLE=1 to expose order dependences;
TRITIUM_SANITIZE_RACES=1 reports data races between programs (races.py) as a
DataRaceError when the launch ends. Anything that goes wrong is raised as an
InterpreterError at the kernel's line (errors.py).
"""
from __future__ import annotations

import random
from typing import Any, Callable, Sequence

import numpy as np

from .. import settings
from ..grid import normalize_grid
from ..language import core
from ..language.blocks import descriptor_args, descriptor_value, tensor_descriptor_type
from ..language.builder import using_builder
from ..language.dtypes import pointer_type
from ..language.kernel_function import KernelFunction
from ..language.signature import specialize
from .batches import Schedule
from .builder import NumpyBuilder, is_user_file, wrap
from .errors import DataRaceError, InterpreterError, located
from .events import Client, EventBus, Launch, TensorArg, active_clients
from .memory import MemoryMap
from .sanitizer import Sanitizer

class _HostArg:
    """A tensor argument as a host NumPy array, plus how to write it back."""

    def __init__(self, value: Any):
        self.value = value
        self.writeback: Callable[[], None] | None = None
        if isinstance(value, np.ndarray):
            self.host = value
            return
        mod = type(value).__module__.split(".")[0]
        if mod == "torch":
            self.host = self._from_torch(value)
            return
        if hasattr(value, "__array_interface__"):
            self.host = np.asarray(value)
            return
        if hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):  # CuPy
            self.host = value.get()
            self.writeback = lambda: value.set(self.host)
            return
        if getattr(value, "base", None) is not None and hasattr(value, "dtype"):
            # runtime.TensorWrapper (`reinterpret`): the base's bytes, read as the kernel's pointer type says
            inner = _HostArg(value.base)
            self.host, self.writeback = inner.host, inner.writeback
            return
        raise TypeError(f"cannot map a {type(value).__name__} into the interpreter's memory")

    def _from_torch(self, t: Any) -> np.ndarray:
        import torch
        raw_dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        t = t.detach()
        if t.device.type != "cpu":
            # copy the whole storage, so a strided view keeps its strides and its
            # neighbours stay addressable exactly as on the device
            n = t.untyped_storage().nbytes() // t.element_size()
            dev_all = t.as_strided((n,), (1,), 0)
            host_all = dev_all.cpu()
            self.writeback = lambda: dev_all.copy_(host_all.to(t.device))
            t = host_all.as_strided(t.shape, t.stride(), t.storage_offset())
        # the raw bits: NumPy has no bf16/fp8 and bool is a byte either way
        return t.view(raw_dtype).numpy() if t.dtype != raw_dtype else t.numpy()


def _convert(name: str, value: Any, ty: Any, memory: MemoryMap, hosts: list[_HostArg],
             tensors: list[TensorArg]) -> Any:
    """One kernel argument as the kernel sees it: a plain Python value for a
    constexpr, a typed scalar tensor (one value shared by every program), or
    a pointer tensor into the interpreter's memory."""
    if isinstance(ty, core.constexpr):
        # unwrapped, as Triton's interpreter passes them, so that identity tests
        # such as `FLAG is True` or `bias_ptr is None` behave as in Python
        return ty.value
    if isinstance(ty, tensor_descriptor_type):
        return host_descriptor(ty, value,
                               lambda base: _convert(name, base, pointer_type(ty.element_ty), memory, hosts, tensors))
    if ty.is_ptr():
        if value is None:
            return None
        host = _HostArg(value)
        hosts.append(host)
        arr = host.host
        addr = memory.register(name, arr)
        tensors.append(TensorArg(name, addr, arr.shape, tuple(st // max(1, arr.itemsize) for st in arr.strides),
                                 arr.dtype.name, arr.itemsize))
        return core.tensor(wrap(np.array([addr], np.int64), ty), ty)
    if isinstance(value, core.tensor):
        return value
    v = value.item() if hasattr(value, "item") else value
    return core.tensor(wrap(np.array([v]), ty), ty)


def _types_for(kernel: Any, bound: dict[str, Any]) -> dict[str, Any]:
    if hasattr(kernel, "specialize"):
        return kernel.specialize(bound)
    return specialize(KernelFunction(kernel).params, bound)


def _bind(kernel: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    # a plain-function kernel (the NKI frontend's) binds by the @jit rules
    binder = kernel if hasattr(kernel, "bind_call") else KernelFunction(kernel)
    return binder.bind_call(list(args), kwargs)


def _ir_of(kernel: Any, bound: dict[str, Any]) -> Callable[[], bytes | None]:
    """What compiling this launch would give, for clients that ask (the profiler)."""
    launch_ir = getattr(kernel, "launch_ir", None)
    return (lambda: launch_ir(dict(bound))) if launch_ir is not None else (lambda: None)


def check_launch_options(options: dict[str, Any]) -> None:
    """The launch options the compiler would refuse, refused alike (the
    message is the compiler's, crates/tritium-codegen Options)."""
    if "num_warps" in options and options["num_warps"] is not None:
        w = options["num_warps"]
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 1 <= w <= 32 or w & (w - 1):
            raise ValueError(f"invalid launch option: num_warps must be a power of two from 1 to 32, got {w!r}")
    # no effect on NumPy's arithmetic (each op rounds once), but refused alike
    settings.fp_fusion_requested(options.get("enable_fp_fusion"))


def program_order(grid: tuple[int, int, int], shuffle: bool, seed: int | None = None) -> np.ndarray:
    """(N, 3) program ids, x fastest, or shuffled."""
    z, y, x = np.meshgrid(*(np.arange(g, dtype=np.int32) for g in grid[::-1]), indexing="ij")
    order = np.stack([x.reshape(-1), y.reshape(-1), z.reshape(-1)], axis=1)
    if shuffle:
        perm = list(range(len(order)))
        random.Random(seed).shuffle(perm)
        order = order[perm]
    return order


def run_grid(kernel: Any, grid: Any, bound: dict[str, Any] | Sequence[Any] | None = None, *,
             kwargs: dict[str, Any] | None = None, clients: Sequence[Client] = (), oob: str = "raise",
             shuffle: bool | None = None, seed: int | None = None, batch: bool | None = None,
             frontend: str = "triton", arg_hook: Callable | None = None, **options: Any) -> None:
    """Run `kernel` (a JITFunction or plain function) over `grid` in the interpreter.

    `bound` is the parameter dict the JIT binds (or a positional sequence,
    with `kwargs`); launch options (num_warps, ...) are checked as the
    compiler checks them and reach only a callable grid's meta dict.
    `clients` receive events (events.py), after those registered with
    `add_client` or an enclosing `clients()` block. `batch=False` runs one
    program at a time. Another frontend (nki/) names itself in `frontend`,
    and `arg_hook(name, value, converted, tensor_arg_or_None)` gives what its
    kernels receive for each argument; its kernels are not held to Triton's
    Python subset."""
    check_launch_options(options)
    if bound is None or not isinstance(bound, dict):
        bound = _bind(kernel, list(bound or ()), dict(kwargs or {}))
    elif kwargs:
        bound = {**bound, **kwargs}
    grid = normalize_grid(grid, {**options, **bound})
    if shuffle is None:
        shuffle = settings.interpret_shuffle()
    if batch is None:
        batch = settings.interpret_batch()
    types = _types_for(kernel, bound)
    memory = MemoryMap()
    hosts: list[_HostArg] = []
    tensors: list[TensorArg] = []
    clients = [*active_clients(), *clients]
    race_check = None
    if settings.sanitize_races():
        race_check = Sanitizer(races=True)
        clients.append(race_check)
    bus = EventBus(clients)
    builder = NumpyBuilder(memory, grid, bus, oob=oob)
    builder.checks.enforce_subset = frontend == "triton"
    py_fn = getattr(kernel, "fn", kernel)
    fn = builder.checks.prepare(py_fn)
    try:
        with using_builder(builder):
            args = {}
            for name in bound:
                mapped = len(tensors)
                args[name] = _convert(name, bound[name], types[name], memory, hosts, tensors)
                if arg_hook is not None:
                    args[name] = arg_hook(name, bound[name], args[name],
                                          tensors[-1] if len(tensors) > mapped else None)
            launch = Launch(getattr(kernel, "__name__", "kernel"), grid, memory, tuple(tensors), frontend,
                            py_fn.__code__.co_filename, compile_ir=_ir_of(kernel, bound))
            bus.launch(launch)

            def run_batch(pids: np.ndarray) -> None:
                builder.begin_batch(pids)
                fn(**args)
                builder.end_batch()
            schedule = Schedule(program_order(grid, shuffle, seed), one_at_a_time=not batch or builder.checks.debugs)
            schedule.run(run_batch, builder.abandon_batch, lambda: builder.widest)
            launch.batches, launch.restarts = schedule.batches, schedule.restarts
            launch.one_at_a_time = schedule.one_at_a_time
            bus.finish(launch)
    except Exception as e:
        err = located(e, is_user_file)
        if err is e:
            raise
        raise err from None
    finally:
        for h in hosts:
            if h.writeback is not None:
                h.writeback()
    if race_check is not None and race_check.race_reports:
        reps = race_check.race_reports
        more = f"\n... and {len(reps) - 5} more" if len(reps) > 5 else ""
        raise DataRaceError(f"'{launch.kernel}': {len(reps)} data race(s) between programs "
                            "(TRITIUM_SANITIZE_RACES=1):\n" + "\n".join(str(r) for r in reps[:5]) + more)


def host_descriptor(ty: tensor_descriptor_type, desc: Any, pointer: Any) -> Any:
    """A host TensorDescriptor argument as the kernel sees it: the values of
    the arguments compiled code receives (`descriptor_args`), made into the
    kernel-side descriptor the same way. `pointer(base)` maps the base."""
    types = [t for t, _ in descriptor_args(ty)]
    raw = [*desc.shape, *desc.strides[:-1], desc.padding == "nan"]
    for i, v in enumerate(desc.shape):
        if not 0 < v < 2 ** 31:
            raise InterpreterError(f"TensorDescriptor shape[{i}] = {v} does not fit the kernel's int32")
    values = [pointer(desc.base)] + [core.tensor(wrap(np.array([v]), t), t) for v, t in zip(raw, types[1:])]
    return descriptor_value(ty, values)
