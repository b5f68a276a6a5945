"""The bad-kernel corpus: seeded mutations of the sources of a few real
kernels (constants, operators, calls, names, subscripts, statements), each
compiled to PTX. Every mutant must compile or fail with a typed user error
that names a place (CompilationError with file:line, or the code generator's
CodegenError); any other exception (an internal error, an IRVerifyError from
IR the frontend built, a raw Python exception) is a bug.

TRITIUM_BAD_KERNELS=N runs N mutants (default 1000, about ten seconds); the
figure in docs/architecture.md comes from a run of 5000."""
from __future__ import annotations

import ast
import importlib.util
import os
import random
import signal
import sys
from collections import Counter
from pathlib import Path

import pytest

import tritium
from tritium import _core
from tritium.compiler.errors import CompilationError

BASE_KERNELS = '''
import tritium as triton
import tritium.language as tl


@triton.jit
def helper(a, b):
    return a * 2 + b


@triton.jit(noinline=True)
def far_helper(x, y):
    return tl.maximum(x, y)


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, helper(x, y), mask=mask)


@triton.jit
def softmax(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def tiles(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ptrs = x_ptr + rows[:, None] * N + cols[None, :]
    m = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(ptrs, mask=m, other=0.0)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, 4):
        acc += tl.sum(tl.where(v > k, v, 0.0), axis=1)
    tl.store(out_ptr + rows, far_helper(acc, tl.cumsum(acc, 0)), mask=rows < M)


@triton.jit
def counters(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    bucket = (v % 16).to(tl.int32)
    tl.atomic_add(hist_ptr + bucket, 1, mask=offs < n)
    if tl.program_id(0) == 0:
        tl.store(hist_ptr + 16, tl.max(v, 0))
'''

# (kernel, signature, constexprs)
SIGNATURES = {
    "vector_add": ("*fp32,*fp32,*fp32,i32", {"BLOCK": 128}),
    "softmax": ("*fp32,*fp32,i32,i32", {"BLOCK": 256}),
    "tiles": ("*fp32,*fp32,i32,i32", {"BM": 32, "BN": 64}),
    "counters": ("*i32,*i32,i32", {"BLOCK": 128}),
}

CONSTANTS = [0, 1, 3, -1, 2, 17, 1 << 31, 1 << 21, 1.5, -0.0, None, True, "s", float("inf")]
OPERATORS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift,
             ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult]
COMPARES = [ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq, ast.Is, ast.In]
TL_NAMES = ["load", "store", "arange", "zeros", "sum", "max", "exp", "where", "cumsum", "maximum", "program_id",
            "atomic_add", "reshape", "trans", "expand_dims", "broadcast_to", "full", "dot", "sqrt", "cast",
            "static_range", "device_print", "num_programs", "flip", "sort", "split", "join", "constexpr"]
NAMES = ["x", "offs", "mask", "pid", "BLOCK", "n", "v", "acc", "rows", "cols", "tl", "triton", "helper",
         "far_helper", "undefined_name", "range", "len", "float", "k"]


