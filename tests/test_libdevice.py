"""`triton.language.extra.libdevice` (issue 14): every function of Triton
3.6's list in the interpreter against extended-precision answers, the
rounding-mode arithmetic and conversions exactly, typing and errors, and
every variant compiled through ptxas for sm_80 and sm_90a (linking
libdevice.10.bc); without the bitcode, what the target lowers itself still
compiles and the rest is an error naming the function and the kernel line.
tests/gpu/test_libdevice_gpu.py runs them on the GPU."""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.backends.libdevice import libdevice_path
from tritium.interpreter import run_grid
from tritium.language.extra import cuda, hip, libdevice
from tritium.language.extra.libdevice_table import TABLE

import libdevice_cases as C
import libdevice_kernels as K
from test_codegen_ptx import ARCHS, ptxas

VARIANTS = C.variants()


def interpret(name: str, args: list[np.ndarray]) -> np.ndarray:
    ret = TABLE[name][_key(name, args)][1]
    out_dtype = np.bool_ if name in ("isnan", "isinf") else C.NP[C.tname(ret)]
    y = np.zeros(len(args[0]), out_dtype)
    kernel = K.APPLY[len(args)]
    run_grid(kernel, (1,), kernel.bind_call(list(args) + [y, len(y)], dict(FN=getattr(libdevice, name), BLOCK=64)))
    return y


def _key(name: str, args: list[np.ndarray]) -> tuple:
    names = {np.float32: "fp32", np.float64: "fp64", np.int32: "int32", np.int64: "int64", np.uint32: "uint32",
             np.uint64: "uint64"}
    want = tuple(names[a.dtype.type] for a in args)
    return next(k for k in TABLE[name] if tuple(C.tname(t) for t in k) == want)


def test_the_three_modules_hold_tritons_list():
    assert len(TABLE) == 197 and sum(len(v) for v in TABLE.values()) == 313
    assert sorted(libdevice.__all__) == sorted(TABLE) == sorted(cuda.libdevice.__all__) == sorted(hip.libdevice.__all__)
    assert tl.extra.libdevice.erfinv is cuda.libdevice.erfinv is libdevice.erfinv
    for name in ("tan", "erfinv", "j0", "fast_expf", "float2int_rd", "ull2double_ru", "byte_perm", "isfinited"):
        assert callable(getattr(libdevice, name))


@pytest.mark.parametrize("name,types,symbol,ret", VARIANTS, ids=[f"{v[0]}-{'-'.join(v[1])}" for v in VARIANTS])
def test_interpreter_runs_every_function(name, types, symbol, ret):
    rng = np.random.default_rng(C.seed(name, types))
    args = C.inputs(name, types, 48, rng)
    got = interpret(name, args)
    want = C.reference(name, args)
    if want is None or not np.issubdtype(got.dtype, np.floating):
        return
    # f32: computed in f64 and rounded once; f64: NumPy's own functions (i0: an integral)
    tol = 16 if name == "cyl_bessel_i0" else 1.0 if got.dtype == np.float32 else 2.0
    err = C.ulps(got, want, got.dtype)
    assert err.max() <= tol, f"{symbol}: {err.max()} ulps at {args[0][err.argmax()]}"


@pytest.mark.parametrize("name", sorted(C.KNOWN))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpreter_special_functions_at_known_points(name, dtype):
    xs = np.array([x for x, _ in C.KNOWN[name]], dtype)
    want = np.array([v for _, v in C.KNOWN[name]])
    got = interpret(name, [xs])
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-13)


def test_bessel_of_integer_order_follow_the_recurrence():
    x = np.array([0.7, 3.0, 11.5, 30.0], np.float64)
    j = [interpret("jn", [np.full(4, n, np.int32), x]) for n in range(4)]
    y = [interpret("yn", [np.full(4, n, np.int32), x]) for n in range(4)]
    for n in (1, 2):   # Z_{n+1} = 2n/x Z_n - Z_{n-1}
        np.testing.assert_allclose(j[n + 1], 2 * n / x * j[n] - j[n - 1], atol=1e-12)
        np.testing.assert_allclose(y[n + 1], 2 * n / x * y[n] - y[n - 1], rtol=1e-10)
    np.testing.assert_allclose(j[0], interpret("j0", [x]), atol=1e-14)


