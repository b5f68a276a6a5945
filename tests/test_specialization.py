"""Launch keys and specialization sets: every argument kind, named sets as IR
argument attributes, do_not_specialize(_on_alignment), AOT attrs, and a
property declared by a test backend."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import backends
from tritium.backends import INTEGER, POINTER, Backend, Property, shared_properties
from tritium.backends.amd import storage_extent
from tritium.language.dtypes import scalar_from_name
from tritium.runtime.specialization import Specializer, attrs_from_user, specializer


class FakeDtype:
    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


class FakeTensor:
    """What the key needs from a torch tensor: data_ptr() and dtype."""

    def __init__(self, ptr: int, dtype: str | FakeDtype, nbytes: int = 4096, base: int | None = None):
        self._ptr = ptr
        self.dtype = FakeDtype(dtype) if isinstance(dtype, str) else dtype
        self._storage = FakeStorage(ptr if base is None else base, nbytes)

    def data_ptr(self) -> int:
        return self._ptr

    def untyped_storage(self) -> "FakeStorage":
        return self._storage


class FakeStorage:
    def __init__(self, ptr: int, nbytes: int):
        self._ptr, self._n = ptr, nbytes

    def data_ptr(self) -> int:
        return self._ptr

    def nbytes(self) -> int:
        return self._n


class CudaArray:
    """An object exposing only __cuda_array_interface__ (CuPy, Numba)."""

    def __init__(self, ptr: int, typestr: str = "<f4"):
        self.dtype = np.dtype(typestr)
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (16,), "typestr": typestr, "version": 3}


@triton.jit
def k_all(p, n, x, flag, opt, C: tl.constexpr):
    pass


def keyed(s: Specializer, *args, **kwargs):
    key, bound, _ = s.bind(*args, **kwargs)
    assert s.key_python(bound) == key          # the Rust fast path agrees with the reference
    return key, s.specialization(key)


TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
EXPECTED = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "fp16", "bf16",
            "fp32", "fp64", "fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16"]


def test_tensor_dtypes_each_get_their_pointer_type():
    s = specializer(k_all)
    keys = set()
    for name, want in zip(TORCH_DTYPES, EXPECTED):
        key, sp = keyed(s, FakeTensor(1 << 20, name), 16, 1.0, True, None, C=4)
        assert sp.signature["p"] == tl.pointer_type(scalar_from_name(want))
        keys.add(key)
    assert len(keys) == len(TORCH_DTYPES)


@pytest.mark.parametrize("np_dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                      "uint64", "float16", "float32", "float64"])
def test_numpy_arrays_every_dtype(np_dtype):
    a = np.zeros(64, dtype=np_dtype)
    _, sp = keyed(specializer(k_all), a, 16, 1.0, True, None, C=4)
    assert sp.signature["p"].element_ty.name == {"bool": "int1", "float16": "fp16", "float32": "fp32",
                                                 "float64": "fp64"}.get(np_dtype, np_dtype)


def test_aligned_and_misaligned_pointers():
    s = specializer(k_all)
    for make in (lambda off: FakeTensor((1 << 20) + off, "float32"), lambda off: CudaArray((1 << 20) + off)):
        k16, sp16 = keyed(s, make(0), 3, 1.0, True, None, C=4)
        k4, sp4 = keyed(s, make(4), 3, 1.0, True, None, C=4)
        assert 0 in sp16.sets["divisibility"] and 0 not in sp4.sets["divisibility"]
        assert k16 != k4
        assert sp16.signature == sp4.signature
    a = np.zeros(64, np.float32)
    assert a.ctypes.data % 16 == 0
    _, sp = keyed(s, a[1:], 3, 1.0, True, None, C=4)
    assert 0 not in sp.sets["divisibility"]


@pytest.mark.parametrize("v, ty, div, one", [
    (1, "int32", False, True), (16, "int32", True, False), (17, "int32", False, False),
    (-16, "int32", True, False), (-17, "int32", False, False), (0, "int32", True, False),
    (2 ** 31 - 1, "int32", False, False), (2 ** 31, "int64", True, False), (-2 ** 31, "int32", True, False),
    (2 ** 40 + 16, "int64", True, False), (2 ** 63, "uint64", True, False), (2 ** 64 - 1, "uint64", False, False),
])
def test_integers(v, ty, div, one):
    _, sp = keyed(specializer(k_all), FakeTensor(1 << 20, "float32"), v, 1.0, True, None, C=4)
    assert sp.signature["n"] == getattr(tl, ty)
    assert (1 in sp.sets["divisibility"]) == div
    assert (1 in sp.sets["equal_to_1"]) == one


def test_integer_out_of_range_is_an_error():
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        specializer(k_all).bind(FakeTensor(1 << 20, "float32"), 2 ** 64, 1.0, True, None, C=4)


def test_floats_bools_none_and_constexprs():
    s = specializer(k_all)
    t = FakeTensor(1 << 20, "float32")
    _, sp = keyed(s, t, 16, 16.0, False, None, C=4)
    assert sp.signature["x"] == tl.float32 and sp.signature["flag"] == tl.int1
    assert sp.signature["opt"].value is None and sp.signature["C"].value == 4
    assert 2 not in sp.sets["divisibility"]          # floats get no shared property
    k1, _ = keyed(s, t, 16, 1.0, True, None, C=4)
    k2, _ = keyed(s, t, 16, 2.5, True, None, C=4)
    assert k1 == k2                                  # float values are not in the key
    kc = {keyed(s, t, 16, 1.0, True, None, C=c)[0] for c in (4, 8, 1, True, 1.0, "x")}
    assert len(kc) == 6                              # constexpr values (and their types) are
    kb, _ = keyed(s, t, 16, 1.0, 1, None, C=4)
    assert kb != k1                                  # an int where a bool was is another type
    ko, spo = keyed(s, t, 16, 1.0, True, tl.float16, C=4)
    assert spo.signature["opt"].value == tl.float16 and ko != k1


def test_numpy_scalars_and_zero_d_arrays_are_scalars():
    _, sp = keyed(specializer(k_all), FakeTensor(1 << 20, "float32"), np.int64(16), np.float32(2.0), True, None, C=4)
    assert sp.signature["n"] == tl.int64 and sp.signature["x"] == tl.float32
    assert 1 not in sp.sets["divisibility"]


def test_binding_defaults_keywords_and_options():
    @triton.jit
    def k(a, b, n=16, BLOCK: tl.constexpr = 64):
        pass
    s = specializer(k)
    t = FakeTensor(1 << 20, "float32")
    k1, bound, opts = s.bind(t, t)
    assert bound == (t, t, 16, 64) and opts == {}
    k2, bound2, opts2 = s.bind(t, b=t, BLOCK=64, num_warps=8)
    assert k1 == k2 and bound2 == bound and opts2 == {"num_warps": 8}
    with pytest.raises(TypeError, match="k\\(\\) missing 1 required"):
        s.bind(t)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        s.bind(t, t, bogus=1)
    with pytest.raises(TypeError, match="multiple values"):
        s.bind(t, t, a=t)
    with pytest.raises(TypeError, match="unsupported type object for kernel argument 'a'"):
        s.bind(object(), t)


# -- do_not_specialize ------------------------------------------------------

@pytest.mark.parametrize("by", ["name", "index"])
def test_do_not_specialize(by):
    @triton.jit(do_not_specialize=["n"] if by == "name" else [1])
    def k(p, n, m):
        pass
    s = specializer(k)
    a, b = (keyed(s, FakeTensor(1 << 20, "float32"), v, 16) for v in (16, 17))
    assert a[0] == b[0]                              # n's value no longer matters
    assert a[1].sets["divisibility"] == {0, 2}
    one = keyed(s, FakeTensor(1 << 20, "float32"), 1, 16)[1]
    assert 1 not in one.sets["equal_to_1"]
    assert a[1].signature["n"] == tl.int32           # the type still does
    assert keyed(s, FakeTensor(1 << 20, "float32"), 2 ** 40, 16)[1].signature["n"] == tl.int64


@pytest.mark.parametrize("by", ["name", "index"])
def test_do_not_specialize_on_alignment(by):
    @triton.jit(do_not_specialize_on_alignment=["p", "n"] if by == "name" else [0, 1])
    def k(p, n, q, m):
        pass
    s = specializer(k)
    t = FakeTensor(1 << 20, "float32")
    _, sp = keyed(s, t, 1, t, 32)
    assert sp.sets["divisibility"] == {2, 3}
    assert sp.sets["equal_to_1"] == {1}              # only alignment-like facts are switched off
    _, sp = keyed(s, t, 32, t, 1)
    assert sp.sets["divisibility"] == {2} and sp.sets["equal_to_1"] == {3}


def test_do_not_specialize_unknown_parameter():
    def k(p):
        pass
    with pytest.raises(ValueError, match="no parameter 'zz'"):
        triton.jit(do_not_specialize=["zz"])(k)
    with pytest.raises(ValueError, match="no parameter 3"):
        triton.jit(do_not_specialize_on_alignment=[3])(k)


# -- named sets reach the IR as argument attributes ---------------------------

@triton.jit
def scale(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs * stride, tl.load(x_ptr + offs * stride, mask=mask) * 2.0, mask=mask)


def _func_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("func @"))


def test_sets_become_ir_argument_attributes():
    s = specializer(scale)
    a, o = np.zeros(256, np.float32), np.zeros(256, np.float32)
    key, bound, _ = s.bind(a, o, 256, 1, BLOCK=64)
    sp = s.specialization(key)
    assert sp.sets == {"divisibility": frozenset({0, 1, 2}), "equal_to_1": frozenset({3})}
    head = _func_line(scale.ir_text(a, o, 256, 1, BLOCK=64, arg_attrs=sp.arg_attrs()))
    assert head.count("divisibility = 16") == 3 and head.count("equal_to_1 = true") == 1
    assert "%3: i32 {equal_to_1 = true}" in head
    key2, *_ = s.bind(a[1:], o, 100, 3, BLOCK=64)
    head2 = _func_line(scale.ir_text(a[1:], o, 100, 3, BLOCK=64,
                                     arg_attrs=s.specialization(key2).arg_attrs()))
    assert head2.count("divisibility") == 1 and "equal_to_1" not in head2
    assert "%1: ptr<f32> {divisibility = 16}" in head2


def test_launch_path_compiles_with_the_attributes(monkeypatch):
    """JITFunction.run passes the key's sets to the frontend."""
    from tritium.compiler import frontend
    seen = {}
    real = frontend.compile_kernel

    def spy(fn, params, arg_attrs=None, **kw):
        seen.update(arg_attrs or {})
        return real(fn, params, arg_attrs, **kw)
    monkeypatch.setattr(frontend, "compile_kernel", spy)
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    a = np.zeros(256, np.float32)
    if scale.interpret:
        pytest.skip("interpreter forced for this session")
    scale[(4,)](a, a, 256, 1, BLOCK=64, warmup=True)
    assert seen == {"x_ptr": {"divisibility": 16}, "out_ptr": {"divisibility": 16}, "n": {"divisibility": 16},
                    "stride": {"equal_to_1": True}}


