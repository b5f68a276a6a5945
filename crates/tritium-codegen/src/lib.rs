//! tritium-codegen: lowers verified tile IR to LLVM IR through inkwell (LLVM 19,
//! linked statically) and emits target code. Everything target-specific sits
//! behind `target::Target`; `lower` is shared. First slice: NVPTX, elementwise
//! kernels, one 1-D blocked layout per tensor size (see `layout`).
pub mod contiguity;
pub mod emit;
pub mod error;
pub mod layout;
pub mod symbol;
pub mod llvm;
mod lower;
pub mod target;

use inkwell::context::Context;
use inkwell::targets::TargetTriple;

pub use error::{CodegenError, Result};
pub use target::{NvArch, Nvptx, Target};

/// Options of one compilation.
#[derive(Clone, Debug)]
pub struct Options {
    pub arch: NvArch,
    pub num_warps: u32,
}

impl Options {
    pub fn new(arch: &str, num_warps: u32) -> Result<Options> {
        if !(1..=32).contains(&num_warps) || !num_warps.is_power_of_two() {
            return Err(CodegenError::Option(format!("num_warps must be a power of two from 1 to 32, got {num_warps}")));
        }
        Ok(Options { arch: NvArch::parse(arch)?, num_warps })
    }
}

/// The artefacts of one NVPTX compilation.
#[derive(Clone, Debug)]
pub struct CompiledPtx {
    /// Optimised LLVM IR text.
    pub llir: String,
    pub ptx: String,
    /// Dynamic shared memory the kernel needs, in bytes (the largest kernel's).
    pub shared: u32,
    /// The PTX entry name of each kernel, in module order (`symbol::symbol_name`).
    pub kernels: Vec<String>,
}

/// Where `compile_ptx_until` stops: after generating LLVM IR, after LLVM's
/// optimization pipeline, or after PTX emission (the whole of `compile_ptx`).
/// Exists so benchmarks can time each stage (as differences of prefixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopAfter {
    Lower,
    Optimize,
    Emit,
}

/// Compiles every kernel of `module` (verified first) to one PTX module.
pub fn compile_ptx(module: &tritium_ir::Module, options: &Options) -> Result<CompiledPtx> {
    compile_ptx_until(module, options, StopAfter::Emit)
}

/// `compile_ptx`, stopped after `stop`; `llir` and `ptx` are empty for the
/// stages not reached.
pub fn compile_ptx_until(module: &tritium_ir::Module, options: &Options, stop: StopAfter) -> Result<CompiledPtx> {
    tritium_ir::verify(module)?;
    let target = Nvptx::new(options.arch);
    let machine = target.target_machine()?;
    let context = Context::create();
    let llvm = llvm::Llvm::new(&context, "tritium");
    llvm.module.set_triple(&TargetTriple::create(target.triple()));
    llvm.module.set_data_layout(&machine.get_target_data().get_data_layout());
    let mut kernels = Vec::new();
    let mut shared = 0;
    for (id, f) in module.funcs.iter() {
        if !f.kernel && !f.noinline {
            // inlined helpers the frontend kept: nothing calls them after inlining
            continue;
        }
        shared = shared.max(lower::lower_kernel(&llvm, &target, module, id, options.num_warps)?);
        kernels.push(symbol::symbol_name(&f.name));
    }
    if kernels.is_empty() {
        return Err(CodegenError::Option("the module has no kernel function".into()));
    }
    if stop == StopAfter::Lower {
        return Ok(CompiledPtx { llir: String::new(), ptx: String::new(), shared, kernels });
    }
    emit::optimize(&llvm, &machine)?;
    if stop == StopAfter::Optimize {
        return Ok(CompiledPtx { llir: String::new(), ptx: String::new(), shared, kernels });
    }
    let llir = llvm.module.print_to_string().to_string();
    let ptx = emit::emit_text(&llvm, &target, &machine)?;
    Ok(CompiledPtx { llir, ptx, shared, kernels })
}

/// Parses tile IR text, then `compile_ptx` (for tests and tools).
pub fn compile_ptx_text(text: &str, options: &Options) -> std::result::Result<CompiledPtx, String> {
    let module = tritium_ir::parse(text).map_err(|e| e.to_string())?;
    compile_ptx(&module, options).map_err(|e| e.to_string())
}
