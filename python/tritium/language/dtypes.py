"""Kernel value types: scalars, pointers and blocks (tensors).

Names and predicates follow `triton.language` so user code that inspects types
keeps working; `.ir` gives the type's spelling in the tile IR (docs/ir.md),
which is all the compiler needs to encode it.
"""
from __future__ import annotations

from functools import reduce as _reduce
from typing import Iterable


class dtype:
    """A scalar type. Instances are interned: compare with `==` or `is`."""

    SINT_TYPES = ("int8", "int16", "int32", "int64")
    UINT_TYPES = ("int1", "uint8", "uint16", "uint32", "uint64")
    FP_TYPES = ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64")
    FP8_TYPES = ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16")

    _IR = {
        "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
        "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
        "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64",
        "fp8e4nv": "f8e4m3", "fp8e5": "f8e5m2", "fp8e4b15": "f8e4b15", "fp8e4b8": "f8e4b8", "fp8e5b16": "f8e5b16",
    }
    _BITS = {
        "int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
        "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
        "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64, "fp8e4nv": 8, "fp8e5": 8,
        "fp8e4b15": 8, "fp8e4b8": 8, "fp8e5b16": 8,
    }
    # (exponent bits, mantissa bits, exponent bias) for floats
    _FP = {
        "fp8e4nv": (4, 3, 7), "fp8e5": (5, 2, 15), "fp8e4b15": (4, 3, 15), "fp8e4b8": (4, 3, 8),
        "fp8e5b16": (5, 2, 16), "fp16": (5, 10, 15),
        "bf16": (8, 7, 127), "fp32": (8, 23, 127), "fp64": (11, 52, 1023),
    }
    _PY_NAMES = {
        "int1": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
        "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
        "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
        "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8",
        "fp8e5b16": "float8e5b16",
    }

    def __init__(self, name: str):
        if name not in self._IR:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name
        self.primitive_bitwidth = self._BITS[name]
        if name in self._FP:
            self.exponent_bits, self.fp_mantissa_width, self.exponent_bias = self._FP[name]
        else:
            self.int_bitwidth = self.primitive_bitwidth
            self.int_signedness = "signed" if name in self.SINT_TYPES else "unsigned"

    # predicates -----------------------------------------------------------
    def is_int1(self) -> bool: return self.name == "int1"
    def is_bool(self) -> bool: return self.name == "int1"
    def is_int_signed(self) -> bool: return self.name in self.SINT_TYPES
    def is_int_unsigned(self) -> bool: return self.name in self.UINT_TYPES and self.name != "int1"
    def is_int(self) -> bool: return self.name in self.SINT_TYPES or self.name in self.UINT_TYPES
    def is_floating(self) -> bool: return self.name in self.FP_TYPES
    def is_standard_floating(self) -> bool: return self.name in ("fp16", "bf16", "fp32", "fp64")
    def is_fp8(self) -> bool: return self.name in self.FP8_TYPES
    def is_fp8e4nv(self) -> bool: return self.name == "fp8e4nv"
    def is_fp8e5(self) -> bool: return self.name == "fp8e5"
    def is_fp8e4b15(self) -> bool: return self.name == "fp8e4b15"
    def is_fp8e4b8(self) -> bool: return self.name == "fp8e4b8"
    def is_fp8e5b16(self) -> bool: return self.name == "fp8e5b16"
    def is_fp16(self) -> bool: return self.name == "fp16"
    def is_bf16(self) -> bool: return self.name == "bf16"
    def is_fp32(self) -> bool: return self.name == "fp32"
    def is_fp64(self) -> bool: return self.name == "fp64"
    def is_int8(self) -> bool: return self.name == "int8"
    def is_int16(self) -> bool: return self.name == "int16"
    def is_int32(self) -> bool: return self.name == "int32"
    def is_int64(self) -> bool: return self.name == "int64"
    def is_uint8(self) -> bool: return self.name == "uint8"
    def is_uint16(self) -> bool: return self.name == "uint16"
    def is_uint32(self) -> bool: return self.name == "uint32"
    def is_uint64(self) -> bool: return self.name == "uint64"
    def is_ptr(self) -> bool: return False
    def is_block(self) -> bool: return False
    def is_void(self) -> bool: return False
    def is_scalar(self) -> bool: return True

    @property
    def scalar(self) -> "dtype":
        return self

    @property
    def ir(self) -> str:
        return self._IR[self.name]

    def to(self, *_a, **_k):  # pragma: no cover - mirrors Triton's API shape only
        raise TypeError("dtype.to is not a kernel operation; use tensor.to(dtype)")

    def __eq__(self, other) -> bool:
        return isinstance(other, dtype) and type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self):
        return (self.name,)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"triton.language.{self._PY_NAMES.get(self.name, self.name)}"