# -- ahead of time ---------------------------------------------------------------

def test_attrs_from_user_gives_exactly_what_is_given():
    sp = attrs_from_user(scale, {"divisibility": ["x_ptr", 2], "equal_to_1": ["stride"]})
    assert sp.sets == {"divisibility": frozenset({0, 2}), "equal_to_1": frozenset({3})}
    assert sp.arg_attrs() == {"x_ptr": {"divisibility": 16}, "n": {"divisibility": 16},
                              "stride": {"equal_to_1": True}}
    head = _func_line(scale.ir_text(signature="*fp32, *fp32, i32, i32", constexprs={"BLOCK": 64},
                                    arg_attrs=sp.arg_attrs()))
    assert head.count("divisibility") == 2 and head.count("equal_to_1") == 1
    assert "%1: ptr<f32>," in head                   # out_ptr: nothing assumed
    none = attrs_from_user(scale, {})
    assert none.arg_attrs() == {} and all(not v for v in none.sets.values())
    assert "{" not in _func_line(scale.ir_text(signature="*fp32, *fp32, i32, i32", constexprs={"BLOCK": 64},
                                               arg_attrs=none.arg_attrs())).split("attributes")[0]


def test_attrs_from_user_errors():
    with pytest.raises(KeyError, match="no specialization property 'pointer_range_32'"):
        attrs_from_user(scale, {"pointer_range_32": [0]})
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        attrs_from_user(scale, {"divisibility": ["nope"]})
    with pytest.raises(ValueError, match="no parameter index 9"):
        attrs_from_user(scale, {"divisibility": [9]})
    with pytest.raises(ValueError, match="is a constexpr"):
        attrs_from_user(scale, {"divisibility": ["BLOCK"]})
    with pytest.raises(ValueError, match="equal_to_1 applies to integer"):
        attrs_from_user(scale, {"equal_to_1": ["x_ptr"]}, signature={"x_ptr": tl.pointer_type(tl.float32)})
    amd = attrs_from_user(scale, {"pointer_range_32": ["out_ptr"]}, backend="hip")
    assert amd.arg_attrs() == {"out_ptr": {"pointer_range": 32}}