def _exact(op: str, xs) -> Fraction:
    q = [Fraction(float(x)) for x in xs]
    return {"add": lambda: q[0] + q[1], "sub": lambda: q[0] - q[1], "mul": lambda: q[0] * q[1],
            "div": lambda: q[0] / q[1], "rcp": lambda: 1 / q[0], "fma": lambda: q[0] * q[1] + q[2]}[op]()


@pytest.mark.parametrize("op,arity", [("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("rcp", 1), ("fma", 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounding_modes_bracket_the_exact_result(op, arity, dtype):
    rng = np.random.default_rng(11)
    args = [(rng.standard_normal(32) * 10.0 ** rng.integers(-3, 4, 32)).astype(dtype) for _ in range(arity)]
    out = {m: interpret(f"{op}_{m}", args) for m in ("rn", "rz", "rd", "ru")}
    for i in range(32):
        q = _exact(op, [a[i] for a in args])
        rd, ru, rz, rn = (Fraction(float(out[m][i])) for m in ("rd", "ru", "rz", "rn"))
        assert rd <= q <= ru, (op, i)
        assert np.nextafter(out["rd"][i], dtype(np.inf)) >= out["ru"][i]   # adjacent (or equal when exact)
        assert rz == (rd if q >= 0 else ru)
        assert abs(rn - q) <= min(abs(rd - q), abs(ru - q))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sqrt_in_each_rounding_mode(dtype):
    x = np.array([2.0, 3.0, 1e-3, 10.0, 0.0], dtype)
    rd, ru = interpret("sqrt_rd", [x]), interpret("sqrt_ru", [x])
    for a, lo, hi in zip(x, rd, ru):
        assert Fraction(float(lo)) ** 2 <= Fraction(float(a)) <= Fraction(float(hi)) ** 2
    np.testing.assert_array_equal(interpret("sqrt_rz", [x]), rd)


def test_conversions_round_saturate_and_map_nan_to_zero():
    f = np.array([-1.5, -0.5, 0.5, 2.5, 3e9, -3e9, np.nan, 7.0], np.float32)
    assert interpret("float2int_rn", [f]).tolist() == [-2, 0, 0, 2, 2**31 - 1, -2**31, 0, 7]
    assert interpret("float2int_rd", [f]).tolist() == [-2, -1, 0, 2, 2**31 - 1, -2**31, 0, 7]
    assert interpret("float2int_ru", [f]).tolist() == [-1, 0, 1, 3, 2**31 - 1, -2**31, 0, 7]
    assert interpret("float2int_rz", [f]).tolist() == [-1, 0, 0, 2, 2**31 - 1, -2**31, 0, 7]
    i = np.array([16777217, -16777217, 3], np.int32)
    assert interpret("int2float_rz", [i]).tolist() == [16777216.0, -16777216.0, 3.0]
    assert interpret("int2float_ru", [i]).tolist() == [16777218.0, -16777216.0, 3.0]
    assert interpret("int2float_rd", [i]).tolist() == [16777216.0, -16777218.0, 3.0]
    big = np.array([2**62 + 1, -(2**53) - 1], np.int64)
    assert interpret("ll2double_ru", [big]).tolist() == [2.0**62 + 2.0**10, -(2.0**53)]
    d = np.array([1 / 3, -1 / 3], np.float64)
    lo, hi = interpret("double2float_rd", [d]), interpret("double2float_ru", [d])
    assert all(lo <= d) and all(hi >= d) and all(np.nextafter(lo, np.float32(1)) == hi)


def test_bit_and_integer_functions():
    x = np.array([1, 0x00F0, -1, 0x40000000], np.int32)
    assert interpret("clz", [x]).tolist() == [31, 24, 0, 1]
    assert interpret("popc", [x]).tolist() == [1, 4, 32, 1]
    assert interpret("ffs", [x]).tolist() == [1, 5, 1, 31]
    assert interpret("brev", [x]).view(np.uint32).tolist() == [0x80000000, 0x0F000000, 0xFFFFFFFF, 2]
    assert interpret("clz", [np.array([1, -1], np.int64)]).tolist() == [63, 0]
    a, b = np.array([-7, 2**30, 5], np.int32), np.array([3, 8, -9], np.int32)
    assert interpret("mulhi", [a, b]).tolist() == [(-7 * 3) >> 32, (2**30 * 8) >> 32, (5 * -9) >> 32]
    assert interpret("hadd", [a, b]).tolist() == [(-7 + 3) >> 1, (2**30 + 8) >> 1, (5 - 9) >> 1]
    assert interpret("rhadd", [a, b]).tolist() == [(-7 + 3 + 1) >> 1, (2**30 + 9) >> 1, (5 - 9 + 1) >> 1]
    s = np.array([0x3210, 0x7654, 0x0000], np.int32)
    lo, hi = np.array([0x44332211] * 3, np.int32), np.array([0x00000000] * 3, np.int32)
    assert interpret("byte_perm", [lo, hi, s]).view(np.uint32).tolist() == [0x44332211, 0x00000000, 0x11111111]
    u = np.array([2**64 - 1, 3], np.uint64)
    assert interpret("mulhi", [u, u]).tolist() == [2**64 - 2, 0]
    f = np.array([1.0, -2.0], np.float32)
    assert interpret("float_as_int", [f]).tolist() == [0x3F800000, -0x40000000]
    assert interpret("double2hiint", [np.array([1.0])]).tolist() == [0x3FF00000]
    assert interpret("hiloint2double", [np.array([0x3FF00000], np.int32), np.array([0], np.int32)]).tolist() == [1.0]
    flags = np.array([np.nan, np.inf, -0.0, 1.0], np.float32)
    assert interpret("isnan", [flags]).tolist() == [True, False, False, False]
    assert interpret("isinf", [flags]).tolist() == [False, True, False, False]
    assert interpret("signbit", [flags]).tolist()[2:] == [1, 0]


@triton.jit
def _pow_int(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, libdevice.pow(tl.load(x_ptr + o), 3))


@triton.jit
def _sin_of_int(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(x_ptr + o, libdevice.sin(tl.load(x_ptr + o)))


@triton.jit
def _arity(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(x_ptr + o, libdevice.atan2(tl.load(x_ptr + o)))


def test_operand_types_pick_the_function_or_name_what_it_takes():
    text = _core.to_text(_pow_int.compile_ir(signature="*fp32, *fp32", constexprs=dict(N=16)))
    assert "__nv_powif" in text     # an int exponent picks powi, as in Triton
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    run_grid(_pow_int, (1,), _pow_int.bind_call([x, y], dict(N=4)))
    assert y.tolist() == [0.0, 1.0, 8.0, 27.0]
    with pytest.raises(Exception, match=r"libdevice.sin: no version for argument types \(int32\); it takes "
                                        r"\(fp32\); \(fp64\)") as e:
        _sin_of_int.compile_ir(signature="*i32", constexprs=dict(N=16))
    assert "test_libdevice.py" in str(e.value)
    with pytest.raises(Exception, match="libdevice.atan2 takes 2 arguments, got 1"):
        _arity.compile_ir(signature="*fp32", constexprs=dict(N=16))


@tl.core.extern
def my_tanh(x, _semantic=None):
    """A user-written extern in Triton's style, through tl.core's names."""
    return tl.core.extern_elementwise("", "", [x], {(tl.core.dtype("fp32"),): ("__nv_tanhf", tl.core.dtype("fp32"))},
                                      is_pure=True, _semantic=_semantic)


@triton.jit
def _user_extern(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, my_tanh(tl.load(x_ptr + o)))


def test_a_user_extern_through_tl_core(tmp_path):
    x = np.linspace(-3, 3, 16).astype(np.float32)
    y = np.zeros_like(x)
    run_grid(_user_extern, (1,), _user_extern.bind_call([x, y], dict(N=16)))
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-6)
    ir = _user_extern.compile_ir(signature="*fp32, *fp32", constexprs=dict(N=16))
    ptxas(_core.compile_ptx(ir, "sm_90a", 4, libdevice=libdevice_path())["ptx"], "sm_90a", tmp_path)


def _groups() -> dict:
    by_sig = defaultdict(list)
    for name, types, _, ret in VARIANTS:
        by_sig[(types, "bool" if name in ("isnan", "isinf") else ret)].append(name)
    return by_sig


GROUPS = _groups()
SIG_NAMES = {"fp32": "*fp32", "fp64": "*fp64", "int32": "*i32", "int64": "*i64", "uint32": "*u32",
             "uint64": "*u64", "bool": "*i1"}


@pytest.mark.skipif(libdevice_path() is None, reason="libdevice.10.bc not found (pip install nvidia-cuda-nvcc-cu12)")
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("sig", sorted(GROUPS), ids=lambda s: "-".join(s[0]) + "-to-" + s[1])
def test_every_function_compiles_through_ptxas(sig, arch, tmp_path):
    types, ret = sig
    fns = tuple(getattr(libdevice, n) for n in GROUPS[sig])
    signature = ", ".join(SIG_NAMES[t] for t in types + (ret,))
    ir = K.MANY[len(types)].compile_ir(signature=signature, constexprs=dict(FNS=fns, N=128))
    out = _core.compile_ptx(ir, arch, 4, libdevice=libdevice_path())
    assert ".extern .func __nv_" not in out["ptx"]   # every library call was linked and inlined
    ptxas(out["ptx"], arch, tmp_path)


@pytest.mark.parametrize("name,instruction", [("add_rz", "add.rz.f32"), ("div_ru", "div.rp.f32"),
                                              ("fma_rd", "fma.rm.f32"), ("float2int_rd", "cvt.rmi.s32.f32"),
                                              ("popc", "popc.b32"), ("brev", "brev.b32"), ("floor", "cvt.rmi.f32.f32"),
                                              ("fast_sinf", "sin.approx"), ("sqrt_rn", "sqrt.rn.f32"),
                                              ("fast_expf", "ex2.approx")])
def test_without_libdevice_the_target_lowers_what_is_one_instruction(name, instruction, tmp_path):
    types = next(iter(TABLE[name]))
    args = ", ".join(SIG_NAMES[C.tname(t)] for t in types)
    ret = SIG_NAMES[C.tname(TABLE[name][types][1])]
    ir = K.APPLY[len(types)].compile_ir(signature=f"{args}, {ret}, i32",
                                        constexprs=dict(FN=getattr(libdevice, name), BLOCK=128))
    ptx = _core.compile_ptx(ir, "sm_90a", 4)["ptx"]
    assert instruction in ptx
    ptxas(ptx, "sm_90a", tmp_path)


def test_without_libdevice_a_library_function_is_an_error_naming_it():
    ir = K.apply1.compile_ir(signature="*fp32, *fp32, i32", constexprs=dict(FN=libdevice.lgamma, BLOCK=128))
    with pytest.raises(Exception) as e:
        _core.compile_ptx(ir, "sm_90a", 4)
    msg = str(e.value)
    assert "libdevice.lgamma" in msg and "__nv_lgammaf" in msg and "libdevice.10.bc" in msg
    assert "libdevice_kernels.py:" in msg


def test_the_runtime_finds_libdevice_and_honours_the_variable(monkeypatch, tmp_path):
    found = libdevice_path()
    assert found is None or found.endswith("libdevice.10.bc")
    monkeypatch.setenv("TRITIUM_LIBDEVICE_PATH", str(tmp_path / "missing.bc"))
    assert libdevice_path() == str(tmp_path / "missing.bc")
    ir = K.apply1.compile_ir(signature="*fp32, *fp32, i32", constexprs=dict(FN=libdevice.lgamma, BLOCK=128))
    with pytest.raises(Exception, match="cannot read libdevice .*missing.bc"):
        _core.compile_ptx(ir, "sm_90a", 4, libdevice=libdevice_path())


def test_math_names_triton_keeps_in_tl_math():
    for name in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf", "fma", "umulhi", "div_rn",
                 "sqrt_rn", "floor", "ceil", "abs", "cdiv", "fdiv"):
        assert callable(getattr(tl.math, name)), name
