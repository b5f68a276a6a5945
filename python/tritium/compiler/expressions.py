"""Expression visitors of the AST walker. Operators are applied to the
evaluated operands with Python's own operator protocol, so tensor semantics
live in the language layer and constexpr arithmetic stays constexpr."""
from __future__ import annotations

import ast
import operator
from typing import Any

from ..language import core
from ..language import semantic
from ..language.kernel_function import KernelFunction
from .values import is_static, is_tensor, unwrap

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.MatMult: operator.matmul,
}
_CMPOPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_STATIC_CMPOPS = {
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _const(v: Any) -> Any:
    return core.constexpr(v) if isinstance(v, (bool, int, float)) else v


class ExpressionMixin:
    def visit_Constant(self, node: ast.Constant) -> Any:
        return _const(node.value)

    def visit_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id)

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self._visit_elts(node.elts))

    def visit_List(self, node: ast.List) -> list:
        return list(self._visit_elts(node.elts))

    def _visit_elts(self, elts: list[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(unwrap(self.visit(e.value)))
            else:
                out.append(self.visit(e))
        return out

    def binary(self, node: ast.AST, op: ast.operator, lhs: Any, rhs: Any) -> Any:
        fn = _BINOPS.get(type(op))
        if fn is None:
            raise self.unsupported(node, f"operator '{type(op).__name__}' is not supported in kernels")
        if is_static(lhs) and is_static(rhs):
            return _const(fn(unwrap(lhs), unwrap(rhs)))
        # constexpr operands are unwrapped so the tensor's (r)operators run
        return fn(unwrap(lhs), unwrap(rhs))

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self.binary(node, node.op, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            if is_static(v):
                return _const(not unwrap(v))
            return semantic.not_(v)
        fn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)]
        return _const(fn(unwrap(v))) if is_static(v) else fn(v)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        acc = self.visit(node.values[0])
        for expr in node.values[1:]:
            if is_static(acc):
                # Python's short-circuit on compile-time values
                if bool(unwrap(acc)) != is_and:
                    return acc
                acc = self.visit(expr)
                continue
            rhs = self.visit(expr)
            acc = semantic.logical_and(acc, rhs) if is_and else semantic.logical_or(acc, rhs)
        return acc

    def visit_Compare(self, node: ast.Compare) -> Any:
        lhs, rhs = self.visit(node.left), self.visit(node.comparators[0])
        op = type(node.ops[0])
        if op in _STATIC_CMPOPS:
            if not (is_static(lhs) and is_static(rhs)) and op in (ast.In, ast.NotIn):
                raise self.error(node, "'in' needs compile-time operands in kernels")
            a, b = unwrap(lhs), unwrap(rhs)
            if op in (ast.In, ast.NotIn):
                b = [unwrap(x) for x in b]
            return _const(_STATIC_CMPOPS[op](a, b))
        fn = _CMPOPS[op]
        if is_static(lhs) and is_static(rhs):
            return _const(fn(unwrap(lhs), unwrap(rhs)))
        return fn(unwrap(lhs), unwrap(rhs))

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        if isinstance(base, core.constexpr) and not hasattr(base, node.attr):
            base = base.value
        return getattr(base, node.attr)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        index = self.visit(node.slice)
        if is_tensor(base):
            return base[index]
        base = unwrap(base)
        if isinstance(index, tuple):
            index = tuple(unwrap(i) for i in index)
        else:
            index = unwrap(index)
        if not is_static(index):
            raise self.error(node.slice, "tuple index must be a constexpr")
        return base[index]

    def visit_Slice(self, node: ast.Slice) -> slice:
        parts = [None if p is None else unwrap(self.visit(p)) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> str:
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
                continue
            v = self.visit(part.value)
            if not is_static(v):
                raise self.error(part.value, "f-string values in kernels must be constexprs")
            v = unwrap(v)
            if part.conversion == ord("r"):
                v = repr(v)
            elif part.conversion == ord("s"):
                v = str(v)
            spec = "" if part.format_spec is None else self.visit_JoinedStr(part.format_spec)
            out.append(format(v, spec))
        return "".join(out)

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        args = self._visit_elts(node.args)
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(unwrap(self.visit(kw.value)))
            else:
                kwargs[kw.arg] = self.visit(kw.value)
        fn = unwrap(fn)
        if isinstance(fn, KernelFunction):
            return self.call_jit(node, fn, args, kwargs)
        if fn is range:
            args = [unwrap(a) for a in args]
        return fn(*args, **kwargs)