# -- backends ------------------------------------------------------------------

def test_backend_registry():
    assert [p.name for p in backends.get("cuda:90").properties] == ["divisibility", "equal_to_1"]
    assert [p.name for p in backends.get("hip").properties] == ["divisibility", "equal_to_1", "pointer_range_32"]
    with pytest.raises(ValueError, match="unknown backend"):
        backends.get("tpu")
    with pytest.raises(ValueError, match="kinds"):
        Property("bad", frozenset({"string"}), bool, ("bad", True))
    with pytest.raises(ValueError, match="twice"):
        Backend("x", shared_properties() + shared_properties())


def test_property_from_a_test_backend_changes_only_its_arguments():
    small = Property("small", frozenset({INTEGER}), lambda v: 0 <= v < 100, ("small_int", True))
    odd_ptr = Property("odd_page", frozenset({POINTER}),
                       lambda t: (t.data_ptr() // 4096) % 2 == 1, ("odd_page", 1))
    test_backend = backends.get("cuda").with_properties("cuda-test", [small, odd_ptr])
    base, ext = specializer(scale, "cuda"), specializer(scale, test_backend)
    x, o = FakeTensor(3 * 4096, "float32"), FakeTensor(4 * 4096, "float32")
    args = (x, o, 4096, 7)
    kb, bb, _ = base.bind(*args, BLOCK=64)
    ke, be, _ = ext.bind(*args, BLOCK=64)
    assert ext.key_python(be) == ke
    sb, se = base.specialization(kb), ext.specialization(ke)
    assert se.sets["small"] == {3} and se.sets["odd_page"] == {0}
    assert {k: v for k, v in se.sets.items() if k in sb.sets} == sb.sets
    ab, ae = sb.arg_attrs(), se.arg_attrs()
    assert ae == {"x_ptr": {**ab.get("x_ptr", {}), "odd_page": 1}, "out_ptr": ab["out_ptr"], "n": ab["n"],
                  "stride": {"small_int": True}}
    text_b = scale.ir_text(np.zeros(8, np.float32), np.zeros(8, np.float32), 4096, 7, BLOCK=64, arg_attrs=ab)
    text_e = scale.ir_text(np.zeros(8, np.float32), np.zeros(8, np.float32), 4096, 7, BLOCK=64, arg_attrs=ae)
    diff = [(l1, l2) for l1, l2 in zip(text_b.splitlines(), text_e.splitlines()) if l1 != l2]
    assert len(diff) == 1 and diff[0][0].startswith("func @")   # only the signature line changes
    assert "odd_page = 1" in diff[0][1] and "%3: i32 {small_int = true}" in diff[0][1]
    # the predicate's "no" leaves the argument alone
    ke2, *_ = ext.bind(FakeTensor(4 * 4096, "float32"), o, 4096, 700, BLOCK=64)
    assert ext.specialization(ke2).sets["small"] == set() and ext.specialization(ke2).sets["odd_page"] == set()


def test_amd_pointer_range_32():
    s = specializer(scale, "hip")
    small = FakeTensor(1 << 20, "float32", nbytes=1 << 20)
    huge = FakeTensor(1 << 20, "float32", nbytes=3 << 30)
    tail = FakeTensor((1 << 20) + (3 << 30) - 4096, "float32", nbytes=3 << 30, base=1 << 20)
    k1, *_ = s.bind(small, huge, 16, 1, BLOCK=64)
    assert s.specialization(k1).sets["pointer_range_32"] == {0}
    k2, *_ = s.bind(tail, small, 16, 1, BLOCK=64)
    assert s.specialization(k2).sets["pointer_range_32"] == {0, 1}   # measured from the pointer
    assert s.specialization(k2).arg_attrs()["x_ptr"] == {"divisibility": 16, "pointer_range": 32}
    a = np.zeros(1000, np.float32)
    assert storage_extent(a) == 4000 and storage_extent(a[10:]) == 3960
    assert storage_extent(a[::2]) == 4000
    assert s.specialization(s.bind(a, a[5:], 16, 1, BLOCK=64)[0]).sets["pointer_range_32"] == {0, 1}
    # CUDA backend never tests it
    assert "pointer_range_32" not in specializer(scale, "cuda").specialization(k1).sets


def test_specializer_is_built_once_per_backend():
    assert specializer(scale, "cuda") is specializer(scale, "cuda:90")
    assert specializer(scale, "cuda") is not specializer(scale, "hip")


# -- a key's sets change generated code ---------------------------------------

@triton.jit
def vadd(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_aligned_and_misaligned_launches_get_different_vector_widths():
    from tritium import _core
    if not hasattr(_core, "compile_ptx"):
        pytest.skip("the extension has no NVPTX codegen")
    s = specializer(vadd)
    a = np.zeros(1040, np.float32)

    def ptx_for(*args):
        key, bound, _ = s.bind(*args, BLOCK=1024)
        attrs = s.specialization(key).arg_attrs()
        return key, _core.compile_ptx(vadd.compile_ir(*bound[:4], BLOCK=1024, arg_attrs=attrs), "sm_90a", 4)["ptx"]
    k_al, ptx_al = ptx_for(a, a, a, 1024)
    k_mis, ptx_mis = ptx_for(a[1:], a, a, 1024)
    assert k_al != k_mis
    assert ptx_al.count("ld.global.v4.f32") == 4               # both loads: 16-byte vectors
    assert ptx_mis.count("ld.global.v4.f32") == 2              # only y: x is 4 bytes off
    assert "ld.global.f32" in ptx_mis and "ld.global.f32" not in ptx_al


def test_torch_tensors_when_available():
    torch = pytest.importorskip("torch")
    s, amd = specializer(k_all), specializer(k_all, "hip")
    names = {"bool": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
             "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
    for tname, want in names.items():
        t = torch.zeros(64, dtype=getattr(torch, tname))
        _, sp = keyed(s, t, 16, 1.0, True, None, C=4)
        assert sp.signature["p"] == tl.pointer_type(scalar_from_name(want))
        assert 0 in sp.sets["divisibility"]
    t = torch.zeros(64, dtype=torch.float32)
    _, sp = keyed(s, t[1:], 16, 1.0, True, None, C=4)
    assert 0 not in sp.sets["divisibility"]
    _, sp = keyed(amd, t[3:], 16, 1.0, True, None, C=4)
    assert 0 in sp.sets["pointer_range_32"] and storage_extent(t[3:]) == 61 * 4
