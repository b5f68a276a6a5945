"""The compiler's IRBuilder: an in-memory module of functions, blocks and ops
built through language/builder.py's protocol, and its encoder to the binary
tile IR of docs/ir.md (the only thing the Rust core ever sees from Python)."""
from __future__ import annotations

import struct
from typing import Any, Callable, Sequence

from .. import _core
from ..language.dtypes import block_type, dtype, pointer_type

# Opcodes and scalar-kind codes come from Rust so the two sides cannot drift.
OP_TABLE: list[str] = list(_core.op_table())
OPCODES: dict[str, int] = {name: i for i, name in enumerate(OP_TABLE)}
FORMAT_VERSION: int = int(_core.FORMAT_VERSION)

_SCALAR_KINDS: dict[str, int] = {name: i for i, name in enumerate(_core.scalar_kinds())}

# the float ops LLVM may fuse into fma when fp fusion is on, and their attribute
_CONTRACTABLE = frozenset(("add", "sub", "mul"))
CONTRACT = "contract"


class Value:
    """An SSA value; its number is assigned at encode time (definition order)."""
    __slots__ = ("type",)

    def __init__(self, ty: dtype):
        self.type = ty

    def __repr__(self) -> str:
        return f"<ir.Value {self.type.ir} @{id(self):x}>"


class Block:
    __slots__ = ("args", "ops")

    def __init__(self, arg_types: Sequence[dtype] = ()):
        self.args = [Value(t) for t in arg_types]
        self.ops: list[Op] = []


class Op:
    __slots__ = ("name", "operands", "results", "attrs", "regions", "loc")

    def __init__(self, name: str, operands: list[Value], results: list[Value],
                 attrs: dict[str, Any], regions: list[Block], loc: tuple[str, int, int]):
        self.name, self.operands, self.results = name, operands, results
        self.attrs, self.regions, self.loc = attrs, regions, loc


class Function:
    def __init__(self, name: str, arg_types: Sequence[dtype], arg_attrs: Sequence[dict] | None,
                 kernel: bool, noinline: bool):
        self.name = name
        self.kernel = kernel
        self.noinline = noinline
        self.body = Block(arg_types)
        self.arg_attrs = [dict(a) for a in (arg_attrs or [{} for _ in arg_types])]
        if len(self.arg_attrs) != len(arg_types):
            raise ValueError(f"function {name!r}: {len(arg_types)} args but {len(self.arg_attrs)} attr dicts")
        self.result_types: list[dtype] | None = None

    @property
    def args(self) -> list[Value]:
        return self.body.args


def _check_type(t: Any, what: str) -> dtype:
    if not isinstance(t, dtype) or t.is_void():
        raise TypeError(f"{what}: expected a scalar, pointer or block dtype, got {t!r}")
    return t


