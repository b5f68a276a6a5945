//! The end of the pipeline: LLVM verifier, the new pass manager's
//! `default<O3>`, then the target's emitter (PTX for NVPTX).
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::TargetMachine;

use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;
use crate::target::Target;

/// Verifies and optimises `llvm.module` in place.
pub fn optimize(llvm: &Llvm<'_>, machine: &TargetMachine) -> Result<()> {
    llvm.module.verify().map_err(|e| CodegenError::LlvmVerify(e.to_string()))?;
    llvm.module
        .run_passes("default<O3>", machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError::Llvm(format!("optimisation failed: {e}")))?;
    llvm.module.verify().map_err(|e| CodegenError::LlvmVerify(format!("after default<O3>: {e}")))
}

/// The target's text (PTX) for the optimised module.
pub fn emit_text(llvm: &Llvm<'_>, target: &dyn Target, machine: &TargetMachine) -> Result<String> {
    let bytes = target.emit(llvm, machine)?;
    String::from_utf8(bytes).map_err(|_| CodegenError::Llvm("the emitted assembly is not UTF-8".into()))
}
