"""Tensor descriptors: device-side (`tl.make_tensor_descriptor`) and host-side
(`tritium.tools.tensor_descriptor.TensorDescriptor` as a kernel argument) in
the interpreter against NumPy, with shapes that are not multiples of the
block, both paddings, atomics, gather/scatter and the descriptor's
properties; signatures, keys and compiled IR of descriptor parameters; and
Triton's errors for misuse."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import InterpreterError
from tritium.tools.tensor_descriptor import TensorDescriptor

interp = triton.jit(interpret=True)


def aligned(shape, dtype=np.float32, fill=None) -> np.ndarray:
    """A C-contiguous array whose data is 64-byte aligned (descriptors need 16)."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + 64, np.uint8)
    off = -raw.ctypes.data % 64
    arr = raw[off:off + n].view(dtype).reshape(shape)
    if fill is not None:
        arr[...] = fill
    return arr


@interp
def _device_abs(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PAD)
    yd = tl.make_tensor_descriptor(y_ptr, [M + 1, N], [N, 1], [BM, BN])
    v = xd.load([pm * BM, pn * BN])
    yd.store([pm * BM, pn * BN], tl.where(v != v, -5.0, tl.abs(v)))


@pytest.mark.parametrize("M,N", [(16, 32), (13, 20), (1, 4)])
@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_device_descriptor_load_store(M, N, pad):
    # N is a multiple of 4 (16-byte strides); rows and columns both spill over
    BM, BN = 8, 16
    x = aligned((M, N), fill=np.random.default_rng(M).standard_normal((M, N)))
    y = aligned((M + 1, N), fill=-1.0)
    _device_abs[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, y, M, N, BM=BM, BN=BN, PAD=pad)
    want = np.full((M + 1, N), -1.0, np.float32)
    want[:M] = np.abs(x)
    # rows M.. of y exist (shape M+1): the block reading past x fills them with the padding
    rows_read = min(triton.cdiv(M, BM) * BM, M + 1)
    want[M:rows_read] = 0.0 if pad == "zero" else -5.0
    np.testing.assert_array_equal(y, want)


@interp
def _host_copy(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], v + 1)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_host_descriptor_argument(pad):
    M, N, BM, BN = 10, 24, 8, 16
    x = aligned((M, N), fill=np.arange(M * N).reshape(M, N))
    y = aligned((16, 32), fill=-1.0)
    src = TensorDescriptor.from_tensor(x, [BM, BN], padding=pad)
    dst = TensorDescriptor(y, [16, 32], [32, 1], [BM, BN])
    _host_copy[(2, 2)](src, dst, BM=BM, BN=BN)
    want = np.full((16, 32), 0.0 if pad == "zero" else np.nan, np.float32) + 1
    want[:M, :N] = x + 1
    np.testing.assert_array_equal(y, want)


@interp
def _properties(d, out_ptr):
    tl.static_assert(d.block_shape == (4, 8))
    tl.static_assert(d.dtype == tl.float32)
    tl.store(out_ptr + 0, d.shape[0])
    tl.store(out_ptr + 1, d.shape[1])
    tl.store(out_ptr + 2, d.strides[0].to(tl.int32))
    tl.store(out_ptr + 3, d.strides[1].to(tl.int32))


def test_descriptor_properties():
    x = aligned((6, 12))
    out = np.zeros(4, np.int32)
    _properties[(1,)](TensorDescriptor.from_tensor(x, [4, 8]), out)
    assert out.tolist() == [6, 12, 12, 1]


def test_host_descriptor_of_a_reinterpreted_array():
    # fp8 data held as uint8 NumPy storage (tutorial 09's fp8 descriptors
    # without torch): the wrapper answers stride()/dim()/numel() from the
    # array (its strides were torch-only: AttributeError before)
    x = aligned((6, 32), np.uint8, fill=np.arange(192).reshape(6, 32) % 120)
    y = aligned((6, 32), np.uint8)
    xw, yw = triton.reinterpret(x, tl.float8e4nv), triton.reinterpret(y, tl.float8e4nv)
    assert xw.stride() == (32, 1) and xw.stride(0) == 32 and xw.dim() == 2 and xw.numel() == 192
    assert triton.reinterpret(x[:, ::2], tl.float8e4nv).stride() == (32, 2)
    src = TensorDescriptor.from_tensor(xw, [8, 16])
    assert src.strides == [32, 1] and src.base.dtype is tl.float8e4nv
    _host_copy_same[(1, 2)](src, TensorDescriptor.from_tensor(yw, [8, 16]), BM=8, BN=16)
    np.testing.assert_array_equal(y, x)


