"""`triton.set_allocator`: the function Triton calls at launch to get a
global-memory workspace for kernels that need one (Triton's only such need
in these kernels: device-side tensor descriptors on sm_90, whose TMA
descriptors it writes into 128 bytes of global memory per program).

tritium keeps the allocator with Triton's signature and per-context scope.
A kernel that builds tensor maps on the device (sm_90a, unless
`TRITIUM_TMA_DEVICE=0`: docs/architecture.md, "Device-side descriptors")
has a `global_scratch` size per program in its metadata, and its launch
calls `get_allocator()(size * programs, 128, stream)` as Triton does,
through `scratch_for` (called from `tritium-py/src/runtime.rs`), which
names the kernel in every error an allocator can cause. Every other
kernel, device-side descriptors on the masked path included, never calls
it."""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Optional, Protocol


class Buffer(Protocol):
    def data_ptr(self) -> int:
        ...


class Allocator(Protocol):
    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer:
        ...


_NO_ALLOCATOR = "no allocator was set. Use triton.set_allocator to specify an allocator."


class NullAllocator:
    """The allocator in force until `set_allocator`: needing it is an error."""

    def __call__(self, size: int, alignment: int, stream: Optional[int]) -> Buffer:
        raise RuntimeError(f"Kernel requires a runtime memory allocation, but {_NO_ALLOCATOR}")


_NULL = NullAllocator()
_allocator: ContextVar[Any] = ContextVar("tritium_allocator", default=_NULL)


def set_allocator(allocator: Allocator) -> None:
    """Sets the allocator for kernels that need a global workspace (this context)."""
    if not callable(allocator):
        raise TypeError(f"set_allocator expects a callable (size, alignment, stream) -> buffer, got {allocator!r}")
    _allocator.set(allocator)


def get_allocator() -> Allocator:
    return _allocator.get()


def scratch_for(kernel: str, size: int, alignment: int, stream: int) -> tuple[Any, int]:
    """One launch's global scratch from the allocator in force: the buffer,
    which the launch keeps alive until the kernel is queued, and its
    address. A user's allocator is arbitrary code, so what it raises or
    returns is reported with the kernel's name instead of surfacing as a
    bare error from inside the launch."""
    allocator = get_allocator()
    if isinstance(allocator, NullAllocator):
        raise RuntimeError(f"kernel '{kernel}' requires a runtime memory allocation ({size} bytes of global "
                           f"scratch for its device-side tensor descriptors), but {_NO_ALLOCATOR}")
    try:
        buffer = allocator(size, alignment, stream)
    except Exception as e:
        raise RuntimeError(f"kernel '{kernel}': the allocator set with set_allocator failed for "
                           f"{size} bytes: {type(e).__name__}: {e}") from e
    data_ptr = getattr(buffer, "data_ptr", None)
    if not callable(data_ptr):
        raise TypeError(f"kernel '{kernel}': the allocator set with set_allocator returned "
                        f"{type(buffer).__name__}, which has no data_ptr(); return a GPU buffer such as "
                        f"torch.empty(size, device='cuda', dtype=torch.int8)")
    address = data_ptr()
    if isinstance(address, bool) or not isinstance(address, int):
        raise TypeError(f"kernel '{kernel}': the allocator's buffer gave data_ptr() = {address!r}, not an integer address")
    if address <= 0 or address % alignment:
        raise ValueError(f"kernel '{kernel}': the allocator set with set_allocator returned address "
                         f"{address:#x}, not a {alignment}-byte aligned device address")
    return buffer, address


__all__ = ["Allocator", "Buffer", "NullAllocator", "get_allocator", "scratch_for", "set_allocator"]
