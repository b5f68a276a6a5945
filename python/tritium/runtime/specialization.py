"""The launch key and specialization sets. A `Specializer` is built once per
(JITFunction, backend): it fixes, per parameter, which backend properties may
be tested; each launch then costs one binder call plus a few operations per
argument (in Rust, `_core.KeyPlan`, when the extension has it). The key turns
back into named sets (property -> parameter indices) and from there into IR
argument attributes; `attrs_from_user` builds the same sets for AOT use."""
from __future__ import annotations

import functools

import struct
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .. import _core
from ..backends import FLOAT, INTEGER, POINTER, Backend
from ..backends import get as get_backend
from ..backends.base import tensor_address
from ..language.core import constexpr
from ..language.dtypes import dtype, float32, int1, pointer_type, scalar_from_name
from ..language.signature import ArgKind, arg_kind, descriptor_type, element_dtype, int_type, is_tensor_descriptor, unsupported_arg

# keyword arguments of a launch that are options, not kernel parameters
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "warmup",
                  "stream", "enable_warp_specialization", "launch_cooperative_grid", "extern_libs",
                  "debug", "sanitize_overflow", "matrix_instr_nonkdim", "waves_per_eu", "kpack",
                  "launch_pdl")

# Runtime arguments are keyed as `tid << 32 | mask`: tid indexes _TYPES (an IR
# type), mask has bit i set when the backend's property i holds.
_SHIFT = 32
_TYPES: list[dtype] = []
_TID: dict[dtype, int] = {}
# framework dtype object (torch.float32, np.dtype('f4'), ...) -> tid of its pointer type;
# shared with the Rust fast path, which only reads it
_PTR_TID: dict[Any, int] = {}


def type_id(t: dtype) -> int:
    tid = _TID.get(t)
    if tid is None:
        tid = _TID[t] = len(_TYPES)
        _TYPES.append(t)
    return tid


def type_of_id(tid: int) -> dtype:
    return _TYPES[tid]


def _ptr_tid(fw_dtype: Any) -> int:
    tid = _PTR_TID.get(fw_dtype)
    if tid is None:
        tid = type_id(pointer_type(element_dtype(fw_dtype)))
        if len(_PTR_TID) < 4096:     # dtype objects are few; a stream of fresh ones must not grow it forever
            _PTR_TID[fw_dtype] = tid
    return tid


_TID_I1 = type_id(int1)
_TID_F32 = type_id(float32)
_TID_INT = {t: type_id(t) for t in (int_type(0), int_type(2 ** 40), int_type(2 ** 63))}


def _constexpr_entry(v: Any) -> tuple:
    """A constexpr in the key: its class too, so 1, True and 1.0 differ."""
    if isinstance(v, constexpr):
        v = v.value
    if isinstance(v, list):
        v = tuple(v)
    return (v.__class__, v)


@dataclass(frozen=True)
class Specialization:
    """What a key means: each parameter's IR type or constexpr value, and the
    named sets of parameter indices for which each property holds."""
    signature: dict
    sets: dict
    backend: Backend
    names: tuple

    def arg_attrs(self) -> dict[str, dict]:
        """IR argument attributes by parameter name (the frontend's arg_attrs)."""
        names = self.names
        out: dict[str, dict] = {}
        for prop_name, idxs in self.sets.items():
            key, value = self.backend.property(prop_name).attr
            for i in idxs:
                out.setdefault(names[i], {})[key] = value
        return out


class _ParamPlan:
    __slots__ = ("name", "index", "is_constexpr", "ptr_props", "int_props", "float_props")

    def __init__(self, name: str, index: int, is_constexpr: bool, props: list, specialize: bool, align: bool):
        self.name, self.index, self.is_constexpr = name, index, is_constexpr

        def pick(kind: str) -> tuple:
            if not specialize or is_constexpr:
                return ()
            return tuple((1 << bit, p) for bit, p in enumerate(props)
                         if kind in p.kinds and (align or not p.alignment))
        self.ptr_props, self.int_props, self.float_props = pick(POINTER), pick(INTEGER), pick(FLOAT)


def _mask(props: tuple, kind: str, v: Any) -> int:
    m = 0
    for bit, p in props:
        if p.holds(kind, v):
            m |= bit
    return m


