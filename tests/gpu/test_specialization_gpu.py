"""Specialization on a real GPU (marked `gpu`): the launch path compiles one
variant per key, the variants' PTX differs the way their facts say
(16-byte vectors only for aligned pointers and unit strides), and every
variant computes the same results as torch."""
from __future__ import annotations

import re

import pytest

import tritium
import tritium.language as tl
from tritium.compile import CompiledKernel
from tritium.runtime import cache, driver
from tritium.runtime.jit import debug_requested

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

N = 4096
BLOCK = 1024


@tritium.jit
def scaled_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


@tritium.jit
def gather_stride(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=m) + 1.0, mask=m)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    # each variant's PTX is read back from the disk cache the launcher writes
    monkeypatch.setenv("TRITIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRITIUM_ALWAYS_COMPILE", raising=False)


def table_keys(fn) -> set:
    launcher = fn.__dict__.get("_cuda_launcher")
    return set() if launcher is None else set(launcher.table)


def variant_ptx(fn, table_key: tuple) -> str:
    """The PTX the launcher compiled for one entry of its table."""
    key, num_warps, num_stages, debug, fp_fusion, device = table_key
    launcher = fn.__dict__["_cuda_launcher"]
    options = {"num_warps": num_warps, "num_stages": num_stages, "debug": debug_requested(debug, fn.debug)}
    if not fp_fusion:
        options["enable_fp_fusion"] = False
    disk_key = cache.kernel_key(fn, driver.target_for(device), options, launcher.spec.key_text(key))
    files = cache.get(disk_key)
    assert files is not None, f"no cache entry for {launcher.spec.key_text(key)}"
    return CompiledKernel.from_files(files).asm["ptx"]


def launch_and_new_entry(fn, *args) -> tuple:
    """Launches `fn` and returns the one table entry that launch added."""
    before = table_keys(fn)
    fn[(triton_cdiv(N, BLOCK),)](*args, BLOCK=BLOCK)
    torch.cuda.synchronize()
    added = table_keys(fn) - before
    assert len(added) == 1, f"expected one new variant, got {len(added)}"
    return added.pop()


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def v4_loads(ptx: str) -> int:
    return len(re.findall(r"ld\.global\.v4\.f32", ptx))


def scalar_loads(ptx: str) -> int:
    return len(re.findall(r"ld\.global\.f32", ptx))


def test_aligned_and_misaligned_pointers_compile_two_variants():
    base = torch.randn(N + 1, device="cuda", dtype=torch.float32)
    aligned, misaligned = base[:N], base[1:]
    assert aligned.data_ptr() % 16 == 0 and misaligned.data_ptr() % 16 == 4
    out_a = torch.empty(N, device="cuda", dtype=torch.float32)
    out_m = torch.empty(N, device="cuda", dtype=torch.float32)
    entry_a = launch_and_new_entry(scaled_copy, aligned, out_a, N)
    entry_m = launch_and_new_entry(scaled_copy, misaligned, out_m, N)
    assert entry_a[0] != entry_m[0]
    torch.testing.assert_close(out_a, aligned * 3.0, rtol=0, atol=0)
    torch.testing.assert_close(out_m, misaligned * 3.0, rtol=0, atol=0)
    ptx_a, ptx_m = variant_ptx(scaled_copy, entry_a), variant_ptx(scaled_copy, entry_m)
    assert v4_loads(ptx_a) > 0 and scalar_loads(ptx_a) == 0
    assert v4_loads(ptx_m) == 0 and scalar_loads(ptx_m) == 4 * v4_loads(ptx_a)
    # the same call again reuses its variant
    assert table_keys(scaled_copy) >= {entry_a, entry_m}
    before = table_keys(scaled_copy)
    scaled_copy[(triton_cdiv(N, BLOCK),)](misaligned, out_m, N, BLOCK=BLOCK)
    assert table_keys(scaled_copy) == before


def test_stride_one_and_two_compile_two_variants():
    x = torch.randn(2 * N, device="cuda", dtype=torch.float32)
    out1 = torch.empty(N, device="cuda", dtype=torch.float32)
    out2 = torch.empty(N, device="cuda", dtype=torch.float32)
    entry1 = launch_and_new_entry(gather_stride, x, out1, N, 1)
    entry2 = launch_and_new_entry(gather_stride, x, out2, N, 2)
    assert entry1[0] != entry2[0]
    torch.testing.assert_close(out1, x[:N] + 1.0, rtol=0, atol=0)
    torch.testing.assert_close(out2, x[::2] + 1.0, rtol=0, atol=0)
    ptx1, ptx2 = variant_ptx(gather_stride, entry1), variant_ptx(gather_stride, entry2)
    assert v4_loads(ptx1) > 0 and scalar_loads(ptx1) == 0      # stride folded to 1: vectors
    assert v4_loads(ptx2) == 0 and scalar_loads(ptx2) == 4 * v4_loads(ptx1)
    # the stride-1 variant never reads its stride parameter
    stride_param = "gather_stride_param_3"
    assert stride_param not in ptx1.split("{", 1)[1] and stride_param in ptx2.split("{", 1)[1]
