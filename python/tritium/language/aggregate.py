"""`@aggregate`: a class whose instances are kernel values with named, typed
fields (tensors, scalars, constexprs, tuples, other aggregates) and @jit
methods. Instances are ordinary Python objects, so the interpreter gets
Python's reference semantics for free; the compiler (compiler/aggregates.py)
keeps the same semantics by flattening fields into SSA values where control
flow needs it. Field type rules live here so both sides check the same way."""
from __future__ import annotations

import inspect
import itertools
import typing
from typing import Any, Callable

from . import core, semantic
from .builder import current_builder
from .dtypes import dtype
from .kernel_function import KernelFunction, as_kernel_function

_serial = itertools.count(1)


def is_aggregate(v: Any) -> bool:
    return getattr(type(v), "__tritium_aggregate__", False) is True


def fields_of(v: Any) -> dict[str, "Field"]:
    return type(v).__tritium_fields__


def serial_of(v: Any) -> int:
    """Creation order of an instance (the compiler uses it to tell objects
    made inside a loop or branch from those that existed before)."""
    return v.__dict__.get("_tritium_serial", 0)


def set_raw(obj: Any, name: str, value: Any) -> None:
    """Stores a field without checks (values the compiler rebuilt or merged)."""
    obj.__dict__[name] = value


def new_instance(cls: type, values: dict[str, Any]) -> Any:
    obj = cls.__new__(cls)
    obj.__dict__["_tritium_serial"] = next(_serial)
    obj.__dict__.update(values)
    return obj


def field_values(obj: Any) -> dict[str, Any]:
    """The fields that are set, in declaration order."""
    d = obj.__dict__
    return {k: d[k] for k in type(obj).__tritium_fields__ if k in d}


class Field:
    """One declared field: its name, a readable type description, and the
    check/convert function applied on every assignment."""

    def __init__(self, owner: str, name: str, ann: Any):
        self.owner, self.name, self.ann = owner, name, ann
        self.is_constexpr = core.is_constexpr_annotation(ann)
        self.check = _checker(ann, owner, name)

    def describe(self) -> str:
        return _ann_name(self.ann)


def _ann_name(ann: Any) -> str:
    if ann is core.tensor:
        return "tensor"
    if core.is_constexpr_annotation(ann):
        return "constexpr"
    if isinstance(ann, dtype):
        return f"{ann} scalar or tensor"
    return getattr(ann, "__name__", None) or repr(ann)


def _got(v: Any) -> str:
    if isinstance(v, core.tensor):
        return f"a tensor of type {v.type}"
    if isinstance(v, core.constexpr):
        return f"constexpr {v.value!r}"
    if is_aggregate(v):
        return f"an aggregate '{type(v).__name__}'"
    return f"{type(v).__name__} {v!r}"


def _is_static(v: Any) -> bool:
    if isinstance(v, core.tensor) or is_aggregate(v):
        return False
    v = core._unwrap(v)
    if isinstance(v, (tuple, list)):
        return all(_is_static(x) for x in v)
    return True


