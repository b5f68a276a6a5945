//! Shared by the NVPTX integration tests: compile tile IR text, and run
//! NVIDIA's ptxas on emitted PTX (found as the filetests find it: TRITIUM_PTXAS,
//! PATH, the nvidia-cuda-nvcc wheel in `.venv`; skipped visibly without it).
// each test file uses only some of these helpers
#![allow(dead_code)]

use tritium_codegen::{compile_ptx_text, CompiledPtx, Options};

/// `text` compiled for `arch` with `warps` warps; a compile error fails the test.
pub fn compile(text: &str, arch: &str, warps: u32) -> CompiledPtx {
    compile_ptx_text(text, &Options::new(arch, warps).unwrap()).unwrap_or_else(|e| panic!("compile failed: {e}\n{text}"))
}

/// `text` compiled for sm_80 and sm_90a, each checked by ptxas (`name` as in
/// `check_ptxas`); returns the sm_90a result.
pub fn compile_both(text: &str, warps: u32, name: &str) -> CompiledPtx {
    let sm80 = compile(text, "sm_80", warps);
    check_ptxas(&sm80.ptx, "sm_80", name);
    let sm90 = compile(text, "sm_90a", warps);
    check_ptxas(&sm90.ptx, "sm_90a", name);
    sm90
}

/// Runs ptxas on `ptx` for `arch`, failing the test if ptxas rejects it;
/// without ptxas the check is skipped visibly (and fails under CI).
/// `name` says which test in the skip line.
pub fn check_ptxas(ptx: &str, arch: &str, name: &str) {
    tritium_filetests::ptxas::check(ptx, arch, &format!("ptxas check {name} ({arch})"));
}
