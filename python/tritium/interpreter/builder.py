"""`NumpyBuilder`: executes each op of docs/ir.md at once with NumPy for the
interpreter (language/builder.py's protocol), for a batch of programs at once.

Handles are `KArray`s: NumPy arrays in the storage dtype of floats.py, tagged
with their kernel scalar type, whose first axis is the program axis: length P
(the programs of the batch, `pids`) for a value that may differ between them,
length 1 for one they all share; a scalar is (1,) or (P,), a block (1|P,
*shape). Elementwise ops broadcast over it for free (elementwise.py); ops with
axes shift them by one. Python needs single values (a condition, a loop
bound): `scalar_value` gives the programs' common value or raises
batches.Diverged. Memory ops and their events are in memory_ops.py.
"""
from __future__ import annotations

import functools
import linecache
import os
import sys
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..language import core
from ..language.dtypes import dtype, float16, float32, float64, int1, int8, int16, int32, int64, uint8, uint16, \
    uint32, uint64
from . import arith, floats
from .batches import Diverged, NeedsOrder
from .blocks import BlockOps
from .elementwise import ELEMENTWISE, ElementwiseOps
from .errors import DeviceAssertionError, InterpreterError
from .events import DotEvent, EventBus, Location, ReduceEvent
from .extern_ops import ExternOps
from .handles import KArray, ktype_of, wrap  # noqa: F401 (the builder's handles, imported from here too)
from .kernel_code import LaunchChecks, call_jit_in_interpreter
from .memory import MemoryMap
from .memory_ops import MemoryOps
from .staging import StagingOps


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=1024)
def is_user_file(filename: str) -> bool:
    """Kernel code, as opposed to the tritium package (asked per frame, per event)."""
    return not os.path.abspath(filename).startswith(_PKG_DIR)


@functools.lru_cache(maxsize=256)
def _columns(code: Any) -> tuple:
    positions = getattr(code, "co_positions", None)   # Python 3.11+
    return tuple(p[2] or 0 for p in positions()) if positions else ()


def _column(frame: Any) -> int:
    cols = _columns(frame.f_code)
    i = frame.f_lasti // 2
    return cols[i] if 0 <= i < len(cols) else 0


_NO_ORIGIN = (None, None, None, None)


def _axis(attrs: dict, rank: int) -> int:
    a = int(attrs["axis"])
    return a + rank if a < 0 else a


def _bound(v: Any) -> np.ndarray:
    if isinstance(v, core.tensor):
        return np.asarray(v.handle).reshape(-1).astype(np.int64)
    return np.array([int(core._unwrap(v))], np.int64)


def _common_lead(vals: Sequence[np.ndarray]) -> list[np.ndarray]:
    n = max(v.shape[0] for v in vals)
    return [np.broadcast_to(v, (n, *v.shape[1:])) for v in vals]