def _checker(ann: Any, owner: str, name: str) -> Callable[[Any], Any]:
    what = f"field '{name}' of aggregate '{owner}'"

    def fail(v: Any, expected: str) -> None:
        raise TypeError(f"{what} expects {expected}, got {_got(v)}")

    if core.is_constexpr_annotation(ann):
        def check_constexpr(v: Any) -> Any:
            if not _is_static(v):
                fail(v, "a constexpr (a value known at compile time)")
            return core.constexpr(core._unwrap(v))
        return check_constexpr
    if ann is core.tensor:
        def check_tensor(v: Any) -> Any:
            v = core._unwrap(v)
            if isinstance(v, core.tensor):
                return v
            if isinstance(v, (bool, int, float)):
                return semantic.to_tensor(v)
            fail(v, "a tensor")
        return check_tensor
    if isinstance(ann, dtype):
        def check_dtype(v: Any) -> Any:
            v = core._unwrap(v)
            if isinstance(v, (bool, int, float)):
                return semantic.cast(semantic.to_tensor(v), ann)
            if not isinstance(v, core.tensor) or v.dtype != ann:
                fail(v, f"a {ann} scalar or tensor")
            return v
        return check_dtype
    if ann in (int, float, bool):
        kinds = {int: (int, bool), float: (int, float, bool), bool: (bool,)}[ann]

        def check_number(v: Any) -> Any:
            v = core._unwrap(v)
            if isinstance(v, core.tensor) and not v.type.is_block():
                if {float: v.dtype.is_floating(), int: v.dtype.is_int() and not v.dtype.is_int1(),
                        bool: v.dtype.is_int1()}[ann]:
                    return v
            elif isinstance(v, kinds):
                return v
            fail(v, f"a scalar {ann.__name__}")
        return check_number
    if getattr(ann, "__tritium_aggregate__", False):
        def check_aggregate(v: Any) -> Any:
            if not isinstance(v, ann):
                fail(v, f"an aggregate '{ann.__name__}'")
            return v
        return check_aggregate
    if ann is tuple or typing.get_origin(ann) is tuple:
        args = typing.get_args(ann)
        elems = None
        if args and not (len(args) == 2 and args[1] is Ellipsis):
            elems = [_checker(a, owner, f"{name}[{i}]") for i, a in enumerate(args)]

        def check_tuple(v: Any) -> Any:
            v = core._unwrap(v)
            if not isinstance(v, (tuple, list)):
                fail(v, "a tuple")
            if elems is None:
                return tuple(v)
            if len(v) != len(elems):
                fail(v, f"a tuple of {len(elems)} values")
            return tuple(c(x) for c, x in zip(elems, v))
        return check_tuple
    if ann is typing.Any or ann is object:
        return lambda v: v
    raise TypeError(f"{what}: unsupported annotation {ann!r} (use tl.tensor, a dtype such as tl.float32, "
                    "tl.constexpr, int/float/bool, tuple, another aggregate or typing.Any)")


