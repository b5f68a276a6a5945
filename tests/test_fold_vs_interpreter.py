"""The constant folder (Rust, tritium-transforms `fold`) and the interpreter
(`NumpyBuilder`) compute the same ops on the same inputs. Hypothesis draws
an op, a type and constant operands; the op is built into a one-kernel
module of `const`s, folded through `_core.run_passes(.., ["fold"])`, and run
in the interpreter. Wherever the folder answers (it declines what the GPU
decides at run time: division by zero, shifts past the width, NaN payloads,
approximate math, f16/bf16/fp8), the two answers must be equal, bit for bit."""
from __future__ import annotations

import re
import struct

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from tritium import _core
from tritium.compiler import ir
from tritium.interpreter import NumpyBuilder, wrap
from tritium.language import dtypes as D

INTS = [D.int1, D.int8, D.int16, D.int32, D.int64, D.uint8, D.uint16, D.uint32, D.uint64]
FLOATS = [D.float32, D.float64]
# the folder's float arithmetic stops at these; other float kinds it declines
FOLDED_FLOATS = FLOATS
ALL_KINDS = INTS + FLOATS + [D.float16, D.bfloat16]

BINARY_INT = ["add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "min", "max"]
BINARY_FLOAT = ["add", "sub", "mul", "min", "max"]
UNARY_INT = ["neg", "not", "abs"]
UNARY_FLOAT = ["neg", "abs", "floor", "ceil"]
PREDS = ["eq", "ne", "lt", "le", "gt", "ge"]

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def bits(t) -> int:
    return 1 if t == D.int1 else t.primitive_bitwidth


def int_values(t):
    """Raw values of integer type `t`, edges weighted in."""
    n = bits(t)
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if t.is_int_signed() and n > 1 else (0, (1 << n) - 1)
    edges = sorted({lo, hi, 0, min(1, hi), max(-1, lo), lo + 1, hi - 1, min(n, hi), min(n - 1, hi)})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi), st.integers(0, min(n + 2, hi)))


def float_values(t):
    width = 32 if t == D.float32 else 64
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, float("inf"), float("-inf"), float("nan"), 2.0 ** 31, -2.0 ** 63,
                1e300 if width == 64 else 3e38, 1.5e-45 if width == 32 else 5e-324]
    return st.one_of(st.sampled_from(specials), st.floats(width=width, allow_nan=True, allow_infinity=True))


def values(t):
    return float_values(t) if t.is_floating() else int_values(t)


def const_attr(v, t):
    """`v` as a `const` value attribute of type `t` (ints as the signed i64 the codec holds)."""
    if t.is_floating():
        return float(v)
    if t == D.int1:
        return bool(v)
    v = int(v) & ((1 << 64) - 1)
    return v - (1 << 64) if v >= 1 << 63 else v


def module(op: str, operand_types, operands, result_type, attrs) -> bytes:
    b = ir.IRBuilder()
    fn = b.begin_function("k", [D.pointer_type(result_type)], kernel=True)
    handles = [b.create("const", [], [t], {"value": const_attr(v, t)})[0] for t, v in zip(operand_types, operands)]
    r = b.create(op, handles, [result_type], attrs)[0]
    b.create("store", [fn.args[0], r], [], {"cache": "", "eviction": ""})
    b.end_function()
    return b.encode()


_CONST = re.compile(r'^\s*(%\d+) = "const"\(\) \{value = ([^}]*)\} : \(\) -> (\S+)( loc\(.*\))?$')


def folded(data: bytes):
    """The constant the folder stored, or None when it left the op alone."""
    text = _core.to_text(_core.run_passes(data, ["fold"]))
    consts = {m.group(1): m.group(2) for m in map(_CONST.match, text.splitlines()) if m}
    stored = re.search(r'"store"\(%0, (%\d+)\)', text).group(1)
    return consts.get(stored)


def attr_value(s: str):
    if s in ("true", "false"):
        return int(s == "true")
    if s.startswith("nan(0x"):
        return struct.unpack("<d", int(s[6:-1], 16).to_bytes(8, "little"))[0]
    if s in ("nan", "inf", "-inf") or any(c in s for c in ".eE"):
        return float(s)
    return int(s)


def same(fold_text: str, got, t) -> bool:
    want = attr_value(fold_text)
    if t.is_floating():
        # a `const` holds its value as f64; the type's precision is what codegen materializes
        want = float(np.float32(want)) if t == D.float32 else want
        g = float(np.asarray(got, dtype=np.float64))
        if np.isnan(want) or np.isnan(g):
            return bool(np.isnan(want) and np.isnan(g))
        return struct.pack("<d", want) == struct.pack("<d", g)  # -0.0 is not 0.0
    mask = (1 << bits(t)) - 1
    g = np.asarray(got)
    return int(want) & mask == int(g.astype(np.int64) if g.dtype == np.bool_ else g) & mask


