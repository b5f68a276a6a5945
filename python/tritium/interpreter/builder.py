"""`NumpyBuilder`: executes each op of docs/ir.md at once with NumPy, vectorised
over the block, for the interpreter (language/builder.py's protocol).

Handles are `KArray`s: NumPy arrays (0-d for scalar types) in the storage
dtype of floats.py, tagged with their kernel scalar type so ops that need an
operand's type (store, bitcast, cast out of bf16/fp8) know it. Semantics follow
compiled code: integers wrap, f32 stays f32, see arith.py for the edge cases.
"""
from __future__ import annotations

import functools

import os
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..language.dtypes import dtype, float32, float64, int1, int8, int16, int32, int64, uint8, uint16, \
    uint32, uint64, float16
from . import arith, floats
from .errors import DeviceAssertionError, InterpreterError
from .events import DotEvent, EventBus, Location, MemoryEvent
from .memory import MemoryMap, OutOfBoundsError


class KArray(np.ndarray):
    """A NumPy array that remembers the kernel scalar type it holds."""
    ktype: dtype | None = None

    def __array_finalize__(self, obj: Any) -> None:
        self.ktype = getattr(obj, "ktype", None)


_NP_TO_KTYPE = {
    np.dtype(np.bool_): int1, np.dtype(np.int8): int8, np.dtype(np.int16): int16, np.dtype(np.int32): int32,
    np.dtype(np.int64): int64, np.dtype(np.uint8): uint8, np.dtype(np.uint16): uint16,
    np.dtype(np.uint32): uint32, np.dtype(np.uint64): uint64, np.dtype(np.float16): float16,
    np.dtype(np.float32): float32, np.dtype(np.float64): float64,
}


def wrap(value: Any, ty: dtype) -> KArray:
    """`value` as a handle of kernel type `ty` (scalar or block), in its storage dtype."""
    sca = ty.scalar
    arr = np.asarray(value)
    if floats.needs_rounding(sca):
        arr = floats.round_to(arr, sca.name).astype(np.float32)
    else:
        arr = arr.astype(floats.storage_dtype(sca), copy=False)
    out = arr.view(KArray)
    out.ktype = sca
    return out


def ktype_of(h: Any) -> dtype:
    """A handle's kernel scalar type (inferred from the NumPy dtype if untagged)."""
    t = getattr(h, "ktype", None)
    if t is not None:
        return t
    try:
        return _NP_TO_KTYPE[np.asarray(h).dtype]
    except KeyError:
        raise InterpreterError(f"value of NumPy dtype {np.asarray(h).dtype} is not a kernel value") from None


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=1024)
def is_user_file(filename: str) -> bool:
    """Kernel code, as opposed to the tritium package (asked per frame, per event)."""
    return not os.path.abspath(filename).startswith(_PKG_DIR)

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}
_UNARY_FLOAT = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
                "sqrt_rn": np.sqrt, "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil}