@interp
def _host_copy_same(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    dst.store([pm * BM, pn * BN], src.load([pm * BM, pn * BN]))


@interp
def _atomics(d, BM: tl.constexpr, BN: tl.constexpr):
    d.atomic_add([0, 0], tl.full((BM, BN), 1, tl.int32))
    d.atomic_max([0, 0], tl.full((BM, BN), 5, tl.int32))
    d.atomic_xor([0, 0], tl.full((BM, BN), 3, tl.int32))


def test_descriptor_atomics_stay_in_bounds():
    x = aligned((3, 4), np.int32, fill=np.arange(12).reshape(3, 4))
    # 4 programs all add into the same 3x4 array through a 4x8 block
    _atomics[(4,)](TensorDescriptor.from_tensor(x, [4, 8]), BM=4, BN=8)
    v = np.arange(12).reshape(3, 4)
    for _ in range(4):
        v = np.maximum(v + 1, 5) ^ 3
    np.testing.assert_array_equal(x, v)


@interp
def _gather_scatter(src, dst, idx_ptr, B: tl.constexpr):
    rows = tl.load(idx_ptr + tl.arange(0, B))
    g = src.gather(rows, 4)
    dst.scatter(g * 2, tl.arange(0, B), 0)


def test_gather_and_scatter():
    x = aligned((6, 24), fill=np.arange(144).reshape(6, 24))
    y = aligned((8, 16), fill=-1.0)
    idx = np.array([5, 0, 7, 2, 2, -1, 1, 3], np.int32)
    _gather_scatter[(1,)](TensorDescriptor.from_tensor(x, [1, 16]), TensorDescriptor.from_tensor(y, [1, 16]),
                          idx, B=8)
    want = np.zeros((8, 16), np.float32)
    for i, r in enumerate(idx):
        if 0 <= r < 6:
            cols = x[r, 4:20]
            want[i, :len(cols)] = cols
    np.testing.assert_array_equal(y, want * 2)


def test_descriptor_through_loop_and_helper():
    @triton.jit
    def load_at(d, i, B: tl.constexpr):
        return d.load([i * B])

    @interp
    def k(d, out_ptr, n, B: tl.constexpr):
        acc = tl.zeros((B,), tl.float32)
        for i in range(0, tl.cdiv(n, B)):
            acc += load_at(d, i, B)
        tl.store(out_ptr + tl.arange(0, B), acc)

    x = aligned((37,), fill=np.arange(37))
    out = np.zeros(16, np.float32)
    k[(1,)](TensorDescriptor.from_tensor(x, [16]), out, 37, B=16)
    want = np.zeros(48, np.float32)
    want[:37] = x
    np.testing.assert_array_equal(out, want.reshape(3, 16).sum(0))


# -- host objects, signatures, keys -------------------------------------------------

@pytest.mark.parametrize("kwargs,needle", [
    (dict(shape=[4, 8], strides=[8, 1], block_shape=[4, 6]), "not a power of two"),
    (dict(shape=[4, 6], strides=[6, 1], block_shape=[4, 8]), "not a multiple of 16 bytes"),
    (dict(shape=[4, 8], strides=[8, 2], block_shape=[4, 8]), "last dimension must be contiguous"),
    (dict(shape=[4, 8], strides=[8], block_shape=[4, 8]), "one length"),
    (dict(shape=[4, 8], strides=[8, 1], block_shape=[4, 8], padding="inf"), "padding must be"),
    (dict(shape=[0, 8], strides=[8, 1], block_shape=[4, 8]), "shape must be positive"),
])
def test_host_descriptor_checks(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        TensorDescriptor(aligned((4, 8)), **kwargs)


def test_host_descriptor_alignment_and_nan_padding():
    x = aligned((40,))
    with pytest.raises(ValueError, match="16-byte aligned"):
        TensorDescriptor(x[1:], [39], [1], [16])
    with pytest.raises(ValueError, match="floating-point"):
        TensorDescriptor.from_tensor(aligned((16,), np.int32), [16], padding="nan")


def test_signature_spelling_and_key():
    from tritium.language.signature import arg_type, parse_signature
    from tritium.runtime.specialization import specializer
    d = TensorDescriptor.from_tensor(aligned((32, 64), np.float16), [16, 32])
    assert str(arg_type("d", d)) == "tensordesc<fp16[16, 32]>"
    sig = parse_signature("*fp16, tensordesc<fp16[16, 32]>, i32", ["a", "d", "n"])
    assert str(sig["d"]) == "tensordesc<fp16[16, 32]>" and sig["d"].rank == 2

    @triton.jit
    def k(d, n):
        pass
    spec = specializer(k)
    key = spec.key((d, 5))
    assert spec.key_python((d, 5)) == key
    t = spec.specialization(key).signature["d"]
    assert t.shape_div16 == (True, True)
    # another extent divisibility is another specialization; the padding is not
    d2 = TensorDescriptor(d.base, [30, 64], [64, 1], [16, 32], padding="nan")
    assert spec.key((d2, 5)) != key
    assert spec.key((TensorDescriptor.from_tensor(d.base, [16, 32], padding="nan"), 5)) == key


@triton.jit
def _host_desc_kernel(a, b, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    b.store([pm * BM, 0], a.load([pm * BM, 0]) * 2)


def test_host_descriptor_ir_arguments():
    text = _host_desc_kernel.ir_text(signature="tensordesc<fp32[16, 32]>, tensordesc<fp32[16, 32]>",
                                     constexprs={"BM": 16, "BN": 32})
    head = text.splitlines()[0]
    # base (16-byte aligned, marked with its block for TMA), shape (i32 x 2), the leading stride
    # (i64, 4 elements = 16 bytes), padding flag
    assert head.count("ptr<f32> {divisibility = 16, host_descriptor = [16, 32]}") == 2
    assert head.count("i64 {divisibility = 4}") == 2 and head.count(": i1") == 2
    assert text.count('"block_load"') == 1 and text.count('"select"') == 1


def test_host_descriptor_compiles_through_ptxas(tmp_path):
    from test_codegen_ptx import ptxas
    ck = triton.compile(_host_desc_kernel, signature="a=tensordesc<fp32[16, 32]>,b=tensordesc<fp32[16, 32]>",
                        constexprs={"BM": 16, "BN": 32}, target="cuda:90")
    assert ck.metadata["params"][0] == ["a", "tensordesc<fp32[16, 32]>"]
    ptxas(ck.asm["ptx"], "sm_90a", tmp_path)


# -- misuse ---------------------------------------------------------------------------

@triton.jit
def _bad_last_stride(x_ptr, n):
    tl.make_tensor_descriptor(x_ptr, [n, n], [n, n], [16, 16])


@triton.jit
def _bad_row_bytes(x_ptr, n):
    tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 2])


@triton.jit
def _bad_rank(x_ptr, n):
    tl.make_tensor_descriptor(x_ptr, [n, n, n, n, n, n], [n, n, n, n, n, 1], [1, 1, 1, 1, 1, 16])


@triton.jit
def _bad_offsets(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 16])
    d.load([0])


