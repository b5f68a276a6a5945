//! Tile IR text in, LLVM IR / PTX out: the intrinsics, vector widths and
//! predicates the NVPTX lowering must produce, and the errors it must give
//! (more as filetests: crates/tritium-filetests/filetests/codegen).
mod common;

use common::compile;
use tritium_codegen::Options;

#[test]
fn bad_options_are_errors() {
    assert!(Options::new("sm_75", 4).unwrap_err().to_string().contains("sm_80"));
    assert!(Options::new("sm_90", 3).unwrap_err().to_string().contains("num_warps"));
    assert!(Options::new("cuda:90a", 8).is_ok());
}

#[test]
fn for_loop_with_carried_scalar_compiles() {
    let text = r#"
func @k(%x: ptr<i32>, %n: i32) attributes {kernel} {
  %z = "const"() {value = 0} : () -> i32
  %one = "const"() {value = 1} : () -> i32
  %r = "for"(%z, %n, %one, %z) ({
  ^bb(%i: i32, %acc: i32):
    %s = "add"(%acc, %i) : (i32, i32) -> i32
    "yield"(%s) : (i32) -> ()
  }) : (i32, i32, i32, i32) -> i32 loc("k.py":3:4)
  "store"(%x, %r) {cache = "", eviction = ""} : (ptr<i32>, i32) -> ()
  "return"() : () -> ()
}
"#;
    let out = compile(text, "sm_90", 4);
    assert!(out.ptx.contains("bra"), "a loop needs a branch:\n{}", out.ptx);
}

#[test]
fn every_stage_is_timed_in_pipeline_order() {
    let text = r#"
func @k(%x: ptr<i32>) attributes {kernel} {
  %one = "const"() {value = 1} : () -> i32
  "store"(%x, %one) {cache = "", eviction = ""} : (ptr<i32>, i32) -> ()
  "return"() : () -> ()
}
"#;
    let start = std::time::Instant::now();
    let out = compile(text, "sm_90", 4);
    let wall = start.elapsed().as_secs_f64();
    let names: Vec<&str> = out.timings.stages.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["verify", "tile_passes", "llvm_setup", "layouts", "lower", "link", "llvm_optimize", "emit", "llir_text"]);
    assert!(out.timings.get("llvm_optimize").is_some_and(|t| t > 0.0));
    assert_eq!(out.timings.get("binary"), None, "NVPTX builds no binary in-process");
    assert!(out.timings.total() <= wall, "{:?} within {wall} s", out.timings);
    // a compilation stopped early times only the stages it ran
    let module = tritium_ir::parse(text).unwrap();
    let lowered = tritium_codegen::compile_ptx_until(&module, &tritium_codegen::Options::new("sm_90", 4).unwrap(), tritium_codegen::StopAfter::Lower).unwrap();
    assert_eq!(lowered.timings.stages.last().map(|(n, _)| *n), Some("link"));
}

#[test]
fn scalar_store_is_done_by_thread_zero() {
    let text = r#"
func @k(%x: ptr<i32>, %v: i32) attributes {kernel} {
  %pid = "program_id"() {axis = 1} : () -> i32
  %n = "num_programs"() {axis = 2} : () -> i32
  %s = "add"(%pid, %n) : (i32, i32) -> i32
  %t = "add"(%s, %v) : (i32, i32) -> i32
  "store"(%x, %t) {cache = "", eviction = ""} : (ptr<i32>, i32) -> ()
  "return"() : () -> ()
}
"#;
    let out = compile(text, "sm_89", 4);
    assert!(out.llir.contains("llvm.nvvm.read.ptx.sreg.ctaid.y"), "{}", out.llir);
    assert!(out.llir.contains("llvm.nvvm.read.ptx.sreg.nctaid.z"), "{}", out.llir);
    assert!(out.ptx.contains("%tid.x"), "{}", out.ptx);
    assert!(out.ptx.contains(".version 8.4"), "{}", out.ptx);
}
