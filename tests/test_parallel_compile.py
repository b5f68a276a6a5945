"""`compile_ir_many` / `_core.compile_batch`: many kernels compiled at once on
Rust worker threads with the GIL released; the same output as one at a
time; a failing job fails alone, as the exception a single compile raises;
and `warmup_many` compiles only what the cache lacks."""
from __future__ import annotations

import threading

import pytest

import tritium as triton
import tritium.language as tl
from tritium import _core
from tritium.runtime import compiled as aot
from tritium.runtime import driver


@triton.jit
def scale(x_ptr, out_ptr, n, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * S, mask=m)


def job(s: int, num_warps: int = 4):
    ir = scale.compile_ir(signature="*fp32,*fp32,i32", constexprs={"S": s, "BLOCK": 256})
    return (ir, "scale", [["x_ptr", "ptr"], ["out_ptr", "ptr"], ["n", "i32"], ["S", None], ["BLOCK", None]],
            "cuda:90", num_warps, 3)


def test_batch_matches_one_at_a_time():
    jobs = [job(s) for s in range(6)]
    batch = aot.compile_ir_many(jobs, threads=3)
    for j, got in zip(jobs, batch):
        one = aot.compile_ir_bytes(*j)
        assert got.asm["ptx"] == one.asm["ptx"]
        assert got.metadata == one.metadata
        assert got.asm.get("cubin") is not None if driver.ptxas_path() else True
        # the same stages timed either way; ptxas's time comes from the worker that ran it
        assert list(got.timings) == list(one.timings)
        assert ("ptxas" in got.timings) == ("cubin" in got.asm)
    assert len({k.asm["ptx"] for k in batch}) == 6


def test_a_failing_ptxas_fails_its_job_with_ptxas_message(tmp_path, monkeypatch):
    # compile_batch starts ptxas right after emission and waits for it after the LLVM IR text
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\n"
                    "if [ \"$1\" = \"--version\" ]; then echo 'Cuda compilation tools, release 12.9'; exit 0; fi\n"
                    "echo 'ptxas fatal   : Out of parameter space' >&2; exit 255\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TRITIUM_PTXAS", str(fake))
    out = aot.compile_ir_many([job(1), job(2)])
    for r in out:
        assert isinstance(r, aot.PTXASError)
        assert "assembling kernel 'scale'" in str(r) and "Out of parameter space" in str(r)


def test_a_failing_job_fails_alone():
    jobs = [job(1), job(2, num_warps=3), (b"not ir", "bad", [], "cuda:90", 4, 3), job(3)]
    out = aot.compile_ir_many(jobs)
    assert isinstance(out[0], aot.CompiledKernel) and isinstance(out[3], aot.CompiledKernel)
    assert isinstance(out[1], _core.CodegenError) and "num_warps" in str(out[1])
    assert isinstance(out[2], _core.IRDecodeError)


def test_the_gil_is_released_while_compiling():
    jobs = [job(s) for s in range(8)]
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1
    t = threading.Thread(target=spin)
    t.start()
    try:
        before = ticks[0]
        _core.compile_batch([(ir, "sm_90", nw, None, "sm_90", name, None, ns) for ir, name, _p, _t, nw, ns in jobs], 2)
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
    assert during > 10_000       # a Python thread ran all along (with the GIL held it would barely move)


def test_warmup_many_compiles_only_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRITIUM_INTERPRET", raising=False)
    sizes = []
    real = aot.compile_ir_many
    monkeypatch.setattr(aot, "compile_ir_many", lambda jobs, *a, **k: sizes.append(len(jobs)) or real(jobs, *a, **k))
    f32 = triton.MockTensor(tl.float32)
    scale.warmup(f32, f32, 1024, S=1, BLOCK=128)
    calls = [((f32, f32, 1024), {"S": s, "BLOCK": 128}, {}) for s in range(4)] + \
            [((f32, f32, 1024), {"S": 0, "BLOCK": 128}, {"num_warps": 3})]
    out = aot.warmup_many(scale, calls)
    assert sizes == [1, 4]            # S=1 was cached; the bad num_warps is one of the batch
    assert all(isinstance(k, aot.CompiledKernel) for k in out[:4])
    assert isinstance(out[4], _core.CodegenError)
    with pytest.raises(_core.CodegenError, match="num_warps"):
        scale.warmup(f32, f32, 1024, S=0, BLOCK=128, num_warps=3)


def test_a_batch_may_mix_nvidia_and_amd_targets():
    cuda, hip = job(2), job(2)[:3] + ("hip:gfx942",) + job(2)[4:]
    out = aot.compile_ir_many([hip, cuda, hip[:4] + (3,) + hip[5:]])
    assert "hsaco" in out[0].asm and "ptx" in out[1].asm
    assert isinstance(out[2], _core.CodegenError)          # 3 warps: refused in its place
