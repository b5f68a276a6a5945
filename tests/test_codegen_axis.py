"""AxisInfo in codegen (compile-only, no GPU): global accesses get vector
widths from tritium-analysis' AxisInfo, which also sees inside loops and
across noinline calls; and cheap index values are computed in the layout their
consumer wants, so 2-D pointer tiles need no shared memory. Every PTX here
also goes through ptxas for sm_80 and sm_90a."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from tritium import _core

from test_codegen_ptx import ARCHS, ptxas
from kernels.tiles import layer_norm_2d, row_sum_2d, softmax


def compile_ptx(kernel, signature: str, constexprs: dict, aligned=(), ones=(), warps: int = 4,
                arch: str = "sm_90a") -> str:
    attrs = {name: {"divisibility": 16} for name in aligned}
    for name in ones:
        attrs.setdefault(name, {})["equal_to_1"] = True
    ir = kernel.compile_ir(signature=signature, constexprs=constexprs, arg_attrs=attrs or None)
    return _core.compile_ptx(ir, arch, warps)["ptx"]


def widths(ptx: str, op: str) -> set[int]:
    """Vector widths of the global `op` ("ld" or "st") accesses in `ptx`."""
    out = set()
    for m in re.finditer(rf"\b{op}\.global(?:\.[a-z0-9_]+)*", ptx):
        v = re.search(r"\.v(\d)", m.group(0))
        out.add(int(v.group(1)) if v else 1)
    return out


# --- vector widths -----------------------------------------------------------

@tritium.jit
def ln_columns_loop(X, Y, W, stride, N, BLOCK: tl.constexpr):
    # the layer-norm tutorial's shape: a column loop per row
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0)
        w = tl.load(W + cols, mask=mask)
        tl.store(Y + cols, (x - mean) * w, mask=mask)


LOOP_SIG = "*fp32, *fp32, *fp32, i32, i32"


def test_loop_bodies_get_16_byte_accesses():
    ptx = compile_ptx(ln_columns_loop, LOOP_SIG, {"BLOCK": 1024}, aligned=("X", "Y", "W", "stride", "N"))
    assert widths(ptx, "ld") == {4}, ptx
    assert widths(ptx, "st") == {4}, ptx


def test_loop_with_unaligned_stride_stays_scalar():
    # the row start is unknown, so X's and Y's accesses are one element wide;
    # W is not offset by the stride and keeps its 16-byte loads
    ptx = compile_ptx(ln_columns_loop, LOOP_SIG, {"BLOCK": 1024}, aligned=("X", "Y", "W", "N"))
    assert widths(ptx, "ld") == {1, 4}, ptx
    assert widths(ptx, "st") == {1}, ptx


@tritium.jit
def loop_carried_pointer(X, Y, n_iter, BLOCK: tl.constexpr):
    # the pointers advance by BLOCK each iteration: facts stay through the loop
    px = X + tl.arange(0, BLOCK)
    py = Y + tl.arange(0, BLOCK)
    for _ in range(n_iter):
        tl.store(py, tl.load(px) + 1.0)
        px += BLOCK
        py += BLOCK


def test_loop_carried_pointers_keep_their_alignment():
    ptx = compile_ptx(loop_carried_pointer, "*fp32, *fp32, i32", {"BLOCK": 512}, aligned=("X", "Y"))
    assert widths(ptx, "ld") == {4} and widths(ptx, "st") == {4}, ptx


@tritium.jit
def tile_copy(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride + cols[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


TILE_SIG = "*fp32, *fp32, i32, i32, i32"


def test_2d_tile_widths_follow_the_stride():
    aligned = compile_ptx(tile_copy, TILE_SIG, {"BM": 32, "BN": 64}, aligned=("x_ptr", "y_ptr", "M", "N", "stride"))
    assert widths(aligned, "ld") == {4} and widths(aligned, "st") == {4}
    # a stride with no known divisibility (and not 1): rows start anywhere
    misaligned = compile_ptx(tile_copy, TILE_SIG, {"BM": 32, "BN": 64}, aligned=("x_ptr", "y_ptr", "M", "N"))
    assert widths(misaligned, "ld") == {1} and widths(misaligned, "st") == {1}


@tritium.jit
def strided_copy(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) * stride
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_only_a_stride_equal_to_1_keeps_strided_offsets_contiguous():
    sig = "*fp32, *fp32, i32"
    one = compile_ptx(strided_copy, sig, {"BLOCK": 512}, aligned=("x_ptr", "y_ptr"), ones=("stride",))
    assert widths(one, "ld") == {4} and widths(one, "st") == {4}, one
    # divisible by 16 but not known to be 1: elements 16 apart, no vectors
    sixteen = compile_ptx(strided_copy, sig, {"BLOCK": 512}, aligned=("x_ptr", "y_ptr", "stride"))
    assert widths(sixteen, "ld") == {1}, sixteen
    unknown = compile_ptx(strided_copy, sig, {"BLOCK": 512}, aligned=("x_ptr", "y_ptr"))
    assert widths(unknown, "ld") == {1}, unknown


def test_stride_1_rows_overlap_and_are_not_aligned():
    # rows[:, None] * 1 + cols[None, :]: row i starts at element i, so its
    # 16-byte alignment is unknown even though each row is contiguous
    ptx = compile_ptx(tile_copy, TILE_SIG, {"BM": 32, "BN": 64}, aligned=("x_ptr", "y_ptr", "M", "N"), ones=("stride",))
    assert widths(ptx, "ld") == {1}, ptx


@tritium.jit
def hinted_copy(x_ptr, y_ptr, start, BLOCK: tl.constexpr):
    offs = tl.multiple_of(start, 16) + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@tritium.jit
def unhinted_copy(x_ptr, y_ptr, start, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@tritium.jit
def contiguous_hint_copy(x_ptr, y_ptr, idx_ptr, BLOCK: tl.constexpr):
    # loaded indices: nothing known unless the user says so
    base = tl.load(idx_ptr)
    offs = tl.max_contiguous(tl.multiple_of(base + tl.arange(0, BLOCK), 8), 8)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_multiple_of_hints_enable_vectors():
    sig = "*fp16, *fp16, i32"
    hinted = compile_ptx(hinted_copy, sig, {"BLOCK": 1024}, aligned=("x_ptr", "y_ptr"))
    plain = compile_ptx(unhinted_copy, sig, {"BLOCK": 1024}, aligned=("x_ptr", "y_ptr"))
    # 16 f16 elements = 32 bytes: 16-byte accesses of 8 halves (4 words)
    assert widths(hinted, "ld") == {4}, hinted
    assert widths(plain, "ld") == {1}, plain
    hint2 = compile_ptx(contiguous_hint_copy, "*fp32, *fp32, *i32", {"BLOCK": 512}, aligned=("x_ptr", "y_ptr"))
    assert 4 in widths(hint2, "ld"), hint2


# --- across noinline calls ---------------------------------------------------

@tritium.jit(noinline=True)
def scale_block(p, q, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(q + offs, tl.load(p + offs) * 2.0)


@tritium.jit
def two_aligned_sites(x_ptr, y_ptr, BLOCK: tl.constexpr):
    scale_block(x_ptr, y_ptr, BLOCK)
    scale_block(x_ptr + BLOCK, y_ptr + BLOCK, BLOCK)


@tritium.jit
def one_misaligned_site(x_ptr, y_ptr, BLOCK: tl.constexpr):
    scale_block(x_ptr, y_ptr, BLOCK)
    scale_block(x_ptr + 1, y_ptr + 1, BLOCK)


def _callee_ptx(ptx: str) -> str:
    """The body of the non-entry function(s) of `ptx`."""
    parts = re.split(r"\n(?=\.(?:visible )?\.?(?:entry|func)\b|\.func\b)", ptx)
    funcs = [p for p in parts if re.match(r"\.func\b|\.visible \.func\b", p.strip())]
    return "\n".join(funcs)


def _compile_calls(kernel) -> str:
    return compile_ptx(kernel, "*fp32, *fp32", {"BLOCK": 512}, aligned=("x_ptr", "y_ptr"))


def test_callee_argument_facts_join_call_sites():
    both = _callee_ptx(_compile_calls(two_aligned_sites))
    assert both, "expected a device function in the PTX"
    assert widths(both, "ld") == {4}, both
    mixed = _callee_ptx(_compile_calls(one_misaligned_site))
    assert widths(mixed, "ld") == {1}, mixed


# --- layout conversions ------------------------------------------------------

@tritium.jit
def tile_transposed_index(x_ptr, y_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    # aranges expanded both ways, also through elementwise chains and casts
    r = (tl.arange(0, BM) * 2 + 1).to(tl.int64)
    c = tl.arange(0, BN)
    offs = c[None, :] * stride + r[:, None]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + c[None, :].to(tl.float32))


def smem_counts(ptx: str) -> tuple[int, int]:
    return ptx.count("bar.sync"), len(re.findall(r"\bst\.shared", ptx))


ALIGNED = ("x_ptr", "y_ptr", "out_ptr", "in_ptr", "stride", "n_cols", "n_rows", "M", "N")

# (bar.sync, st.shared) in the PTX. Before indices were rematerialized in
# their consumers' layouts (converted through scratch instead) these were:
# tile_copy (3, 2), tile_transposed_index (3, 2), row_sum_2d (5, 6),
# layer_norm_2d (15, 20), softmax (3, 2).
SMEM_CASES = [
    # name, kernel, signature, constexprs, warps, (bar.sync, st.shared)
    ("tile_copy", tile_copy, TILE_SIG, {"BM": 32, "BN": 64}, 4, (0, 0)),
    ("tile_transposed_index", tile_transposed_index, "*fp32, *fp32, i32", {"BM": 32, "BN": 32}, 4, (0, 0)),
    # each warp holds whole rows: the sum needs shuffles only
    ("row_sum_2d", row_sum_2d, TILE_SIG, {"BM": 16, "BN": 128}, 4, (0, 0)),
    # two warps per row: each sum writes one partial per row a thread holds (4),
    # and only the reductions touch shared memory
    ("layer_norm_2d", layer_norm_2d, TILE_SIG, {"BM": 8, "BN": 256}, 4, (3, 8)),
    # max then sum, one partial per warp each
    ("softmax", softmax, "*fp32, *fp32, i32, i32", {"BLOCK": 2048}, 4, (3, 2)),
]


@pytest.mark.parametrize("name,k,sig,cx,warps,expected", SMEM_CASES, ids=[c[0] for c in SMEM_CASES])
def test_shared_memory_traffic(name, k, sig, cx, warps, expected):
    ptx = compile_ptx(k, sig, cx, aligned=ALIGNED, warps=warps)
    assert smem_counts(ptx) == expected, ptx
    if name.startswith("tile"):
        # 2-D pointer tiles: no shared memory at all
        assert "tritium_smem" not in ptx and ".shared" not in ptx, ptx


def test_reduction_results_stay_in_their_slice_layout():
    # with an unknown stride each row spreads over all warps: only the sums'
    # cross-warp partials go through shared memory (one per row a thread
    # holds), not `mean[:, None]` nor the row store of the sum
    rs = compile_ptx(row_sum_2d, TILE_SIG, {"BM": 16, "BN": 128}, aligned=("x_ptr", "out_ptr"))
    assert smem_counts(rs) == (1, 16), rs
    ln = compile_ptx(layer_norm_2d, TILE_SIG, {"BM": 8, "BN": 256}, aligned=("x_ptr", "y_ptr"))
    assert smem_counts(ln) == (3, 16), ln


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name,k,sig,cx,warps,expected", SMEM_CASES, ids=[c[0] for c in SMEM_CASES])
def test_ptxas_accepts(name, k, sig, cx, warps, expected, arch, tmp_path):
    ptxas(compile_ptx(k, sig, cx, aligned=("x_ptr", "y_ptr"), warps=warps, arch=arch), arch, tmp_path)


@pytest.mark.parametrize("arch", ARCHS)
def test_ptxas_accepts_loops(arch, tmp_path):
    ptxas(compile_ptx(ln_columns_loop, LOOP_SIG, {"BLOCK": 1024}, aligned=("X", "Y", "W", "stride", "N"), arch=arch),
          arch, tmp_path)
    ptxas(compile_ptx(loop_carried_pointer, "*fp32, *fp32, i32", {"BLOCK": 512}, aligned=("X", "Y"), arch=arch),
          arch, tmp_path)


def test_layer_norm_tutorial_loops_are_vectorised():
    # the tutorial's three column loops: before AxisInfo looked inside loops
    # every access there was one element wide
    from kernels.layer_norm import layer_norm_fwd_kernel
    sig = "*fp16, *fp16, *fp16, *fp16, *fp32, *fp32, i32, i32, fp32"
    ptx = compile_ptx(layer_norm_fwd_kernel, sig, {"BLOCK_SIZE": 1024},
                      aligned=("X", "Y", "W", "B", "Mean", "Rstd", "row_stride", "N"), warps=4)
    # 8 halves = 16 bytes per access (4 words); Mean/Rstd are scalar stores
    assert widths(ptx, "ld") == {4}, ptx
    assert widths(ptx, "st") == {1, 4}, ptx