class IRBuilder:
    """Builds a module op by op; `encode()` serializes it (docs/ir.md)."""

    is_interpreter = False

    def __init__(self, enable_assertions: bool = True, enable_fp_fusion: bool = True) -> None:
        # compile_kernel passes the kernel's debug setting: Triton drops
        # device_assert unless debug is on
        self.enable_assertions = enable_assertions
        # Triton's enable_fp_fusion: float add/sub/mul carry `contract`
        # (docs/ir.md), so LLVM may fuse `a * b + c` into one fma
        self.enable_fp_fusion = enable_fp_fusion
        self.functions: list[Function] = []
        self._loc: tuple[str, int, int] = ("<unknown>", 0, 0)
        # insertion stack: (function, [blocks...]) so a noinline callee can be
        # built while the caller is half done
        self._stack: list[tuple[Function, list[Block]]] = []
        # how a @jit function called where the frontend does not see the call
        # (inside a builtin) is inlined: registered by compiler/context.py
        self.jit_caller: Callable[[Any, list, dict], Any] | None = None

    # -- protocol ---------------------------------------------------------
    def call_jit_function(self, fn: Any, args: Sequence[Any], kwargs: dict | None = None) -> Any:
        if self.jit_caller is None:
            raise RuntimeError(f"cannot inline a call to '{getattr(fn, '__name__', fn)}': "
                               "this IRBuilder is not driven by the frontend")
        return self.jit_caller(fn, list(args), dict(kwargs or {}))

    def set_loc(self, file: str, line: int, col: int) -> None:
        self._loc = (str(file), int(line), int(col))

    def get_loc(self) -> tuple[str, int, int]:
        return self._loc

    def create(self, op: str, operands: Sequence[Value], result_types: Sequence[dtype],
               attrs: dict[str, Any] | None = None) -> list[Value]:
        return self.create_with_regions(op, operands, result_types, attrs, [])

    def create_combine(self, op: str, operands: Sequence[Value], result_types: Sequence[dtype],
                       attrs: dict[str, Any], elem_types: Sequence[dtype],
                       combine: Callable[[list[Value], list[Value]], list[Value]]) -> list[Value]:
        n = len(elem_types)
        region = self.push_block(list(elem_types) * 2)
        try:
            out = list(combine(region.args[:n], region.args[n:]))
            if len(out) != n:
                raise ValueError(f"{op} combine function returned {len(out)} values, expected {n}")
            for got, want in zip(out, elem_types):
                if not isinstance(got, Value) or got.type != want:
                    shown = got.type if isinstance(got, Value) else got
                    raise TypeError(f"{op} combine function must return {list(map(str, elem_types))}, "
                                    f"got {shown}")
            self.create("yield", out, [])
        finally:
            self.pop_block()
        return self.create_with_regions(op, operands, result_types, attrs, [region])

    # -- structure --------------------------------------------------------
    def create_with_regions(self, op: str, operands: Sequence[Value], result_types: Sequence[dtype],
                            attrs: dict[str, Any] | None, regions: Sequence[Block]) -> list[Value]:
        if op not in OPCODES:
            raise ValueError(f"unknown IR op {op!r}")
        for i, v in enumerate(operands):
            if not isinstance(v, Value):
                raise TypeError(f"operand {i} of '{op}' is not an IR value: {v!r}")
        results = [Value(_check_type(t, f"result of '{op}'")) for t in result_types]
        attrs = dict(attrs or {})
        if self.enable_fp_fusion and op in _CONTRACTABLE and results and results[0].type.scalar.is_floating():
            attrs[CONTRACT] = True
        node = Op(op, list(operands), results, attrs, list(regions), self._loc)
        self.current_block().ops.append(node)
        return results

    def current_block(self) -> Block:
        if not self._stack or not self._stack[-1][1]:
            raise RuntimeError("IRBuilder: no function is being built")
        return self._stack[-1][1][-1]

    def push_block(self, arg_types: Sequence[dtype] = ()) -> Block:
        for t in arg_types:
            _check_type(t, "block argument")
        block = Block(arg_types)
        self._stack[-1][1].append(block)
        return block

    def enter_block(self, block: Block) -> Block:
        """Re-opens an already created block to append ops (e.g. a yield)."""
        self._stack[-1][1].append(block)
        return block

    def pop_block(self) -> Block:
        return self._stack[-1][1].pop()

    def begin_function(self, name: str, arg_types: Sequence[dtype], arg_attrs: Sequence[dict] | None = None,
                       kernel: bool = False, noinline: bool = False) -> Function:
        if self.find_function(name) is not None:
            raise ValueError(f"function {name!r} already defined")
        for t in arg_types:
            _check_type(t, f"argument of {name!r}")
        fn = Function(name, arg_types, arg_attrs, kernel, noinline)
        self.functions.append(fn)
        self._stack.append((fn, [fn.body]))
        return fn

    def end_function(self, results: Sequence[Value] = ()) -> Function:
        fn, blocks = self._stack[-1]
        if len(blocks) != 1:
            raise RuntimeError(f"function {fn.name!r} ended with {len(blocks) - 1} open regions")
        self.create("return", list(results), [])
        fn.result_types = [v.type for v in results]
        self._stack.pop()
        return fn

    def abandon_function(self) -> None:
        """Drops the function being built (after a compile error)."""
        fn, _ = self._stack.pop()
        self.functions.remove(fn)

    def find_function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    # -- encoding ---------------------------------------------------------
    def encode(self) -> bytes:
        return _Encoder(self.functions).run()

    def to_text(self) -> str:
        return _core.to_text(self.encode())


def _uleb(out: bytearray, n: int) -> None:
    if n < 0:
        raise ValueError(f"uleb of negative {n}")
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def _sleb(out: bytearray, n: int) -> None:
    while True:
        byte = n & 0x7F
        n >>= 7
        done = (n == 0 and not byte & 0x40) or (n == -1 and byte & 0x40)
        out.append(byte if done else byte | 0x80)
        if done:
            return


