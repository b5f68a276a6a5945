"""Every op of the Rust op table (`_core.op_specs()`) has a case in the
interpreter's builder and in the IR encoder, and the scalar-kind codes the
encoder writes are the ones Rust reads. An op added in Rust without its Python
half fails here, naming the op."""
from __future__ import annotations

import pytest

from tritium import _core
from tritium.compiler import ir
from tritium.interpreter import NumpyBuilder
from tritium.interpreter.builder import InterpreterError
from tritium.language import dtypes as D

SPECS = {spec["name"]: spec for spec in _core.op_specs()}

# The interpreter runs the kernel as Python: Python's own `for`/`if`/`while`
# and function calls replace these ops, so they never reach the builder.
RUN_BY_PYTHON = {"for", "if", "while", "yield", "condition", "call", "return"}
# Reductions and scans reach the builder through `create_combine`.
COMBINE = {"reduce", "scan"}


def test_op_specs_match_op_table():
    assert list(SPECS) == list(_core.op_table()) == ir.OP_TABLE


@pytest.mark.parametrize("name", sorted(RUN_BY_PYTHON))
def test_ops_left_to_python_are_structure(name):
    # only control flow, its terminators and calls may be left to Python
    spec = SPECS[name]
    assert spec["regions"] > 0 or spec["terminator"] or name == "call", (
        f"'{name}' is computation; the interpreter's builder must implement it")


@pytest.mark.parametrize("name", sorted(SPECS))
def test_interpreter_has_a_case(name):
    if name in RUN_BY_PYTHON:
        return
    b = NumpyBuilder()
    if name in COMBINE:
        x = b.create("arange", [], [D.block_type(D.int32, [4])], {"start": 0, "end": 4})[0]
        attrs = {"axis": 0, "reverse": False}
        out = b.create_combine(name, [x], [D.int32 if name == "reduce" else x.ktype], attrs, [D.int32],
                               lambda a, c: [b.create("add", [a[0], c[0]], [D.int32])[0]])
        assert int(out[0].reshape(-1)[-1]) == 6, name
        return
    try:
        # no operands: the op's implementation is found, then fails on its inputs
        b.create(name, [], [], {})
    except InterpreterError as e:
        assert "does not know op" not in str(e), f"the interpreter's builder has no case for op '{name}'"
    except Exception:
        pass


_SAMPLE_ATTR = {"int": 3, "float": 0.5, "string": "s", "bool": True, "int array": [1, 2],
                "int, float or bool": 1.5}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_encoder_writes_every_op(name):
    """The encoder writes the op with operands, results, regions and an
    attribute of each declared kind, and Rust's decoder reads them back."""
    spec = SPECS[name]
    b = ir.IRBuilder()
    nargs = max(spec["min_operands"], 1 if spec["max_operands"] is None else 0)
    fn = b.begin_function("f", [D.int32] * nargs)
    regions = []
    for _ in range(spec["regions"]):
        block = b.push_block([D.int32])
        b.create("yield", [block.args[0]], [])
        regions.append(b.pop_block())
    nres = 1 if spec["results"] is None else spec["results"]
    attrs = {key: _SAMPLE_ATTR[kind] for key, (kind, _required) in spec["attrs"].items()}
    b.create_with_regions(name, fn.args[:nargs], [D.int32] * nres, attrs, regions)
    b.end_function()
    # decoded without verifying: the op sits in a function it does not type-check in
    text = _core.to_text(b.encode())
    start = text.find(f'"{name}"(')
    assert start >= 0, f"the encoded module has no '{name}' op:\n{text}"
    # the op's attributes follow its operands and regions, before the return
    op_text = text[start:text.index('"return"', start + 1) if name != "return" else None]
    for key in attrs:
        assert f"{key} = " in op_text, f"'{name}' lost attribute '{key}' in encoding: {op_text}"


SCALARS = list(D.ALL_SCALARS)


def test_scalar_kind_codes_come_from_rust():
    assert sorted(ir._SCALAR_KINDS) == sorted(_core.scalar_kinds())
    assert {t.ir for t in SCALARS} == set(_core.scalar_kinds())


@pytest.mark.parametrize("ty", SCALARS, ids=lambda t: t.ir)
def test_scalar_kinds_round_trip_through_rust(ty):
    b = ir.IRBuilder()
    fn = b.begin_function("f", [ty, D.pointer_type(ty)])
    b.end_function()
    text = _core.to_text(b.encode())
    assert f": {ty.ir}, " in text and f"ptr<{ty.ir}>" in text, text
