"""The values kernels compute with: `constexpr` (compile-time Python values) and
`tensor` (a builder handle plus its type), with Triton's operators and methods.

Every operator and method delegates to `semantic/`, which owns the rules;
this module only unwraps constexprs and routes. The public builtins live in
`builtins.py`; `__init__.py` gathers both into `tritium.language`.
"""
from __future__ import annotations

import enum
import functools
from typing import Any, Callable

from .builder import current_builder
from . import dtypes as _dtypes

# The rules behind every operator and method live in semantic/, which is built
# on this module's classes: semantic/__init__ hands itself over through
# `use_semantic` when it is imported (tritium.language imports it before any
# kernel runs), so this module imports nothing built on it.
semantic: Any = None

# The tensor-member spellings of builtins (x.sum(), x.exp(), ...): registered by
# _members.py, which sits above the builtins they name.
_MEMBERS: dict[str, Callable] = {}


def use_semantic(rules: Any) -> None:
    global semantic
    semantic = rules


def add_tensor_members(members: dict[str, Callable]) -> None:
    _MEMBERS.update(members)


class CompileTimeAssertionFailure(ValueError):
    """A `tl.static_assert` whose condition is false."""


def builtin(fn: Callable) -> Callable:
    """Mark `fn` as a language builtin: the frontend calls it directly with
    tensors/constexprs instead of compiling it as a user function. Keyword
    arguments Triton passes internally (`_builder`, `_semantic`, `_generator`)
    are accepted and ignored."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for k in ("_builder", "_semantic", "_generator"):
            kwargs.pop(k, None)
        return fn(*args, **kwargs)

    wrapper.__triton_builtin__ = True
    return wrapper


def is_builtin(fn: Any) -> bool:
    return getattr(fn, "__triton_builtin__", False)


def _unwrap(x: Any) -> Any:
    while isinstance(x, constexpr):
        x = x.value
    return x


_constexpr_to_value = _unwrap
_unwrap_if_constexpr = _unwrap


def is_constexpr_annotation(ann: Any) -> bool:
    """`x: tl.constexpr` (the class, or a string annotation naming it)."""
    return ann is constexpr or (isinstance(ann, str) and ann.replace(" ", "").split(".")[-1] == "constexpr")


def same_static(a: Any, b: Any) -> bool:
    """Two compile-time values are the same: one object, or equal values of one type."""
    a, b = _unwrap(a), _unwrap(b)
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _call_jit_function(fn: Any, args: list) -> Any:
    """Calls a @jit function from inside a builtin, e.g. a reduce combine
    function: the current builder does it (the compiler inlines it, the
    interpreter runs its checked Python body); a builder that cannot, as a
    test's recording builder, calls the Python function itself."""
    call = getattr(current_builder(), "call_jit_function", None)
    if call is not None:
        return call(fn, list(args))
    inner = getattr(fn, "fn", None)
    return inner(*args) if callable(inner) else fn(*args)


def call_combine_fn(fn: Any, args: list) -> Any:
    fn = _unwrap(fn)
    if is_builtin(fn):
        return fn(*args)
    return globals()["_call_jit_function"](fn, args)


class PropagateNan(enum.IntEnum):
    """How `minimum`/`maximum`/`clamp` treat NaN (Triton's values)."""
    NONE = 0x0000
    ALL = 0xFFFF


# ---------------------------------------------------------------------------
# constexpr
# ---------------------------------------------------------------------------


def _cx_binop(op: Callable[[Any, Any], Any], reflected: bool = False):
    def method(self, other):
        if isinstance(other, tensor):
            return NotImplemented
        a, b = self.value, _unwrap(other)
        return constexpr(op(b, a) if reflected else op(a, b))
    return method


