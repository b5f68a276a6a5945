"""Launching HSACO kernels through the HIP runtime (`libamdhip64.so`), loaded
at run time with ctypes: nothing of ROCm is needed to install or import
tritium. Arguments are packed into one kernarg buffer at the offsets the code
object's own metadata note gives (`backends/hsaco.py`), and launched with
`hipModuleLaunchKernel` on the caller's stream (PyTorch ROCm's current stream
by default).

Never run on AMD hardware (none was reachable while this was written): the
packing and the errors are tested on the CPU; the launch itself is not."""
from __future__ import annotations

import ctypes
import os
import struct
from typing import Any

from ..backends import hsaco

LIBRARY = "libamdhip64.so"
# HIP's markers for hipModuleLaunchKernel's `extra` argument
_PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END = 1, 2, 3

_FORMATS = {"int1": "<B", "int8": "<b", "int16": "<h", "int32": "<i", "int64": "<q", "uint8": "<B",
            "uint16": "<H", "uint32": "<I", "uint64": "<Q", "fp16": "<e", "bf16": "<H", "fp32": "<f", "fp64": "<d"}


class HipUnavailable(RuntimeError):
    """The HIP runtime library cannot be loaded (no ROCm on this machine)."""


class HipError(RuntimeError):
    """A HIP call failed; the message names the call and HIP's error string."""


def _candidates() -> list[str]:
    env = os.environ.get("TRITIUM_HIP_LIBRARY")
    names = [env] if env else []
    names += [LIBRARY, f"{LIBRARY}.6", "/opt/rocm/lib/libamdhip64.so"]
    return names


_LIB: Any = None


def library() -> Any:
    """The loaded HIP runtime; HipUnavailable naming every path tried."""
    global _LIB
    if _LIB is None:
        errors = []
        for name in _candidates():
            try:
                _LIB = ctypes.CDLL(name)
                break
            except OSError as e:
                errors.append(f"{name}: {e}")
        else:
            raise HipUnavailable(f"the HIP runtime ({LIBRARY}) could not be loaded, so AMD kernels cannot run here "
                                 f"(install ROCm, or set TRITIUM_HIP_LIBRARY to the library's path); tried "
                                 + "; ".join(errors))
    return _LIB


def _check(rc: int, call: str) -> None:
    if rc != 0:
        lib = library()
        lib.hipGetErrorString.restype = ctypes.c_char_p
        raise HipError(f"{call} failed: {lib.hipGetErrorString(rc).decode()} (hipError_t {rc})")


def _address(arg: Any) -> int:
    if isinstance(arg, int):
        return arg
    from ..backends.base import tensor_address
    return tensor_address(arg)


def pack_arguments(code: bytes, symbol: str, params: list, args: tuple) -> bytes:
    """The kernarg segment of kernel `symbol` for `args` (one per parameter,
    constexprs included and skipped): each runtime argument at the offset and
    size the code object's metadata states; hidden arguments stay zero."""
    doc = hsaco.metadata(code)
    kernel = next((k for k in doc.get("amdhsa.kernels", []) if k.get(".name") == symbol), None)
    if kernel is None:
        raise hsaco.HsacoError(f"the code object has no kernel named {symbol!r}")
    slots = [a for a in kernel.get(".args", []) if not str(a.get(".value_kind", "")).startswith("hidden_")]
    runtime = [(name, kind, a) for (name, kind), a in zip(params, args) if kind is not None]
    if len(params) != len(args):
        raise TypeError(f"{symbol}() takes {len(params)} arguments ({', '.join(p[0] for p in params)}), "
                        f"{len(args)} given")
    if len(runtime) != len(slots):
        raise hsaco.HsacoError(f"{symbol}: {len(runtime)} runtime arguments but the code object declares "
                               f"{len(slots)}")
    buf = bytearray(int(kernel.get(".kernarg_segment_size", 0)))
    for (name, kind, value), slot in zip(runtime, slots):
        off, size = int(slot[".offset"]), int(slot[".size"])
        if kind == "ptr":
            data = struct.pack("<Q", _address(value))
        elif kind in _FORMATS:
            v = value.item() if hasattr(value, "item") else value
            try:
                data = struct.pack(_FORMATS[kind], bool(v) if kind == "int1" else v)
            except struct.error as e:
                raise TypeError(f"{symbol}: argument '{name}' ({kind}) cannot hold {value!r}: {e}") from None
        else:
            raise TypeError(f"{symbol}: argument '{name}' of type {kind} cannot be passed to an AMD kernel yet")
        if len(data) != size:
            raise hsaco.HsacoError(f"{symbol}: argument '{name}' is {len(data)} bytes, the code object says {size}")
        buf[off:off + size] = data
    return bytes(buf)


class HipKernel:
    """One kernel of a loaded code object on the current HIP device."""

    def __init__(self, code: bytes, symbol: str, params: list, num_warps: int, warp_size: int) -> None:
        lib = library()
        self.code, self.symbol, self.params = code, symbol, params
        self.threads = num_warps * warp_size
        self.module = ctypes.c_void_p()
        _check(lib.hipModuleLoadData(ctypes.byref(self.module), ctypes.c_char_p(code)), "hipModuleLoadData")
        self.function = ctypes.c_void_p()
        _check(lib.hipModuleGetFunction(ctypes.byref(self.function), self.module, symbol.encode()),
               f"hipModuleGetFunction({symbol!r})")

    def launch(self, gx: int, gy: int, gz: int, stream: int, args: tuple) -> None:
        lib = library()
        kernargs = ctypes.create_string_buffer(pack_arguments(self.code, self.symbol, self.params, args))
        size = ctypes.c_size_t(len(kernargs.raw))
        extra = (ctypes.c_void_p * 5)(_PARAM_BUFFER_POINTER, ctypes.cast(kernargs, ctypes.c_void_p),
                                      _PARAM_BUFFER_SIZE, ctypes.cast(ctypes.pointer(size), ctypes.c_void_p),
                                      _PARAM_END)
        rc = lib.hipModuleLaunchKernel(self.function, ctypes.c_uint(gx), ctypes.c_uint(gy), ctypes.c_uint(gz),
                                       ctypes.c_uint(self.threads), ctypes.c_uint(1), ctypes.c_uint(1),
                                       ctypes.c_uint(0), ctypes.c_void_p(stream), None, extra)
        _check(rc, f"hipModuleLaunchKernel({self.symbol!r})")


def current_stream() -> int:
    """PyTorch ROCm's current stream (torch.cuda is HIP there), else the null stream."""
    try:
        import torch
        if getattr(torch.version, "hip", None):
            return int(torch.cuda.current_stream().cuda_stream)
    except ImportError:
        pass
    return 0
