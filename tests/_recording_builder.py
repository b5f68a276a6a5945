"""A builder for testing the language layer alone: it records each op (name,
operand types, result types, attrs), hands out fresh integer handles, and checks
the IR contract's typing rules for the ops it knows (docs/ir.md), so a semantic
rule that emits ill-typed IR fails here rather than in the Rust verifier."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from tritium.language.builder import using_builder
from tritium.language.dtypes import block_type, dtype, int1, int32, int64

_SAME_TYPE_BINARY = {"add", "sub", "mul", "div", "div_rn", "rem", "and", "or", "xor", "shl", "shr", "min", "max",
                     "umulhi"}
_SAME_TYPE_UNARY = {"neg", "not", "abs", "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos",
                    "floor", "ceil", "erf", "multiple_of", "max_contiguous", "max_constancy"}


@dataclass
class Op:
    name: str
    operands: list
    operand_types: list
    result_types: list
    attrs: dict
    results: list
    region: list = field(default_factory=list)


def _shape(t: dtype) -> tuple:
    return t.shape if t.is_block() else ()


class RecordingBuilder:
    is_interpreter = False

    def __init__(self):
        self.ops: list[Op] = []
        self.types: dict[int, dtype] = {}
        self._next = 0

    def new_value(self, ty: dtype) -> int:
        self._next += 1
        self.types[self._next] = ty
        return self._next

    def set_loc(self, file: str, line: int, col: int) -> None:
        pass

    def create(self, op, operands, result_types, attrs=None):
        for h in operands:
            assert h in self.types, f"{op}: unknown operand handle {h!r}"
        tys = [self.types[h] for h in operands]
        check(op, tys, list(result_types), dict(attrs or {}))
        results = [self.new_value(t) for t in result_types]
        self.ops.append(Op(op, list(operands), tys, list(result_types), dict(attrs or {}), results))
        return results

    def create_combine(self, op, operands, result_types, attrs, elem_types, combine):
        tys = [self.types[h] for h in operands]
        assert op in ("reduce", "scan")
        assert all(_shape(t) == _shape(tys[0]) for t in tys)
        assert [t.scalar for t in tys] == list(elem_types)
        accs = [self.new_value(t) for t in elem_types]
        news = [self.new_value(t) for t in elem_types]
        outer = self.ops
        self.ops = []
        try:
            outs = combine(accs, news)
        finally:
            region, self.ops = self.ops, outer
        assert [self.types[h] for h in outs] == list(elem_types), "combine region yields wrong types"
        results = [self.new_value(t) for t in result_types]
        rec = Op(op, list(operands), tys, list(result_types), dict(attrs), results, region)
        self.ops.append(rec)
        return results

    # ----- test helpers
    def names(self) -> list[str]:
        return [o.name for o in self.ops]

    def last(self, name: str | None = None) -> Op:
        for o in reversed(self.ops):
            if name is None or o.name == name:
                return o
        raise AssertionError(f"no {name} op recorded; ops: {self.names()}")

    def value(self, ty: dtype):
        """A fresh opaque kernel value of type `ty` (like a kernel argument)."""
        from tritium.language.core import tensor
        return tensor(self.new_value(ty), ty)


def check(op: str, tys: list, res: list, attrs: dict) -> None:
    """The typing rules of docs/ir.md for one op."""
    if op in _SAME_TYPE_BINARY:
        assert len(tys) == 2 and tys[0] == tys[1] == res[0], f"{op}: {tys} -> {res}"
    elif op in _SAME_TYPE_UNARY:
        assert len(tys) == 1 and tys[0] == res[0], f"{op}: {tys} -> {res}"
    elif op == "cmp":
        assert tys[0] == tys[1] and res[0].scalar == int1 and _shape(res[0]) == _shape(tys[0])
        assert attrs["pred"] in ("eq", "ne", "lt", "le", "gt", "ge")
    elif op == "select":
        assert tys[0].scalar == int1 and _shape(tys[0]) == _shape(tys[1])
        assert tys[1] == tys[2] == res[0]
    elif op in ("fma", "clamp"):
        assert tys[0] == tys[1] == tys[2] == res[0] and res[0].scalar.is_floating()
    elif op == "const":
        assert not tys and isinstance(attrs["value"], (int, float, bool))
    elif op == "splat":
        assert not tys[0].is_block() and res[0].is_block() and res[0].scalar == tys[0]
    elif op == "broadcast":
        a, r = _shape(tys[0]), _shape(res[0])
        assert len(a) == len(r) and all(x == y or x == 1 for x, y in zip(a, r)) and tys[0].scalar == res[0].scalar
    elif op == "expand_dims":
        s = list(_shape(tys[0]))
        s.insert(attrs["axis"], 1)
        assert tuple(s) == _shape(res[0])
    elif op == "reshape":
        assert tys[0].numel == res[0].numel and "can_reorder" in attrs
    elif op == "permute":
        assert sorted(attrs["order"]) == list(range(len(tys[0].shape)))
        assert tuple(tys[0].shape[d] for d in attrs["order"]) == res[0].shape
    elif op in ("cast", "bitcast", "ptr_to_int", "int_to_ptr"):
        assert _shape(tys[0]) == _shape(res[0])
        if op == "bitcast":
            assert tys[0].scalar.primitive_bitwidth == res[0].scalar.primitive_bitwidth
        if op == "ptr_to_int":
            assert tys[0].scalar.is_ptr() and res[0].scalar == int64
        if op == "int_to_ptr":
            assert tys[0].scalar == int64 and res[0].scalar.is_ptr()
        if op == "cast":
            assert not tys[0].scalar.is_ptr() and not res[0].scalar.is_ptr() and res[0].scalar != int1
    elif op == "addptr":
        assert tys[0].scalar.is_ptr() and tys[1].scalar.is_int() and _shape(tys[0]) == _shape(tys[1])
        assert res[0] == tys[0]
    elif op == "load":
        assert tys[0].scalar.is_ptr() and res[0].scalar == tys[0].scalar.element_ty
        assert _shape(res[0]) == _shape(tys[0])
        if len(tys) > 1:
            assert tys[1].scalar == int1 and _shape(tys[1]) == _shape(tys[0])
        if len(tys) > 2:
            assert tys[2] == res[0]
        assert set(attrs) == {"cache", "eviction", "volatile"}
    elif op == "store":
        assert tys[0].scalar.is_ptr() and tys[1].scalar == tys[0].scalar.element_ty
        assert _shape(tys[1]) == _shape(tys[0]) and not res
        if len(tys) > 2:
            assert tys[2].scalar == int1 and _shape(tys[2]) == _shape(tys[0])
    elif op == "atomic_rmw":
        assert tys[1].scalar == tys[0].scalar.element_ty and res[0] == tys[1]
        assert attrs["kind"] in ("add", "max", "min", "and", "or", "xor", "xchg")
        assert attrs["sem"] in ("relaxed", "acquire", "release", "acq_rel") and attrs["scope"] in ("gpu", "cta", "sys")
    elif op == "atomic_cas":
        assert tys[1] == tys[2] == res[0] and tys[1].scalar == tys[0].scalar.element_ty
    elif op == "arange":
        assert res[0] == block_type(int32, [attrs["end"] - attrs["start"]])
    elif op in ("program_id", "num_programs"):
        assert res[0] == int32 and attrs["axis"] in (0, 1, 2)
    elif op == "dot":
        (m, k), (k2, n) = tys[0].shape, tys[1].shape
        assert k == k2 and tys[2].shape == (m, n) and res[0] == tys[2]
    elif op == "join":
        assert tys[0] == tys[1] and res[0].shape == _shape(tys[0]) + (2,)
    elif op == "split":
        assert _shape(tys[0])[-1] == 2 and res[0] == res[1]
    elif op == "cat":
        assert tys[0] == tys[1]


@contextlib.contextmanager
def recording():
    b = RecordingBuilder()
    with using_builder(b):
        yield b