class constexpr:
    """A value known at compile time. Also the annotation `x: tl.constexpr`."""

    def __init__(self, value: Any):
        self.value = _unwrap(value)

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __hash__(self) -> int:
        return hash(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __getitem__(self, key):
        return constexpr(self.value[_unwrap(key)])

    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

    def __getattr__(self, name):
        if name == "value":
            raise AttributeError(name)
        return getattr(self.value, name)

    def __neg__(self): return constexpr(-self.value)
    def __pos__(self): return constexpr(+self.value)
    def __invert__(self): return constexpr(~self.value)
    def __abs__(self): return constexpr(abs(self.value))

    def logical_and(self, other): return constexpr(self.value and _unwrap(other))
    def logical_or(self, other): return constexpr(self.value or _unwrap(other))
    def logical_not(self): return constexpr(not self.value)

    __add__ = _cx_binop(lambda a, b: a + b)
    __radd__ = _cx_binop(lambda a, b: a + b, True)
    __sub__ = _cx_binop(lambda a, b: a - b)
    __rsub__ = _cx_binop(lambda a, b: a - b, True)
    __mul__ = _cx_binop(lambda a, b: a * b)
    __rmul__ = _cx_binop(lambda a, b: a * b, True)
    __truediv__ = _cx_binop(lambda a, b: a / b)
    __rtruediv__ = _cx_binop(lambda a, b: a / b, True)
    __floordiv__ = _cx_binop(lambda a, b: a // b)
    __rfloordiv__ = _cx_binop(lambda a, b: a // b, True)
    __mod__ = _cx_binop(lambda a, b: a % b)
    __rmod__ = _cx_binop(lambda a, b: a % b, True)
    __pow__ = _cx_binop(lambda a, b: a ** b)
    __rpow__ = _cx_binop(lambda a, b: a ** b, True)
    __lshift__ = _cx_binop(lambda a, b: a << b)
    __rlshift__ = _cx_binop(lambda a, b: a << b, True)
    __rshift__ = _cx_binop(lambda a, b: a >> b)
    __rrshift__ = _cx_binop(lambda a, b: a >> b, True)
    __and__ = _cx_binop(lambda a, b: a & b)
    __rand__ = _cx_binop(lambda a, b: a & b, True)
    __or__ = _cx_binop(lambda a, b: a | b)
    __ror__ = _cx_binop(lambda a, b: a | b, True)
    __xor__ = _cx_binop(lambda a, b: a ^ b)
    __rxor__ = _cx_binop(lambda a, b: a ^ b, True)
    __eq__ = _cx_binop(lambda a, b: a == b)
    __ne__ = _cx_binop(lambda a, b: a != b)
    __lt__ = _cx_binop(lambda a, b: a < b)
    __le__ = _cx_binop(lambda a, b: a <= b)
    __gt__ = _cx_binop(lambda a, b: a > b)
    __ge__ = _cx_binop(lambda a, b: a >= b)


# ---------------------------------------------------------------------------
# tensor
# ---------------------------------------------------------------------------


def _shape_args(shape: tuple) -> tuple:
    """`f(x, 2, 3)` and `f(x, (2, 3))` both mean shape (2, 3), as in Triton."""
    if len(shape) == 1:
        only = _unwrap(shape[0])
        if isinstance(only, (tuple, list)):
            return tuple(only)
    return tuple(shape)


def _interp_value(t: "tensor", what: str):
    b = current_builder()
    if not getattr(b, "is_interpreter", False):
        raise TypeError(f"cannot use a tensor as a Python {what} while compiling: its value is only known "
                        f"when the kernel runs (use tl.where, or `if`/`for` on scalar tensors, which the "
                        f"compiler turns into control flow)")
    if t.type.is_block() and t.type.numel != 1:
        raise TypeError(f"cannot use a tensor of shape {list(t.shape)} as a Python {what}")
    return b.scalar_value(t.handle, what)


class tensor:
    """A kernel value: `handle` (the builder's) and `type` (scalar dtype or block_type)."""

    def __init__(self, handle: Any, type: "_dtypes.dtype"):
        self.handle = handle
        self.type = type
        self.dtype = type.scalar

    # ----- shape information
    @property
    def shape(self) -> tuple:
        return self.type.shape if self.type.is_block() else ()

    @property
    def numel(self) -> int:
        return self.type.numel if self.type.is_block() else 1

    @property
    def T(self) -> "tensor":
        return semantic.trans(self)

    def __repr__(self) -> str:
        return f"tensor({self.handle!r}, {self.type!r})" if self.type.is_block() else \
            f"tensor({self.handle!r}, {self.dtype!r})"

    __hash__ = object.__hash__

    # ----- interpreter-only conversions
    def __bool__(self) -> bool:
        return bool(_interp_value(self, "bool"))

    def __index__(self) -> int:
        if not self.dtype.is_int():
            raise TypeError(f"cannot use a {self.dtype} tensor as an index")
        return int(_interp_value(self, "int"))

    def __int__(self) -> int:
        return int(_interp_value(self, "int"))

    def __float__(self) -> float:
        return float(_interp_value(self, "float"))

    # ----- arithmetic
    def __add__(self, o): return semantic.add(self, o)
    def __radd__(self, o): return semantic.add(o, self)
    def __sub__(self, o): return semantic.sub(self, o)
    def __rsub__(self, o): return semantic.sub(o, self)
    def __mul__(self, o): return semantic.mul(self, o)
    def __rmul__(self, o): return semantic.mul(o, self)
    def __truediv__(self, o): return semantic.truediv(self, o)
    def __rtruediv__(self, o): return semantic.truediv(o, self)
    def __floordiv__(self, o): return semantic.floordiv(self, o)
    def __rfloordiv__(self, o): return semantic.floordiv(o, self)
    def __mod__(self, o): return semantic.mod(self, o)
    def __rmod__(self, o): return semantic.mod(o, self)
    def __neg__(self): return semantic.minus(self)
    def __pos__(self): return semantic.plus(self)
    def __invert__(self): return semantic.invert(self)
    def __abs__(self): return semantic.abs_(self)
    def __and__(self, o): return semantic.and_(self, o)
    def __rand__(self, o): return semantic.and_(o, self)
    def __or__(self, o): return semantic.or_(self, o)
    def __ror__(self, o): return semantic.or_(o, self)
    def __xor__(self, o): return semantic.xor_(self, o)
    def __rxor__(self, o): return semantic.xor_(o, self)
    def __lshift__(self, o): return semantic.shl(self, o)
    def __rlshift__(self, o): return semantic.shl(o, self)
    def __rshift__(self, o): return semantic.shr(self, o)
    def __rrshift__(self, o): return semantic.shr(o, self)
    def __eq__(self, o): return semantic.equal(self, o)
    def __ne__(self, o): return semantic.not_equal(self, o)
    def __lt__(self, o): return semantic.less_than(self, o)
    def __le__(self, o): return semantic.less_equal(self, o)
    def __gt__(self, o): return semantic.greater_than(self, o)
    def __ge__(self, o): return semantic.greater_equal(self, o)

    def __pow__(self, o):
        raise TypeError("'**' is not supported on tensors; multiply explicitly or use tl.exp2/tl.log2")

    __rpow__ = __pow__

    def logical_and(self, o): return semantic.logical_and(self, o)
    def logical_or(self, o): return semantic.logical_or(self, o)
    def logical_not(self): return semantic.not_(self)

    # ----- indexing: only `None` (new axis) and `:` (keep axis)
    def __getitem__(self, slices) -> "tensor":
        slices = _unwrap(slices)
        if not isinstance(slices, tuple):
            slices = (slices,)
        ret = self
        kept = 0
        for dim, sl in enumerate(slices):
            sl = _unwrap(sl)
            if sl is None:
                ret = semantic.expand_dims(ret, dim)
            elif isinstance(sl, slice) and sl.start is None and sl.stop is None and sl.step is None:
                kept += 1
            else:
                raise TypeError(f"unsupported tensor index {sl!r}: only None and ':' are allowed")
        if kept > len(self.shape):
            raise IndexError(f"too many ':' indices for a tensor of rank {len(self.shape)}")
        return ret

    def __iter__(self):
        raise TypeError("tensors are not iterable; use tl.split, tl.reduce or a loop over tl.range")

    def __len__(self):
        raise TypeError("len() of a tensor is not defined; use x.shape[0] or x.numel")

    # ----- methods Triton tensors have
    def to(self, dtype: Any, fp_downcast_rounding: Any = None, bitcast: Any = False) -> "tensor":
        dt = _unwrap(dtype)
        if not isinstance(dt, _dtypes.dtype):
            raise TypeError(f"tensor.to: expected a dtype, got {dtype!r}")
        if _unwrap(bitcast):
            return semantic.bitcast(self, dt)
        return semantic.cast(self, dt, _unwrap(fp_downcast_rounding))

    def reshape(self, *shape, can_reorder: bool = False) -> "tensor":
        return semantic.reshape(self, _shape_args(shape), _unwrap(can_reorder))

    def view(self, *shape) -> "tensor":
        return semantic.reshape(self, _shape_args(shape), can_reorder=True)

    def trans(self, *dims) -> "tensor":
        return semantic.trans(self, _shape_args(dims))

    def permute(self, *dims) -> "tensor":
        return semantic.permute(self, _shape_args(dims))

    def broadcast_to(self, *shape) -> "tensor":
        return semantic.broadcast_to(self, _shape_args(shape))

    def expand_dims(self, axis) -> "tensor":
        return semantic.expand_dims(self, axis)

    def split(self):
        return semantic.split(self)

    def ravel(self):
        return semantic.reshape(self, (self.numel,), can_reorder=True)

    def __getattr__(self, name: str):
        # the tensor-member spellings of builtins (x.sum(), x.exp(), ...): the
        # list lives in _members.py, beside the builtins it names
        if name.startswith("__"):
            raise AttributeError(name)
        fn = _MEMBERS.get(name)
        if fn is None:
            raise AttributeError(f"'tensor' object has no attribute {name!r}")
        return functools.partial(fn, self)


def _to_tensor(x: Any) -> tensor:
    """Python bool/int/float/constexpr → tensor (Triton's literal typing)."""
    return semantic.to_tensor(x)
