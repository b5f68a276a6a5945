"""The software pipeliner without a GPU: matmul loops compiled for sm_80,
sm_89 and sm_90a through ptxas, with the copies, commits and waits each
stage count must give (`tl.range(num_stages=)` over the launch option),
and loops it must leave alone."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from ptx_loops import loop_bodies
from tritium.compile import compile as compile_kernel
from tritium.runtime import driver

if driver.ptxas_path() is None:
    pytest.skip("ptxas not found (pip install nvidia-cuda-nvcc-cu12)", allow_module_level=True)


@tritium.jit
def loop_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, RANGE_STAGES: tl.constexpr,
                USE_AFTER: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kb in tl.range(0, tl.cdiv(K, BK), num_stages=RANGE_STAGES):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - kb * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - kb * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    if USE_AFTER:
        acc += tl.load(a_ptrs).to(tl.float32).sum()
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "sam": "i32", "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32"}
ALIGNED = {"divisibility": ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "sam", "sbk", "scm"]}


def _compile(arch, launch_stages=3, range_stages=None, use_after=False, tile=(128, 128, 64), warps=4):
    bm, bn, bk = tile
    consts = {"BM": bm, "BN": bn, "BK": bk, "RANGE_STAGES": range_stages, "USE_AFTER": use_after,
              "sak": 1, "sbn": 1, "scn": 1}
    return compile_kernel(loop_matmul, signature=SIG, constexprs=consts, target=arch, num_warps=warps,
                          num_stages=launch_stages, attrs=ALIGNED)


def _counts(ptx):
    waits = [int(n) for n in re.findall(r"cp\.async\.wait_group (\d+)", ptx)]
    return ptx.count("cp.async.cg.shared.global"), ptx.count("cp.async.commit_group"), waits


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:89", "cuda:90a"])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_stages_give_copies_commits_and_waits(arch, stages):
    k = _compile(arch, launch_stages=stages)
    copies, commits, waits = _counts(k.asm["ptx"])
    # 32 KiB a stage; the budget leaves 32 KiB of the arch's shared memory free
    stages = min(stages, {"cuda:80": 4, "cuda:89": 2, "cuda:90a": 6}[arch])
    # the same 16-byte copies for each stage the prologue fills and for the loop's one
    per_stage, _, _ = _counts(_compile(arch, launch_stages=2).asm["ptx"])
    assert per_stage > 0 and copies * 2 == per_stage * stages, (copies, per_stage, stages)
    assert commits == stages                # one per prologue stage, one in the loop
    assert sorted(waits) == sorted([stages - 2, 0]), waits
    if arch == "cuda:90a":
        assert k.n_spills == 0


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_commit_per_load_gives_each_operand_its_group(monkeypatch, arch, stages):
    # TRITIUM_DEBUG_COMMIT_PER_LOAD=1 (an issue-16 experiment): A's copies,
    # commit, B's copies, commit, a stage at a time; the wait leaves
    # (stages - 2) stages of two groups in flight, so it waits for the same copies
    default_copies, _, _ = _counts(_compile(arch, launch_stages=stages).asm["ptx"])
    monkeypatch.setenv("TRITIUM_DEBUG_COMMIT_PER_LOAD", "1")
    ptx = _compile(arch, launch_stages=stages).asm["ptx"]
    copies, commits, waits = _counts(ptx)
    assert copies == default_copies
    assert commits == 2 * stages
    assert sorted(waits) == sorted([2 * (stages - 2), 0]), waits
    [body] = [b for b in loop_bodies(ptx) if "cp.async.cg.shared.global" in b]
    a_part, b_part, rest = body.split("cp.async.commit_group;")
    # 128x64 and 64x128 fp16 tiles: the same number of 16-byte copies each
    n = a_part.count("cp.async.cg.shared.global")
    assert n > 0 and b_part.count("cp.async.cg.shared.global") == n and "cp.async.cg" not in rest
    assert a_part.index("cp.async.wait_group") < a_part.index("cp.async.cg.shared.global")


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
def test_one_stage_is_not_pipelined(arch):
    copies, commits, waits = _counts(_compile(arch, launch_stages=1).asm["ptx"])
    assert (copies, commits, waits) == (0, 0, [])


def test_range_num_stages_overrides_the_launch_option():
    copies, commits, _ = _counts(_compile("cuda:90a", launch_stages=1, range_stages=4).asm["ptx"])
    assert commits == 4
    copies, commits, _ = _counts(_compile("cuda:90a", launch_stages=4, range_stages=1).asm["ptx"])
    assert commits == 0


def test_pointers_read_after_the_loop_keep_it_unpipelined():
    copies, commits, _ = _counts(_compile("cuda:90a", use_after=True).asm["ptx"])
    assert commits == 0


def test_stages_shrink_to_fit_shared_memory():
    # 128x256x64 f16 takes 48 KiB a stage: eight would not fit 227 KiB, four do
    k = _compile("cuda:90a", launch_stages=8, tile=(128, 256, 64), warps=8)
    _, commits, _ = _counts(k.asm["ptx"])
    assert commits == 4
    assert k.metadata.shared <= 227 * 1024


def test_bad_range_num_stages_is_a_compile_error():
    with pytest.raises(tritium.CompilationError, match="num_stages"):
        _compile("cuda:90a", range_stages=-1)


@tritium.jit
def transposed_b_loop(q_ptr, k_ptr, o_ptr, N, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm, rn, rd = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for start in tl.range(0, N, BN, num_stages=3):
        # K^T: contiguous along D, which is dim 0 of the [D, BN] tile
        k = tl.load(k_ptr + (start + rn)[None, :] * D + rd[:, None])
        acc += tl.dot(q, k)
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
def test_loads_contiguous_along_dim_0_are_wide_and_asynchronous(arch):
    sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "o_ptr": "*fp32", "N": "i32"}
    k = compile_kernel(transposed_b_loop, signature=sig, constexprs={"D": 64, "BM": 64, "BN": 64}, target=arch,
                       num_warps=4, attrs={"divisibility": ["q_ptr", "k_ptr", "o_ptr", "N"]})
    ptx = k.asm["ptx"]
    copies, commits, _ = _counts(ptx)
    assert commits == 3 and copies > 0
    # no element-wise 2-byte global loads: the K^T tile moves in 16-byte chunks
    assert not re.search(r"ld\.global(\.\w+)*\.[bu]16", ptx)


@pytest.mark.parametrize("stages", [2, 3])
def test_each_element_is_copied_by_one_thread(stages):
    # a 128x64 A tile beside a 128x256 accumulator: A's copies are sized for
    # A, not for the canonical layout of the accumulator (which would have
    # four threads copy each chunk)
    bm, bn, bk, warps = 128, 256, 64, 8
    k = _compile("cuda:90a", launch_stages=stages, tile=(bm, bn, bk), warps=warps)
    copies, _, _ = _counts(k.asm["ptx"])
    per_stage = (bm * bk + bk * bn) * 2 // 16 // (32 * warps)
    assert copies == per_stage * stages, (copies, per_stage)


def test_wgmma_loop_dot_runs_on_into_the_next_iteration():
    ptx = _compile("cuda:90a", tile=(128, 256, 64), warps=8).asm["ptx"]
    [body] = [b for b in loop_bodies(ptx) if "wgmma.mma_async" in b]
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", body)
    assert waits == ["1"]                       # the dot leaves itself in flight
    # the copies refill the stage the previous iteration's dot read: only after it waited
    assert body.index("wgmma.wait_group") < body.index("cp.async.cg.shared.global")
    after = ptx[ptx.index(body) + len(body):]
    assert re.search(r"wgmma\.wait_group\.sync\.aligned 0;", after)   # dot_wait after the loop


@tritium.jit
def scaled_a_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kb in tl.range(0, K // BK, num_stages=3):
        a = tl.load(a_ptr + rm[:, None] * K + (kb * BK + rk)[None, :])
        b = tl.load(b_ptr + (kb * BK + rk)[:, None] * BN + rn[None, :])
        # A is computed in the loop and staged by a conversion whose buffer
        # the next iteration rewrites: that dot must finish in its iteration
        acc = tl.dot(a * 2.0, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def test_dot_of_an_operand_made_in_the_loop_waits_for_itself():
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}
    k = compile_kernel(scaled_a_loop, signature=sig, constexprs={"BM": 64, "BN": 64, "BK": 64}, target="cuda:90a",
                       num_warps=4, attrs={"divisibility": ["a_ptr", "b_ptr", "c_ptr", "K"]})
    [body] = [b for b in loop_bodies(k.asm["ptx"]) if "wgmma.mma_async" in b]
    assert re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", body) == ["0"]
