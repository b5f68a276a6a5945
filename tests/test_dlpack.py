"""DLPack arguments without a GPU: the capsule reader (address, device,
element type) on NumPy's capsules and on hand-made CUDA ones, capsule
ownership (read, never consumed), keys equal to those of a tensor with the
same address and dtype, and the TypeError for a CPU tensor."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.runtime.specialization import dlpack_view, specializer

pytestmark = pytest.mark.skipif(not hasattr(_core, "dlpack_info"), reason="extension built without DLPack support")

NUMPY_DTYPES = [("int8", "int8"), ("int16", "int16"), ("int32", "int32"), ("int64", "int64"),
                ("uint8", "uint8"), ("uint16", "uint16"), ("uint32", "uint32"), ("uint64", "uint64"),
                ("float16", "fp16"), ("float32", "fp32"), ("float64", "fp64"), ("bool", "int1")]


class DLPackOnly:
    """An object that offers nothing but the DLPack protocol."""

    def __init__(self, inner):
        self._inner = inner

    def __dlpack__(self, stream=None):
        return self._inner.__dlpack__()

    def __dlpack_device__(self):
        return self._inner.__dlpack_device__()


@pytest.mark.parametrize("np_name,ours", NUMPY_DTYPES)
def test_numpy_capsules_give_address_device_and_dtype(np_name, ours):
    a = np.zeros(16, dtype=np_name)
    address, dev_type, dev_id, name, _, _ = _core.dlpack_info(a.__dlpack__())
    assert (address, dev_type, dev_id, name) == (a.ctypes.data, 1, 0, ours)


def test_views_point_at_their_first_element():
    a = np.arange(64, dtype=np.float32)
    v = a[5:]
    assert _core.dlpack_info(v.__dlpack__())[0] == a.ctypes.data + 20


def test_unsupported_element_types_have_no_name():
    info = _core.dlpack_info(np.zeros(4, dtype=np.complex64).__dlpack__())
    assert info[3] is None and info[4] == 5      # kDLComplex


def test_a_read_capsule_is_not_consumed():
    a = np.arange(8, dtype=np.int32)
    cap = a.__dlpack__()
    _core.dlpack_info(cap)

    class Handing:
        def __dlpack__(self, stream=None, **kw):
            return cap

        def __dlpack_device__(self):
            return (1, 0)
    # a consumer can still take it: it kept its "dltensor" name and ownership
    b = np.from_dlpack(Handing())
    assert b.tolist() == list(range(8))
    with pytest.raises(TypeError, match="dltensor"):     # now renamed by that consumer
        _core.dlpack_info(cap)


def test_not_a_capsule_is_a_type_error():
    with pytest.raises(TypeError, match="dltensor"):
        _core.dlpack_info(object())


# -- hand-made CUDA capsules -----------------------------------------------------

class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_NAME = b"dltensor"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeCudaDLPack:
    """A DLPack producer that claims CUDA memory at `address` (never
    dereferenced: only keys and argument reads are tested here)."""

    def __init__(self, address: int, code: int = 2, bits: int = 32, device_type: int = 2, byte_offset: int = 0,
                 lanes: int = 1):
        self._shape = (ctypes.c_int64 * 1)(16)
        self._m = _DLManagedTensor()
        t = self._m.dl_tensor
        t.data, t.device_type, t.device_id, t.ndim = address, device_type, 0, 1
        t.code, t.bits, t.lanes, t.shape, t.byte_offset = code, bits, lanes, self._shape, byte_offset

    def __dlpack__(self, stream=None):
        # no destructor: this object owns the struct for as long as it lives
        return _capsule_new(ctypes.addressof(self._m), _NAME, None)

    def __dlpack_device__(self):
        return (self._m.dl_tensor.device_type, 0)


class Tensor:
    def __init__(self, ptr: int, dtype: str):
        self._ptr, self.dtype = ptr, np.dtype(dtype)

    def data_ptr(self) -> int:
        return self._ptr


@tritium.jit
def k(x, y, n, B: tl.constexpr):
    pass


@pytest.mark.parametrize("address", [1 << 20, (1 << 20) + 4])
@pytest.mark.parametrize("code,bits,np_dtype", [(2, 32, "f4"), (2, 16, "f2"), (0, 32, "i4"), (1, 8, "u1"),
                                                (6, 8, "bool")])
def test_cuda_dlpack_keys_like_a_tensor(address, code, bits, np_dtype):
    s = specializer(k)
    d = FakeCudaDLPack(address, code, bits)
    t = Tensor(address, np_dtype)
    key = s.bind(d, d, 7, 16)[0]
    assert key == s.key_python((d, d, 7, 16)) == s.key_python((t, t, 7, 16))
    assert s.bind(d, d, 7, 16)[0] == key                 # the Rust path, now that it knows the type
    sets = s.specialization(key).sets
    assert (0 in sets["divisibility"]) == (address % 16 == 0)


def test_byte_offset_counts_in_the_address():
    s = specializer(k)
    d = FakeCudaDLPack(1 << 20, byte_offset=4)
    assert dlpack_view(d).data_ptr() == (1 << 20) + 4
    key = s.bind(d, d, 7, 16)[0]
    assert 0 not in s.specialization(key).sets["divisibility"]
    L = _core.FastLauncher(s._plan, lambda *a: None, lambda: None)
    assert L.prepare_only(1, (d, d, 7, 16))[2][:2] == (("ptr", (1 << 20) + 4),) * 2


def test_managed_memory_is_accepted():
    s = specializer(k)
    d = FakeCudaDLPack(1 << 20, device_type=13)
    assert s.bind(d, d, 1, 16)[0] == s.key_python((d, d, 1, 16))


def test_cpu_dlpack_tensor_is_a_type_error_naming_kernel_and_argument():
    s = specializer(k)
    a = DLPackOnly(np.zeros(16, dtype=np.float32))
    for call in (lambda: s.bind(a, a, 1, 16), lambda: s.key_python((a, a, 1, 16))):
        with pytest.raises(TypeError, match=r"kernel 'k', argument 'x'.*device type 1"):
            call()


def test_unsupported_dlpack_dtypes_and_vector_types_are_type_errors():
    s = specializer(k)
    with pytest.raises(TypeError, match="code 5"):
        s.bind(FakeCudaDLPack(1 << 20, code=5, bits=64), 0, 1, 16)
    with pytest.raises(TypeError, match="argument 'x'.*lanes = 4"):
        s.bind(FakeCudaDLPack(1 << 20, lanes=4), 0, 1, 16)