class pointer_type(dtype):
    """`ptr<element_ty>` in address space `address_space` (1 = global)."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        if not isinstance(element_ty, dtype) or isinstance(element_ty, block_type):
            raise TypeError(f"pointer element must be a scalar or pointer dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        self.name = f"pointer<{element_ty}>"
        self.primitive_bitwidth = 64

    def is_ptr(self) -> bool: return True
    def is_int(self) -> bool: return False
    def is_int_signed(self) -> bool: return False
    def is_int_unsigned(self) -> bool: return False
    def is_floating(self) -> bool: return False
    def is_bool(self) -> bool: return False
    def is_int1(self) -> bool: return False
    def is_standard_floating(self) -> bool: return False
    def is_fp8(self) -> bool: return False

    @property
    def ir(self) -> str:
        if self.address_space == 1:
            return f"ptr<{self.element_ty.ir}>"
        return f"ptr<{self.element_ty.ir}, {self.address_space}>"

    def _key(self):
        return ("ptr", self.element_ty, self.address_space)

    def __repr__(self) -> str:
        return f"pointer_type({self.element_ty!r})"


# Triton's TRITON_MAX_TENSOR_NUMEL: the largest tensor a kernel may make. The
# IR verifier enforces the same bound (crates/tritium-ir/src/types.rs).
MAX_TENSOR_NUMEL = 1 << 20


class block_type(dtype):
    """A tensor: `shape` (a tuple of powers of two) of `element_ty`."""

    def __init__(self, element_ty: dtype, shape: Iterable[int]):
        shape = tuple(int(s) for s in shape)
        if not shape:
            raise TypeError("0-d block type: use the scalar type instead")
        for s in shape:
            if s <= 0 or s & (s - 1):
                raise ValueError(f"tensor dims must be powers of two, got shape {list(shape)}")
        self.element_ty = element_ty
        self.shape = shape
        self.numel = _reduce(lambda a, b: a * b, shape, 1)
        if self.numel > MAX_TENSOR_NUMEL:
            raise ValueError(f"a tensor of shape {list(shape)} has {self.numel} elements, more than the "
                             f"{MAX_TENSOR_NUMEL} a kernel tensor may hold (TRITON_MAX_TENSOR_NUMEL)")
        self.name = f"<{shape}, {element_ty}>"
        self.primitive_bitwidth = element_ty.primitive_bitwidth

    def is_block(self) -> bool: return True
    def is_scalar(self) -> bool: return False

    # predicates answer for the element type, as in Triton
    def __getattr__(self, item):
        if item.startswith("is_") and item not in ("is_block", "is_scalar"):
            return getattr(self.element_ty, item)
        raise AttributeError(item)

    def is_ptr(self) -> bool: return self.element_ty.is_ptr()

    def get_block_shapes(self):
        return self.shape

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    @property
    def ir(self) -> str:
        return "tensor<" + "x".join(str(d) for d in self.shape) + "x" + self.element_ty.ir + ">"

    def _key(self):
        return ("block", self.element_ty, self.shape)

    def __repr__(self) -> str:
        return f"block_type({self.element_ty!r}, {list(self.shape)})"


class void_type(dtype):
    def __init__(self):
        self.name = "void"
        self.primitive_bitwidth = 0

    def is_void(self) -> bool: return True

    @property
    def ir(self) -> str:
        raise TypeError("void has no IR type")

    def _key(self):
        return ("void",)


void = void_type()
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
float8e4b15 = dtype("fp8e4b15")
float8e4b8 = dtype("fp8e4b8")
float8e5b16 = dtype("fp8e5b16")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")

# Triton-compatible aliases
float8e4 = float8e4nv
pi32_t = pointer_type(int32)

ALL_SCALARS = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
               float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16, float16, bfloat16, float32, float64)

_BY_NAME = {t.name: t for t in ALL_SCALARS}
_BY_NAME.update({dtype._PY_NAMES[t.name]: t for t in ALL_SCALARS})
_BY_NAME.update({t.ir: t for t in ALL_SCALARS})
_BY_NAME.update({"i1": int1, "bool": int1, "fp8e4m3": float8e4nv, "fp8e5m2": float8e5,
                 "fp8e4m3fnuz": float8e4b8, "fp8e5m2fnuz": float8e5b16})


def scalar_from_name(name: str) -> dtype:
    """Parse a dtype name in any spelling users write: Triton's (`fp32`,
    `float32`), ours (`f32`), or a signature's `*fp16` pointer form."""
    name = name.strip()
    if name.startswith("*"):
        return pointer_type(scalar_from_name(name[1:]))
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown dtype name {name!r}") from None
