//! The end of the pipeline: LLVM verifier, the target's pass pipeline
//! (`default<O3>` less `dse` for NVPTX, O1's passes that matter for AMDGPU), then the target's
//! emitter (PTX, or AMDGCN and the HSACO); and the
//! assembly of an already optimised module, later, from its LLVM IR text.
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::TargetMachine;

use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;
use crate::target::Target;

/// Verifies and optimises `llvm.module` in place with `pipeline` (the
/// target's, `Target::optimization_pipeline`, unless a caller compares).
pub fn optimize(llvm: &Llvm<'_>, pipeline: &str, machine: &TargetMachine) -> Result<()> {
    llvm.module.verify().map_err(|e| CodegenError::LlvmVerify(e.to_string()))?;
    llvm.module
        .run_passes(pipeline, machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError::Llvm(format!("optimisation failed: {e}")))?;
    llvm.module.verify().map_err(|e| CodegenError::LlvmVerify(format!("after {pipeline}: {e}")))
}

/// The target's text (PTX) for the optimised module.
pub fn emit_text(llvm: &Llvm<'_>, target: &dyn Target, machine: &TargetMachine) -> Result<String> {
    let bytes = target.emit(llvm, machine)?;
    String::from_utf8(bytes).map_err(|_| CodegenError::Llvm("the emitted assembly is not UTF-8".into()))
}

/// The target's assembly for `llir`, the optimised LLVM IR a compilation for
/// `arch` returned (`CompiledPtx::llir`): what `Options::assembly` skipped,
/// made when someone reads it. Code generation only: no optimisation again.
pub fn assembly_from_llir(llir: &str, arch: &str) -> Result<String> {
    let target = crate::target::lookup(arch)?;
    let machine = target.target_machine()?;
    let context = Context::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(llir.as_bytes(), "llir");
    let module = context.create_module_from_ir(buffer).map_err(|e| CodegenError::Llvm(format!("cannot parse the LLVM IR: {e}")))?;
    let llvm = Llvm { context: &context, module, builder: context.create_builder() };
    emit_text(&llvm, target.as_ref(), &machine)
}
