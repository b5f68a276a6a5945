"""Block pointers and tensor descriptors as kernel values, and their builtins
(`tl.make_block_ptr`, `tl.advance`, `tl.make_tensor_descriptor`,
`tl.load_tensor_descriptor`, `tl.store_tensor_descriptor`).

Both are `@aggregate` objects whose fields are scalar tensors (base pointer,
shapes, strides, offsets) and constexprs (block shape, order): the compiler
already carries aggregates through loops and branches, inlined @jit calls
and noinline calls, and the interpreter runs them as plain Python objects,
so `p = tl.advance(p, ...)` in a loop needs nothing of its own. Accesses
become one block memory op each (semantic/blocks.py, docs/ir.md).
`tensor_descriptor_type` is how a host `TensorDescriptor` argument is typed
in a signature (`tensordesc<fp16[64, 64]>`, Triton's spelling)."""
from __future__ import annotations

import typing
from typing import Any

from . import core, semantic
from .aggregate import aggregate
from .core import builtin, tensor
from .dtypes import block_type, dtype, int1, int32, int64, pointer_type, scalar_from_name


@aggregate
class block_pointer:
    """`tl.make_block_ptr(...)`'s value: a block of `block_shape` elements at
    `offsets` in an array of `shape` and `strides` (elements) at `base`."""
    base: tensor
    shape: tuple
    strides: tuple
    offsets: tuple
    block_shape: core.constexpr
    order: core.constexpr

    @property
    def dtype(self) -> dtype:
        """The element type (Triton spells the block pointer's own type
        `pointer_type<block_type>`; kernels only ever need the element)."""
        return self.base.type.element_ty

    @property
    def block_type(self) -> block_type:
        return block_type(self.dtype, core._unwrap(self.block_shape))


@aggregate
class tensor_descriptor:
    """A descriptor of a strided array in global memory (`shape`, `strides`,
    last stride 1) read and written in blocks of `block_shape`.
    `padding` is what an out-of-bounds element reads: constexpr "zero" or
    "nan", or, for a host TensorDescriptor argument, an i1 flag (true: NaN)."""
    base: tensor
    shape: tuple
    strides: tuple
    block_shape: core.constexpr
    padding: typing.Any

    @property
    def dtype(self) -> dtype:
        return self.base.type.element_ty

    @property
    def block_type(self) -> block_type:
        return block_type(self.dtype, core._unwrap(self.block_shape))


block_pointer.__tritium_block_kind__ = "block_pointer"
tensor_descriptor.__tritium_block_kind__ = "tensor_descriptor"


@builtin
def make_block_ptr(base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any) -> block_pointer:
    return block_pointer(**semantic.blocks.make_block_ptr(base, shape, strides, offsets, block_shape, order))


@builtin
def advance(base: Any, offsets: Any) -> block_pointer:
    base = core._unwrap(base)
    if not isinstance(base, block_pointer):
        raise TypeError(f"tl.advance: expected a block pointer (tl.make_block_ptr), got {_what(base)}")
    return block_pointer(base.base, base.shape, base.strides, semantic.blocks.advance(base.offsets, offsets),
                         base.block_shape, base.order)


@builtin
def make_tensor_descriptor(base: Any, shape: Any, strides: Any, block_shape: Any,
                           padding_option: Any = "zero") -> tensor_descriptor:
    return tensor_descriptor(**semantic.blocks.make_tensor_descriptor(base, shape, strides, block_shape,
                                                                       padding_option))


def _descriptor(desc: Any, what: str) -> tensor_descriptor:
    desc = core._unwrap(desc)
    if not isinstance(desc, tensor_descriptor):
        raise TypeError(f"{what}: expected a tensor descriptor, got {_what(desc)}")
    return desc


@builtin
def load_tensor_descriptor(desc: Any, offsets: Any) -> tensor:
    return semantic.blocks.descriptor_load(_descriptor(desc, "tl.load_tensor_descriptor"), offsets)


@builtin
def store_tensor_descriptor(desc: Any, offsets: Any, value: Any) -> None:
    semantic.blocks.descriptor_store(_descriptor(desc, "tl.store_tensor_descriptor"), offsets, value)


def _what(v: Any) -> str:
    return f"a tensor of type {v.type}" if isinstance(v, tensor) else type(v).__name__


# methods: builtins, attached after @aggregate (which makes functions @jit methods)
def _method(fn):
    return builtin(fn)


block_pointer.advance = _method(lambda self, offsets: advance(self, offsets))
tensor_descriptor.load = _method(lambda self, offsets: semantic.blocks.descriptor_load(self, offsets))
tensor_descriptor.store = _method(lambda self, offsets, value: semantic.blocks.descriptor_store(self, offsets, value))
tensor_descriptor.gather = _method(lambda self, x_offsets, y_offset:
                                   semantic.blocks.descriptor_gather(self, x_offsets, y_offset))
