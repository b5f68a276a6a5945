"""What one iteration of a pipelined matmul K loop costs, read from the PTX
(no GPU): the integer and predicate work beside the copies and the
tensor-core instructions, bounded by what Triton 3.6 emits for the same
kernel at the same config, and the pieces that make it so — stage indices
carried by the loop (no division), one wgmma descriptor per operand, copies
addressed from one base, K-tail masks tested once per block axis info
proves constant, and the masks costing no more than they cost Triton."""
from __future__ import annotations

import re

import pytest

from kernels.matmul import offset_matmul_kernel, wrapped_matmul_kernel
from ptx_loops import instructions, integer_work, loop_bodies
import tritium as triton
import tritium.language as tl
from tritium.compile import compile as compile_kernel
from tritium.runtime import driver

if driver.ptxas_path() is None:
    pytest.skip("ptxas not found (pip install nvidia-cuda-nvcc-cu12)", allow_module_level=True)


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
       "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32"}
# what the launcher's specialization gives 4096^3 row-major fp16 operands
ALIGNED = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"]


def _loop(kernel, arch="cuda:90a", tile=(128, 128, 64, 4), stages=3, aligned=ALIGNED):
    bm, bn, bk, warps = tile
    k = compile_kernel(kernel, signature=SIG, target=arch, num_warps=warps, num_stages=stages,
                       constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "stride_ak": 1,
                                   "stride_bn": 1, "stride_cn": 1},
                       attrs={"divisibility": aligned})
    [body] = [b for b in loop_bodies(k.asm["ptx"]) if "cp.async.cg" in b]
    return body


# Triton 3.6's integer, predicate and move instructions per iteration of the
# same kernels (its PTX for sm_90a, counted by tests/ptx_loops.integer_work);
# before this bound tritium's offset 128x128x64 loop ran 161
TRITON_INTEGER_WORK = {
    (offset_matmul_kernel, (128, 128, 64, 4)): 103,
    (offset_matmul_kernel, (128, 256, 64, 8)): 99,
    (wrapped_matmul_kernel, (128, 256, 64, 8)): 84,
}


@pytest.mark.parametrize("kernel,tile", list(TRITON_INTEGER_WORK),
                         ids=["offset-128x128x64-w4", "offset-128x256x64-w8", "advanced-128x256x64-w8"])
def test_loop_integer_work_is_within_5_percent_of_tritons(kernel, tile):
    body = _loop(kernel, tile=tile)
    work = integer_work(body)
    assert work <= TRITON_INTEGER_WORK[(kernel, tile)] * 1.05, (work, instructions(body))


@triton.jit
def unmasked_offset_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                           stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr):
    # offset_matmul_kernel without its K masks (a grid of one tile row: the
    # loop is all that is compared)
    rm = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k0 + rk)[None, :] * stride_ak)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * stride_bk + rn[None, :] * stride_bn)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16))


def test_k_masks_cost_the_loop_no_more_than_tritons():
    # the autotune bench's matmul (128x128x64 w4 s3): Triton 3.6's loop runs
    # 103 integer instructions with the K masks and 82 without them; ours may
    # add no more for the masks. Each copy stays one 16-byte cp.async that
    # zero-fills through its source size (no separate zero stores)
    masked, unmasked = _loop(offset_matmul_kernel), _loop(unmasked_offset_matmul)
    assert integer_work(masked) - integer_work(unmasked) <= 103 - 82, (integer_work(masked), integer_work(unmasked))
    copies = re.findall(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16(, %r\d+)?;", masked)
    assert len(copies) == 16 and all(copies), copies
    assert "st.shared" not in masked


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
@pytest.mark.parametrize("kernel", [offset_matmul_kernel, wrapped_matmul_kernel])
def test_stage_indices_take_no_division(arch, kernel):
    # the stages wrap with a compare and select: no rem, div, or the
    # multiply-high of a division by a constant
    ops = instructions(_loop(kernel, arch=arch))
    assert not [op for op in ops if op.split(".")[0] in ("rem", "div") or op.startswith("mul.hi")], ops


def test_each_wgmma_operand_has_one_descriptor_per_iteration():
    # a base descriptor per operand (its stage), each instruction a 64-bit add
    body = _loop(offset_matmul_kernel)
    assert body.count("wgmma.mma_async") == 8
    assert len(re.findall(r"cvt\.u64\.u32", body)) == 2, body


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90a"])
def test_copies_address_shared_memory_from_one_base_per_operand(arch):
    # every cp.async destination is a staged buffer's base or that base plus an immediate
    body = _loop(offset_matmul_kernel, arch=arch)
    defs = dict(re.findall(r"add\.s32\s+(%r\d+), (%r\d+), -?\d+;", body))
    dests = re.findall(r"cp\.async\.cg\.shared\.global \[(%r\d+)\]", body)
    assert len(dests) == 16
    assert len({defs.get(d, d) for d in dests}) <= 2, dests


def test_k_tail_masks_are_tested_once_per_constant_block():
    # K a multiple of 16 and k0 of 64: (k0 + rk) < K holds alike on 16
    # consecutive rows, so B's 8 rows a thread copies (8 apart) take 4 tests
    def tests(aligned):
        return len(re.findall(r"setp\.lt\.s32", _loop(offset_matmul_kernel, aligned=aligned)))
    unknown_k = [a for a in ALIGNED if a != "K"]
    assert tests(ALIGNED) + 4 <= tests(unknown_k), (tests(ALIGNED), tests(unknown_k))


def test_an_amdgpu_link_leaves_nvidia_code_unchanged():
    # lld resets LLVM's command-line options, NVPTX's 32-bit shared pointers
    # among them: NVIDIA code compiled after an HSACO link must not change
    # (it once went to 64-bit shared addresses, +5 instructions a K loop)
    before = _loop(offset_matmul_kernel)
    compile_kernel(offset_matmul_kernel, signature=SIG, target="hip:gfx942", num_warps=4,
                   constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "stride_ak": 1,
                               "stride_bn": 1, "stride_cn": 1}, attrs={"divisibility": ALIGNED})
    assert _loop(offset_matmul_kernel) == before


def test_the_proxy_fence_can_be_left_out_to_measure_it(monkeypatch):
    # the fence after each cp.async wait (sm_90a); TRITIUM_DEBUG_NO_PROXY_FENCE=1
    # drops it so the H100 shows what it costs
    assert _loop(offset_matmul_kernel).count("fence.proxy.async") == 1
    monkeypatch.setenv("TRITIUM_DEBUG_NO_PROXY_FENCE", "1")
    assert "fence.proxy.async" not in _loop(offset_matmul_kernel)


def test_gfx942_code_generation_options_leave_nvidia_code_unchanged():
    # gfx942's code generation runs with LLVM options of its own (no loop
    # strength reduction, short scheduler ready lists); LLVM's options are
    # process-wide, so NVIDIA code generated after the AMDGCN text (made with
    # them, no link after it to reset them) must be what it was before
    before = _loop(offset_matmul_kernel)
    k = compile_kernel(offset_matmul_kernel, signature=SIG, target="hip:gfx942", num_warps=4,
                       constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "stride_ak": 1,
                                   "stride_bn": 1, "stride_cn": 1}, attrs={"divisibility": ALIGNED})
    assert "v_mfma" in k.asm["amdgcn"]
    assert _loop(offset_matmul_kernel) == before