def interpret(op: str, operand_types, operands, result_type, attrs):
    b = NumpyBuilder()
    handles = [wrap(np.float64(v) if t.is_floating() else _int_array(v, t), t) for t, v in zip(operand_types, operands)]
    with np.errstate(all="ignore"):
        return b.create(op, handles, [result_type], attrs)[0]


def _int_array(v, t):
    if t == D.int1:
        return np.asarray(bool(v))
    return np.asarray(int(v)).astype(np.uint64 if int(v) >= 1 << 63 else np.int64)


def check(op, operand_types, operands, result_type, attrs=None):
    attrs = attrs or {}
    f = folded(module(op, operand_types, operands, result_type, attrs))
    if f is None:
        return False
    got = interpret(op, operand_types, operands, result_type, attrs)
    assert same(f, got, result_type), (
        f"{op}{attrs or ''} on {[str(t) for t in operand_types]} {operands!r}: folder {f}, interpreter {got!r}")
    return True


@st.composite
def binary_case(draw):
    t = draw(st.sampled_from(INTS + FLOATS))
    op = draw(st.sampled_from(BINARY_INT if t.is_int() else BINARY_FLOAT))
    attrs = {"propagate_nan": draw(st.booleans())} if op in ("min", "max") and t.is_floating() else {}
    return op, t, [draw(values(t)), draw(values(t))], attrs


@given(binary_case())
@SETTINGS
def test_binary_ops_agree(case):
    op, t, xs, attrs = case
    check(op, [t, t], xs, t, attrs)


@given(st.sampled_from(INTS + FLOATS).flatmap(
    lambda t: st.tuples(st.just(t), st.sampled_from(UNARY_INT if t.is_int() else UNARY_FLOAT), values(t))))
@SETTINGS
def test_unary_ops_agree(case):
    t, op, x = case
    check(op, [t], [x], t)


@given(st.sampled_from(INTS + FLOATS).flatmap(
    lambda t: st.tuples(st.just(t), st.sampled_from(PREDS), values(t), values(t))))
@SETTINGS
def test_compares_agree(case):
    t, pred, x, y = case
    check("cmp", [t, t], [x, y], D.int1, {"pred": pred})


@given(st.tuples(st.sampled_from(INTS + FLOATS), st.sampled_from(ALL_KINDS)).flatmap(
    lambda ts: st.tuples(st.just(ts[0]), st.just(ts[1]), values(ts[0]), st.sampled_from([None, "rtne", "rtz"]))))
@SETTINGS
def test_casts_agree(case):
    src, dst, x, rounding = case
    if dst.is_int() and src.is_floating():
        rounding = None  # rounding modes are for float results
    check("cast", [src], [x], dst, {"rounding": rounding} if rounding else {})


@given(st.sampled_from(INTS + FLOATS).flatmap(
    lambda t: st.tuples(st.just(t), st.booleans(), values(t), values(t))))
@SETTINGS
def test_select_agrees(case):
    t, c, x, y = case
    check("select", [D.int1, t, t], [c, x, y], t)


def test_the_folder_answers_most_cases():
    """The comparison means something only where the folder folds: each
    family above must fold its ordinary inputs."""
    assert check("add", [D.int32, D.int32], [2 ** 31 - 1, 1], D.int32)
    assert check("div", [D.int8, D.int8], [-128, 3], D.int8)
    assert check("shr", [D.uint16, D.uint16], [0x8000, 15], D.uint16)
    assert check("mul", [D.float32, D.float32], [1.1, 3.3], D.float32)
    assert check("floor", [D.float64], [-2.5], D.float64)
    assert check("cmp", [D.float32, D.float32], [float("nan"), 1.0], D.int1, {"pred": "ne"})
    assert check("cast", [D.int64], [2 ** 53 + 1], D.float32)
    assert check("cast", [D.float32], [-3.75], D.int8)
    assert check("select", [D.int1, D.uint64, D.uint64], [True, 2 ** 64 - 1, 3], D.uint64)
    # what the GPU decides at run time is left to it
    assert not check("div", [D.int32, D.int32], [1, 0], D.int32)
    assert not check("shl", [D.int32, D.int32], [1, 32], D.int32)
    assert not check("exp", [D.float32], [1.0], D.float32)
    assert not check("add", [D.float16, D.float16], [1.0, 2.0], D.float16)
