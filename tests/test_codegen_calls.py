"""noinline device functions compiled as real calls, compile-only (no GPU):
each kernel goes frontend → compile_ptx (one `.func` per specialization,
`call.uni`) → ptxas for sm_80 and sm_90a, and runs in the interpreter against
NumPy. tests/gpu/test_calls.py runs the same kernels on a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import _core
from tritium.interpreter.runner import run_grid

from kernels.calls import noinline_call as tensor_kernel  # tensors across the call: scaled_tanh
from test_codegen_ptx import ARCHS, ptxas

ALIGNED = {"divisibility": 16}


# --- kernels (shared with tests/gpu/test_calls.py) ------------------------------

@tritium.jit(noinline=True)
def scaled_add(a, b, s):
    return a * s + b


@tritium.jit
def scalar_kernel(x_ptr, y_ptr, out_ptr, s):
    # the form Triton 3.6 also compiles: scalars only across the call
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    y = tl.load(y_ptr + pid)
    tl.store(out_ptr + pid, scaled_add(x, y, s))


@tritium.jit(noinline=True)
def pos_neg(x):
    return tl.maximum(x, 0.0), tl.minimum(x, 0.0), tl.sum(tl.abs(x), 0)


@tritium.jit
def tuple_kernel(x_ptr, pos_ptr, neg_ptr, abs_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p, q, a = pos_neg(tl.load(x_ptr + offs))
    tl.store(pos_ptr + offs, p)
    tl.store(neg_ptr + offs, q)
    tl.store(abs_ptr, a)


@tl.aggregate
class Stats:
    total: tl.float32
    count: tl.int32
    peak: tl.tensor

    def add(self, x):
        self.total = self.total + tl.sum(x, 0)
        self.count = self.count + 1
        self.peak = tl.maximum(self.peak, x)


@tritium.jit(noinline=True)
def accumulate(st, x):
    # mutates its aggregate argument: changed fields come back as call results
    st.add(x)
    st.add(x * 2.0)


@tritium.jit
def aggregate_kernel(x_ptr, out_ptr, peak_ptr, n_chunks, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    st = Stats(0.0, 0, tl.full((BLOCK,), -float("inf"), tl.float32))
    for c in range(n_chunks):
        accumulate(st, tl.load(x_ptr + c * BLOCK + offs))
    tl.store(out_ptr, st.total)
    tl.store(out_ptr + 1, st.count.to(tl.float32))
    tl.store(peak_ptr + offs, st.peak)


@tritium.jit(noinline=True)
def clip_or_keep(x, limit):
    if limit < 0.0:
        return x  # early return inside a noinline function
    return tl.minimum(x, limit)


@tritium.jit
def early_return_kernel(x_ptr, out_ptr, limit, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, clip_or_keep(tl.load(x_ptr + offs), limit))


@tritium.jit(noinline=True)
def centered(x, BLOCK: tl.constexpr):
    # a reduction across warps: scratch shared memory inside the callee
    return x - tl.sum(x, 0) / BLOCK


@tritium.jit
def reduce_two_sites_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    m = tl.max(x, 0)  # the caller's own scratch before the first call
    y = centered(x, BLOCK)
    z = centered(y * y + m, BLOCK)
    tl.store(out_ptr + offs, z)


@tritium.jit(noinline=True)
def damp(acc, x, i):
    return acc * 0.5 + x * i


@tritium.jit
def loop_kernel(x_ptr, out_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(n_iter):
        acc = damp(acc, x, i * 1.0)
    tl.store(out_ptr + offs, acc)


@tritium.jit(noinline=True)
def fn_c(x):
    return tl.sum(x * x, 0)


@tritium.jit(noinline=True)
def fn_b(x):
    return fn_c(x) + 1.0


@tritium.jit(noinline=True)
def fn_a(x):
    return fn_b(x + 1.0) * 2.0


@tritium.jit
def abc_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, fn_a(x))      # k → a → b → c
    tl.store(out_ptr + 1, fn_b(x))  # k → b → c


# --- NumPy references -------------------------------------------------------------

def ref_tanh(x, s):
    e = np.exp(-2.0 * x * s)
    return (1.0 - e) / (1.0 + e)


def ref_aggregate(x, n_chunks, block):
    chunks = x[: n_chunks * block].reshape(n_chunks, block)
    total = float(chunks.sum()) * 3.0
    peak = np.maximum(chunks, chunks * 2.0).max(axis=0) if n_chunks else np.full(block, -np.inf, np.float32)
    return total, 2 * n_chunks, peak


def ref_two_sites(x):
    m = x.max()
    y = x - x.mean()
    w = y * y + m
    return w - w.mean()


def ref_loop(x, n_iter):
    acc = np.zeros_like(x)
    for i in range(n_iter):
        acc = acc * 0.5 + x * np.float32(i)
    return acc


def ref_abc(x):
    b = lambda v: float((v.astype(np.float64) ** 2).sum()) + 1.0  # noqa: E731
    return [b(x + 1.0) * 2.0, b(x)]


# --- cases: (name, kernel, signature, constexprs, warps) ---------------------------

CASES = [
    ("scalar", scalar_kernel, "*fp32, *fp32, *fp32, fp32", {}, 1),
    ("tensor", tensor_kernel, "*fp32, *fp32, i32, fp32", dict(BLOCK=1024), 4),
    ("tuple", tuple_kernel, "*fp32, *fp32, *fp32, *fp32", dict(BLOCK=256), 4),
    ("aggregate", aggregate_kernel, "*fp32, *fp32, *fp32, i32", dict(BLOCK=128), 4),
    ("early_return", early_return_kernel, "*fp32, *fp32, fp32", dict(BLOCK=512), 4),
    ("reduce_two_sites", reduce_two_sites_kernel, "*fp32, *fp32", dict(BLOCK=1024), 4),
    ("loop", loop_kernel, "*fp32, *fp32, i32", dict(BLOCK=256), 2),
    ("abc", abc_kernel, "*fp32, *fp32", dict(BLOCK=512), 4),
]


def compile_case(k, sig: str, consts: dict, warps: int, arch: str = "sm_90a", aligned: bool = True) -> dict:
    attrs = {p.name: ALIGNED for p in k.params if not p.is_constexpr and p.name.endswith("_ptr")} if aligned else None
    return _core.compile_ptx(k.compile_ir(signature=sig, constexprs=consts, arg_attrs=attrs), arch, warps)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,k,sig,consts,warps", CASES, ids=[c[0] for c in CASES])
def test_calls_compile_and_pass_ptxas(name, k, sig, consts, warps, arch, tmp_path):
    out = compile_case(k, sig, consts, warps, arch)
    ptx = out["ptx"]
    assert ".func" in ptx and "call.uni" in ptx, ptx
    assert out["kernels"] == [k.__name__]
    ptxas(ptx, arch, tmp_path)
    # the unaligned variant: other layouts on both sides of the call
    ptxas(compile_case(k, sig, consts, warps, arch, aligned=False)["ptx"], arch, tmp_path)


def test_each_specialization_is_one_function():
    out = compile_case(abc_kernel, "*fp32, *fp32", dict(BLOCK=512), 4)
    ptx = out["ptx"]
    for f in ("fn_a", "fn_b", "fn_c"):
        assert ptx.count(f" {f}(") == 1, f  # one definition; calls name it with `call.uni (...), f,`
    assert ptx.count("call.uni") == 4


def test_callee_shared_memory_reaches_the_kernel_through_virtual_buffers():
    out = compile_case(abc_kernel, "*fp32, *fp32", dict(BLOCK=512), 4)
    alloc = out["allocation"]
    # fn_c reduces over 4 warps: 4 f32 partials; every caller reserves them
    assert "@fn_c total=16" in alloc and "@fn_b total=16" in alloc and "@abc_kernel total=16" in alloc, alloc
    assert alloc.count("-> @fn_b") == 2 and alloc.count("@fn_c base=0 via") == 2, alloc
    assert out["shared"] == 16
    out = compile_case(reduce_two_sites_kernel, "*fp32, *fp32", dict(BLOCK=1024), 4)
    assert out["allocation"].count("-> @centered") == 2, out["allocation"]
    assert out["shared"] == 16


def test_tensor_call_passes_registers_not_memory():
    out = compile_case(tensor_kernel, "*fp32, *fp32, i32, fp32", dict(BLOCK=1024), 4)
    # the callee's tensor parameters are registers: no local-memory spill of the argument
    assert "ld.local" not in out["ptx"] and "st.local" not in out["ptx"], out["ptx"]
    assert ".param .b32 scaled_tanh_param_7" in out["ptx"], out["ptx"]


# --- interpreter vs NumPy -------------------------------------------------------

def test_interpreter_scalar():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(8, dtype=np.float32), rng.standard_normal(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    run_grid(scalar_kernel, (8,), [x, y, out, 1.5])
    np.testing.assert_allclose(out, x * 1.5 + y, rtol=1e-6)


def test_interpreter_tensor():
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    out = np.zeros_like(x)
    run_grid(tensor_kernel, (2,), [x, out, 1000, 0.7], kwargs={"BLOCK": 512})
    np.testing.assert_allclose(out, ref_tanh(x, np.float32(0.7)), rtol=1e-5, atol=1e-6)


def test_interpreter_tuple():
    x = np.random.default_rng(1).standard_normal(256, dtype=np.float32)
    p, q, a = np.zeros_like(x), np.zeros_like(x), np.zeros(1, np.float32)
    run_grid(tuple_kernel, (1,), [x, p, q, a], kwargs={"BLOCK": 256})
    np.testing.assert_array_equal(p, np.maximum(x, 0))
    np.testing.assert_array_equal(q, np.minimum(x, 0))
    np.testing.assert_allclose(a[0], np.abs(x).sum(), rtol=1e-5)


def test_interpreter_aggregate():
    x = np.random.default_rng(2).standard_normal(128 * 3, dtype=np.float32)
    out, peak = np.zeros(2, np.float32), np.zeros(128, np.float32)
    run_grid(aggregate_kernel, (1,), [x, out, peak, 3], kwargs={"BLOCK": 128})
    total, count, ref_peak = ref_aggregate(x, 3, 128)
    np.testing.assert_allclose(out, [total, count], rtol=1e-5)
    np.testing.assert_array_equal(peak, ref_peak)


@pytest.mark.parametrize("limit", [0.5, -1.0])
def test_interpreter_early_return(limit):
    x = np.random.default_rng(3).standard_normal(512, dtype=np.float32)
    out = np.zeros_like(x)
    run_grid(early_return_kernel, (1,), [x, out, limit], kwargs={"BLOCK": 512})
    np.testing.assert_array_equal(out, x if limit < 0 else np.minimum(x, np.float32(limit)))


def test_interpreter_reduce_two_sites():
    x = np.random.default_rng(4).standard_normal(1024, dtype=np.float32)
    out = np.zeros_like(x)
    run_grid(reduce_two_sites_kernel, (1,), [x, out], kwargs={"BLOCK": 1024})
    np.testing.assert_allclose(out, ref_two_sites(x.astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_interpreter_loop():
    x = np.random.default_rng(5).standard_normal(256, dtype=np.float32)
    out = np.zeros_like(x)
    run_grid(loop_kernel, (1,), [x, out, 7], kwargs={"BLOCK": 256})
    np.testing.assert_allclose(out, ref_loop(x, 7), rtol=1e-5, atol=1e-6)


def test_interpreter_abc():
    x = np.random.default_rng(6).standard_normal(512, dtype=np.float32)
    out = np.zeros(2, np.float32)
    run_grid(abc_kernel, (1,), [x, out], kwargs={"BLOCK": 512})
    np.testing.assert_allclose(out, ref_abc(x), rtol=1e-5)


def test_compile_keeps_the_allocation_dump():
    k = tritium.compile(reduce_two_sites_kernel, signature="*fp32, *fp32", constexprs={"BLOCK": 1024},
                        target="cuda:90", num_warps=4)
    assert k.asm["allocation"].count("-> @centered") == 2, k.asm["allocation"]


# --- a dot inside a callee whose caller keeps shared memory live ---------------

def _dot_beside_call(arch: str) -> dict:
    from kernels.dot_calls import dot_beside_call
    attrs = {p.name: ALIGNED for p in dot_beside_call.params if not p.is_constexpr}
    ir = dot_beside_call.compile_ir(signature="*fp16, *fp16, *fp16, *fp32, i32", constexprs={"N": 64, "BK": 64}, arg_attrs=attrs)
    return _core.compile_ptx(ir, arch, 4)


@pytest.mark.parametrize("arch", ARCHS)
def test_callee_dot_sits_above_the_callers_live_stage_buffers(arch, tmp_path):
    out = _dot_beside_call(arch)
    alloc = out["allocation"]
    # the caller's two pipelined operand rings (3 stages of 64x64 f16 each)
    # stay live across the call, so the callee's shared memory starts after
    # them; its largest need is a conversion of its 64x64 f32 result through
    # scratch, each 256-byte row padded by 16 (64 * 272 bytes)
    assert "@strided_tile_product base=49152 via" in alloc, alloc
    assert out["shared"] == 49152 + 64 * 272, alloc
    ptxas(out["ptx"], arch, tmp_path)


def ref_dot_beside_call(a, b, x, k, n):
    side = sum(x[:, k0:k0 + n].astype(np.float32) @ x[:, k0:k0 + n].astype(np.float32) for k0 in range(0, k, n))
    return a.astype(np.float32) @ b.astype(np.float32) + side


def test_interpreter_dot_beside_call():
    from kernels.dot_calls import dot_beside_call
    n, k = 64, 128
    rng = np.random.default_rng(3)
    a, x = (rng.standard_normal((n, k)).astype(np.float16) for _ in range(2))
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((n, n), np.float32)
    run_grid(dot_beside_call, (1,), [a, b, x, c, k], kwargs={"N": n, "BK": n})
    np.testing.assert_allclose(c, ref_dot_beside_call(a, b, x, k, n), rtol=1e-3, atol=1e-2)