class Specializer:
    """Per-(kernel, backend) key machinery: `bind(*args, **kwargs)` returns
    (key, args in parameter order, launch options)."""

    def __init__(self, jit_fn: Any, backend: Backend | str = "cuda", options: Iterable[str] = ()):
        self.backend = get_backend(backend) if isinstance(backend, str) else backend
        self.jit_fn = jit_fn
        dns = set(getattr(jit_fn, "do_not_specialize", ()))
        dnsa = set(getattr(jit_fn, "do_not_specialize_on_alignment", ()))
        props = list(self.backend.properties)
        self.plans = [_ParamPlan(p.name, p.num, p.is_constexpr, props, p.num not in dns, p.num not in dnsa)
                      for p in jit_fn.params]
        self.names = [p.name for p in jit_fn.params]
        self._binder = _make_binder(jit_fn, set(options))
        self._key_python = _python_keyer(self.plans, getattr(jit_fn, "__name__", "?"))
        self._plan = _native_plan(self.plans, jit_fn, set(options), _python_bind(self._binder, self._key_python))
        self._native = self._plan.key if self._plan is not None else None
        if self._plan is not None:
            self.bind = self._plan.bind    # an instance attribute: no Python frame per launch

    # -- per launch -------------------------------------------------------
    def bind(self, *args: Any, **kwargs: Any) -> tuple[bytes | tuple, tuple, Mapping]:
        bound, options = self._binder(*args, **kwargs)
        return self.key(bound), bound, options

    def key(self, bound: tuple) -> bytes | tuple:
        """The key of arguments already in parameter order."""
        if self._native is not None:
            k = self._native(bound)
            if k is not None:
                return k
        return self.key_python(bound)

    def key_python(self, bound: tuple) -> bytes | tuple:
        """The reference key computation (the Rust path must agree with it)."""
        return self._key_python(bound)

    def key_text(self, key: bytes | tuple) -> str:
        """The key in a form that is the same in every process (type names
        and property names instead of per-process ids), for the disk cache."""
        parts = []
        for plan, e in zip(self.plans, _unpack(key)):
            if isinstance(e, tuple):
                cls, v = e
                parts.append(f"{plan.name}=c:{cls.__module__}.{cls.__qualname__}:{v!r}")
            else:
                props = [p.name for bit, p in enumerate(self.backend.properties) if e & (1 << bit)]
                parts.append(f"{plan.name}={type_of_id(e >> _SHIFT)!r}[{','.join(props)}]")
        return f"{self.backend.name};" + ";".join(parts)

    # -- from key to compile inputs --------------------------------------
    def specialization(self, key: bytes | tuple) -> Specialization:
        sig: dict[str, Any] = {}
        sets: dict[str, set] = {p.name: set() for p in self.backend.properties}
        for plan, e in zip(self.plans, _unpack(key)):
            if isinstance(e, tuple):
                sig[plan.name] = constexpr(e[1])
                continue
            sig[plan.name] = type_of_id(e >> _SHIFT)
            for bit, p in enumerate(self.backend.properties):
                if e & (1 << bit):
                    sets[p.name].add(plan.index)
        return Specialization(sig, {k: frozenset(v) for k, v in sets.items()}, self.backend, tuple(self.names))


def _make_binder(jit_fn: Any, options: set):
    """`def bind(a, b, c=<default>, **options)` returning the arguments in
    parameter order: Python's own binding (the rules of the one binder,
    KernelFunction.bind_call), generated once per kernel for the launch path;
    a call it refuses is refused by bind_call, whose messages name the
    parameter as every other binding error does."""
    params = list(jit_fn.params)
    ns: dict[str, Any] = {}
    parts = []
    for p in params:
        if p.has_default:
            ns[f"_d{p.num}"] = p.default
            parts.append(f"{p.name}=_d{p.num}")
        else:
            parts.append(p.name)
    names = ", ".join(p.name for p in params)
    src = (f"def bind({', '.join(parts + ['**options'])}):\n"
           f"    return ({names}{',' if len(params) == 1 else ''}), options\n")
    exec(compile(src, f"<binder {getattr(jit_fn, '__name__', '?')}>", "exec"), ns)
    bind = ns["bind"]
    name = getattr(jit_fn, "__name__", "?")

    def checked(*args: Any, **kwargs: Any):
        try:
            return bind(*args, **kwargs)
        except TypeError as e:
            bind_call = getattr(jit_fn, "bind_call", None)
            if bind_call is not None:
                bind_call(args, {k: v for k, v in kwargs.items() if k in jit_fn.arg_names})
            raise TypeError(str(e).replace("bind()", f"{name}()")) from None
    return checked if not options else _with_option_check(checked, options, name)


def _with_option_check(bind, allowed: set, name: str):
    def f(*args: Any, **kwargs: Any):
        bound, opts = bind(*args, **kwargs)
        for k in opts:
            if k not in allowed:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}' "
                                "(neither a kernel parameter nor a launch option)")
        return bound, opts
    return f


