"""AMDGPU code generation, compile-only (no GPU, no ROCm): the sample kernels
compile to HSACO for CDNA (gfx942, wave64) and RDNA (gfx1100, wave32); each code
object is checked with llvm-readelf (metadata note: kernel, wave size, LDS,
registers, as tritium reads them) and disassembled with llvm-objdump, and
targeted kernels show the instruction sequences the backend must choose."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tritium
import tritium.language as tl
from tritium.backends import hsaco
from tritium.language.extra import libdevice

ROOT = Path(__file__).resolve().parents[1]
READELF = shutil.which("llvm-readelf-19") or shutil.which("llvm-readelf")
OBJDUMP = shutil.which("llvm-objdump-19") or shutil.which("llvm-objdump")
ARCHS = ("hip:gfx942", "hip:gfx1100")
WAVE = {"hip:gfx942": 64, "hip:gfx1100": 32}
D16 = {"divisibility": 16}


def _tool(tool: str | None, name: str) -> str:
    if tool is None:
        pytest.skip(f"{name} (LLVM 19 tools) not found")
    return tool


def readelf_notes(code: bytes, tmp_path: Path) -> str:
    f = tmp_path / "k.hsaco"
    f.write_bytes(code)
    return subprocess.run([_tool(READELF, "llvm-readelf"), "--notes", str(f)], capture_output=True, text=True,
                          check=True).stdout


def disassemble(code: bytes, arch: str, tmp_path: Path) -> str:
    f = tmp_path / "d.hsaco"
    f.write_bytes(code)
    return subprocess.run([_tool(OBJDUMP, "llvm-objdump"), "-d", f"--mcpu={arch.split(':')[1]}", str(f)],
                          capture_output=True, text=True, check=True).stdout


def note_field(notes: str, field: str) -> int:
    m = re.search(rf"^\s*\.{field}:\s+(\d+)", notes, re.M)
    assert m, f".{field} not in the notes:\n{notes}"
    return int(m.group(1))


# --- the sample kernels (tests/kernels) ----------------------------------------

def _corpus():
    from kernels.attention import attention_fwd_kernel
    from kernels.calls import noinline_call
    from kernels.cumsum import row_cumsum_kernel, tile_cumsum_kernel
    from kernels.dropout import seeded_dropout_kernel
    from kernels.layer_norm import layer_norm_bwd_dx_kernel, layer_norm_fwd_kernel
    from kernels.matmul import matmul_kernel
    from kernels.softmax import persistent_softmax_kernel, softmax_kernel
    from kernels.tiles import layer_norm_2d, loop_kernel, row_sum_2d
    from kernels.vector_add import add_kernel
    return {
        "vector_add": (add_kernel, "*fp32 *fp32 *fp32 i32", {"BLOCK_SIZE": 1024}),
        "softmax": (softmax_kernel, "*fp32 *fp32 i32 i32 i32", {"BLOCK_SIZE": 1024}),
        "persistent_softmax": (persistent_softmax_kernel, "*fp32 *fp32 i32 i32 i32", {"BLOCK_SIZE": 512, "NUM_STAGES": 2}),
        "layer_norm_fwd": (layer_norm_fwd_kernel, "*fp16 *fp16 *fp16 *fp16 *fp32 *fp32 i32 i32 fp32", {"BLOCK_SIZE": 1024}),
        "layer_norm_bwd_dx": (layer_norm_bwd_dx_kernel, "*fp16 *fp16 *fp32 *fp32 *fp16 *fp16 *fp32 *fp32 *i32 i32 i32",
                              {"GROUP_SIZE_M": 8, "BLOCK_SIZE_N": 256, "LOCKED": True}),
        "row_cumsum": (row_cumsum_kernel, "*fp32 *fp32 i32 i32", {"BLOCK_SIZE": 256}),
        "tile_cumsum": (tile_cumsum_kernel, "*fp32 *fp32 i32 i32", {"BLOCK_M": 16, "BLOCK_N": 64}),
        "seeded_dropout": (seeded_dropout_kernel, "*fp32 *fp32 i32 fp32 i32", {"BLOCK_SIZE": 1024}),
        "layer_norm_2d": (layer_norm_2d, "*fp32 *fp32 i32 i32 i32", {"BM": 4, "BN": 256}),
        "row_sum_2d": (row_sum_2d, "*fp32 *fp32 i32 i32 i32", {"BM": 8, "BN": 128}),
        "loop": (loop_kernel, "*fp32 *fp32 i32 i32 i32", {"BLOCK": 256}),
        "noinline_call": (noinline_call, "*fp32 *fp32 i32 fp32", {"BLOCK": 1024}),
        # tl.dot runs as FMAs until MFMA/WMMA land: small tiles keep the test fast
        "matmul": (matmul_kernel, "*fp16 *fp16 *fp16 " + " ".join(["i32"] * 9),
                   {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 4, "ACTIVATION": ""}),
        "attention": (attention_fwd_kernel, "*fp16 *fp16 *fp16 *fp16 fp32 i32",
                      {"HEAD_DIM": 32, "BLOCK_M": 32, "BLOCK_N": 16, "CAUSAL": True}),
    }


def _signature_of(fn, sig: str) -> dict:
    types = iter(sig.split())
    return {p.name: next(types) for p in fn.params if not p.is_constexpr}


CORPUS = _corpus()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", list(CORPUS))
def test_corpus_kernel_compiles_to_a_valid_hsaco(name, arch, tmp_path):
    fn, sig, consts = CORPUS[name]
    k = tritium.compile(fn, signature=_signature_of(fn, sig), constexprs=consts, target=arch)
    code = k.asm["hsaco"]
    assert code[:4] == b"\x7fELF"
    notes = readelf_notes(code, tmp_path)
    assert f"amdgcn-amd-amdhsa--{arch.split(':')[1]}" in notes
    assert re.search(rf"\.name:\s+{k.metadata['symbol']}\b", notes), notes
    # what tritium read from the note is what LLVM's own reader prints
    assert note_field(notes, "wavefront_size") == WAVE[arch] == k.metadata["wave_size"]
    assert note_field(notes, "group_segment_fixed_size") == k.metadata["lds"] == k.metadata["shared"]
    assert note_field(notes, "vgpr_count") == k.metadata["vgprs"]
    assert note_field(notes, "sgpr_count") == k.metadata["sgprs"]
    assert note_field(notes, "max_flat_workgroup_size") == 4 * WAVE[arch]
    text = disassemble(code, arch, tmp_path)
    assert f"<{k.metadata['symbol']}>:" in text and "s_endpgm" in text
    # the AMDGCN text is the same program
    assert "s_endpgm" in k.asm["amdgcn"] and k.asm["llir"].count("amdgpu_kernel") >= 1


# --- targeted instruction choices ----------------------------------------------

def test_unspecialized_dot_operands_go_to_lds_8_bytes_at_a_time():
    # the corpus matmul's strides are plain i32, so each global load moves one
    # fp16; on CDNA each thread loads 4 of them along K instead of across K,
    # and stages them (K-contiguous in LDS) with one 8-byte write
    fn, sig, _ = CORPUS["matmul"]
    consts = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4, "ACTIVATION": ""}
    k = tritium.compile(fn, signature=_signature_of(fn, sig), constexprs=consts, target="hip:gfx942")
    text = k.asm["amdgcn"]
    pairs = len(re.findall(r"^\s*ds_write2(st64)?_b64\b", text, re.M))
    singles = len(re.findall(r"^\s*ds_write_b64\b", text, re.M))
    # 64x32 of A and 32x64 of B over 256 threads: 8 + 8 elements each, 4 writes of 4
    assert 2 * pairs + singles == 4, text


@pytest.mark.parametrize("arch", ARCHS)
def test_unspecialized_accumulator_is_stored_without_lds(arch):
    # the C store moves one element at a time (plain i32 strides): it runs in
    # the MFMA/WMMA layout, with no conversion through LDS, whose reads were
    # the only 16-bit ones (the operands' fragment reads are 8 or 16 bytes)
    fn, sig, _ = CORPUS["matmul"]
    consts = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4, "ACTIVATION": ""}
    k = tritium.compile(fn, signature=_signature_of(fn, sig), constexprs=consts, target=arch)
    text = k.asm["amdgcn"]
    assert re.search(r"^\s*v_(mfma|wmma)", text, re.M)
    assert not re.search(r"^\s*ds_(read|load)_u16", text, re.M), text


@pytest.mark.parametrize("arch,instr", [("hip:gfx942", "v_mfma_f32_16x16x16"), ("hip:gfx1100", "v_wmma_f32_16x16x16")])
@pytest.mark.parametrize("name", ["matmul", "attention"])
def test_dots_run_on_matrix_cores(name, arch, instr, tmp_path):
    fn, sig, consts = CORPUS[name]
    k = tritium.compile(fn, signature=_signature_of(fn, sig), constexprs=consts, target=arch)
    text = disassemble(k.asm["hsaco"], arch, tmp_path)
    assert instr in text
    assert re.search(r"ds_(read|load)", text) and k.metadata["lds"] > 0     # operands staged in LDS


def test_gfx950_is_refused_by_name_not_aborted():
    # LLVM 19 has no gfx950 processor: compiling for it aborted the process
    # ("Cannot select" on a 16-bit global load); now a Python error says why
    fn, sig, consts = CORPUS["matmul"]
    with pytest.raises(Exception, match=r"gfx950 needs LLVM 20"):
        tritium.compile(fn, signature=_signature_of(fn, sig), constexprs=consts, target="hip:gfx950")


def test_rdna4_and_fp32_dots_fall_back_to_fma(tmp_path):
    fn, sig, consts = CORPUS["matmul"]
    k = tritium.compile(fn, signature=_signature_of(fn, sig), constexprs=consts, target="hip:gfx1200")
    assert "wmma" not in disassemble(k.asm["hsaco"], "hip:gfx1200", tmp_path)
    k = tritium.compile(fn, signature=_signature_of(fn, sig.replace("fp16", "fp32")), constexprs=consts,
                        target="hip:gfx942")
    assert "v_mfma" not in disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)


@tritium.jit
def copy_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def test_aligned_accesses_are_16_bytes_wide(tmp_path):
    k = tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 1024}, target="hip:gfx942",
                        attrs={"divisibility": ["x_ptr", "y_ptr", "n"]})
    text = disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)
    assert "global_load_dwordx4" in text and "global_store_dwordx4" in text
    # without the divisibility facts every element is its own access
    k = tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 1024}, target="hip:gfx942")
    text = disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)
    assert "global_load_dwordx4" not in text and "global_load_dword " in text


@tritium.jit
def row_max(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.max(x, axis=0))


def test_wave64_reduction_uses_dpp_swizzle_and_bpermute(tmp_path):
    # 64 lanes: xor 1 and 2 by DPP quad permutes, 4/8/16 by LDS swizzles
    # within 32 lanes, 32 by ds_bpermute across the halves
    k = tritium.compile(row_max, signature="*fp32,*fp32", constexprs={"BLOCK": 256}, target="hip:gfx942", num_warps=1)
    text = disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)
    assert "quad_perm:[1,0,3,2]" in text and "quad_perm:[2,3,0,1]" in text
    for mask in (4, 8, 16):
        assert f"swizzle(SWAP,{mask})" in text or f"offset:swizzle(BITMASK_PERM" in text, text
    assert "ds_bpermute_b32" in text
    # one wave: no cross-wave step through LDS and no barrier
    assert "s_barrier" not in text


def test_wave32_reduction_uses_row_xmask(tmp_path):
    k = tritium.compile(row_max, signature="*fp32,*fp32", constexprs={"BLOCK": 128}, target="hip:gfx1100", num_warps=1)
    text = disassemble(k.asm["hsaco"], "hip:gfx1100", tmp_path)
    assert "row_xmask:4" in text and "row_xmask:8" in text
    assert "ds_bpermute_b32" not in text     # 32 lanes: nothing crosses a half


def test_multi_wave_reduction_goes_through_lds_with_a_barrier(tmp_path):
    k = tritium.compile(row_max, signature="*fp32,*fp32", constexprs={"BLOCK": 1024}, target="hip:gfx942", num_warps=4)
    text = disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)
    assert "s_barrier" in text and "ds_write" in text and "ds_read" in text
    assert k.metadata["lds"] > 0


def test_scan_shuffles_by_index(tmp_path):
    from kernels.cumsum import row_cumsum_kernel
    k = tritium.compile(row_cumsum_kernel, signature="*fp32,*fp32,i32,i32", constexprs={"BLOCK_SIZE": 256},
                        target="hip:gfx942")
    assert "ds_bpermute_b32" in disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)


@tritium.jit
def atomics(x_ptr, v_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(v_ptr + offs, mask=m)
    tl.atomic_add(x_ptr + offs, v, mask=m, sem="relaxed", scope="gpu")
    tl.atomic_cas(c_ptr, 0, 1, sem="acq_rel")


def test_atomics_are_hardware_instructions(tmp_path):
    k = tritium.compile(atomics, signature="*fp32,*fp32,*i32,i32", constexprs={"BLOCK": 256}, target="hip:gfx942")
    text = disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)
    assert "global_atomic_add_f32" in text
    assert "global_atomic_cmpswap" in text
    assert 'syncscope("agent")' in k.asm["llir"]


@tritium.jit
def printing(x_ptr):
    x = tl.load(x_ptr)
    print("x", x)


@tritium.jit
def asserting(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 64))
    tl.device_assert(x > 0, "x must be positive")


def test_print_is_a_clear_error_and_assert_traps(tmp_path):
    with pytest.raises(Exception, match=r"test_codegen_amd.py:\d+.*`print`.*AMDGPU gfx942"):
        tritium.compile(printing, signature="*i32", target="hip:gfx942")
    k = tritium.compile(asserting, signature="*i32", target="hip:gfx942", debug=True)
    assert "s_trap" in disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)


def test_unknown_amd_target_names_the_known_ones():
    with pytest.raises(ValueError, match="hip:gfx942"):
        tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 64}, target="hip:gfx803")


def test_gpu_target_objects_select_the_backend():
    from tritium.runtime.device_api import GPUTarget
    k = tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 64},
                        target=GPUTarget("hip", "gfx1100", 32))
    assert k.metadata["target"] == "hip:gfx1100" and k.metadata["wave_size"] == 32


def test_cli_emits_amdgcn_and_hsaco(tmp_path):
    src = ROOT / "tests" / "kernels" / "vector_add.py"
    run = [sys.executable, "-m", "tritium.compile", f"{src}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32",
           "-c", "BLOCK_SIZE=256", "--target", "hip:gfx942"]
    out = subprocess.run(run, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "global_load_dword" in out.stdout and ".amdhsa_kernel add_kernel" in out.stdout
    dest = tmp_path / "k.hsaco"
    out = subprocess.run(run + ["--emit", "hsaco", "-o", str(dest)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert hsaco.kernel_resources(dest.read_bytes(), "add_kernel")["wave_size"] == 64
    out = subprocess.run(run + ["--emit", "ptx"], capture_output=True, text=True)
    assert out.returncode == 1 and "--emit ptx does not exist for target hip:gfx942" in out.stderr


def test_amdgcn_text_is_made_when_first_read():
    from tritium.runtime.compiled import CompiledKernel
    k = tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 64}, target="hip:gfx942")
    # the compile built the HSACO only; the text is one code generation away
    assert "amdgcn" not in dict(k.asm) and "amdgcn" in k.asm
    text = k.asm["amdgcn"]
    assert ".amdhsa_kernel copy_scale" in text and "s_endpgm" in text and k.asm.get("amdgcn") is text
    # a cache entry written before the text was read still yields it
    fresh = tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 64}, target="hip:gfx942")
    files = fresh.to_files()
    assert "kernel.amdgcn" not in files and "kernel.hsaco" in files
    again = CompiledKernel.from_files(files)
    assert again.asm["amdgcn"] == text and again.asm["hsaco"] == k.asm["hsaco"]
    with pytest.raises(KeyError):
        again.asm["ptx"]


def test_a_broken_code_object_is_a_clear_error():
    with pytest.raises(hsaco.HsacoError, match="ELF64"):
        hsaco.metadata(b"nope")
    k = tritium.compile(copy_scale, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 64}, target="hip:gfx942")
    with pytest.raises(hsaco.HsacoError, match="no kernel named 'other'"):
        hsaco.kernel_resources(k.asm["hsaco"], "other")
    with pytest.raises(hsaco.HsacoError):
        hsaco.metadata(k.asm["hsaco"][:200])


# --- buffer operations from the pointer-range specialization -------------------

@tritium.jit
def masked_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=1.0) + 1.0, mask=m)


@tritium.jit
def signed_offsets(x_ptr, y_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) - shift
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


@pytest.mark.parametrize("arch", ARCHS)
def test_pointer_range_selects_buffer_ops(arch, tmp_path):
    sig, consts = "*fp32,*fp32,i32", {"BLOCK": 1024}
    d16 = ["x_ptr", "y_ptr", "n"]
    plain = tritium.compile(masked_copy, signature=sig, constexprs=consts, target=arch, attrs={"divisibility": d16})
    buf = tritium.compile(masked_copy, signature=sig, constexprs=consts, target=arch,
                          attrs={"divisibility": d16, "pointer_range_32": ["x_ptr", "y_ptr"]})
    plain_text = disassemble(plain.asm["hsaco"], arch, tmp_path)
    buf_text = disassemble(buf.asm["hsaco"], arch, tmp_path)
    load, store = ("buffer_load_dwordx4", "buffer_store_dwordx4") if arch.endswith("gfx942") else \
        ("buffer_load_b128", "buffer_store_b128")
    assert load in buf_text and store in buf_text
    assert "global_load" not in buf_text and "global_store" not in buf_text
    # masks are the hardware's range check: no exec-mask branch around the accesses
    assert "s_cbranch_execz" not in buf_text
    assert "buffer_load" not in plain_text and "global_load" in plain_text
    assert "llvm.amdgcn.raw.ptr.buffer.load" in buf.asm["llir"]


def test_buffer_ops_need_offsets_proven_non_negative(tmp_path):
    # `arange - shift` may be negative: a buffer access would read zeros there
    k = tritium.compile(signed_offsets, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 256}, target="hip:gfx942",
                        attrs={"pointer_range_32": ["x_ptr", "y_ptr"]})
    text = disassemble(k.asm["hsaco"], "hip:gfx942", tmp_path)
    assert "global_load" in text            # x: offsets of unknown sign
    assert "buffer_store" in text           # y: arange offsets


@tritium.jit
def uses_libdevice(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, libdevice.lgamma(tl.load(x_ptr + offs)))


def test_device_library_calls_are_a_clear_error():
    with pytest.raises(Exception, match="(?s)__nv_lgammaf.*AMD targets link none"):
        tritium.compile(uses_libdevice, signature="*fp32,*fp32", constexprs={"BLOCK": 64}, target="hip:gfx942")


@tritium.jit
def math_functions(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, libdevice.exp(x) + libdevice.sin(x) + libdevice.erf(x))


def test_amd_pipeline_inlines_the_math_library():
    # AMDGPU's LLVM pipeline is not O1 (target/amdgpu.rs), but it keeps O1's
    # inliner: the math library's internal functions end up in the kernel,
    # and only the large-argument reduction stays a call (it is noinline)
    k = tritium.compile(math_functions, signature="*fp32,*fp32", constexprs={"BLOCK": 256}, target="hip:gfx942")
    defined = re.findall(r"^define .*@(\w+)\(", k.asm["llir"], re.M)
    assert sorted(defined) == sorted([k.metadata["symbol"], "__tritium_rem_pio2_large"]), defined
