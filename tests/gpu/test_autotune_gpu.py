"""The autotuner on a real GPU (marked `gpu`): configs compiled in one batch,
timed with do_bench, the fastest chosen; an accumulating kernel left correct
by reset_to_zero and an in-place one by restore_value; a config that needs
more shared memory than the device has skipped with a note; Triton's
explicit warmup/rep and use_cuda_graph paths."""
from __future__ import annotations

import pytest

import tritium as triton
import tritium.language as tl
from tritium.runtime import compiled as aot

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr, WASTE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(WASTE):          # WASTE > 1 makes a config slow on purpose
        # each step needs the last (a loop-invariant body would be hoisted
        # and WASTE=64 would cost next to nothing)
        acc = tl.sqrt(acc + tl.abs(v) + 1.0)
    tl.atomic_add(out_ptr + offs, v + acc * 0.0, mask=m)


@triton.jit
def double_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


@triton.jit
def big_dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


def grid(meta):
    return (triton.cdiv(meta["n"], meta["BLOCK"]),)


def test_the_fast_config_is_chosen_and_the_result_is_right(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    batches = []
    real = aot.compile_ir_many
    monkeypatch.setattr(aot, "compile_ir_many", lambda jobs, *a, **k: batches.append(len(jobs)) or real(jobs, *a, **k))
    configs = [triton.Config({"BLOCK": b, "WASTE": w}, num_warps=4) for b in (256, 1024) for w in (1, 64)]
    k = triton.autotune(configs, key=["n"], reset_to_zero=["out_ptr"])(accumulate)
    n = 1 << 22
    x = torch.randn(n, device="cuda")
    out = torch.zeros(n, device="cuda")
    k[grid](x, out, n)
    torch.cuda.synchronize()
    assert batches == [4]                                   # every config compiled in one batch
    assert k.best_config.kwargs["WASTE"] == 1
    assert min(k.configs_timings, key=lambda c: k.configs_timings[c]) is k.best_config
    slow = [t[0] for c, t in k.configs_timings.items() if c.kwargs["WASTE"] == 64]
    assert min(slow) > max(t[0] for c, t in k.configs_timings.items() if c.kwargs["WASTE"] == 1)
    torch.testing.assert_close(out, x)                      # trials zeroed out: one real accumulation
    k[grid](x, out, n)
    torch.testing.assert_close(out, 2 * x)


def test_restore_value_undoes_the_trials():
    configs = [triton.Config({"BLOCK": b}) for b in (128, 512, 1024)]
    k = triton.autotune(configs, key=["n"], restore_value=["x_ptr"])(double_in_place)
    x = torch.arange(10000, device="cuda", dtype=torch.float32)
    ref = x * 2
    k[grid](x, 10000)
    torch.testing.assert_close(x, ref)


def test_a_config_out_of_shared_memory_is_skipped():
    # BK=512 stages 2 x 128 KiB of fp16 operands: more than an H100's 227 KiB per block
    configs = [triton.Config({"BM": 128, "BN": 128, "BK": 32}), triton.Config({"BM": 128, "BN": 128, "BK": 512})]
    k = triton.autotune(configs, key=[])(big_dot)
    a = torch.randn(128, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 128, device="cuda", dtype=torch.float16)
    c = torch.empty(128, 128, device="cuda", dtype=torch.float32)
    with pytest.warns(RuntimeWarning, match=r"1 of 2 configs skipped: \[BM: 128, BN: 128, BK: 512"):
        k[(1,)](a, b, c)
    assert k.best_config is configs[0]
    assert k.configs_timings[configs[1]] == [float("inf")] * 3
    # the kernel reads A as a contiguous [BM, BK] tile: the first 128*32 elements
    a_tile = a.flatten()[:128 * 32].view(128, 32)
    torch.testing.assert_close(c, a_tile.float() @ b[:32].float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("options", [{"warmup": 5, "rep": 20}, {"use_cuda_graph": True, "rep": 20}],
                         ids=["warmup-rep", "cuda-graph"])
def test_tritons_explicit_benchmark_options(options):
    configs = [triton.Config({"BLOCK": b}) for b in (128, 1024)]
    k = triton.autotune(configs, key=["n"], **options)(twice)
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    k[grid](x, y, 1 << 20)
    torch.cuda.synchronize()
    assert set(k.configs_timings) == set(configs) and all(t[0] > 0 for t in k.configs_timings.values())
    torch.testing.assert_close(y, 2 * x)
