//! The compiler stages a generated module goes through, in order. Each stage
//! takes the module and returns the module the next stage sees; a valid module
//! must pass every stage, so any error is a bug. Adding a stage (an analysis,
//! a transform, codegen) is one line in `STAGES`.
use tritium_codegen::{compile_ptx, CodegenError, Options};
use tritium_ir::{decode, encode, parse, print, verify, Module};

pub type Stage = fn(Module) -> Result<Module, String>;

pub const STAGES: &[(&str, Stage)] = &[
    ("verify", verify_stage),
    ("encode → decode", binary_roundtrip),
    ("print → parse", text_roundtrip),
    ("nvptx codegen", nvptx_codegen),
];

/// Runs every stage, verifying after each; `Err` names the stage that failed.
pub fn run_all(mut m: Module) -> Result<Module, String> {
    for (name, stage) in STAGES {
        m = stage(m).map_err(|e| format!("stage '{name}': {e}"))?;
        verify(&m).map_err(|e| format!("after stage '{name}': module no longer verifies: {e}"))?;
    }
    Ok(m)
}

fn verify_stage(m: Module) -> Result<Module, String> {
    verify(&m).map_err(|e| e.to_string())?;
    Ok(m)
}

/// The binary form must decode to a module that encodes to the same bytes.
fn binary_roundtrip(m: Module) -> Result<Module, String> {
    let bytes = encode(&m);
    let decoded = decode(&bytes).map_err(|e| format!("decode of encoded module: {e}"))?;
    if encode(&decoded) != bytes {
        return Err("decode → encode changes the bytes".into());
    }
    if print(&decoded) != print(&m) {
        return Err("decoded module prints differently".into());
    }
    Ok(decoded)
}

/// The text form must parse back to the same module and print identically.
fn text_roundtrip(m: Module) -> Result<Module, String> {
    let text = print(&m);
    let parsed = parse(&text).map_err(|e| format!("parse of printed module: {e}"))?;
    if encode(&parsed) != encode(&m) {
        return Err("print → parse changes the module".into());
    }
    if print(&parsed) != text {
        return Err("print → parse → print changes the text".into());
    }
    Ok(parsed)
}

/// LLVM IR generation, O3 and PTX emission for sm_90a. Ops the backend does
/// not lower yet and modules whose calls cannot be compiled (no kernel, a
/// kernel called) are expected answers; anything else (an internal error, an
/// LLVM module failing LLVM's verifier, an LLVM error, a panic) is a bug.
fn nvptx_codegen(m: Module) -> Result<Module, String> {
    let options = Options::new("sm_90a", 4).map_err(|e| e.to_string())?;
    match compile_ptx(&m, &options) {
        Ok(_)
        | Err(CodegenError::Unsupported { .. })
        | Err(CodegenError::Invalid { .. })
        | Err(CodegenError::Option(_))
        | Err(CodegenError::CallGraph(_)) => Ok(m),
        Err(e) => Err(e.to_string()),
    }
}
