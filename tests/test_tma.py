"""TMA on sm_90a (no GPU needed): host TensorDescriptor accesses compile to
`cp.async.bulk.tensor` copies through a tensor map passed as a 128-byte
`__grid_constant__` parameter, loads waited on with mbarriers; the compiled
kernel lists the maps the launcher must encode (descriptor, box, swizzle);
other targets and accesses TMA cannot do keep the ordinary path. The GPU
half is tests/gpu/test_tma_gpu.py; the map checks are Rust unit tests
(crates/tritium-runtime/src/tensormap.rs)."""
from __future__ import annotations

import re
import subprocess

import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime.compiled import _check_metadata

from test_codegen_ptx import PTXAS, ptxas


@pytest.fixture(autouse=True)
def _tma_on(monkeypatch):
    # these tests are about TMA, whatever the default (TRITIUM_TMA)
    monkeypatch.setenv("TRITIUM_TMA", "1")


@triton.jit
def tma_copy(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = src.load([pm * BM, pn * BN])
    dst.store([pm * BM - 3, pn * BN + 16], v * 2)


@triton.jit
def tma_shifted(src, dst, DN: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = src.load([pm * BM, pn * BN + DN])
    dst.store([pm * BM - 3, pn * BN], v)


@triton.jit
def matmul_desc(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                B_T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=3):
        a = a_desc.load([pid_m * BM, k * BK])
        if B_T:
            b = b_desc.load([pid_n * BN, k * BK]).T
        else:
            b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


def _compile(kernel, sig: str, target: str = "cuda:90", **const):
    return triton.compile(kernel, signature=sig, constexprs=const, target=target)


# (dtype, block) -> (box, swizzle bytes, copies per block)
BOXES = [
    ("fp16", [64, 64], [64, 64], 128, 1),
    ("bf16", [64, 128], [64, 64], 128, 2),
    ("fp32", [16, 32], [16, 32], 128, 1),
    ("fp32", [32, 16], [32, 16], 64, 1),
    ("fp16", [32, 16], [32, 16], 32, 1),
    ("fp16", [32, 8], [32, 8], 0, 1),
    ("fp8e5", [16, 64], [16, 64], 64, 1),
]


@pytest.mark.parametrize("dtype,block,box,swizzle,copies", BOXES)
def test_descriptor_copies_use_tma_on_sm90(dtype, block, box, swizzle, copies, tmp_path):
    t = f"tensordesc<{dtype}[{block[0]}, {block[1]}]>"
    ck = _compile(tma_copy, f"src={t},dst={t}", BM=block[0], BN=block[1])
    # the second descriptor's base is argument 5 (base, 2 shapes, 1 stride, the padding flag)
    assert ck.metadata["tensormaps"] == [[0, box, swizzle], [5, box, swizzle]]
    ptx = ck.asm["ptx"]
    assert len(re.findall(r"\.param \.align 128 \.b8 \w+\[128\]", ptx)) == 2
    assert ptx.count("mbarrier.init.shared::cta.b64") == 1
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == copies
    nbytes = block[0] * block[1] * (1 if dtype == "fp8e5" else 2 if dtype in ("fp16", "bf16") else 4)
    assert f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r" in ptx and f"], {nbytes};" in ptx
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == copies
    assert "cp.async.bulk.commit_group" in ptx and "cp.async.bulk.wait_group 0" in ptx
    # no ordinary global access is left
    assert not re.search(r"\bld\.global|\bst\.global", ptx)
    ptxas(ptx, "sm_90a", tmp_path)


# (dtype, column shift in elements, claimed by TMA); blocks of one box each
SHIFTS = [("fp16", 8, True), ("fp16", 7, False), ("fp16", 4, False), ("fp32", 4, True), ("fp32", 2, False),
          ("fp8e5", 16, True), ("fp8e5", 8, False)]
ONE_BOX = {"fp16": ([16, 64], 128), "fp32": ([16, 32], 128), "fp8e5": ([16, 64], 64)}


@pytest.mark.parametrize("dtype,dn,tma", SHIFTS)
def test_only_16_byte_aligned_columns_use_tma(dtype, dn, tma, tmp_path):
    # a box whose first column is not on a 16-byte boundary faults the H100
    # (an illegal instruction): such a load keeps the masked path, while the
    # kernel's store (column pn * BN) still goes through TMA
    block, swizzle = ONE_BOX[dtype]
    t = f"tensordesc<{dtype}[{block[0]}, {block[1]}]>"
    ck = _compile(tma_shifted, f"src={t},dst={t}", DN=dn, BM=block[0], BN=block[1])
    ptx = ck.asm["ptx"]
    store_map = [5, block, swizzle]
    assert ck.metadata["tensormaps"] == ([[0, block, swizzle], store_map] if tma else [store_map])
    assert ("mbarrier.try_wait" in ptx) == tma
    assert (re.search(r"\bld\.global", ptx) is None) == tma
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 1
    ptxas(ptx, "sm_90a", tmp_path)


def test_tma_can_be_turned_off(monkeypatch):
    # TRITIUM_TMA=0: descriptors take the masked path of every other target
    t = "tensordesc<fp16[64, 64]>"
    monkeypatch.setenv("TRITIUM_TMA", "0")
    ck = _compile(tma_copy, f"src={t},dst={t}", BM=64, BN=64)
    assert ck.metadata["tensormaps"] == []
    assert "cp.async.bulk" not in ck.asm["ptx"] and "ld.global" in ck.asm["ptx"]
    monkeypatch.setenv("TRITIUM_TMA", "1")
    assert len(_compile(tma_copy, f"src={t},dst={t}", BM=64, BN=64).metadata["tensormaps"]) == 2


def test_other_targets_keep_ordinary_accesses():
    t = "tensordesc<fp16[64, 64]>"
    ck = _compile(tma_copy, f"src={t},dst={t}", target="cuda:80", BM=64, BN=64)
    assert ck.metadata["tensormaps"] == []
    assert "cp.async.bulk" not in ck.asm["ptx"] and "mbarrier" not in ck.asm["ptx"]
    assert "ld.global" in ck.asm["ptx"] and "st.global" in ck.asm["ptx"]


@triton.jit
def _gather_and_3d(g, d3, out_ptr):
    rows = tl.arange(0, 8)
    x = g.gather(rows, 0)
    y = d3.load([0, 0, 0])
    tl.store(out_ptr + tl.arange(0, 64), tl.sum(x, 0) + tl.sum(tl.sum(y, 0), 0))


def test_accesses_tma_cannot_do_stay_ordinary():
    # a gather takes one index per row, and the NVMMA layout the box lands in is 2-D
    ck = _compile(_gather_and_3d, "g=tensordesc<fp32[1, 64]>,d3=tensordesc<fp32[2, 4, 64]>,out_ptr=*fp32")
    assert ck.metadata["tensormaps"] == []
    assert "cp.async.bulk" not in ck.asm["ptx"]


@pytest.mark.parametrize("b_t", [False, True])
def test_matmul_through_descriptors_compiles_without_spills(b_t, tmp_path):
    b = "tensordesc<fp16[128, 64]>" if b_t else "tensordesc<fp16[64, 128]>"
    ck = _compile(matmul_desc, f"a_desc=tensordesc<fp16[128, 64]>,b_desc={b},c_desc=tensordesc<fp16[128, 128]>,K=i32",
                  BM=128, BN=128, BK=64, B_T=b_t)
    assert [m[0] for m in ck.metadata["tensormaps"]] == [0, 5, 10]
    ptx = ck.asm["ptx"]
    assert "wgmma.mma_async" in ptx and "mbarrier.try_wait.parity" in ptx
    # the K loop is pipelined: its three stages' barriers are initialised
    # once before it (in one asm statement), each iteration waits on one
    # barrier and issues one armed copy per operand (B's 256-byte rows are
    # two boxes when not transposed), nothing goes through registers
    assert ptx.count("mbarrier.init.shared::cta.b64") == 3
    assert ptx.count("mbarrier.try_wait.parity") == 1
    assert ptx.count("mbarrier.inval.shared::cta.b64") == 3
    # prologue (2 stages) and loop, one expect_tx per operand each
    assert ptx.count("mbarrier.arrive.expect_tx") == 3 * 2
    per_stage = 1 + (1 if b_t else 2)
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == 3 * per_stage
    assert "ld.shared" not in ptx.split("mbarrier.inval")[0]
    # the C tile (256-byte rows) is stored as two 64-column boxes
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 2
    assert ck.metadata["spills"] == 0 or ck.metadata["ptxas"] is None
    ptxas(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("stages", [2, 4])
def test_descriptor_matmul_stages_size_the_ring(stages, tmp_path):
    # tl.range(num_stages=) sets the ring: that many barriers, stages - 1
    # prologue copies per operand, one wait per iteration
    ck = triton.compile(matmul_desc, signature="a_desc=tensordesc<fp16[128, 64]>,b_desc=tensordesc<fp16[128, 64]>,"
                        "c_desc=tensordesc<fp16[128, 128]>,K=i32", target="cuda:90", num_stages=stages,
                        constexprs=dict(BM=128, BN=128, BK=64, B_T=True))
    ptx = ck.asm["ptx"]
    assert ptx.count("mbarrier.init.shared::cta.b64") == 3     # the kernel's tl.range says 3
    ptx_s = _compile_staged(stages)
    assert ptx_s.count("mbarrier.init.shared::cta.b64") == stages
    assert ptx_s.count("mbarrier.arrive.expect_tx") == 2 * stages    # (stages - 1) prologue + 1 loop, per operand
    assert ptx_s.count("mbarrier.try_wait.parity") == 1
    ptxas(ptx_s, "sm_90a", tmp_path)


@triton.jit
def matmul_desc_staged(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       STAGES: tl.constexpr):
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES):
        a = a_desc.load([tl.program_id(0) * BM, k * BK])
        b = b_desc.load([tl.program_id(1) * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([tl.program_id(0) * BM, tl.program_id(1) * BN], acc.to(c_desc.dtype))


def _compile_staged(stages: int) -> str:
    t = "tensordesc<fp16[128, 64]>"
    return _compile(matmul_desc_staged, f"a_desc={t},b_desc={t},c_desc=tensordesc<fp16[128, 128]>,K=i32",
                    BM=128, BN=128, BK=64, STAGES=stages).asm["ptx"]


def test_tutorial_09_tile_pipelines_without_spills_or_serialized_wgmma(tmp_path):
    # benches/gpu/dot_bench.py's TMA case: 128x256x64, 8 warps, 3 stages, B read transposed
    ck = triton.compile(matmul_desc, signature="a_desc=tensordesc<fp16[128, 64]>,b_desc=tensordesc<fp16[256, 64]>,"
                        "c_desc=tensordesc<fp16[128, 256]>,K=i32", target="cuda:90", num_warps=8, num_stages=3,
                        constexprs=dict(BM=128, BN=256, BK=64, B_T=True))
    ptx = ck.asm["ptx"]
    assert ptx.count("mbarrier.try_wait.parity") == 1 and ptx.count("mbarrier.init.shared::cta.b64") == 3
    if PTXAS is None:
        pytest.skip("ptxas not found")
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    r = subprocess.run([PTXAS, "-v", "--gpu-name", "sm_90a", str(src), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "0 bytes spill stores" in r.stderr
    # ptxas serializes wgmma (C7515) when other instructions touch the accumulators in flight
    assert "C7515" not in r.stderr


@triton.jit
def attention_desc(q_desc, k_desc, v_desc, o_desc, n_ctx, scale, D: tl.constexpr, BM: tl.constexpr,
                   BN: tl.constexpr, STAGES: tl.constexpr, V_T: tl.constexpr):
    # flash attention's forward shape: q once, then K (read transposed) and V
    # tiles through descriptor loads in a pipelined loop, two dots each
    row0 = tl.program_id(1) * n_ctx
    q = q_desc.load([row0 + tl.program_id(0) * BM, 0])
    m = tl.full([BM], float("-inf"), tl.float32)
    l = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for n in tl.range(0, n_ctx, BN, num_stages=STAGES):
        s = tl.dot(q, k_desc.load([row0 + n, 0]).T) * scale
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        if V_T:
            v = v_desc.load([0, row0 + n]).T
        else:
            v = v_desc.load([row0 + n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m = m_new
    o_desc.store([row0 + tl.program_id(0) * BM, 0], (acc / l[:, None]).to(o_desc.dtype))


def wgmma_b_steps(ptx: str) -> list:
    """(B's transpose immediate, offsets of B's descriptors from the first in
    16-byte units) per wgmma B tile base, for 16-bit operands: the descriptors
    are a base register plus constants (`or`/`add`), one per k-step."""
    defs = {m[1]: (m[2], int(m[3])) for m in re.finditer(r"(?:or|add)\.[bs]64\s+(%rd\d+), (%rd\d+), (\d+);", ptx)}
    steps: dict = {}
    for m in re.finditer(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.b?f16\.b?f16 \{[^}]*\}, "
                         r"(?:\{[^}]*\}|%rd\d+), (%rd\d+), %p\d+, ([^;]*);", ptx):
        reg, off = m[1], 0
        while reg in defs:
            reg, off = defs[reg][0], off + defs[reg][1]
        steps.setdefault((reg, int(m[2].split(",")[-1])), set()).add(off)
    return sorted((t, [o - min(v) for o in sorted(v)]) for (_, t), v in steps.items())


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("v_t", [False, True])
def test_attention_through_descriptors_reads_k_transposed(D, v_t, tmp_path):
    # tutorial 06's forward (BLOCK_M 128, BLOCK_N 64, 2 stages): K's [64, D]
    # stages are read transposed (K-major B: k-steps 32 bytes apart in each
    # 128-byte row, a second 64-column block 64 rows x 128 bytes = 512 units
    # on), V's plain (MN-major: k-steps 16 rows = 128 units apart) or, as
    # [D, 64] boxes, transposed too. With D = 64 a transposed stage has the
    # stage's own dims, and the dot read it untransposed (K's steps were
    # 16 rows apart: a silent wrong answer on the H100)
    vb = f"[{D}, 64]" if v_t else f"[64, {D}]"
    # n_ctx divisible by 16 (specialized so at launch): V_T's column offsets are 16-byte aligned
    ck = triton.compile(attention_desc, signature=f"q_desc=tensordesc<fp16[128, {D}]>,k_desc=tensordesc<fp16[64, {D}]>,"
                        f"v_desc=tensordesc<fp16{vb}>,o_desc=tensordesc<fp16[128, {D}]>,n_ctx=i32,scale=fp32",
                        constexprs=dict(D=D, BM=128, BN=64, STAGES=2, V_T=v_t), attrs={"divisibility": ["n_ctx"]},
                        target="cuda:90")
    ptx = ck.asm["ptx"]
    assert ptx.count("tma_ring_wait:") == 1    # K and V staged by TMA in one ring
    k_steps = (0, [0, 2, 4, 6] if D == 64 else [0, 2, 4, 6, 512, 514, 516, 518])
    v_steps = (0, [0, 2, 4, 6]) if v_t else (1, [0, 128, 256, 384])
    assert wgmma_b_steps(ptx) == sorted([k_steps, v_steps])
    ptxas(ptx, "sm_90a", tmp_path)


def test_matmul_through_descriptors_without_tma_has_no_barriers(monkeypatch):
    monkeypatch.setenv("TRITIUM_TMA", "0")
    ck = _compile(matmul_desc, "a_desc=tensordesc<fp16[128, 64]>,b_desc=tensordesc<fp16[64, 128]>,"
                  "c_desc=tensordesc<fp16[128, 128]>,K=i32", BM=128, BN=128, BK=64, B_T=False)
    ptx = ck.asm["ptx"]
    assert "mbarrier" not in ptx and "cp.async.bulk" not in ptx
    assert "wgmma.mma_async" in ptx


def test_dump_stages_show_the_claim():
    t = "tensordesc<fp16[64, 64]>"
    ck = triton.compile(tma_copy, signature=f"src={t},dst={t}", constexprs={"BM": 64, "BN": 64}, target="cuda:90",
                        dump_stages=True)
    stages = dict(ck.asm["stages"])
    assert '"tma_load"' in stages["claim_tma"] and '"tma_store"' in stages["claim_tma"]
    assert "tensormap = true" in stages["claim_tma"]


def test_metadata_tensormaps_are_checked():
    meta = {"name": "k", "num_warps": 4, "params": [["a", "tensordesc<fp16[64, 64]>"]], "dynamic_shared": 0,
            "tensormaps": [[0, [64, 64], 128]]}
    _check_metadata(meta)
    for bad in ([[0, [64, 64]]], [["0", [64, 64], 128]], [[0, [64.0, 64], 128]], [[0, 64, 128]]):
        with pytest.raises(ValueError, match="bad tensor map entry"):
            _check_metadata({**meta, "tensormaps": bad})


# -- device-side descriptors (tl.make_tensor_descriptor) ----------------------
# TRITIUM_TMA_DEVICE (on by default since tests/gpu/test_tma_gpu.py's device
# tests passed on an H100; =0 turns it off): the kernel builds each tensor map in
# 128 bytes of the global scratch set_allocator provides, per program.

@pytest.fixture
def _device_tma(monkeypatch):
    monkeypatch.setenv("TRITIUM_TMA_DEVICE", "1")


@triton.jit
def device_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr, DN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PAD)
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd.store([pm * BM, pn * BN], xd.load([pm * BM, pn * BN + DN]) * 2)


# the base pointers 16-byte aligned, the row stride N a multiple of 16
DIVISIBLE = {"divisibility": ["x_ptr", "y_ptr", "N"]}
# tensormap.replace's elemtype codes (the PTX ISA's numbering)
ELEMTYPE = {"fp16": 6, "bf16": 10, "fp32": 7, "fp8e5": 0}
SWIZZLE_MODE = {0: 0, 32: 1, 64: 2, 128: 3}


def _compile_device(dtype: str, block, pad="zero", dn=0, attrs=DIVISIBLE, target="cuda:90"):
    return triton.compile(device_copy, signature=f"x_ptr=*{dtype},y_ptr=*{dtype},M=i32,N=i32", target=target,
                          constexprs=dict(BM=block[0], BN=block[1], PAD=pad, DN=dn), attrs=attrs)


@pytest.mark.parametrize("dtype,block,box,swizzle,copies", BOXES)
@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_device_descriptors_build_tensor_maps_on_sm90(_device_tma, dtype, block, box, swizzle, copies, pad, tmp_path):
    if pad == "nan" and dtype == "fp8e5":
        pytest.skip("NaN padding is for 16- and 32-bit floats")
    ck = _compile_device(dtype, block, pad)
    # no host maps: two maps built by the kernel, 128 bytes each per program
    assert ck.metadata["tensormaps"] == [] and ck.metadata["global_scratch"] == 256
    ptx = ck.asm["ptx"]
    assert ptx.count("tensormap.replace.tile.global_address.global.b1024.b64") == 2
    assert ptx.count("tensormap.replace.tile.rank.global.b1024.b32 [g], 1;") == 2
    assert ptx.count(f"tensormap.replace.tile.box_dim.global.b1024.b32 [g], 0, {box[1]};") == 2
    assert ptx.count(f"tensormap.replace.tile.box_dim.global.b1024.b32 [g], 1, {box[0]};") == 2
    assert ptx.count(f"tensormap.replace.tile.elemtype.global.b1024.b32 [g], {ELEMTYPE[dtype]};") == 2
    assert ptx.count(f"tensormap.replace.tile.swizzle_mode.global.b1024.b32 [g], {SWIZZLE_MODE[swizzle]};") == 2
    # the load's map fills with NaN when asked, the store's never
    fills = re.findall(r"tensormap\.replace\.tile\.fill_mode\.global\.b1024\.b32 \[g\], (\d);", ptx)
    assert fills == (["1", "0"] if pad == "nan" else ["0", "0"])
    assert ptx.count("fence.proxy.tensormap::generic.acquire.gpu") == 2
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == copies
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == copies
    # the only global accesses left zero the maps
    assert not re.search(r"\bld\.global", ptx)
    assert set(re.findall(r"\bst\.global\.\S+", ptx)) == {"st.global.v2.b64"}
    ptxas(ptx, "sm_90a", tmp_path)


def test_device_descriptors_tma_cannot_prove_keep_the_masked_path(_device_tma):
    # a row stride of unknown divisibility: no map (a bad one faults the kernel)
    ck = _compile_device("fp16", [64, 64], attrs={"divisibility": ["x_ptr", "y_ptr"]})
    assert ck.metadata["global_scratch"] == 0
    assert "tensormap" not in ck.asm["ptx"] and "ld.global" in ck.asm["ptx"]
    # a base not known 16-byte aligned: that descriptor alone keeps the masked path
    ck = _compile_device("fp16", [64, 64], attrs={"divisibility": ["y_ptr", "N"]})
    assert ck.metadata["global_scratch"] == 128 and "ld.global" in ck.asm["ptx"]
    # a column 7 elements in (14 bytes): the load is masked, the store still TMA
    ck = _compile_device("fp16", [64, 64], dn=7)
    assert ck.metadata["global_scratch"] == 128
    assert "ld.global" in ck.asm["ptx"] and "cp.async.bulk.tensor.2d.global.shared::cta" in ck.asm["ptx"]
    # a column 8 elements in (16 bytes) is a box's start
    assert _compile_device("fp16", [64, 64], dn=8).metadata["global_scratch"] == 256


def test_device_descriptor_tma_follows_its_switches(monkeypatch):
    # on by default (tritium_codegen::TMA_DEVICE_BY_DEFAULT), =0 turns it off;
    # TRITIUM_TMA=0 turns every TMA off
    monkeypatch.delenv("TRITIUM_TMA_DEVICE", raising=False)
    assert _compile_device("fp16", [64, 64]).metadata["global_scratch"] == 256
    monkeypatch.setenv("TRITIUM_TMA_DEVICE", "0")
    assert _compile_device("fp16", [64, 64]).metadata["global_scratch"] == 0
    monkeypatch.setenv("TRITIUM_TMA_DEVICE", "1")
    assert _compile_device("fp16", [64, 64]).metadata["global_scratch"] == 256
    monkeypatch.setenv("TRITIUM_TMA", "0")
    ck = _compile_device("fp16", [64, 64])
    assert ck.metadata["global_scratch"] == 0 and "cp.async.bulk" not in ck.asm["ptx"]


def test_other_targets_keep_device_descriptors_masked(_device_tma):
    ck = _compile_device("fp16", [64, 64], target="cuda:80")
    assert ck.metadata["global_scratch"] == 0 and "tensormap" not in ck.asm["ptx"]


@triton.jit
def persistent_matmul_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                                  BK: tl.constexpr, NUM_SMS: tl.constexpr):
    # tutorial 09's persistent kernel through device-side descriptors: each
    # program walks tiles start, start + NUM_SMS, ...; B is [N, K]
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS):
        off_m = (tile // num_pid_n) * BM
        off_n = (tile % num_pid_n) * BN
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(tl.cdiv(K, BK)):
            a = a_desc.load([off_m, k * BK])
            b = b_desc.load([off_n, k * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def test_persistent_matmul_with_device_descriptors_pipelines(_device_tma, tmp_path):
    ck = triton.compile(persistent_matmul_device_desc, signature="a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp16,M=i32,N=i32,K=i32",
                        target="cuda:90", num_warps=8, num_stages=3,
                        constexprs=dict(BM=128, BN=128, BK=64, NUM_SMS=132),
                        attrs={"divisibility": ["a_ptr", "b_ptr", "c_ptr", "N", "K"]})
    assert ck.metadata["global_scratch"] == 3 * 128
    ptx = ck.asm["ptx"]
    # three maps built once, before the tile loop
    assert ptx.count("fence.proxy.tensormap::generic.acquire.gpu") == 3
    assert ptx.index("fence.proxy.tensormap::generic.acquire.gpu") < ptx.index("wgmma.mma_async")
    # the K loop is pipelined through a ring of TMA stages
    assert "wgmma.mma_async" in ptx and ptx.count("mbarrier.try_wait.parity") == 1
    assert ptx.count("mbarrier.init.shared::cta.b64") == 3
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 2
    assert not re.search(r"\bld\.global", ptx)
    assert ck.metadata["spills"] == 0 or ck.metadata["ptxas"] is None
    ptxas(ptx, "sm_90a", tmp_path)


def test_metadata_global_scratch_is_checked():
    meta = {"name": "k", "num_warps": 4, "params": [["a", "ptr"]], "dynamic_shared": 0, "global_scratch": 256}
    _check_metadata(meta)
    for bad in (-128, 1.5, "256", None):
        with pytest.raises(ValueError, match="bad global_scratch"):
            _check_metadata({**meta, "global_scratch": bad})
