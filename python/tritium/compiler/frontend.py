"""The AST walker: compiles a @jit function's Python source to tile IR.

Expressions are evaluated with the language layer's own tensor operators and
builtins (they create ops through the current builder), so this module only
decides *structure*: names and scopes, static versus dynamic control flow,
inlining of @jit calls, and turning any failure into a CompilationError that
points at the user's line."""
from __future__ import annotations

import ast
from typing import Any

from .. import language as tl
from ..language import core
from ..language.blocks import descriptor_args, descriptor_value, tensor_descriptor_type
from ..language.builder import using_builder
from ..language.dtypes import dtype
from ..language.python_subset import check_function, closure_vars, construct_name
from ..language.source import FunctionSource
from . import aggregates, noinline_calls
from .context import ModuleContext, pop_generator, push_generator
from .control_flow import ControlFlowMixin
from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct
from .expressions import ExpressionMixin
from .flattening import contains_aggregate, flatten, unflatten
from .ir import IRBuilder
from .returns import rewrite_returns
from .scope import lookup_closure, lookup_global
from .values import is_number, is_static, is_tensor, to_tensor, unwrap

RET = "$ret"  # the local that carries a function's return value through if-merges
_WRAPPED = (TypeError, ValueError, AssertionError, NameError, IndexError, AttributeError,
            KeyError, ZeroDivisionError, OverflowError, NotImplementedError, RecursionError)