class _Encoder:
    """One pass over the module interning strings/types/locs and numbering
    values; the header tables are written last because the body fills them."""

    def __init__(self, functions: list[Function]):
        self.functions = functions
        self.strings: dict[str, int] = {}
        self.types: dict[Any, int] = {}
        self.type_bytes = bytearray()
        self.locs: dict[tuple[int, int, int], int] = {}
        self.counter = 0

    def string(self, s: str) -> int:
        if s not in self.strings:
            self.strings[s] = len(self.strings)
        return self.strings[s]

    def type(self, t: dtype) -> int:
        key = t._key()
        if key in self.types:
            return self.types[key]
        out = bytearray()
        if isinstance(t, block_type):
            elem = self.type(t.element_ty)
            out.append(2)
            _uleb(out, len(t.shape))
            for d in t.shape:
                _uleb(out, d)
            _uleb(out, elem)
        elif isinstance(t, pointer_type):
            elem = self.type(t.element_ty)
            out.append(1)
            _uleb(out, elem)
            _uleb(out, t.address_space)
        else:
            out.append(0)
            out.append(_SCALAR_KINDS[t.ir])
        self.types[key] = len(self.types)
        self.type_bytes += out
        return self.types[key]

    def loc(self, loc: tuple[str, int, int]) -> int:
        key = (self.string(loc[0]), loc[1], loc[2])
        if key not in self.locs:
            self.locs[key] = len(self.locs)
        return self.locs[key]

    def attrs(self, out: bytearray, attrs: dict[str, Any]) -> None:
        _uleb(out, len(attrs))
        for key, v in attrs.items():
            _uleb(out, self.string(key))
            if isinstance(v, bool) or type(v).__name__ == "bool_":
                out.append(3)
                out.append(1 if v else 0)
            elif isinstance(v, int) or type(v).__name__.startswith(("int", "uint")):
                out.append(0)
                _sleb(out, int(v))
            elif isinstance(v, float) or type(v).__name__.startswith("float"):
                out.append(1)
                out += struct.pack("<d", float(v))
            elif isinstance(v, str):
                out.append(2)
                _uleb(out, self.string(v))
            elif isinstance(v, (tuple, list)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                out.append(4)
                _uleb(out, len(v))
                for x in v:
                    _sleb(out, x)
            else:
                raise TypeError(f"attribute {key!r}: cannot encode {v!r} (int, float, bool, str or int list)")

    def region(self, out: bytearray, block: Block, visible: dict[int, int]) -> None:
        _uleb(out, len(block.args))
        for a in block.args:
            visible[id(a)] = self._next()
            _uleb(out, self.type(a.type))
        _uleb(out, len(block.ops))
        for op in block.ops:
            self.op(out, op, visible)

    def _next(self) -> int:
        self.counter += 1
        return self.counter - 1

    def op(self, out: bytearray, op: Op, visible: dict[int, int]) -> None:
        _uleb(out, OPCODES[op.name])
        _uleb(out, self.loc(op.loc))
        _uleb(out, len(op.operands))
        for v in op.operands:
            n = visible.get(id(v))
            if n is None:
                raise ValueError(f"'{op.name}' at {op.loc[0]}:{op.loc[1]} uses a value that is not "
                                 f"defined before it in an enclosing block ({v!r})")
            _uleb(out, n)
        _uleb(out, len(op.results))
        for r in op.results:
            _uleb(out, self.type(r.type))
        self.attrs(out, op.attrs)
        # results are numbered before the regions' values (docs/ir.md) but are
        # only visible after the op
        numbers = [self._next() for _ in op.results]
        _uleb(out, len(op.regions))
        for block in op.regions:
            self.region(out, block, dict(visible))
        for r, n in zip(op.results, numbers):
            visible[id(r)] = n

    def func(self, out: bytearray, fn: Function) -> None:
        if fn.result_types is None:
            raise ValueError(f"function {fn.name!r} was never finished")
        _uleb(out, self.string(fn.name))
        _uleb(out, (1 if fn.kernel else 0) | (2 if fn.noinline else 0))
        _uleb(out, len(fn.args))
        for a, attrs in zip(fn.args, fn.arg_attrs):
            _uleb(out, self.type(a.type))
            self.attrs(out, attrs)
        _uleb(out, len(fn.result_types))
        for t in fn.result_types:
            _uleb(out, self.type(t))
        self.counter = 0
        self.region(out, fn.body, {})

    def run(self) -> bytes:
        body = bytearray()
        _uleb(body, len(self.functions))
        for fn in self.functions:
            self.func(body, fn)
        out = bytearray(b"TRIR")
        _uleb(out, FORMAT_VERSION)
        _uleb(out, len(self.strings))
        for s in self.strings:
            raw = s.encode("utf-8")
            _uleb(out, len(raw))
            out += raw
        _uleb(out, len(self.types))
        out += self.type_bytes
        _uleb(out, len(self.locs))
        for (f, line, col) in self.locs:
            _uleb(out, f)
            _uleb(out, line)
            _uleb(out, col)
        return bytes(out + body)