class Mutator(ast.NodeTransformer):
    """Applies one edit to the `target`-th candidate node of one function."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def candidates(self, fn: ast.FunctionDef) -> list[ast.AST]:
        return [n for n in ast.walk(fn) if isinstance(n, (ast.Constant, ast.BinOp, ast.Compare, ast.Call, ast.Name,
                                                           ast.Subscript, ast.Assign, ast.AugAssign, ast.keyword,
                                                           ast.Attribute, ast.Return, ast.For, ast.If))
                and n is not fn]

    def edit(self, node: ast.AST) -> ast.AST | None:
        r = self.rng
        if isinstance(node, ast.Constant):
            return ast.Constant(r.choice(CONSTANTS))
        if isinstance(node, ast.BinOp):
            node.op = r.choice(OPERATORS)()
            return node
        if isinstance(node, ast.Compare):
            node.ops = [r.choice(COMPARES)() for _ in node.ops]
            return node
        if isinstance(node, ast.Call):
            choice = r.randrange(4)
            if choice == 0 and node.args:
                node.args.pop(r.randrange(len(node.args)))
            elif choice == 1 and node.args:
                node.args.append(node.args[r.randrange(len(node.args))])
            elif choice == 2 and node.keywords:
                node.keywords.pop(r.randrange(len(node.keywords)))
            elif isinstance(node.func, ast.Attribute):
                node.func.attr = r.choice(TL_NAMES)
            return node
        if isinstance(node, ast.Name):
            return ast.Name(id=r.choice(NAMES), ctx=node.ctx)
        if isinstance(node, ast.Subscript):
            node.slice = r.choice([ast.Constant(None), ast.Slice(), ast.Constant(0),
                                   ast.Tuple([ast.Slice(), ast.Constant(None), ast.Constant(None)], ast.Load())])
            return node
        if isinstance(node, ast.Attribute):
            node.attr = r.choice(TL_NAMES + ["T", "dtype", "shape", "to", "element_ty"])
            return node
        if isinstance(node, ast.keyword):
            node.arg = r.choice(["mask", "other", "axis", "dtype", "bogus", "keep_dims", "eviction_policy"])
            return node
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Return, ast.For, ast.If)):
            return None if r.randrange(2) else node   # drop the statement (or keep it: a no-op edit)
        return node


def mutant_source(rng: random.Random) -> tuple[str, str]:
    tree = ast.parse(BASE_KERNELS)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in SIGNATURES]
    fn = rng.choice(fns)
    mut = Mutator(rng)
    for _ in range(1 + rng.randrange(2)):
        cands = mut.candidates(fn)
        target = rng.choice(cands)

        class Apply(ast.NodeTransformer):
            def generic_visit(self, node):
                node = super().generic_visit(node)
                return mut.edit(node) if node is target else node
        Apply().visit(fn)
        if not fn.body:
            fn.body = [ast.Pass()]
    ast.fix_missing_locations(tree)
    return fn.name, ast.unparse(tree)


def load(path: Path, source: str):
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Timeout(Exception):
    pass


def outcome(index: int, workdir: Path) -> str:
    """'compiled', a typed error's class name, 'timeout', or 'BUG: ...'."""
    rng = random.Random(index)
    name, source = mutant_source(rng)
    try:
        mod = load(workdir / f"bad_kernel_{index}.py", source)
    except Exception:
        return "not Python (skipped)"      # the mutant is not a valid module: nothing for tritium to see
    signature, constexprs = SIGNATURES[name]

    def on_alarm(*_):
        raise Timeout()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(20)
    try:
        tritium.compile(getattr(mod, name), signature=signature, constexprs=constexprs)
        return "compiled"
    except CompilationError as e:
        if ":" not in str(e).splitlines()[0]:
            return f"BUG: CompilationError without a place: {e}"
        return type(e).__name__
    except _core.CodegenError as e:
        return "CodegenError"
    except Timeout:
        return "timeout"
    except Exception as e:   # noqa: BLE001 - the test is that nothing else escapes
        return f"BUG: {type(e).__name__}: {str(e)[:200]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        sys.modules.pop(f"bad_kernel_{index}", None)


def test_bad_kernels_end_in_typed_errors(tmp_path):
    count = int(os.environ.get("TRITIUM_BAD_KERNELS", "1000"))
    results = Counter()
    bugs = []
    for i in range(count):
        r = outcome(i, tmp_path)
        results["BUG" if r.startswith("BUG") else r] += 1
        if r.startswith("BUG"):
            bugs.append(f"mutant {i}: {r}\n{mutant_source(random.Random(i))[1]}")
    print("bad-kernel corpus:", dict(sorted(results.items())))
    assert not bugs, f"{len(bugs)} of {count} mutants did not end in a typed error:\n\n" + "\n\n".join(bugs[:5])
    assert results["compiled"] > 0 and results["CompilationError"] > 0   # the corpus exercises both sides
