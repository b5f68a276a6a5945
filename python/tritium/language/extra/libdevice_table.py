"""Which libdevice function (`__nv_*`) each `libdevice.<name>` call becomes,
by argument types: Triton 3.6's list of 198 functions, as data.

`TABLE[name]` is `{(argument dtypes...): (symbol, result dtype)}`. Most
functions come in the f32 (`__nv_<name>f`) and f64 (`__nv_<name>`) pair that
`_pair` spells; the rounding-mode arithmetic (`add_rz` is `__nv_fadd_rz` and
`__nv_dadd_rz`) and the conversions (`float2int_rd`) follow a pattern too.
Result types follow Triton's (its unsigned conversions return int32/int64).
"""
from __future__ import annotations

from ..dtypes import dtype, float32 as F32, float64 as F64, int32 as I32, int64 as I64, uint32 as U32, uint64 as U64

Table = dict[tuple[dtype, ...], tuple[str, dtype]]
MODES = ("rn", "rz", "rd", "ru")


def _pair(base: str, n: int = 1, ret32: dtype = F32, ret64: dtype = F64, extra: tuple = ()) -> Table:
    """`(fp32, ...) -> __nv_<base>f`, `(fp64, ...) -> __nv_<base>`; `extra`
    types (ldexp's int32 exponent) follow the float operands."""
    return {(F32,) * n + extra: (f"__nv_{base}f", ret32), (F64,) * n + extra: (f"__nv_{base}", ret64)}


def _one(symbol: str, args: tuple, ret: dtype) -> Table:
    return {args: (symbol, ret)}


TABLE: dict[str, Table] = {}

# integer bit operations and arithmetic
TABLE["clz"] = {(I32,): ("__nv_clz", I32), (I64,): ("__nv_clzll", I32)}
TABLE["popc"] = {(I32,): ("__nv_popc", I32), (I64,): ("__nv_popcll", I32)}
TABLE["brev"] = {(I32,): ("__nv_brev", I32), (I64,): ("__nv_brevll", I64)}
TABLE["ffs"] = {(I32,): ("__nv_ffs", I32), (I64,): ("__nv_ffsll", I32)}
TABLE["byte_perm"] = _one("__nv_byte_perm", (I32, I32, I32), I32)
TABLE["mulhi"] = {(I32, I32): ("__nv_mulhi", I32), (U32, U32): ("__nv_umulhi", U32),
                  (I64, I64): ("__nv_mul64hi", I64), (U64, U64): ("__nv_umul64hi", U64)}
TABLE["mul24"] = {(I32, I32): ("__nv_mul24", I32), (U32, U32): ("__nv_umul24", U32)}
TABLE["sad"] = {(I32, I32, U32): ("__nv_sad", I32), (U32, U32, U32): ("__nv_usad", U32)}
TABLE["hadd"] = {(I32, I32): ("__nv_hadd", I32), (U32, U32): ("__nv_uhadd", U32)}
TABLE["rhadd"] = {(I32, I32): ("__nv_rhadd", I32), (U32, U32): ("__nv_urhadd", U32)}
TABLE["abs"] = {(I32,): ("__nv_abs", I32), (I64,): ("__nv_llabs", I64), (F32,): ("__nv_fabsf", F32),
                (F64,): ("__nv_fabs", F64)}

# float functions of one or more floats, in the f32/f64 pair
for _name in ("floor", "ceil", "trunc", "rint", "nearbyint", "round", "sqrt", "rsqrt", "cbrt", "rcbrt",
              "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb",
              "sin", "cos", "tan", "sinpi", "cospi", "asin", "acos", "atan", "sinh", "cosh", "tanh",
              "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "erfcinv", "erfcx", "normcdf", "normcdfinv",
              "lgamma", "tgamma", "j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1"):
    TABLE[_name] = _pair(_name)
for _name in ("atan2", "hypot", "rhypot", "copysign", "nextafter", "fmod", "remainder", "fdim"):
    TABLE[_name] = _pair(_name, 2)
TABLE["fma"] = _pair("fma", 3)
TABLE["norm3d"], TABLE["rnorm3d"] = _pair("norm3d", 3), _pair("rnorm3d", 3)
TABLE["norm4d"], TABLE["rnorm4d"] = _pair("norm4d", 4), _pair("rnorm4d", 4)
TABLE["ldexp"] = _pair("ldexp", 1, extra=(I32,))
TABLE["scalbn"] = _pair("scalbn", 1, extra=(I32,))
TABLE["jn"] = {(I32, F32): ("__nv_jnf", F32), (I32, F64): ("__nv_jn", F64)}
TABLE["yn"] = {(I32, F32): ("__nv_ynf", F32), (I32, F64): ("__nv_yn", F64)}
TABLE["pow"] = {(F32, I32): ("__nv_powif", F32), (F64, I32): ("__nv_powi", F64),
                **_pair("pow", 2)}
