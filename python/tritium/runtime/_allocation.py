"""`triton.set_allocator`: the function Triton calls at launch to get a
global-memory workspace for kernels that need one (Triton's only such need
in these kernels: device-side tensor descriptors on sm_90, whose TMA
descriptors it writes into 128 bytes of global memory per program).

tritium keeps the allocator with Triton's signature and per-context scope.
A kernel that builds tensor maps on the device (sm_90a, unless
`TRITIUM_TMA_DEVICE=0`: docs/architecture.md, "Device-side descriptors")
has a `global_scratch` size per program in its metadata, and its launch
calls `get_allocator()(size * programs, 128, stream)` as Triton does
(`tritium-py/src/runtime.rs`); the error below is what such a launch
without an allocator raises. Every other kernel, device-side descriptors
on the masked path included, never calls it."""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Optional, Protocol


class Buffer(Protocol):
    def data_ptr(self) -> int:
        ...


class Allocator(Protocol):
    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer:
        ...


class NullAllocator:
    """The allocator in force until `set_allocator`: needing it is an error."""

    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer:
        raise RuntimeError("Kernel requires a runtime memory allocation, but no allocator was set. "
                           "Use triton.set_allocator to specify an allocator.")


_NULL = NullAllocator()
_allocator: ContextVar[Any] = ContextVar("tritium_allocator", default=_NULL)


def set_allocator(allocator: Allocator) -> None:
    """Sets the allocator for kernels that need a global workspace (this context)."""
    if not callable(allocator):
        raise TypeError(f"set_allocator expects a callable (size, alignment, stream) -> buffer, got {allocator!r}")
    _allocator.set(allocator)


def get_allocator() -> Allocator:
    return _allocator.get()


__all__ = ["Allocator", "Buffer", "NullAllocator", "get_allocator", "set_allocator"]