class NumpyBuilder:
    is_interpreter = True
    enable_assertions = True

    def __init__(self, memory: MemoryMap | None = None, grid: Sequence[int] = (1, 1, 1),
                 events: EventBus | None = None, oob: str = "raise") -> None:
        if oob not in ("raise", "skip"):
            raise ValueError(f"oob must be 'raise' or 'skip', got {oob!r}")
        self.memory = memory if memory is not None else MemoryMap()
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.pid = (0, 0, 0)
        self.events = events if events is not None else EventBus()
        self.oob = oob
        self._loc: Location | None = None
        from .kernel_code import LaunchChecks
        self.checks = LaunchChecks()

    # -- protocol ------------------------------------------------------------
    def set_loc(self, file: str, line: int, col: int) -> None:
        self._loc = Location(file, line, col)

    def location(self) -> Location | None:
        """The user's source line: the innermost frame outside the tritium package
        (kernels run as plain Python), else the last `set_loc`."""
        f = sys._getframe(1)
        while f is not None:
            fname = f.f_code.co_filename
            if is_user_file(fname):
                return Location(fname, f.f_lineno)
            f = f.f_back
        return self._loc

    def call_jit_function(self, fn: Any, args: Sequence[Any]) -> Any:
        """A @jit function called from inside a builtin (a reduce's combine)."""
        if not hasattr(fn, "bind_call"):
            return fn(*args)   # a plain Python function runs as itself, as when compiling
        from .runner import call_jit_in_interpreter
        return call_jit_in_interpreter(fn, *args)

    def create(self, op: str, operands: Sequence[Any], result_types: Sequence[dtype],
               attrs: dict[str, Any] | None = None) -> list[KArray]:
        impl = getattr(self, "_op_" + op, None)
        if impl is None:
            impl = self._ELEMENTWISE.get(op)
            if impl is None:
                raise InterpreterError(f"the interpreter does not know op {op!r}")
            impl = impl.__get__(self)
        types = [None if h is None else ktype_of(h) for h in operands]
        vals = [None if h is None else np.asarray(h) for h in operands]
        return impl(op, vals, types, list(result_types), attrs or {})

    def create_combine(self, op: str, operands: Sequence[Any], result_types: Sequence[dtype],
                       attrs: dict[str, Any], elem_types: Sequence[dtype],
                       combine: Callable[[list, list], list]) -> list[KArray]:
        vals = [np.asarray(h) for h in operands]
        axis = int(attrs["axis"])
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
    def _where(self) -> str:
        loc = self.location()
        return f"program {self.pid}" + (f" at {loc}" if loc else "")

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
        shape = ty.shape if ty.is_block() else ()
        v = attrs["value"]
        sca = ty.scalar
        if sca.is_floating():
            arr = np.full(shape, float(v), np.float64)
            return [wrap(arith.cast(arr, float64, sca), ty)]
        return [wrap(np.full(shape, v, floats.storage_dtype(sca)), ty)]

    def _op_splat(self, op, vals, types, rtys, attrs):
        return [wrap(np.broadcast_to(vals[0], rtys[0].shape), rtys[0])]

    def _op_arange(self, op, vals, types, rtys, attrs):
        return [wrap(np.arange(int(attrs["start"]), int(attrs["end"]), dtype=np.int32), rtys[0])]

    def _op_program_id(self, op, vals, types, rtys, attrs):
        return [wrap(np.int32(self.pid[int(attrs["axis"])]), int32)]

    def _op_num_programs(self, op, vals, types, rtys, attrs):
        return [wrap(np.int32(self.grid[int(attrs["axis"])]), int32)]

    # -- elementwise ---------------------------------------------------------
    def _arith(self, op, vals, types, rtys, attrs):
        a, b = vals
        ty = rtys[0]
        sca = ty.scalar
        with np.errstate(all="ignore"):
            if sca.is_int1():  # arithmetic modulo 2
                out = {"add": np.logical_xor, "sub": np.logical_xor, "mul": np.logical_and}[op](a, b)
            else:
                out = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a, b)
        return [wrap(out, ty)]

    def _div(self, op, vals, types, rtys, attrs):
        a, b = vals
        ty = rtys[0]
        sca = ty.scalar
        with np.errstate(all="ignore"):
            if sca.is_floating():
                if op == "rem":
                    out = np.fmod(a, b)
                else:
                    out = np.divide(a, b)
            elif sca.is_int1():  # dividing by false (0) follows the integer rule: all ones / the dividend
                out = np.where(b, a, True) if op == "div" else np.where(b, False, a)
            elif op == "div":
                out = arith.int_div(a, b, sca)
            elif op == "rem":
                out = arith.int_rem(a, b, sca)
            else:
                raise InterpreterError(f"{op} needs float operands, got {sca}")
        return [wrap(out, ty)]

    def _bitwise(self, op, vals, types, rtys, attrs):
        a, b = vals
        out = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b)
        return [wrap(out, rtys[0])]

    def _shift(self, op, vals, types, rtys, attrs):
        return [wrap(arith.shift(vals[0], vals[1], rtys[0], op == "shl"), rtys[0])]

    def _minmax(self, op, vals, types, rtys, attrs):
        a, b = vals
        ty = rtys[0]
        if ty.scalar.is_floating():
            prop = bool(attrs.get("propagate_nan", False))
            fn = {("min", False): np.fmin, ("max", False): np.fmax,
                  ("min", True): np.minimum, ("max", True): np.maximum}[(op, prop)]
        else:
            fn = np.minimum if op == "min" else np.maximum
        return [wrap(fn(a, b), ty)]

    def _op_umulhi(self, op, vals, types, rtys, attrs):
        return [wrap(arith.umulhi(vals[0], vals[1], rtys[0]), rtys[0])]

    def _op_cmp(self, op, vals, types, rtys, attrs):
        pred = attrs["pred"]
        if pred not in _CMP:
            raise InterpreterError(f"cmp: unknown predicate {pred!r}")
        return [wrap(_CMP[pred](vals[0], vals[1]), rtys[0])]

    def _op_neg(self, op, vals, types, rtys, attrs):
        with np.errstate(all="ignore"):
            out = vals[0] if rtys[0].scalar.is_int1() else np.negative(vals[0])
        return [wrap(out, rtys[0])]

    def _op_not(self, op, vals, types, rtys, attrs):
        return [wrap(np.invert(vals[0]), rtys[0])]

    def _op_abs(self, op, vals, types, rtys, attrs):
        with np.errstate(all="ignore"):
            out = vals[0] if rtys[0].scalar.is_int_unsigned() or rtys[0].scalar.is_int1() else np.abs(vals[0])
        return [wrap(out, rtys[0])]

    def _unary_math(self, op, vals, types, rtys, attrs):
        x = vals[0]
        ty = rtys[0]
        if not ty.scalar.is_floating():
            raise InterpreterError(f"{op} needs a float operand, got {ty.scalar}")
        with np.errstate(all="ignore"):
            if op == "erf":
                out = arith.erf(x)
            elif op == "rsqrt":
                out = np.divide(x.dtype.type(1), np.sqrt(x))
            else:
                out = _UNARY_FLOAT[op](x)
        return [wrap(out, ty)]

    def _op_fma(self, op, vals, types, rtys, attrs):
        return [wrap(arith.fma(*vals, rtys[0]), rtys[0])]  # one rounding from float64

    def _op_select(self, op, vals, types, rtys, attrs):
        return [wrap(np.where(vals[0], vals[1], vals[2]), rtys[0])]

    def _op_clamp(self, op, vals, types, rtys, attrs):
        x, lo, hi = vals
        with np.errstate(all="ignore"):
            if bool(attrs.get("propagate_nan", False)):
                out = np.minimum(np.maximum(x, lo), hi)
            else:
                out = np.fmin(np.fmax(x, lo), hi)
        return [wrap(out, rtys[0])]

    # -- casts and pointers ------------------------------------------------
    def _op_cast(self, op, vals, types, rtys, attrs):
        src, dst = types[0], rtys[0].scalar
        if src.is_ptr() or dst.is_ptr():
            raise InterpreterError(f"cast between {src} and {dst}: use ptr_to_int/int_to_ptr/bitcast")
        rounding = attrs.get("rounding", "rtne") or "rtne"
        return [wrap(arith.cast(vals[0], src, dst, rounding), rtys[0])]

    def _op_bitcast(self, op, vals, types, rtys, attrs):
        src, dst = types[0], rtys[0].scalar
        if src.primitive_bitwidth != dst.primitive_bitwidth:
            raise InterpreterError(f"bitcast from {src} to {dst}: bit widths differ")
        return [wrap(floats.from_bits(floats.to_bits(vals[0], src), dst), rtys[0])]

    def _op_ptr_to_int(self, op, vals, types, rtys, attrs):
        return [wrap(vals[0], rtys[0])]

    def _op_int_to_ptr(self, op, vals, types, rtys, attrs):
        return [wrap(vals[0].astype(np.int64), rtys[0])]

    def _op_addptr(self, op, vals, types, rtys, attrs):
        elem = rtys[0].scalar.element_ty
        with np.errstate(all="ignore"):
            off = vals[1].astype(np.int64) * np.int64(floats.memory_itemsize(elem))
            out = vals[0].astype(np.int64) + off
        return [wrap(out, rtys[0])]

    # -- memory ----------------------------------------------------------------
    def _lanes(self, ptr: np.ndarray, mask: np.ndarray | None, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
        addr = np.broadcast_to(ptr, shape).astype(np.int64)
        active = np.ones(shape, bool) if mask is None else np.broadcast_to(mask, shape).astype(bool)
        return addr, active

    def _access(self, kind: str, addr, active, elem: dtype, atomic_kind: str = "") -> np.ndarray:
        """Emits the event, then checks bounds; returns the region of each lane
        (-1 = not accessed)."""
        nbytes = floats.memory_itemsize(elem)
        if self.events.active:
            self.events.emit(MemoryEvent(kind, self.pid, self.location(), addr.copy(), active.copy(), elem,
                                         nbytes, atomic_kind), self.memory)
        if self.oob == "skip":
            return np.where(active, self.memory.find(addr, nbytes), -1)
        try:
            return self.memory.check(addr, active, nbytes, kind)
        except OutOfBoundsError as e:
            raise OutOfBoundsError(f"{e} ({self._where()})") from None

    def _read(self, addr, regions, elem: dtype) -> np.ndarray:
        nbytes = floats.memory_itemsize(elem)
        raw = self.memory.gather(addr, regions, nbytes)
        bits = raw.view(np.dtype(f"<u{nbytes}")).reshape(addr.shape)
        return floats.from_bits(bits, elem)

    def _write(self, addr, regions, elem: dtype, value: np.ndarray) -> None:
        nbytes = floats.memory_itemsize(elem)
        bits = floats.to_bits(np.broadcast_to(value, addr.shape), elem)
        raw = np.ascontiguousarray(bits.astype(np.dtype(f"<u{nbytes}"))).reshape(-1).view(np.uint8)
        self.memory.scatter(addr, regions, raw.reshape(-1, nbytes))

    def _op_load(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        elem = ty.scalar
        shape = ty.shape if ty.is_block() else ()
        mask = vals[1] if len(vals) > 1 else None
        other = vals[2] if len(vals) > 2 else None
        addr, active = self._lanes(vals[0], mask, shape)
        regions = self._access("load", addr, active, elem)
        data = self._read(addr, regions, elem)
        fill = np.zeros(shape, data.dtype) if other is None else np.broadcast_to(other, shape)
        return [wrap(np.where(regions >= 0, data, fill), ty)]

    def _op_store(self, op, vals, types, rtys, attrs):
        ptr_t = types[0]
        elem = ptr_t.element_ty if ptr_t.is_ptr() else types[1]
        shape = np.shape(vals[0])
        mask = vals[2] if len(vals) > 2 else None
        addr, active = self._lanes(vals[0], mask, shape)
        regions = self._access("store", addr, active, elem)
        self._write(addr, regions, elem, vals[1])
        return []

    def _atomic(self, kind: str, atomic_kind: str, addr, active, elem: dtype, update: Callable) -> np.ndarray:
        """Applies `update(old, lanes) -> new` lane by lane in lane order per
        address: lanes are grouped into rounds where each address occurs once,
        so every round is one vectorised read-modify-write."""
        shape = addr.shape
        regions = self._access(kind, addr, active, elem, atomic_kind)
        flat_addr, flat_reg = addr.reshape(-1), regions.reshape(-1)
        old = np.zeros(flat_addr.shape, floats.storage_dtype(elem))
        lanes = np.flatnonzero(flat_reg >= 0)
        if lanes.size:
            a = flat_addr[lanes]
            order = np.argsort(a, kind="stable")
            sa = a[order]
            starts = np.concatenate([[True], sa[1:] != sa[:-1]])
            first = np.flatnonzero(starts)[np.cumsum(starts) - 1]
            rank = np.empty(lanes.size, np.int64)
            rank[order] = np.arange(lanes.size) - first
            for r in range(int(rank.max()) + 1):
                sel = lanes[rank == r]
                cur = self._read(flat_addr[sel], flat_reg[sel], elem)
                old[sel] = cur
                new = update(cur, sel)
                self._write(flat_addr[sel], flat_reg[sel], elem, new)
        return old.reshape(shape)

    def _op_atomic_rmw(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        elem = ty.scalar
        kind = attrs["kind"]
        shape = ty.shape if ty.is_block() else ()
        mask = vals[2] if len(vals) > 2 else None
        addr, active = self._lanes(vals[0], mask, shape)
        val = np.broadcast_to(vals[1], shape).reshape(-1)
        floating = elem.is_floating()
        fns = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
               "max": np.fmax if floating else np.maximum, "min": np.fmin if floating else np.minimum}
        if kind not in fns and kind != "xchg":
            raise InterpreterError(f"atomic_rmw: unknown kind {kind!r}")

        def update(old, sel):
            with np.errstate(all="ignore"):
                new = val[sel] if kind == "xchg" else fns[kind](old, val[sel])
            return np.asarray(wrap(new, elem))
        return [wrap(self._atomic("atomic_rmw", kind, addr, active, elem, update), ty)]

    def _op_atomic_cas(self, op, vals, types, rtys, attrs):
        ty = rtys[0]
        elem = ty.scalar
        shape = ty.shape if ty.is_block() else ()
        addr, active = self._lanes(vals[0], None, shape)
        cmp = floats.to_bits(np.broadcast_to(vals[1], shape), elem).reshape(-1)
        val = np.broadcast_to(vals[2], shape).reshape(-1)

        def cas(old, sel):  # compares bit patterns, as the hardware does
            return np.where(floats.to_bits(old, elem) == cmp[sel], val[sel], old)
        return [wrap(self._atomic("atomic_cas", "cas", addr, active, elem, cas), ty)]

    # -- shape ops -------------------------------------------------------------
    def _op_broadcast(self, op, vals, types, rtys, attrs):
        return [wrap(np.broadcast_to(vals[0], rtys[0].shape), rtys[0])]

    def _op_expand_dims(self, op, vals, types, rtys, attrs):
        return [wrap(np.expand_dims(vals[0], int(attrs["axis"])), rtys[0])]

    def _op_reshape(self, op, vals, types, rtys, attrs):
        return [wrap(np.reshape(vals[0], rtys[0].shape), rtys[0])]

    def _op_permute(self, op, vals, types, rtys, attrs):
        return [wrap(np.transpose(vals[0], tuple(attrs["order"])), rtys[0])]

    def _op_join(self, op, vals, types, rtys, attrs):
        return [wrap(np.stack([vals[0], vals[1]], axis=-1), rtys[0])]

    def _op_split(self, op, vals, types, rtys, attrs):
        x = vals[0]
        return [wrap(x[..., 0], rtys[0]), wrap(x[..., 1], rtys[1])]

    def _op_cat(self, op, vals, types, rtys, attrs):
        return [wrap(np.concatenate([vals[0], vals[1]], axis=0), rtys[0])]

    def _hint(self, op, vals, types, rtys, attrs):
        return [wrap(vals[0], rtys[0])]

    # -- dot ---------------------------------------------------------------------
    def _op_dot(self, op, vals, types, rtys, attrs):
        a, b, acc = vals
        ty = rtys[0]
        if self.events.active:
            self.events.emit(DotEvent(self.pid, self.location(), a.shape, b.shape, types[0], types[1], ty.scalar,
                                      str(attrs.get("input_precision", ""))), self.memory)
        with np.errstate(all="ignore"):
            if types[0].is_int():
                prod = np.matmul(a.astype(np.int64), b.astype(np.int64))
                out = (prod + acc.astype(np.int64)).astype(np.int32)
            elif ty.scalar.is_fp64() or types[0].is_fp64():
                out = np.matmul(a.astype(np.float64), b.astype(np.float64)) + acc
            else:
                # products of f16/bf16/fp8 inputs are exact in f32; accumulate in f32
                out = np.matmul(a.astype(np.float32), b.astype(np.float32)) + acc.astype(np.float32)
        return [wrap(out, ty)]

    # -- debug -------------------------------------------------------------------
    def _op_assert(self, op, vals, types, rtys, attrs):
        cond = np.asarray(vals[0]).astype(bool)
        if not self.enable_assertions or cond.all():
            return []
        bad = [tuple(int(i) for i in idx) for idx in np.argwhere(~cond)[:8]] if cond.ndim else []
        lanes = f" at lane(s) {bad}" if bad else ""
        raise DeviceAssertionError(f"device assertion failed in {self._where()}{lanes}: {attrs.get('msg', '')}")

    def _op_print(self, op, vals, types, rtys, attrs):
        prefix = attrs.get("prefix", "")
        hexa = bool(attrs.get("hex", False))
        head = f"pid ({self.pid[0]}, {self.pid[1]}, {self.pid[2]})"
        if not vals:
            print(head + prefix, flush=True)
        for v, t in zip(vals, types):
            if hexa:
                bits = floats.to_bits(v, t)
                text = np.array2string(np.asarray(bits), formatter={"all": lambda x: f"0x{int(x):x}"})
            else:
                text = np.array2string(np.asarray(v)) if np.ndim(v) else str(np.asarray(v).item())
            print(f"{head}{prefix}{text}", flush=True)
        return []

    def _op_barrier(self, op, vals, types, rtys, attrs):
        return []


# ops sharing one implementation, looked up by `create` after the `_op_<name>` methods
NumpyBuilder._ELEMENTWISE = {
    **{k: NumpyBuilder._arith for k in ("add", "sub", "mul")},
    **{k: NumpyBuilder._div for k in ("div", "div_rn", "rem")},
    **{k: NumpyBuilder._bitwise for k in ("and", "or", "xor")},
    **{k: NumpyBuilder._shift for k in ("shl", "shr")},
    **{k: NumpyBuilder._minmax for k in ("min", "max")},
    **{k: NumpyBuilder._unary_math for k in (*_UNARY_FLOAT, "rsqrt", "erf")},
    **{k: NumpyBuilder._hint for k in ("multiple_of", "max_contiguous", "max_constancy")},
}


def _slice(v: np.ndarray, axis: int, start: int, stop: int, step: int = 1) -> np.ndarray:
    idx = [slice(None)] * v.ndim
    idx[axis] = slice(start, stop, step)
    return v[tuple(idx)]
