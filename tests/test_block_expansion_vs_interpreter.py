"""The compiled path's semantics of block pointers and descriptors, checked
on the CPU: `expand_block_memory` (Rust, what every GPU target compiles)
turns each block op into ordinary ops; replaying that expanded IR op by op
with the interpreter's builder must write exactly what the interpreter's
own block ops write when it runs the kernel. So the expansion's indices,
masks, padding and gathers agree with the interpreter on every element,
out-of-bounds ones included (the GPU tests then compare compiled code with
torch)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.interpreter.builder import NumpyBuilder, wrap
from tritium.interpreter.memory import MemoryMap
from tritium.language.dtypes import block_type, pointer_type, scalar_from_name
from tritium.tools.tensor_descriptor import TensorDescriptor

_LINE = re.compile(r'^\s*(?:(%\w+) = )?"(\w+)"\((.*?)\)(?: \{(.*)\})? : \((.*)\) -> (.*)$')
_ATTR = re.compile(r'(\w+) = ("[^"]*"|\[[^\]]*\]|[^,}]+)')


def _type(t: str):
    t = t.strip()
    if t.startswith("tensor<"):
        *dims, elem = _split_tensor(t)
        return block_type(_type(elem), [int(d) for d in dims])
    if t.startswith("ptr<"):
        return pointer_type(_type(t[4:-1]))
    return scalar_from_name(t)


def _split_tensor(t: str) -> list:
    inner = t[len("tensor<"):-1]
    parts = []
    while True:
        head, sep, rest = inner.partition("x")
        if not sep or not head.isdigit():
            parts.append(inner)
            return parts
        parts.append(head)
        inner = rest


def _attr(v: str):
    v = v.strip()
    if v.startswith('"'):
        return v[1:-1]
    if v.startswith("["):
        return [int(x) for x in v[1:-1].split(",") if x.strip()]
    if v in ("true", "false"):
        return v == "true"
    return float(v) if any(c in v for c in ".en") and not v.lstrip("-").isdigit() else int(v)


def replay(text: str, args: list, grid: tuple) -> None:
    """Runs the (straight-line) kernel of `text` for every program of `grid`;
    `args` are arrays (pointers, mapped into memory) or Python numbers."""
    lines = text.splitlines()
    head = re.match(r"func @\w+\((.*)\) attributes", re.sub(r" loc\(.*\)", "", lines[0])).group(1)
    params = [(m.group(1), _type(m.group(2))) for m in re.finditer(r"(%\w+): ([^,{]+?)(?: \{[^}]*\})?(?:, |$)", head)]
    memory = MemoryMap()
    env0 = {}
    for (name, ty), a in zip(params, args):
        if ty.is_ptr():
            env0[name] = wrap(np.array([memory.register(name, a)], np.int64), ty)
        else:
            env0[name] = wrap(np.array([a]), ty)
    b = NumpyBuilder(memory, grid)
    for pid in np.ndindex(*grid):
        b.pids = np.array([list(pid) + [0] * (3 - len(pid))], np.int32)
        env = dict(env0)
        for line in lines[1:]:
            m = _LINE.match(re.sub(r" loc\(.*\)$", "", line))
            if m is None:
                continue
            res, op, operands, attrs, _, rtype = m.groups()
            if op == "return":
                break
            ops = [env[o.strip()] for o in operands.split(",") if o.strip()]
            attrs = {k: _attr(v) for k, v in _ATTR.findall(attrs or "")}
            rtys = [] if rtype.strip() == "()" else [_type(rtype)]
            out = b.create(op, ops, rtys, attrs)
            if res:
                env[res] = out[0]


def expanded(kernel, signature, **constexprs) -> str:
    ir = kernel.compile_ir(signature=signature, constexprs=constexprs)
    text = _core.to_text(_core.run_passes(ir))   # the expansion, then fold/canonicalize/cse/dce
    assert '"block_' not in text
    return text


@triton.jit
def _blocks(x_ptr, y_ptr, M, N, PAD: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pm * 8 - 3, pn * 16 + 5), (8, 16), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (24, 40), (40, 1), (pm * 8, pn * 16), (8, 16), (1, 0))
    v = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
    tl.store(dst, v, boundary_check=(0, 1))
    t = tl.make_block_ptr(x_ptr, (N, M), (1, N), (0, pm * 8), (16, 8), (0, 1))   # dim 0 stays inside
    tl.store(tl.advance(dst, (16, 0)), tl.trans(tl.load(t, boundary_check=(1,), padding_option=PAD)),
             boundary_check=(0, 1))


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_block_pointers_expand_like_the_interpreter(pad):
    M, N = 13, 27
    x = np.random.default_rng(1).standard_normal((M, N)).astype(np.float32)
    text = expanded(_blocks, "*fp32, *fp32, i32, i32", PAD=pad)
    y_compiled = np.full((24, 40), -1.0, np.float32)
    replay(text, [x, y_compiled, M, N], (2, 3))
    y_interp = np.full((24, 40), -1.0, np.float32)
    triton.jit(_blocks.fn, interpret=True)[(2, 3)](x, y_interp, M, N, PAD=pad)
    np.testing.assert_array_equal(y_compiled, y_interp)
    assert (y_interp != -1).any()


@triton.jit
def _descriptors(x_ptr, idx_ptr, out_ptr, acc_ptr, M, N):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, 16], padding_option="nan")
    g = d.gather(tl.load(idx_ptr + tl.arange(0, 8)), 7)
    o = tl.make_tensor_descriptor(out_ptr, [8, 16], [16, 1], [8, 16])
    o.store([0, 0], g)
    a = tl.make_tensor_descriptor(acc_ptr, [5, 12], [12, 1], [8, 16])
    a.atomic_add([tl.program_id(0) - 2, 1], tl.full((8, 16), 1, tl.int32))


def test_descriptors_expand_like_the_interpreter():
    M, N = 9, 20
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    idx = np.array([0, 8, 9, -1, 3, 3, 100, 4], np.int32)
    outs = []
    for run in ("compiled", "interp"):
        out = np.full((8, 16), -1.0, np.float32)
        acc = np.zeros((5, 12), np.int32)
        if run == "compiled":
            replay(expanded(_descriptors, "*fp32, *i32, *fp32, *i32, i32, i32"), [x, idx, out, acc, M, N], (4,))
        else:
            triton.jit(_descriptors.fn, interpret=True)[(4,)](x, idx, out, acc, M, N)
        outs.append((out, acc))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    assert np.isnan(outs[1][0][3]).all() and outs[1][1].sum() > 0


def test_host_descriptor_arguments_expand_like_the_interpreter():
    @triton.jit
    def k(d, out_ptr):
        v = d.load([3, 0])
        tl.store(out_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], v)

    x = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    text = expanded(k, "tensordesc<fp32[4, 8]>, *fp32")
    got = np.zeros((4, 8), np.float32)
    # the kernel's arguments for a host descriptor: base, shape, leading strides, padding flag
    replay(text, [x, 5, 8, 8, True, got], (1,))
    want = np.zeros((4, 8), np.float32)
    triton.jit(k.fn, interpret=True)[(1,)](TensorDescriptor.from_tensor(x, [4, 8], padding="nan"), want)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(want[2:]).all()