class NumpyBuilder(ElementwiseOps, MemoryOps, BlockOps, ExternOps, StagingOps):
    is_interpreter = True
    enable_assertions = True

    def __init__(self, memory: MemoryMap | None = None, grid: Sequence[int] = (1, 1, 1),
                 events: EventBus | None = None, oob: str = "raise") -> None:
        if oob not in ("raise", "skip"):
            raise ValueError(f"oob must be 'raise' or 'skip', got {oob!r}")
        self.memory = memory if memory is not None else MemoryMap()
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.pids = np.zeros((1, 3), np.int32)     # the programs of the running batch, in order
        self.events = events if events is not None else EventBus()
        self.oob = oob
        self.undo: list | None = None              # write log of a batch that may be run again
        self.widest = 1                            # most elements one program's op touched
        self._loc: Location | None = None
        self._origin_of: Sequence[Any] = _NO_ORIGIN
        self.checks = LaunchChecks()

    # -- batches ---------------------------------------------------------------
    @property
    def pid(self) -> tuple:
        """The (first) running program."""
        return tuple(int(v) for v in self.pids[0])

    @pid.setter
    def pid(self, value: Sequence[int]) -> None:
        self.begin_batch(np.asarray([tuple(value) + (0,) * (3 - len(value))], np.int32))

    def begin_batch(self, pids: np.ndarray) -> None:
        self.pids = np.asarray(pids, np.int32).reshape(-1, 3)
        several = len(self.pids) > 1
        self.undo = [] if several else None
        self.events.holding = several

    def end_batch(self) -> None:
        self.undo = None
        if self.events.holding:
            self.events.holding = False
            self.events.flush()

    def abandon_batch(self) -> None:
        """Undo the running batch's writes and drop its events: it runs again."""
        if self.undo:
            self.memory.restore(self.undo)
        self.events.discard()
        self.events.holding = False

    def require_order(self, what: str) -> None:
        if len(self.pids) > 1:
            raise NeedsOrder(what)

    def scalar_value(self, h: Any, what: str) -> Any:
        """The Python value of a one-element handle, the same in every program
        of the batch (else Diverged, with each program's value)."""
        arr = np.asarray(h)
        if arr.ndim == 0:
            return arr.item()
        col = arr.reshape(arr.shape[0], -1)[:, 0]
        if len(col) == 1:
            return col[0].item()
        keys = col.astype(bool) if what == "bool" else col
        if keys.dtype.kind == "f":
            keys = keys.view(f"u{keys.dtype.itemsize}")
        if (keys == keys[0]).all():
            return col[0].item()
        raise Diverged(keys)

    def loop(self, start: Any, end: Any, step: Any, iv_type: dtype) -> Iterator[Any]:
        """A range loop's induction values as scalar tensors of `iv_type`. The
        programs of a batch may start and step differently, but must agree on
        the trip count (else Diverged, keyed by it)."""
        s, e, st = np.broadcast_arrays(*(_bound(v) for v in (start, end, step)))
        if (st == 0).any():
            raise ValueError("range() step must not be zero")
        with np.errstate(all="ignore"):
            trips = np.where(st > 0, (e - s + st - 1) // st, (s - e - st - 1) // -np.where(st < 0, st, -1))
        trips = np.maximum(trips, 0)
        if len(trips) > 1 and (trips != trips[0]).any():
            raise Diverged(trips)
        return (core.tensor(wrap(s + k * st, iv_type), iv_type) for k in range(int(trips[0])))

    def wrap(self, value: Any, ty: dtype, origin: Any = None) -> KArray:
        out = wrap(value, ty)
        if origin is not None:
            out.origin = origin
        return out

    # -- protocol ------------------------------------------------------------
    def set_loc(self, file: str, line: int, col: int) -> None:
        self._loc = Location(file, line, col)

    def location(self) -> Location | None:
        """The user's source line: the innermost frame outside the tritium package
        (kernels run as plain Python), else the last `set_loc`."""
        f = sys._getframe(1)
        while f is not None:
            code = f.f_code
            if is_user_file(code.co_filename):
                return Location(code.co_filename, f.f_lineno, _column(f), code.co_name)
            f = f.f_back
        return self._loc

    def call_jit_function(self, fn: Any, args: Sequence[Any], kwargs: dict | None = None) -> Any:
        """A @jit function called from a kernel or from inside a builtin (a
        reduce's combine), with its constexpr parameters as plain values."""
        if not hasattr(fn, "bind_call"):
            return fn(*args, **(kwargs or {}))   # a plain Python function runs as itself, as when compiling
        return call_jit_in_interpreter(fn, *args, **(kwargs or {}))

    def create(self, op: str, operands: Sequence[Any], result_types: Sequence[dtype],
               attrs: dict[str, Any] | None = None) -> list[KArray]:
        impl = getattr(self, "_op_" + op, None)
        if impl is None:
            impl = ELEMENTWISE.get(op)
            if impl is None:
                raise InterpreterError(f"the interpreter does not know op {op!r}")
            impl = impl.__get__(self)
        types = [None if h is None else ktype_of(h) for h in operands]
        vals = [None if h is None else np.asarray(h) for h in operands]
        if not self.events.active:
            return impl(op, vals, types, list(result_types), attrs or {})
        self._origin_of = origins = [getattr(h, "origin", None) for h in operands] + [None] * 3
        results = impl(op, vals, types, list(result_types), attrs or {})
        # a value computed from a dot's result still counts as that dot's (for its C tile)
        dot = next((o for o in origins if isinstance(o, Location)), None)
        if dot is not None:
            for r in results:
                if r.origin is None:
                    r.origin = dot
        return results

    def create_combine(self, op: str, operands: Sequence[Any], result_types: Sequence[dtype],
                       attrs: dict[str, Any], elem_types: Sequence[dtype],
                       combine: Callable[[list, list], list]) -> list[KArray]:
        vals = _common_lead([np.asarray(h) for h in operands])
        axis = _axis(attrs, vals[0].ndim - 1) + 1
        if self.events.active:
            name = getattr(combine, "__name__", "combine")
            self.events.emit(ReduceEvent(self.pids, self.location(), op, vals[0].shape[1:], axis - 1,
                                         tuple(elem_types), name))
        if op == "reduce":
            outs = self._reduce(vals, axis, elem_types, combine)
            return [wrap(np.squeeze(o, axis), t) for o, t in zip(outs, result_types)]
        if op == "scan":
            reverse = bool(attrs.get("reverse", False))
            if reverse:
                vals = [np.flip(v, axis) for v in vals]
            outs = self._scan(vals, axis, elem_types, combine)
            if reverse:
                outs = [np.flip(o, axis) for o in outs]
            return [wrap(o, t) for o, t in zip(outs, result_types)]
        raise InterpreterError(f"create_combine: unknown op {op!r} (expected 'reduce' or 'scan')")

    def _op_inline_asm(self, op, vals, types, result_types, attrs):
        raise InterpreterError(f"inline_asm_elementwise cannot run in the interpreter ({self._where()}): "
                               f"it executes target assembly; run the kernel compiled on a GPU instead")

    # -- helpers ---------------------------------------------------------------
    def _error(self, cls: type, message: str) -> Exception:
        """`cls(message)` located at the kernel line running now."""
        loc = self.location()
        if loc is None:
            return cls(message)
        return cls(message, loc.file, loc.line, loc.col, linecache.getline(loc.file, loc.line) or None)

    def _where(self, program: int = 0) -> str:
        # the location itself heads the message (errors.located)
        return f"program {tuple(int(v) for v in self.pids[program])}"

    def _call_combine(self, combine, accs, news, elem_types, shape) -> list[np.ndarray]:
        outs = combine([wrap(a, t) for a, t in zip(accs, elem_types)], [wrap(n, t) for n, t in zip(news, elem_types)])
        return [np.broadcast_to(np.asarray(o), shape) for o in outs]

    def _reduce(self, vals, axis, elem_types, combine) -> list[np.ndarray]:
        # a tree over adjacent pairs: each step combines the contiguous runs
        # (2i) and (2i+1), the earlier one as the accumulator, so any associative
        # combine gets the left-to-right result, even a non-commutative one
        while vals[0].shape[axis] > 1:
            n = vals[0].shape[axis]
            if n % 2:
                raise InterpreterError(f"reduce: axis length {n} is not a power of two")
            lo = [_slice(v, axis, 0, n, 2) for v in vals]
            hi = [_slice(v, axis, 1, n, 2) for v in vals]
            vals = self._call_combine(combine, lo, hi, elem_types, lo[0].shape)
        return vals

    def _scan(self, vals, axis, elem_types, combine) -> list[np.ndarray]:
        # Hillis-Steele: after the step with distance d, lane i holds the combine
        # of lanes (i - 2d, i]; log2(n) vectorised steps
        n = vals[0].shape[axis]
        d = 1
        while d < n:
            prev = [_slice(v, axis, 0, n - d) for v in vals]
            cur = [_slice(v, axis, d, n) for v in vals]
            outs = self._call_combine(combine, prev, cur, elem_types, cur[0].shape)
            vals = [np.concatenate([_slice(v, axis, 0, d), o.astype(v.dtype, copy=False)], axis)
                    for v, o in zip(vals, outs)]
            d *= 2
        return vals

    # -- constants and ids -------------------------------------------------
    def _op_const(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        shape = (1, *(ty.shape if ty.is_block() else ()))
        v = attrs["value"]
        sca = ty.scalar
        if sca.is_floating():
            arr = np.full(shape, float(v), np.float64)
            return [wrap(arith.cast(arr, float64, sca), ty)]
        return [wrap(np.full(shape, v, floats.storage_dtype(sca)), ty)]

    def _op_splat(self, op, vals, types, rtys, attrs):
        v = vals[0].reshape(-1)     # one value per program (or one for all)
        shape = rtys[0].shape
        return [wrap(np.broadcast_to(v.reshape((len(v),) + (1,) * len(shape)), (len(v), *shape)), rtys[0])]

    def _op_arange(self, op, vals, types, rtys, attrs):
        return [wrap(np.arange(int(attrs["start"]), int(attrs["end"]), dtype=np.int32)[None], rtys[0])]

    def _op_program_id(self, op, vals, types, rtys, attrs):
        return [wrap(self.pids[:, int(attrs["axis"])], int32)]

    def _op_num_programs(self, op, vals, types, rtys, attrs):
        return [wrap(np.full(1, self.grid[int(attrs["axis"])], np.int32), int32)]

    # -- shape ops (axes shifted past the program axis) -------------------------
    def _op_broadcast(self, op, vals, types, rtys, attrs):
        v = vals[0]
        return [wrap(np.broadcast_to(v, (v.shape[0], *rtys[0].shape)), rtys[0])]

    def _op_expand_dims(self, op, vals, types, rtys, attrs):
        return [wrap(np.expand_dims(vals[0], _axis(attrs, len(rtys[0].shape)) + 1), rtys[0])]

    def _op_reshape(self, op, vals, types, rtys, attrs):
        v = vals[0]
        shape = rtys[0].shape if rtys[0].is_block() else ()
        return [wrap(np.reshape(v, (v.shape[0], *shape)), rtys[0])]

    def _op_permute(self, op, vals, types, rtys, attrs):
        order = (0, *(int(o) + 1 for o in attrs["order"]))
        origin = self._origin_of[0]
        if isinstance(origin, np.ndarray):
            origin = np.transpose(origin, order)
        return [self.wrap(np.transpose(vals[0], order), rtys[0], origin=origin)]

    def _op_join(self, op, vals, types, rtys, attrs):
        return [wrap(np.stack(_common_lead(vals[:2]), axis=-1), rtys[0])]

    def _op_split(self, op, vals, types, rtys, attrs):
        x = vals[0]
        return [wrap(x[..., 0], rtys[0]), wrap(x[..., 1], rtys[1])]

    def _op_cat(self, op, vals, types, rtys, attrs):
        return [wrap(np.concatenate(_common_lead(vals[:2]), axis=1), rtys[0])]

    # -- dot ---------------------------------------------------------------------
    def _op_dot(self, op, vals, types, rtys, attrs):
        a, b, acc = vals
        ty = rtys[0]
        self.widest = max(self.widest, acc.size // acc.shape[0], a.size // a.shape[0], b.size // b.shape[0])
        loc = None
        if self.events.active:
            loc = self.location()
            n = len(self.pids)
            a_from, b_from = (o if isinstance(o, np.ndarray) else None for o in self._origin_of[:2])
            self.events.emit(DotEvent(
                self.pids, loc, a.shape[1:], b.shape[1:], types[0], types[1], ty.scalar,
                str(attrs.get("input_precision", "")),
                None if a_from is None else np.broadcast_to(a_from, (n, *a_from.shape[1:])),
                None if b_from is None else np.broadcast_to(b_from, (n, *b_from.shape[1:]))))
        with np.errstate(all="ignore"):
            if types[0].is_int():
                prod = np.matmul(a.astype(np.int64), b.astype(np.int64))
                out = (prod + acc.astype(np.int64)).astype(np.int32)
            elif ty.scalar.is_fp64() or types[0].is_fp64():
                out = np.matmul(a.astype(np.float64), b.astype(np.float64)) + acc
            else:
                # products of f16/bf16/fp8 inputs are exact in f32; accumulate in f32
                out = np.matmul(a.astype(np.float32), b.astype(np.float32)) + acc.astype(np.float32)
        return [self.wrap(out, ty, origin=loc)]

    # -- debug -------------------------------------------------------------------
    def _op_assert(self, op, vals, types, rtys, attrs):
        cond = np.asarray(vals[0]).astype(bool)
        if not self.enable_assertions or cond.all():
            return []
        per_program = cond.reshape(cond.shape[0], -1) if cond.ndim else cond.reshape(1, 1)
        program = int(np.flatnonzero(~per_program.all(1))[0])
        failed = cond[program] if cond.ndim > 1 else np.asarray(cond[program] if cond.ndim else cond)
        bad = [tuple(int(i) for i in idx) for idx in np.argwhere(~failed)[:8]] if failed.ndim else []
        lanes = f" at lane(s) {bad}" if bad else ""
        raise self._error(DeviceAssertionError, f"device assertion failed in {self._where(program)}{lanes}: "
                                                f"{attrs.get('msg', '')}")

    def _op_print(self, op, vals, types, rtys, attrs):
        self.require_order("device_print")
        prefix = attrs.get("prefix", "")
        hexa = bool(attrs.get("hex", False))
        head = "pid ({}, {}, {})".format(*self.pid)
        if not vals:
            print(head + prefix, flush=True)
        for v, t in zip(vals, types):
            v = v[0] if v.ndim else v
            if hexa:
                bits = floats.to_bits(v, t)
                text = np.array2string(np.asarray(bits), formatter={"all": lambda x: f"0x{int(x):x}"})
            else:
                text = np.array2string(np.asarray(v)) if np.ndim(v) else str(np.asarray(v).item())
            print(f"{head}{prefix}{text}", flush=True)
        return []

    def _op_barrier(self, op, vals, types, rtys, attrs):
        return []


def _slice(v: np.ndarray, axis: int, start: int, stop: int, step: int = 1) -> np.ndarray:
    idx = [slice(None)] * v.ndim
    idx[axis] = slice(start, stop, step)
    return v[tuple(idx)]