_CONSTEXPR_SLOT = 2 ** 64 - 1


def _python_keyer(plans: list, fn_name: str):
    """Key layout (shared with Rust): bytes of one little-endian u64 code per
    parameter, _CONSTEXPR_SLOT where the entry is an object; alone when there
    is no such entry, else (those bytes, then the objects in parameter
    order). One bytes object instead of a Python int per argument keeps the
    fast path allocation-light."""
    def key(bound: tuple) -> bytes | tuple:
        codes, objs = [], []
        for plan, v in zip(plans, bound):
            e = _entry(plan, v, fn_name)
            if isinstance(e, tuple):
                objs.append(e)
                e = _CONSTEXPR_SLOT
            codes.append(e)
        raw = struct.pack(f"<{len(codes)}Q", *codes)
        return (raw, *objs) if objs else raw
    return key


def _unpack(key: bytes | tuple) -> list:
    """Per parameter: an int code or a constexpr (class, value) entry."""
    raw, objs = (key, iter(())) if isinstance(key, bytes) else (key[0], iter(key[1:]))
    codes = struct.unpack(f"<{len(raw) // 8}Q", raw)
    return [next(objs) if c == _CONSTEXPR_SLOT else c for c in codes]


def _entry(plan: _ParamPlan, v: Any, fn_name: str) -> Any:
    if plan.is_constexpr:
        return _constexpr_entry(v)
    kind = arg_kind(v, launch=True)
    if kind is ArgKind.CONSTEXPR:
        return _constexpr_entry(v)
    if kind is ArgKind.BOOL:
        return _TID_I1 << _SHIFT
    if kind is ArgKind.INT:
        return (_TID_INT[int_type(v)] << _SHIFT) | _mask(plan.int_props, INTEGER, v)
    if kind is ArgKind.FLOAT:
        return (_TID_F32 << _SHIFT) | _mask(plan.float_props, FLOAT, v)
    if kind is ArgKind.TENSOR:
        return (_ptr_tid(v.dtype) << _SHIFT) | _mask(plan.ptr_props, POINTER, v)
    if kind is ArgKind.DLPACK:
        view = dlpack_view(v, plan.name, fn_name)
        return (_ptr_tid(view.dtype) << _SHIFT) | _mask(plan.ptr_props, POINTER, view)
    if kind is ArgKind.SCALAR:   # typed, not specialized
        return type_id(element_dtype(v.dtype)) << _SHIFT
    if kind is ArgKind.TENSORDESC:
        # the type carries which extents are multiples of 16 (integer
        # arguments' rule, off where the parameter is not specialized)
        div16 = [s % 16 == 0 for s in v.shape] if plan.int_props else None
        return type_id(descriptor_type(v, div16)) << _SHIFT
    raise unsupported_arg(plan.name, v, fn_name)


class DLPackView:
    """A DLPack argument as the key and the predicates see it: the address
    of its first element (`data_ptr()`) and its element type (`dtype`)."""
    __slots__ = ("_address", "dtype")

    def __init__(self, address: int, dt: dtype):
        self._address, self.dtype = address, dt

    def data_ptr(self) -> int:
        return self._address


_DL_CUDA = (2, 13)   # DLDeviceType: CUDA, CUDA managed


def dlpack_view(v: Any, param: str = "?", fn_name: str = "?") -> DLPackView:
    """Reads `v.__dlpack__()` (without consuming the capsule). A tensor that
    is not in CUDA memory, or of an element type kernels cannot take, is a
    TypeError naming the kernel and the argument."""
    where = f"kernel '{fn_name}', argument '{param}'"
    try:
        address, dev_type, dev_id, name, code, bits = _core.dlpack_info(v.__dlpack__())
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: {e}") from None
    if dev_type not in _DL_CUDA:
        raise TypeError(f"{where}: a DLPack tensor on device type {dev_type} (device {dev_id}) cannot be passed "
                        "to a GPU kernel; only CUDA (2) and CUDA managed (13) memory can")
    if name is None:
        raise TypeError(f"{where}: DLPack element type (code {code}, {bits} bits) is not a type kernels take")
    return DLPackView(address, scalar_from_name(name))


def _python_bind(binder, key_python):
    # closes over plain functions, not the Specializer: no reference cycle
    # through the Rust object, which the garbage collector cannot see into
    def bind(*args: Any, **kwargs: Any):
        bound, options = binder(*args, **kwargs)
        return key_python(bound), bound, options
    return bind