class CodeGenerator(aggregates.AggregateMixin, ExpressionMixin, ControlFlowMixin, ast.NodeVisitor):
    def __init__(self, jit_fn: Any, ctx: ModuleContext, local_vars: dict[str, Any]):
        self.jit_fn = jit_fn
        self.ctx = ctx
        self.builder = ctx.builder
        self.src: FunctionSource = jit_fn.source()
        self.fn_globals = jit_fn.fn.__globals__
        self.closure = closure_vars(jit_fn.fn)
        self.locals: dict[str, Any] = dict(local_vars)
        self.current_node: ast.AST = jit_fn.source().tree

    # -- entry ------------------------------------------------------------
    def run(self) -> Any:
        """Visits the body; returns the function's return value (or None)."""
        # the interpreter runs the same check, so the two refuse the same kernels
        check_function(self.jit_fn.fn, self.src, interpreter=False)
        push_generator(self)
        try:
            self._run_body()
        finally:
            pop_generator()
        return self.locals.get(RET)

    def _run_body(self) -> None:
        body = self.src.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        self.visit_stmts(rewrite_returns(body))

    def visit_stmts(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.visit(stmt)
            if isinstance(stmt, ast.Return):
                return

    # -- errors and locations --------------------------------------------
    def set_end_loc(self) -> None:
        """The implicit return is located at the function's `def` line."""
        line, col = self.src.file_pos(self.src.tree)
        self.builder.set_loc(self.src.filename, line, col)

    def error(self, node: ast.AST, message: str, cls: type = CompilationError) -> CompilationError:
        line, col = self.src.file_pos(node)
        return cls(message, self.src.filename, line, col, self.src.file_line(line))

    def unsupported(self, node: ast.AST, message: str) -> CompilationError:
        return self.error(node, message, UnsupportedLanguageConstruct)

    def visit(self, node: ast.AST) -> Any:
        has_loc = hasattr(node, "lineno")
        if has_loc:
            saved = self.builder.get_loc()
            saved_node, self.current_node = self.current_node, node
            line, col = self.src.file_pos(node)
            self.builder.set_loc(self.src.filename, line, col)
        err = None
        try:
            return super().visit(node)
        except CompilationError:
            raise
        except _WRAPPED as e:
            err = self.error(node, _describe(e), CompileTimeAssertionFailure
                             if isinstance(e, core.CompileTimeAssertionFailure) else CompilationError)
        finally:
            if has_loc:
                self.builder.set_loc(*saved)
                self.current_node = saved_node
        raise err  # outside the handler so the error has no chained context

    def generic_visit(self, node: ast.AST) -> Any:
        # python_subset.check_function refuses these before any visit
        raise self.unsupported(node, f"'{construct_name(node)}' is not supported in kernels")

    # -- names ------------------------------------------------------------
    def lookup(self, name: str) -> Any:
        if name in self.locals:
            return self.locals[name]
        if name in self.closure:
            val = lookup_closure(name, self.closure[name])
            return core.constexpr(val) if is_number(val) and not isinstance(val, core.constexpr) else val
        return lookup_global(name, self.fn_globals)

    def assign(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.locals[target.id] = _store_form(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = unwrap(value)
            if is_tensor(items) or not hasattr(items, "__len__"):
                raise self.error(target, f"cannot unpack a non-tuple value ({_short(value)})")
            if len(items) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(items)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, items):
                self.assign(t, v)
        elif isinstance(target, ast.Attribute):
            aggregates.assign_attribute(self, target, value)
        else:
            raise self.unsupported(target, f"assignment to '{construct_name(target)}' is not supported in kernels")

    # -- statements -------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        value = self.visit(node.value)
        ann = self.visit(node.annotation)
        if ann is core.constexpr and not is_static(value):
            raise self.error(node.value, f"'{_target_name(node.target)}' is annotated constexpr but its "
                                         "value is not known at compile time")
        self.assign(node.target, core.constexpr(unwrap(value)) if ann is core.constexpr else value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        load = ast.copy_location(ast.Name(id=_target_name(node.target), ctx=ast.Load()), node.target) \
            if isinstance(node.target, ast.Name) else None
        if isinstance(node.target, ast.Attribute):
            load = ast.copy_location(ast.Attribute(value=node.target.value, attr=node.target.attr,
                                                   ctx=ast.Load()), node.target)
        value = self.binary(node, node.op, self.visit(load), self.visit(node.value))
        self.assign(node.target, value)

    def visit_Expr(self, node: ast.Expr) -> None:
        value = self.visit(node.value)
        # Triton's hints mark the value they are given, so kernels write
        # `tl.multiple_of(ptrs, [16, 16])` as a statement (tutorial 08) and
        # expect the loads that follow to use it; as a statement, a hint on a
        # name rebinds the name (uses before it keep the unhinted value)
        call = node.value
        named = isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute))
        if named and call.args and isinstance(call.args[0], ast.Name) and is_tensor(self.locals.get(call.args[0].id)):
            # a name or attribute: looking it up again emits nothing
            if any(unwrap(self.visit(call.func)) is h for h in (tl.multiple_of, tl.max_contiguous, tl.max_constancy)):
                self.assign(call.args[0], value)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Return(self, node: ast.Return) -> None:
        self.locals[RET] = None if node.value is None else _store_form(self.visit(node.value))

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        msg = "" if node.msg is None else unwrap(self.visit(node.msg))
        if is_static(cond):
            if not unwrap(cond):
                raise self.error(node, f"static assertion failed{': ' + str(msg) if msg else ''}",
                                 CompileTimeAssertionFailure)
            return
        tl.device_assert(cond, str(msg))

    # -- calls of @jit functions -----------------------------------------
    def call_jit(self, node: ast.AST, callee: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        bound = callee.bind_call(args, kwargs)
        if callee.noinline:
            return self.call_noinline(node, callee, bound)
        if callee in self.ctx.call_stack:
            raise self.unsupported(node, f"recursive call to '{callee.__name__}' is not supported in kernels")
        # Triton decides by the argument, not the callee's annotation: a
        # constant binds as a constexpr, a tensor or runtime scalar passed to
        # a `tl.constexpr` parameter binds as the value it is (tutorial 06
        # passes tl.arange results and a runtime N_CTX there); a use that
        # needs a constant fails at that use
        local_vars = {name: core.constexpr(unwrap(value))
                      if name in callee.constexpr_names and _binds_constexpr(value) else value
                      for name, value in bound.items()}
        gen = CodeGenerator(callee, self.ctx, local_vars)
        self.ctx.call_stack.append(callee)
        try:
            return gen.run()
        except CompilationError as e:
            line, _ = self.src.file_pos(node)
            e.add_call_site(f"  in '{callee.__name__}' called from {self.src.filename}:{line}")
            raise
        finally:
            self.ctx.call_stack.pop()

    def call_noinline(self, node: ast.AST, callee: Any, bound: dict[str, Any]) -> Any:
        if any(contains_aggregate(v) for v in bound.values()):
            return noinline_calls.call_noinline(self, node, callee, bound)
        static, dynamic = [], []
        for name, value in bound.items():
            # a static value specializes the callee (numbers only where the
            # parameter says constexpr); a runtime value is an argument, also
            # for a constexpr parameter (as Triton)
            if is_static(value) and (name in callee.constexpr_names or not is_number(value)):
                static.append((name, unwrap(value)))
            elif is_tensor(value) or is_number(value):
                dynamic.append((name, to_tensor(value)))
            else:
                raise self.error(node, f"argument '{name}' of noinline function '{callee.__name__}' must be "
                                       "a tensor, a number or a constexpr")
        key = (callee, _hashable(static), tuple(t.type for _, t in dynamic))
        if key not in self.ctx.noinline:
            self.ctx.noinline[key] = self._build_noinline(node, callee, static, dynamic)
        name, spec, result_types = self.ctx.noinline[key]
        results = self.builder.create("call", [t.handle for _, t in dynamic], result_types, {"callee": name})
        if spec is False:
            return None
        return unflatten([core.tensor(h, t) for h, t in zip(results, result_types)], spec)

    def _build_noinline(self, node, callee, static, dynamic) -> tuple[str, Any, list[dtype]]:
        base = callee.__name__
        name, n = base, 0
        while self.builder.find_function(name) is not None:
            n += 1
            name = f"{base}_{n}"
        ir_fn = self.builder.begin_function(name, [t.type for _, t in dynamic], noinline=True)
        local_vars = {k: core.constexpr(v) for k, v in static}
        for (k, t), arg in zip(dynamic, ir_fn.args):
            local_vars[k] = core.tensor(arg, t.type)
        self.ctx.call_stack.append(callee)
        try:
            gen = CodeGenerator(callee, self.ctx, local_vars)
            ret = gen.run()
            gen.set_end_loc()
            if ret is None:
                self.builder.end_function([])
                return name, False, []
            leaves, spec = flatten(ret)
            if any(unwrap(x) is None for x in leaves):
                raise self.error(node, f"noinline function '{base}' must return tensors or numbers")
            tensors = [to_tensor(x) for x in leaves]
            self.builder.end_function([t.handle for t in tensors])
            return name, spec, [t.type for t in tensors]
        except BaseException:
            self.builder.abandon_function()
            raise
        finally:
            self.ctx.call_stack.pop()


def _binds_constexpr(value: Any) -> bool:
    # what a constexpr parameter of an inlined callee keeps as a constant:
    # not a tensor, and no aggregate (whose fields may be tensors)
    return is_static(value) and not contains_aggregate(value)


def _store_form(value: Any) -> Any:
    # Python scalars are kept as plain values (Triton's rule), constexprs unwrapped
    if isinstance(value, core.constexpr):
        return value.value
    return value


def _hashable(items: list) -> Any:
    out = []
    for k, v in items:
        try:
            hash(v)
            out.append((k, type(v).__name__, v))
        except TypeError:
            out.append((k, type(v).__name__, repr(v)))
    return tuple(out)


def _describe(e: BaseException) -> str:
    msg = str(e)
    if isinstance(e, KeyError) and e.args:
        msg = str(e.args[0])
    return msg or type(e).__name__


def _target_name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else construct_name(node)


def _short(v: Any) -> str:
    return f"tensor of type {v.type}" if is_tensor(v) else repr(unwrap(v))


# -- entry point used by runtime/jit.py --------------------------------------

def compile_kernel(jit_fn: Any, params: dict[str, Any], arg_attrs: dict[str, dict] | None = None,
                   name: str | None = None, debug: bool = False, enable_fp_fusion: bool = True) -> IRBuilder:
    """Compiles `jit_fn` as a kernel. `params` maps every parameter name to a
    dtype (a runtime argument of that type) or a `constexpr` (specialized).
    `debug` keeps device_assert (and `assert`) ops, as Triton's debug mode;
    `enable_fp_fusion` marks float add/sub/mul `contract` (fusable into fma)."""
    builder = IRBuilder(enable_assertions=bool(debug), enable_fp_fusion=bool(enable_fp_fusion))
    ctx = ModuleContext(builder)
    arg_attrs = arg_attrs or {}
    # each runtime parameter's IR arguments: one, or a host descriptor's parts
    dyn = [(k, descriptor_args(t) if isinstance(t, tensor_descriptor_type) else [(t, arg_attrs.get(k, {}))])
           for k, t in params.items() if isinstance(t, (dtype, tensor_descriptor_type))]
    with using_builder(builder):
        ir_fn = builder.begin_function(name or jit_fn.__name__, [t for _, parts in dyn for t, _ in parts],
                                       [a for _, parts in dyn for _, a in parts], kernel=True)
        local_vars = {k: v for k, v in params.items() if not isinstance(v, (dtype, tensor_descriptor_type))}
        args = iter(ir_fn.args)
        for k, parts in dyn:
            values = [core.tensor(next(args), t) for t, _ in parts]
            local_vars[k] = descriptor_value(params[k], values) \
                if isinstance(params[k], tensor_descriptor_type) else values[0]
        gen = CodeGenerator(jit_fn, ctx, local_vars)
        ctx.call_stack.append(jit_fn)
        ret = gen.run()
        if ret is not None:
            node = next((n for n in ast.walk(gen.src.tree) if isinstance(n, ast.Return) and n.value), gen.src.tree)
            raise gen.error(node, f"kernel '{jit_fn.__name__}' must not return a value")
        gen.set_end_loc()
        builder.end_function([])
    return builder


__all__ = ["compile_kernel", "CodeGenerator", "CompilationError"]
