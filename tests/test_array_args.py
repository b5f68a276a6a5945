"""Array arguments of a GPU launch without a GPU: what the Rust launch
entry reads from each kind of array (torch-like `data_ptr()`, CuPy/Numba
`__cuda_array_interface__`), and that a tensor in host memory (`is_cuda`
False) never reaches a launch: the entry hands it to Python, whose launch
raises an error naming the argument (tests/gpu/test_runtime_api_gpu.py).
DLPack capsules are tests/test_dlpack.py's."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.runtime import driver
from tritium.runtime.specialization import specializer

pytestmark = pytest.mark.skipif(not hasattr(_core, "FastLauncher"), reason="extension built without FastLauncher")


@tritium.jit
def k(x, n, f, B: tl.constexpr):
    pass


class TorchLike:
    """data_ptr(), dtype and is_cuda, as torch.Tensor has them."""

    def __init__(self, address: int, on_gpu: bool):
        self.address, self.is_cuda = address, on_gpu
        self.dtype = np.dtype("f4")

    def data_ptr(self) -> int:
        return self.address


class CudaArrayInterface:
    """What CuPy and Numba device arrays offer."""

    def __init__(self, address: int, typestr: str = "<f4"):
        self.dtype = np.dtype(typestr)
        self.address, self.typestr = address, typestr

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"data": (self.address, False), "shape": (4,), "typestr": self.typestr, "version": 3}


def prepared(arg):
    s = specializer(k)
    launcher = _core.FastLauncher(s._plan, lambda *a: "slow", driver.torch_queries)
    s.key_python((arg, 5, 0.5, 16))          # the first sight of a type is Python's
    return s, launcher.prepare_only((1,), (arg, 5, 0.5, 16))


def test_device_tensors_are_read_by_address():
    s, out = prepared(TorchLike(1 << 20, on_gpu=True))
    assert out[2][0] == ("ptr", 1 << 20)


def test_host_tensors_go_to_python():
    _, out = prepared(TorchLike(1 << 20, on_gpu=False))
    assert out is None


@pytest.mark.parametrize("typestr,name", [("<f4", "float32"), ("<f2", "float16"), ("<i8", "int64"), ("|u1", "uint8")])
def test_cuda_array_interface_arrays_key_by_type_and_address(typestr, name):
    arr = CudaArrayInterface((1 << 20) + 16, typestr)
    s, out = prepared(arr)
    assert out[2][0] == ("ptr", (1 << 20) + 16)
    assert out[0] == s.key_python((arr, 5, 0.5, 16))
    assert f"x=pointer_type(triton.language.{name})" in s.key_text(out[0])


def test_numpy_arrays_are_host_reads():
    _, out = prepared(np.zeros(4, np.float32))
    assert out is None or out[2][0] == "host"