def _native_plan(plans: list, jit_fn: Any, options: set, fallback):
    """The Rust KeyPlan for this signature. Python predicates (properties
    without a built-in test) are called from Rust."""
    spec = []
    for p in plans:
        def split(props: tuple):
            fast = [(bit, p.fast[0] == "eq", p.fast[1]) for bit, p in props if p.fast is not None]
            slow = [(bit, p.predicate) for bit, p in props if p.fast is None]
            return fast, slow
        spec.append((p.is_constexpr, *split(p.ptr_props), *split(p.int_props), *split(p.float_props)))
    defaults = [(p.has_default, p.default if p.has_default else None) for p in jit_fn.params]
    return _core.KeyPlan(spec, _PTR_TID, constexpr, _TID_I1, _TID_F32,
                         [_TID_INT[int_type(0)], _TID_INT[int_type(2 ** 40)], _TID_INT[int_type(2 ** 63)]], _SHIFT,
                         list(jit_fn.arg_names), defaults, frozenset(options), fallback, _dlpack_tids(_core),
                         _descriptor_code(plans, getattr(jit_fn, "__name__", "?")))


def _descriptor_code(plans: list, fn_name: str):
    """For the Rust key: a host TensorDescriptor's code, or None for other objects."""
    def code(index: int, v: Any) -> int | None:
        return _entry(plans[index], v, fn_name) if is_tensor_descriptor(v) else None
    return code


@functools.lru_cache(maxsize=None)
def _dlpack_tids(core: Any) -> list:
    """(dtype name, pointer type id) for every dtype DLPack arguments can have: once per process."""
    return [(n, type_id(pointer_type(scalar_from_name(n)))) for n in core.DLPACK_DTYPES]


# -- per-JITFunction state -----------------------------------------------------

def specializer(jit_fn: Any, backend: Backend | str = "cuda") -> Specializer:
    """The kernel's Specializer for `backend`, built on first use and kept on
    the JITFunction (one per backend)."""
    b = get_backend(backend) if isinstance(backend, str) else backend
    table = jit_fn.__dict__.setdefault("_specializers", {})
    s = table.get(id(b))
    if s is None or s.backend is not b:
        s = table[id(b)] = Specializer(jit_fn, b, LAUNCH_OPTIONS)
    return s


def _param_indices(jit_fn: Any, items: Iterable[Any], what: str) -> list[int]:
    names = [p.name for p in jit_fn.params]
    out = []
    for d in items:
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise TypeError(f"{what}: parameters are given by name or index, got {d!r}")
        if isinstance(d, int):
            if not 0 <= d < len(names):
                raise ValueError(f"{what}: '{jit_fn.__name__}' has no parameter index {d} "
                                 f"(it has {len(names)})")
            out.append(d)
        elif d in names:
            out.append(names.index(d))
        else:
            raise ValueError(f"{what}: '{jit_fn.__name__}' has no parameter {d!r}")
    return out


def attrs_from_user(fn: Any, attrs: dict | None = None, backend: Backend | str = "cuda",
                    signature: dict | None = None) -> Specialization:
    """Ahead-of-time specialization: exactly the properties in `attrs`
    ({property name: [parameter names or indices]}) and nothing else. With
    `signature` (parameter name -> dtype or constexpr) each named parameter is
    checked to be of a kind the property applies to."""
    b = get_backend(backend) if isinstance(backend, str) else backend
    sets = {p.name: frozenset() for p in b.properties}
    for prop_name, items in (attrs or {}).items():
        prop = b.property(prop_name)
        if isinstance(items, (str, int)):
            items = [items]
        idx = _param_indices(fn, items, f"attrs[{prop_name!r}]")
        for i in idx:
            p = fn.params[i]
            if p.is_constexpr:
                raise ValueError(f"attrs[{prop_name!r}]: parameter '{p.name}' is a constexpr; "
                                 "properties apply to runtime arguments only")
            if signature is not None and p.name in signature:
                kind = _kind_of(signature[p.name])
                if kind not in prop.kinds:
                    raise ValueError(f"attrs[{prop_name!r}]: parameter '{p.name}' is {kind or 'a constexpr'}, "
                                     f"but {prop_name} applies to {', '.join(sorted(prop.kinds))} arguments")
        sets[prop_name] = frozenset(idx)
    return Specialization(dict(signature or {}), sets, b, tuple(p.name for p in fn.params))


def _kind_of(t: Any) -> str | None:
    if isinstance(t, pointer_type):
        return POINTER
    if isinstance(t, dtype):
        return FLOAT if t.is_floating() else INTEGER
    return None


__all__ = ["DLPackView", "Specialization", "Specializer", "attrs_from_user", "dlpack_view", "specializer",
           "tensor_address", "type_id", "type_of_id"]