TABLE["ilogb"] = _pair("ilogb", ret32=I32, ret64=I32)
TABLE["llrint"] = _pair("llrint", ret32=I64, ret64=I64)
TABLE["llround"] = _pair("llround", ret32=I64, ret64=I64)
TABLE["isnan"] = {(F32,): ("__nv_isnanf", I32), (F64,): ("__nv_isnand", I32)}
TABLE["isinf"] = {(F32,): ("__nv_isinff", I32), (F64,): ("__nv_isinfd", I32)}
TABLE["signbit"] = {(F32,): ("__nv_signbitf", I32), (F64,): ("__nv_signbitd", I32)}
TABLE["finitef"] = _one("__nv_finitef", (F32,), I32)
TABLE["isfinited"] = _one("__nv_isfinited", (F64,), I32)
TABLE["saturatef"] = _one("__nv_saturatef", (F32,), F32)
TABLE["rcp64h"] = _one("__nv_rcp64h", (F64,), F64)
TABLE["rsqrt_rn"] = _one("__nv_frsqrt_rn", (F32,), F32)

# arithmetic in one rounding mode
for _m in MODES:
    for _op, _n in (("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("rcp", 1), ("sqrt", 1)):
        TABLE[f"{_op}_{_m}"] = {(F32,) * _n: (f"__nv_f{_op}_{_m}", F32), (F64,) * _n: (f"__nv_d{_op}_{_m}", F64)}
    TABLE[f"fma_{_m}"] = {(F32,) * 3: (f"__nv_fmaf_{_m}", F32), (F64,) * 3: (f"__nv_fma_{_m}", F64)}

# conversions: (libdevice's operand names, argument type, result type, modes)
_CONVERSIONS = [
    ("double", "float", F64, F32, MODES), ("double", "int", F64, I32, MODES), ("double", "uint", F64, I32, MODES),
    ("int", "double", I32, F64, ("rn",)), ("uint", "double", U32, F64, ("rn",)),
    ("float", "int", F32, I32, MODES), ("float", "uint", F32, I32, MODES),
    ("int", "float", I32, F32, MODES), ("uint", "float", U32, F32, MODES),
    ("float", "ll", F32, I64, MODES), ("float", "ull", F32, I64, MODES),
    ("double", "ll", F64, I64, MODES), ("double", "ull", F64, I64, MODES),
    ("ll", "float", I64, F32, MODES), ("ull", "float", U64, F32, MODES),
    ("ll", "double", I64, F64, MODES), ("ull", "double", U64, F64, MODES),
]
for _src, _dst, _a, _r, _modes in _CONVERSIONS:
    for _m in _modes:
        TABLE[f"{_src}2{_dst}_{_m}"] = _one(f"__nv_{_src}2{_dst}_{_m}", (_a,), _r)
TABLE["hiloint2double"] = _one("__nv_hiloint2double", (I32, I32), F64)
TABLE["double2loint"] = _one("__nv_double2loint", (F64,), I32)
TABLE["double2hiint"] = _one("__nv_double2hiint", (F64,), I32)
TABLE["int_as_float"] = _one("__nv_int_as_float", (I32,), F32)
TABLE["float_as_int"] = _one("__nv_float_as_int", (F32,), I32)
TABLE["uint_as_float"] = _one("__nv_uint_as_float", (U32,), F32)
TABLE["float_as_uint"] = _one("__nv_float_as_uint", (F32,), I32)
TABLE["longlong_as_double"] = _one("__nv_longlong_as_double", (I64,), F64)
TABLE["double_as_longlong"] = _one("__nv_double_as_longlong", (F64,), I64)

# the fast (approximate) f32 forms
for _name in ("fast_sinf", "fast_cosf", "fast_log2f", "fast_logf", "fast_expf", "fast_tanf", "fast_exp10f",
              "fast_log10f"):
    TABLE[_name] = _one(f"__nv_{_name}", (F32,), F32)
TABLE["fast_powf"] = _one("__nv_fast_powf", (F32, F32), F32)
TABLE["fast_dividef"] = _one("__nv_fast_fdividef", (F32, F32), F32)

# functions whose int32 result Triton turns into a boolean
TO_BOOL = frozenset({"isnan", "isinf"})

del _name, _m, _op, _n, _src, _dst, _a, _r, _modes
