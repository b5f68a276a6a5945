//! Shared by the NVPTX integration tests: compile tile IR text, and run
//! NVIDIA's ptxas on emitted PTX when it can be found, with the runtime's own
//! finder (TRITIUM_PTXAS, PATH) plus the nvidia-cuda-nvcc wheel that
//! scripts/setup.sh puts in `.venv`.
// each test file uses only some of these helpers
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

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

fn ptxas() -> Option<PathBuf> {
    let venv_lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    let wheel_dirs: Vec<PathBuf> = std::fs::read_dir(&venv_lib)
        .map(|entries| {
            entries.filter_map(|e| e.ok()).map(|e| e.path().join("site-packages/nvidia/cuda_nvcc/bin")).collect()
        })
        .unwrap_or_default();
    tritium_runtime::ptxas::find(&wheel_dirs).ok().flatten()
}

/// Runs ptxas on `ptx` for `arch` when it is available; fails the test if
/// ptxas rejects it. `name` keeps concurrent tests' scratch files apart.
pub fn check_ptxas(ptx: &str, arch: &str, name: &str) {
    let Some(ptxas) = ptxas() else { return };
    let dir = std::env::temp_dir().join(format!("tritium_ptxas_{}_{name}_{arch}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("k.ptx");
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(ptxas).args(["--gpu-name", arch]).arg(&src).arg("-o").arg(dir.join("k.cubin")).output().unwrap();
    assert!(out.status.success(), "ptxas {arch} failed: {}\n{ptx}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