class _BoundMethod:
    """`obj.method`: calling it calls the @jit method with `obj` first, so the
    frontend inlines it (or emits a call for noinline) like any @jit call."""
    __slots__ = ("jit_fn", "obj")

    def __init__(self, jit_fn: Any, obj: Any):
        self.jit_fn, self.obj = jit_fn, obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.jit_fn(self.obj, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<bound aggregate method {self.jit_fn.__qualname__}>"


class _Method:
    def __init__(self, jit_fn: Any):
        self.jit_fn = jit_fn

    def __get__(self, obj: Any, owner: type) -> Any:
        return self.jit_fn if obj is None else _BoundMethod(self.jit_fn, obj)


def _setattr(self: Any, name: str, value: Any) -> None:
    fields = type(self).__tritium_fields__
    f = fields.get(name)
    if f is None:
        raise AttributeError(f"aggregate '{type(self).__name__}' has no field '{name}' "
                             f"(fields: {', '.join(fields) or 'none'})")
    value = f.check(value)
    if f.is_constexpr and name in self.__dict__ and _interpreting() \
            and not core.same_static(self.__dict__[name], value):
        # the compiler refuses this inside a runtime loop or branch; so must the interpreter
        _interpreter_regions.check_constexpr_change(self, name, self.__dict__[name], value)
    self.__dict__[name] = value


def constexpr_change_message(obj: Any, name: str, old: Any, new: Any, where: str) -> str:
    """The compiler's and the interpreter's error for a constexpr field of an
    older object changed inside a runtime loop or branch (one text for both)."""
    return (f"constexpr field '{name}' of aggregate '{type(obj).__name__}' cannot change inside {where} "
            f"(from {core._unwrap(old)!r} to {core._unwrap(new)!r}): its value must be the same on every path")


# What interpreted kernels add to aggregates: where each object was made, and
# the refusal of a constexpr field changed inside a runtime loop or branch.
# The interpreter (interpreter/regions.py) reads that from the kernel's frames
# and registers itself here, since it is built on this module.
_interpreter_regions: Any = None


def use_interpreter_regions(regions: Any) -> None:
    global _interpreter_regions
    _interpreter_regions = regions


def _interpreting() -> bool:
    try:
        return bool(getattr(current_builder(), "is_interpreter", False))
    except RuntimeError:  # no kernel running: a host-side object
        return False



def _getattr(self: Any, name: str) -> Any:
    # only called when normal lookup failed
    cls = type(self)
    if name in cls.__tritium_fields__:
        raise AttributeError(f"field '{name}' of aggregate '{cls.__name__}' is read before it is set")
    raise AttributeError(f"aggregate '{cls.__name__}' has no field or method '{name}'")


def _repr(self: Any) -> str:
    parts = ", ".join(f"{k}={v!r}" for k, v in field_values(self).items())
    return f"{type(self).__name__}({parts})"


def _as_jit(fn: Any) -> Any:
    return as_kernel_function(fn)


def _make_init(cls: type, user_init: Any) -> Callable:
    names = list(cls.__tritium_fields__)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_tritium_serial"] = next(_serial)
        if _interpreting():
            self.__dict__["_tritium_made_in"] = _interpreter_regions.creation_site()
        if user_init is not None:
            user_init(self, *args, **kwargs)
        else:
            if len(args) > len(names):
                raise TypeError(f"{cls.__name__}() takes {len(names)} field values but {len(args)} were given")
            for k, v in zip(names, args):
                if k in kwargs:
                    raise TypeError(f"{cls.__name__}() got multiple values for field '{k}'")
                kwargs[k] = v
            for k, v in kwargs.items():
                setattr(self, k, v)
        unset = [k for k in names if k not in self.__dict__]
        if unset:
            who = f"{cls.__name__}.__init__" if user_init is not None else f"{cls.__name__}()"
            raise TypeError(f"{who} left field{'s' * (len(unset) > 1)} {', '.join(repr(u) for u in unset)} "
                            f"of aggregate '{cls.__name__}' unset")
    return __init__


def aggregate(cls: type) -> type:
    """Class decorator: annotated fields become the kernel value's fields;
    functions defined in the class become @jit methods (`__init__` included)."""
    if not isinstance(cls, type):
        raise TypeError(f"@aggregate expects a class, got {cls!r}")
    try:
        anns = inspect.get_annotations(cls, eval_str=True)
    except Exception as e:  # a string annotation that does not resolve
        raise TypeError(f"@aggregate class '{cls.__name__}': cannot resolve field annotations ({e})") from None
    fields = {name: Field(cls.__name__, name, ann) for name, ann in anns.items()}
    for k in fields:
        if k.startswith("_tritium"):
            raise TypeError(f"@aggregate class '{cls.__name__}': field name '{k}' is reserved")
    cls.__tritium_fields__ = fields
    cls.__tritium_aggregate__ = True
    cls.__triton_builtin__ = True  # the frontend may call the class (construct) and use it as a global
    user_init = None
    # every method as a @jit function: the disk-cache key reaches their sources through the class
    cls.__tritium_methods__ = methods = {}
    for name, val in list(vars(cls).items()):
        is_fn = inspect.isfunction(val) or isinstance(val, KernelFunction)
        if not is_fn or (name.startswith("__") and name != "__init__"):
            continue
        jf = methods[name] = _as_jit(val)
        if name == "__init__":
            user_init = jf
        else:
            setattr(cls, name, _Method(jf))
    cls.__init__ = _make_init(cls, user_init)
    cls.__setattr__ = _setattr
    cls.__getattr__ = _getattr
    if "__repr__" not in vars(cls):
        cls.__repr__ = _repr
    return cls


__all__ = ["aggregate", "is_aggregate", "fields_of", "field_values", "new_instance", "set_raw", "serial_of"]