@triton.jit
def _bad_store_shape(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [16, 16])
    d.store([0, 0], tl.zeros((16, 8), tl.float32))


@triton.jit
def _bad_nan_int(x_ptr, n):
    tl.make_tensor_descriptor(x_ptr, [n], [1], [16], padding_option="nan")


@triton.jit
def _bad_tl_load(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    tl.load(d)


@triton.jit
def _bad_atomic_dtype(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    d.atomic_and([0], tl.zeros((16,), tl.float32))


@triton.jit
def _bad_gather_rows(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n, n], [n, 1], [1, 16])
    d.gather(tl.arange(0, 4), 0)


@pytest.mark.parametrize("kernel,sig,needle,line", [
    (_bad_last_stride, "*fp32, i32", "last dimension must be contiguous", 1),
    (_bad_row_bytes, "*fp32, i32", "at least 16 bytes", 1),
    (_bad_rank, "*fp32, i32", "1 <= ndim <= 5", 1),
    (_bad_offsets, "*fp32, i32", "expected 2 offsets, got 1", 2),
    (_bad_store_shape, "*fp32, i32", "is not the block's", 2),
    (_bad_nan_int, "*i32, i32", "not supported for integer blocks", 1),
    (_bad_tl_load, "*fp32, i32", "accessed with desc.load", 2),
    (_bad_atomic_dtype, "*fp32, i32", "unsupported element type fp32", 2),
    (_bad_gather_rows, "*fp32, i32", "at least 8 rows", 2),
])
def test_misuse_is_a_compilation_error_at_the_line(kernel, sig, needle, line):
    from test_block_pointers import assert_misuse
    assert_misuse(kernel, sig, needle, line)


def test_interpreter_checks_device_descriptor_alignment():
    @interp
    def k(x_ptr, n):
        tl.make_tensor_descriptor(x_ptr + 1, [n], [1], [16]).load([0])

    with pytest.raises(InterpreterError, match="16-byte aligned"):
        k[(1,)](aligned((32,)), 16)


def test_rust_launch_key_takes_host_descriptors():
    from tritium import _core
    from tritium.runtime import driver
    from tritium.runtime.specialization import specializer
    if not hasattr(_core, "FastLauncher"):
        pytest.skip("extension built without FastLauncher")

    @triton.jit
    def k(d, n):
        pass
    s = specializer(k)
    launcher = _core.FastLauncher(s._plan, lambda *a: "slow", driver.torch_queries)
    d = TensorDescriptor.from_tensor(aligned((20, 32)), [8, 16], padding="nan")
    key, grid, reads = launcher.prepare_only((3,), (d, 5))
    assert key == s.key_python((d, 5)) and grid == (3, 1, 1)
    assert reads == ("desc", 5)


def test_set_allocator_is_kept_and_never_needed(monkeypatch):
    # device-side descriptors on the masked path need no global workspace
    # (runtime/_allocation.py; only maps built on the device do, with
    # TRITIUM_TMA_DEVICE: tests/test_tma.py): an allocator that fails when
    # called must not be called
    monkeypatch.setenv("TRITIUM_TMA_DEVICE", "0")
    from tritium.runtime._allocation import NullAllocator, get_allocator
    calls = []

    def alloc(size, alignment, stream):
        calls.append(size)
        raise AssertionError("tritium asked for a workspace")

    triton.set_allocator(alloc)
    try:
        assert get_allocator() is alloc
        x = aligned((16, 32), fill=1.0)
        y = aligned((17, 32), fill=0.0)
        _device_abs[(2, 2)](x, y, 16, 32, BM=8, BN=16, PAD="zero")
        assert calls == [] and (y[:16] == 1.0).all()
    finally:
        triton.set_allocator(NullAllocator())
    with pytest.raises(TypeError):
        triton.set_allocator(3)
    with pytest.raises(RuntimeError, match="no allocator was set"):
        NullAllocator()(128, 128, None)


class _Buffer:
    def __init__(self, address):
        self.address = address

    def data_ptr(self):
        return self.address


@pytest.mark.parametrize("allocator, error, message", [
    (None, RuntimeError, r"kernel 'k' requires a runtime memory allocation \(256 bytes.*no allocator was set"),
    (lambda size, align, stream: 1 / 0, RuntimeError, r"kernel 'k': the allocator .* failed for 256 bytes: ZeroDivisionError"),
    (lambda size, align, stream: object(), TypeError, r"kernel 'k': .* returned object, which has no data_ptr\(\)"),
    (lambda size, align, stream: _Buffer("0x100"), TypeError, r"kernel 'k': .* data_ptr\(\) = '0x100', not an integer"),
    (lambda size, align, stream: _Buffer(0x1040), ValueError, r"kernel 'k': .* address 0x1040, not a 128-byte aligned"),
    (lambda size, align, stream: _Buffer(0), ValueError, r"kernel 'k': .* address 0x0"),
])
def test_global_scratch_errors_name_the_kernel(allocator, error, message):
    # the launch of a kernel with device-built tensor maps asks the user's
    # allocator for scratch (runtime.rs -> scratch_for); whatever it raises
    # or returns wrong is reported with the kernel's name, not as a bare
    # AttributeError from inside the launch
    from tritium.runtime._allocation import NullAllocator, scratch_for
    triton.set_allocator(allocator or NullAllocator())
    try:
        with pytest.raises(error, match=message):
            scratch_for("k", 256, 128, 0)
    finally:
        triton.set_allocator(NullAllocator())


def test_global_scratch_passes_triton_arguments_and_keeps_the_buffer():
    from tritium.runtime._allocation import NullAllocator, scratch_for
    seen = []

    def alloc(size, alignment, stream):
        seen.append((size, alignment, stream))
        return _Buffer(0x10000)

    triton.set_allocator(alloc)
    try:
        buffer, address = scratch_for("k", 384, 128, 7)
    finally:
        triton.set_allocator(NullAllocator())
    assert seen == [(384, 128, 7)] and address == 0x10000 and buffer.data_ptr() == 0x10000
