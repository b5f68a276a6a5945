"""`tritium.compile(..., dump_stages=True)` and `--dump-stages`: the tile IR
after the frontend and after each pass (fold, canonicalize, cse, dce), the
passes' effect on a kernel with a stride specialized to 1, and the time each
compiler stage took (`CompiledKernel.timings`)."""
import time

import tritium
import tritium.language as tl
from test_runtime_compile import run_cli


@tritium.jit
def strided_copy(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs * stride, tl.load(x_ptr + offs * stride) * (2.0 * 3.0))


def _stages(attrs=None):
    k = tritium.compile(strided_copy, signature="x_ptr=*fp32,y_ptr=*fp32,stride=i32",
                        constexprs={"BLOCK": 128}, attrs=attrs, dump_stages=True)
    return k, dict(k.asm["stages"]), [s for s, _ in k.asm["stages"]]


def test_stages_in_order_and_first_is_frontend_ir():
    k, stages, names = _stages()
    assert names[:5] == ["frontend", "fold", "canonicalize", "cse", "dce"]
    assert stages["frontend"] == k.asm["ir"]
    assert all(t.startswith("func @strided_copy") for t in stages.values())


def test_equal_to_1_multiply_leaves_the_tile_ir():
    _, stages, names = _stages(attrs={"equal_to_1": ["stride"]})
    final = stages[names[-1]]
    assert '"mul"(' in stages["frontend"]
    # the only multiply left is program_id * BLOCK: the stride multiplies folded away
    assert final.count('"mul"(') < stages["frontend"].count('"mul"(')
    assert "equal_to_1 = true" in final


def test_stages_are_not_cached_files():
    k, _, _ = _stages()
    assert not any("stages" in name for name in k.to_files())


def test_cli_dump_stages(tmp_path):
    r = run_cli(tmp_path, "--signature", "x_ptr=*fp32,n=i32,s=fp32", "--constexprs", "BLOCK=512", "--dump-stages")
    assert r.returncode == 0, r.stderr
    titles = [line for line in r.stdout.splitlines() if line.startswith("// ----- ")]
    assert titles[:5] == [f"// ----- {t} -----" for t in
                          ("ir", "ir after fold", "ir after canonicalize", "ir after cse", "ir after dce")]
    assert titles[-4:] == ["// ----- llir -----", "// ----- ptx -----", "// ----- metadata -----",
                           "// ----- compile times -----"]
    times = r.stdout.split("// ----- compile times -----\n")[1].splitlines()
    assert [line.split()[1] for line in times[:3]] == ["frontend", "verify", "tile_passes"]
    assert times[-1].split()[1] == "total" and all(line.endswith(" ms") for line in times)


# the Rust compiler's stages, in pipeline order (tritium_codegen::StageTimes)
# NVPTX emits before printing the LLVM IR text, so ptxas can start first (compile_ptx_overlapped)
CODEGEN_STAGES = ["verify", "tile_passes", "llvm_setup", "layouts", "lower", "link", "llvm_optimize",
                  "emit", "llir_text"]


def test_timings_name_every_stage_in_order():
    start = time.perf_counter()
    k = tritium.compile(strided_copy, signature="x_ptr=*fp32,y_ptr=*fp32,stride=i32", constexprs={"BLOCK": 128})
    wall = time.perf_counter() - start
    names = list(k.timings)
    ptxas = ["ptxas"] if "cubin" in k.asm else []
    assert names == ["frontend"] + CODEGEN_STAGES + ptxas
    assert all(t >= 0 for t in k.timings.values())
    assert k.timings["llvm_optimize"] > 0 and k.timings["emit"] > 0
    # the stages are consecutive parts of the compile: together no longer than it
    assert sum(k.timings.values()) <= wall
    # a kernel read back from the cache's files says nothing about a compile it did not run
    assert type(k).from_files(k.to_files()).timings == {}
