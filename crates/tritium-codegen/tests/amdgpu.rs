//! AMDGPU integration tests at the Rust level: `dot` on matrix cores (MFMA on
//! CDNA, WMMA on RDNA 3) from tile IR text, checked in the AMDGCN assembly,
//! and the options AMD targets refuse. (Whole kernels from Python, with LLVM's
//! tools on the code objects: tests/test_codegen_amd.py.)
mod common;

use common::compile;
use tritium_codegen::Options;

/// `tl.dot` of a 64x32 by a 32x64 tile of `ELEM`, stored as f32 (generated
/// by the frontend from a kernel in the style of tests/kernels/matmul.py).
const DOT: &str = r#"
func @dot_kernel(%0: ptr<f16>, %1: ptr<f16>, %2: ptr<f32>) attributes {kernel} {
  %3 = "arange"() {end = 64, start = 0} : () -> tensor<64xi32> loc("dot.py":6:9)
  %4 = "arange"() {end = 64, start = 0} : () -> tensor<64xi32> loc("dot.py":7:9)
  %5 = "arange"() {end = 32, start = 0} : () -> tensor<32xi32> loc("dot.py":8:9)
  %6 = "expand_dims"(%3) {axis = 1} : (tensor<64xi32>) -> tensor<64x1xi32> loc("dot.py":9:24)
  %7 = "const"() {value = 32} : () -> i32 loc("dot.py":9:24)
  %8 = "splat"(%7) : (i32) -> tensor<64x1xi32> loc("dot.py":9:24)
  %9 = "mul"(%6, %8) : (tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi32> loc("dot.py":9:24)
  %10 = "splat"(%0) : (ptr<f16>) -> tensor<64x1xptr<f16>> loc("dot.py":9:16)
  %11 = "addptr"(%10, %9) : (tensor<64x1xptr<f16>>, tensor<64x1xi32>) -> tensor<64x1xptr<f16>> loc("dot.py":9:16)
  %12 = "expand_dims"(%5) {axis = 0} : (tensor<32xi32>) -> tensor<1x32xi32> loc("dot.py":9:42)
  %13 = "broadcast"(%11) : (tensor<64x1xptr<f16>>) -> tensor<64x32xptr<f16>> loc("dot.py":9:16)
  %14 = "broadcast"(%12) : (tensor<1x32xi32>) -> tensor<64x32xi32> loc("dot.py":9:16)
  %15 = "addptr"(%13, %14) : (tensor<64x32xptr<f16>>, tensor<64x32xi32>) -> tensor<64x32xptr<f16>> loc("dot.py":9:16)
  %16 = "load"(%15) {cache = "", eviction = "", volatile = false} : (tensor<64x32xptr<f16>>) -> tensor<64x32xf16> loc("dot.py":9:8)
  %17 = "expand_dims"(%5) {axis = 1} : (tensor<32xi32>) -> tensor<32x1xi32> loc("dot.py":10:24)
  %18 = "const"() {value = 64} : () -> i32 loc("dot.py":10:24)
  %19 = "splat"(%18) : (i32) -> tensor<32x1xi32> loc("dot.py":10:24)
  %20 = "mul"(%17, %19) : (tensor<32x1xi32>, tensor<32x1xi32>) -> tensor<32x1xi32> loc("dot.py":10:24)
  %21 = "splat"(%1) : (ptr<f16>) -> tensor<32x1xptr<f16>> loc("dot.py":10:16)
  %22 = "addptr"(%21, %20) : (tensor<32x1xptr<f16>>, tensor<32x1xi32>) -> tensor<32x1xptr<f16>> loc("dot.py":10:16)
  %23 = "expand_dims"(%4) {axis = 0} : (tensor<64xi32>) -> tensor<1x64xi32> loc("dot.py":10:42)
  %24 = "broadcast"(%22) : (tensor<32x1xptr<f16>>) -> tensor<32x64xptr<f16>> loc("dot.py":10:16)
  %25 = "broadcast"(%23) : (tensor<1x64xi32>) -> tensor<32x64xi32> loc("dot.py":10:16)
  %26 = "addptr"(%24, %25) : (tensor<32x64xptr<f16>>, tensor<32x64xi32>) -> tensor<32x64xptr<f16>> loc("dot.py":10:16)
  %27 = "load"(%26) {cache = "", eviction = "", volatile = false} : (tensor<32x64xptr<f16>>) -> tensor<32x64xf16> loc("dot.py":10:8)
  %28 = "const"() {value = 0.0} : () -> tensor<64x64xf32> loc("dot.py":11:8)
  %29 = "dot"(%16, %27, %28) {input_precision = "tf32", max_num_imprecise_acc = 0} : (tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("dot.py":11:8)
  %30 = "expand_dims"(%3) {axis = 1} : (tensor<64xi32>) -> tensor<64x1xi32> loc("dot.py":12:21)
  %31 = "const"() {value = 64} : () -> i32 loc("dot.py":12:21)
  %32 = "splat"(%31) : (i32) -> tensor<64x1xi32> loc("dot.py":12:21)
  %33 = "mul"(%30, %32) : (tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi32> loc("dot.py":12:21)
  %34 = "splat"(%2) : (ptr<f32>) -> tensor<64x1xptr<f32>> loc("dot.py":12:13)
  %35 = "addptr"(%34, %33) : (tensor<64x1xptr<f32>>, tensor<64x1xi32>) -> tensor<64x1xptr<f32>> loc("dot.py":12:13)
  %36 = "expand_dims"(%4) {axis = 0} : (tensor<64xi32>) -> tensor<1x64xi32> loc("dot.py":12:39)
  %37 = "broadcast"(%35) : (tensor<64x1xptr<f32>>) -> tensor<64x64xptr<f32>> loc("dot.py":12:13)
  %38 = "broadcast"(%36) : (tensor<1x64xi32>) -> tensor<64x64xi32> loc("dot.py":12:13)
  %39 = "addptr"(%37, %38) : (tensor<64x64xptr<f32>>, tensor<64x64xi32>) -> tensor<64x64xptr<f32>> loc("dot.py":12:13)
  "store"(%39, %29) {cache = "", eviction = ""} : (tensor<64x64xptr<f32>>, tensor<64x64xf32>) -> () loc("dot.py":12:4)
  "return"() : () -> () loc("dot.py":5:0)
}
"#;

fn dot_of(elem: &str) -> String {
    DOT.replace("f16", elem)
}

#[test]
fn cdna_dots_use_mfma() {
    // gfx90a spells them v_mfma_f32_16x16x16f16 / ..bf16_1k, gfx942 v_mfma_f32_16x16x16_f16 / _bf16
    for elem in ["f16", "bf16"] {
        for arch in ["hip:gfx90a", "hip:gfx942"] {
            let out = compile(&dot_of(elem), arch, 4);
            let mfmas: Vec<&str> = out.ptx.lines().filter(|l| l.trim_start().starts_with("v_mfma_f32_16x16x16")).collect();
            // 64x64 over 4 waves (2x2): each wave 2x2 tiles of 16x16, K = 32 in two steps
            assert_eq!(mfmas.len(), 8, "{arch} {elem}:\n{}", out.ptx);
            assert!(mfmas.iter().all(|l| l.contains("bf16") == (elem == "bf16")), "{mfmas:?}");
            assert!(out.ptx.contains("ds_read"), "operands come from LDS:\n{}", out.ptx);
            // staged K-contiguous, a lane's 4 K elements of A and of B are one 8-byte read
            assert!(!out.ptx.contains("ds_read_u16"), "{arch} {elem}: fragments read element by element:\n{}", out.ptx);
        }
    }
}

#[test]
fn rdna3_dots_use_wmma() {
    for (elem, instr) in [("f16", "v_wmma_f32_16x16x16_f16"), ("bf16", "v_wmma_f32_16x16x16_bf16")] {
        let out = compile(&dot_of(elem), "hip:gfx1100", 4);
        assert_eq!(out.ptx.matches(instr).count(), 8, "{elem}:\n{}", out.ptx);
        assert!(!out.ptx.contains("ds_load_u16"), "{elem}: fragments read element by element:\n{}", out.ptx);
    }
}

#[test]
fn conversion_rows_are_padded_on_nvidia_only() {
    // the 64x64 f32 accumulator goes to the store's blocked layout (16-byte
    // stores: the output is aligned) through scratch: 256-byte rows, padded
    // by 16 bytes where the target pads them (NVIDIA's bank conflicts), kept
    // whole on AMD (LDS occupancy, code size)
    let aligned = DOT.replace("%2: ptr<f32>)", "%2: ptr<f32> {divisibility = 16})");
    assert_ne!(aligned, DOT);
    let (whole, padded) = (64 * 64 * 4, 64 * (64 + 4) * 4);
    for arch in ["hip:gfx942", "hip:gfx1100"] {
        assert_eq!(compile(&aligned, arch, 4).shared, whole, "{arch}");
    }
    for arch in ["sm_80", "sm_90a"] {
        assert_eq!(compile(&aligned, arch, 4).shared, padded, "{arch}");
    }
}

#[test]
fn unvectorizable_accumulator_stores_skip_lds_on_amd() {
    // DOT's output has no known alignment: each store moves one f32, so on
    // AMD it runs in the accumulator's layout and only the operands use LDS
    // (64x32 and 32x64 f16); NVIDIA still converts to a coalesced layout
    let operands = 2 * 64 * 32 * 2;
    for arch in ["hip:gfx942", "hip:gfx1100"] {
        assert_eq!(compile(DOT, arch, 4).shared, operands, "{arch}");
    }
    assert!(compile(DOT, "sm_80", 4).shared > operands);
}

#[test]
fn rdna4_dots_fall_back_to_fma() {
    let out = compile(&dot_of("f16"), "hip:gfx1200", 4);
    assert!(!out.ptx.contains("wmma") && out.ptx.contains("v_cvt_f32_f16"), "{}", out.ptx);
}

#[test]
fn too_many_waves_is_an_option_error() {
    let err = Options::new("hip:gfx942", 32).unwrap_err().to_string();
    assert!(err.contains("2048 threads") && err.contains("16 warps of 64"), "{err}");
    assert!(Options::new("hip:gfx1100", 32).is_ok());
    assert!(Options::new("hip:gfx803", 4).unwrap_err().to_string().contains("gfx942"));
}

#[test]
fn assembly_is_optional_and_made_later_from_the_llvm_ir() {
    let text = dot_of("f16");
    let eager = compile(&text, "hip:gfx942", 4);
    let mut options = Options::new("hip:gfx942", 4).unwrap();
    options.assembly = false;
    let lazy = tritium_codegen::compile_ptx_text(&text, &options).unwrap();
    // the HSACO does not need the text: only one run of code generation
    assert!(lazy.ptx.is_empty() && lazy.binary.starts_with(b"\x7fELF"));
    assert_eq!(lazy.binary.len(), eager.binary.len());
    // made later from the optimised IR, it is the text the eager compile wrote
    let later = tritium_codegen::emit::assembly_from_llir(&lazy.llir, "hip:gfx942").unwrap();
    assert_eq!(later, eager.ptx);
    assert!(tritium_codegen::emit::assembly_from_llir("not IR", "hip:gfx942").unwrap_err().to_string().contains("cannot parse"));
}

#[test]
fn nvptx_makes_its_ptx_whatever_assembly_says() {
    let mut options = Options::new("sm_90", 4).unwrap();
    options.assembly = false;
    let out = tritium_codegen::compile_ptx_text(&dot_of("f16"), &options).unwrap();
    assert!(out.ptx.contains(".entry dot_kernel") && out.binary.is_empty(), "{}", out.ptx);
}

/// A bench kernel's tile IR (benches/kernels, the kernels
/// benches/amd_vs_triton.py compiles).
fn bench_kernel(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/kernels").join(format!("{name}.tir"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// What matters of a kernel's code, from the AMDGCN text: VGPRs (AGPRs
/// included), SGPRs, scratch bytes and spills from the code object's
/// metadata, instructions in all and inside loops (between a label and the
/// last branch back to it).
#[derive(Debug)]
struct Resources {
    vgprs: u32,
    sgprs: u32,
    scratch: u32,
    spills: u32,
    instructions: usize,
    in_loops: usize,
}

fn resources(amdgcn: &str) -> Resources {
    let field = |name: &str| -> u32 {
        let values: Vec<u32> = amdgcn.lines().filter_map(|l| l.trim().strip_prefix(&format!(".{name}:"))).map(|v| v.trim().parse().unwrap()).collect();
        assert_eq!(values.len(), 1, ".{name} once in the metadata");
        values[0]
    };
    // (label or instruction, branch target) in order
    let mut labels = std::collections::HashMap::new();
    let mut instructions: Vec<Option<&str>> = Vec::new();
    for line in amdgcn.lines() {
        let t = line.trim();
        if let Some(label) = line.strip_suffix(':').filter(|l| l.starts_with(".LBB")) {
            labels.insert(label, instructions.len());
        } else if line.starts_with('\t') && ["s_", "v_", "ds_", "global_", "buffer_", "flat_", "scratch_"].iter().any(|p| t.starts_with(p)) {
            let target = t.starts_with("s_branch").then(|| t.split_whitespace().nth(1)).flatten();
            let target = target.or_else(|| t.starts_with("s_cbranch").then(|| t.split_whitespace().nth(1)).flatten());
            instructions.push(target.or(Some("")));
        }
    }
    let mut looped = vec![false; instructions.len()];
    for (at, target) in instructions.iter().enumerate() {
        if let Some(&start) = target.and_then(|t| labels.get(t)) {
            if start <= at {
                looped[start..=at].iter_mut().for_each(|l| *l = true);
            }
        }
    }
    Resources {
        vgprs: field("vgpr_count"),
        sgprs: field("sgpr_count"),
        scratch: field("private_segment_fixed_size"),
        spills: field("vgpr_spill_count") + field("sgpr_spill_count"),
        instructions: instructions.len(),
        in_loops: looped.iter().filter(|&&l| l).count(),
    }
}

#[test]
fn target_machines_are_kept_per_target_and_thread() {
    // one machine per thread and target: compiling for two architectures in
    // turn gives each its own code, and a machine used before gives the same
    let text = dot_of("f16");
    let ptx_before = compile(&text, "sm_90", 4);
    let cdna = compile(&text, "hip:gfx942", 4);
    let rdna = compile(&text, "hip:gfx1100", 4);
    let cdna_again = compile(&text, "hip:gfx942", 4);
    assert!(cdna.ptx.contains("v_mfma_f32_16x16x16_f16") && !cdna.ptx.contains("wmma"), "{}", cdna.ptx);
    assert!(rdna.ptx.contains("v_wmma_f32_16x16x16_f16") && !rdna.ptx.contains("mfma"), "{}", rdna.ptx);
    assert!(cdna.ptx.contains(".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"") && rdna.ptx.contains("--gfx1100"));
    assert_eq!(cdna.binary, cdna_again.binary);
    assert_eq!(cdna.ptx, cdna_again.ptx);
    // another thread makes its own machine, and the same code
    let other = std::thread::spawn(move || compile(&text, "hip:gfx942", 4)).join().unwrap();
    assert_eq!(other.binary, cdna.binary);
    // NVPTX on this thread after the AMD links (lld resets LLVM's options):
    // its kept machine makes the PTX it made before them
    let ptx_after = compile(&dot_of("f16"), "sm_90", 4);
    assert!(ptx_after.ptx.contains(".target sm_90"), "{}", ptx_after.ptx);
    assert_eq!(ptx_after.ptx, ptx_before.ptx);
}

#[test]
fn amd_pipeline_keeps_o1_code_on_the_bench_kernels() {
    // AMDGPU's pipeline is O1 less the passes that found nothing in our
    // lowered IR: registers and scratch no worse than `default<O1>` gives,
    // instructions in loops within 1% and in all within 2%, on the kernels
    // the Triton comparison compiles (the matmul's K loop among them)
    for name in ["vector_add", "softmax", "layer_norm_fwd", "matmul", "noinline_call"] {
        let text = bench_kernel(name);
        for arch in ["hip:gfx942", "hip:gfx1100"] {
            let ours = compile(&text, arch, 4);
            let mut options = Options::new(arch, 4).unwrap();
            options.llvm_pipeline = Some("default<O1>".into());
            let o1 = tritium_codegen::compile_ptx_text(&text, &options).unwrap();
            let (a, b) = (resources(&ours.ptx), resources(&o1.ptx));
            assert!(a.instructions > 0 && b.instructions > 0, "{name} {arch}: no instructions read");
            assert!(name != "matmul" || (a.in_loops > 100 && b.in_loops > 100), "{name} {arch}: no K loop read: {a:?} {b:?}");
            assert!(b.vgprs > 0 && b.sgprs > 0, "{name} {arch}: no registers read: {b:?}");
            assert!(a.vgprs <= b.vgprs && a.sgprs <= b.sgprs + 2, "{name} {arch}: {a:?} against O1's {b:?}");
            assert!(a.scratch <= b.scratch && a.spills <= b.spills, "{name} {arch}: {a:?} against O1's {b:?}");
            // loops within 1% of O1's; straight-line code (the prologue, the
            // epilogue: run once) within 2%
            assert!(a.in_loops as f64 <= b.in_loops as f64 * 1.01 + 1.0, "{name} {arch}: {a:?} against O1's {b:?}");
            assert!(a.instructions as f64 <= b.instructions as f64 * 1.02 + 1.0, "{name} {arch}: {a:?} against O1's {b:?}");
        }
    }
}
