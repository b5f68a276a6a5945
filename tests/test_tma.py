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