tensor_descriptor.scatter = _method(lambda self, value, x_offsets, y_offset:
                                    semantic.blocks.descriptor_scatter(self, value, x_offsets, y_offset))
for _kind in ("add", "min", "max", "and", "or", "xor"):
    setattr(tensor_descriptor, f"atomic_{_kind}",
            _method(lambda self, offsets, value, _k=_kind: semantic.blocks.descriptor_atomic(_k, self, offsets, value)))


class tensor_descriptor_type:
    """A host TensorDescriptor parameter's type: the element type, the block
    shape and, per dimension, whether the array's extent is a multiple of 16
    (the launch specializes on it as on integer arguments, so masked rows
    still vectorise). Its text is Triton's signature spelling."""

    def __init__(self, element_ty: dtype, block_shape: Any, shape_div16: Any = None):
        self.element_ty = element_ty
        self.block_shape = tuple(int(b) for b in block_shape)
        if not 1 <= len(self.block_shape) <= semantic.blocks.MAX_DESCRIPTOR_RANK:
            raise ValueError(f"a tensor descriptor has 1 to {semantic.blocks.MAX_DESCRIPTOR_RANK} dimensions, "
                             f"got block shape {list(self.block_shape)}")
        block_type(element_ty, self.block_shape)
        self.shape_div16 = tuple(bool(b) for b in shape_div16) if shape_div16 is not None \
            else (False,) * len(self.block_shape)
        if len(self.shape_div16) != len(self.block_shape):
            raise ValueError("shape_div16 needs one flag per dimension")

    @property
    def rank(self) -> int:
        return len(self.block_shape)

    def __str__(self) -> str:
        return f"tensordesc<{self.element_ty.name}[{', '.join(str(b) for b in self.block_shape)}]>"

    def __repr__(self) -> str:
        div = "".join("1" if b else "0" for b in self.shape_div16)
        return f"{self}{{div16={div}}}"

    def _key(self) -> tuple:
        return ("tensordesc", self.element_ty, self.block_shape, self.shape_div16)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, tensor_descriptor_type) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @staticmethod
    def parse(text: str) -> "tensor_descriptor_type":
        """`tensordesc<fp16[64, 64]>` (Triton 3.6's spelling)."""
        t = text.strip()
        if not (t.startswith("tensordesc<") and t.endswith(">") and "[" in t and t.endswith("]>")):
            raise ValueError(f"bad tensor descriptor type {text!r} (expected e.g. tensordesc<fp16[64, 64]>)")
        inner = t[len("tensordesc<"):-1]
        name, _, dims = inner.partition("[")
        try:
            shape = [int(d) for d in dims[:-1].split(",")]
        except ValueError:
            raise ValueError(f"bad block shape in {text!r}") from None
        return tensor_descriptor_type(scalar_from_name(name), shape)


def descriptor_args(t: tensor_descriptor_type) -> list[tuple[dtype, dict]]:
    """The IR arguments a host descriptor parameter becomes, with their
    attributes: the base (16-byte aligned), the shape (i32; divisible by 16
    where the launch saw it so), the leading strides (i64, in elements; 16
    bytes' worth divides each) and the padding flag (i1, true for NaN). The
    last stride is 1 by construction and is not passed. The base carries
    `host_descriptor` (the block shape): on sm_90a the compiler claims such
    a descriptor's accesses for TMA (tritium-transforms `claim_tma`)."""
    elem_bytes = max(1, t.element_ty.primitive_bitwidth // 8)
    stride_div = {"divisibility": 16 // elem_bytes} if 16 // elem_bytes > 1 else {}
    return ([(pointer_type(t.element_ty), {"divisibility": 16, "host_descriptor": list(t.block_shape)})]
            + [(int32, {"divisibility": 16} if d else {}) for d in t.shape_div16]
            + [(int64, dict(stride_div)) for _ in range(t.rank - 1)]
            + [(int1, {})])


def descriptor_value(t: tensor_descriptor_type, values: list) -> tensor_descriptor:
    """The descriptor a kernel sees for a host descriptor parameter, from the
    values of its `descriptor_args`."""
    r = t.rank
    base, shape, strides, pad = values[0], values[1:1 + r], values[1 + r:2 * r], values[2 * r]
    strides = list(strides) + [semantic.constant(1, int64)]
    return tensor_descriptor(**semantic.blocks.descriptor_fields(base, list(shape), strides, t.block_shape, pad))


__all__ = ["advance", "block_pointer", "descriptor_args", "descriptor_value", "load_tensor_descriptor", "make_block_ptr", "make_tensor_descriptor",
           "store_tensor_descriptor", "tensor_descriptor", "tensor_descriptor_type"]
