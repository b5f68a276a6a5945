//! tritium-codegen stages, each compiling the case's kernels (options
//! `arch=` (default sm_90), `warps=` (default 4) and `tma_device=1` (TMA for
//! device-side descriptors, whatever its default)): `llvm-ir` (optimised
//! LLVM IR), `ptx`, `ptxas` (NVIDIA's assembler accepts the PTX; the output
//! is each kernel's resource report; skipped visibly without ptxas),
//! `allocation` (shared-memory buffers and call bases), `pipelined` (the
//! IR as software pipelining left it, before lowering) and `membar` (every
//! function's access trace with the barriers membar kept and dropped). A
//! module the backend refuses gives `error: ...` as the output.
use std::fmt::Write;

use tritium_codegen::{compile_ptx, CompiledPtx, Options};

use crate::case::Step;
use crate::subtest::{Checking, Input, Output, SubTest};

/// The compiled module, or (as `Err`) the output a case sees when
/// compiling fails: `error: <the CodegenError>`, so cases can check errors.
fn compile(input: &Input<'_>, step: &Step) -> Result<Result<CompiledPtx, Output>, String> {
    let module = input.module()?;
    let warps = step.option("warps").unwrap_or("4").parse().map_err(|_| "warps= takes a number".to_string())?;
    Ok(Options::new(arch(step), warps)
        .and_then(|mut options| {
            options.keep_pipelined = true;
            options.tma_device |= step.option("tma_device") == Some("1");
            compile_ptx(&module, &options)
        })
        .map_err(|e| Output::Text(format!("error: {e}\n"))))
}


fn arch(step: &Step) -> &str {
    step.option("arch").unwrap_or("sm_90")
}

/// A stage whose output is one part of the compiled module.
pub struct Compiled {
    checking: Checking,
    part: fn(CompiledPtx) -> String,
}

pub static LLVM_IR: Compiled = Compiled { checking: Checking::FileCheck, part: |out| out.llir };
pub static PTX: Compiled = Compiled { checking: Checking::FileCheck, part: |out| out.ptx };
pub static ALLOCATION: Compiled = Compiled { checking: Checking::Exact, part: |out| out.allocation };
pub static MEMBAR: Compiled = Compiled { checking: Checking::Exact, part: |out| out.membar };
pub static PIPELINED: Compiled = Compiled { checking: Checking::FileCheck, part: |out| out.pipelined };

impl SubTest for Compiled {
    fn checking(&self) -> Checking {
        self.checking
    }
    fn run(&self, input: &Input<'_>, step: &Step) -> Result<Output, String> {
        Ok(compile(input, step)?.map_or_else(|e| e, |out| Output::Text((self.part)(out))))
    }
}

pub struct Ptxas;

impl SubTest for Ptxas {
    fn checking(&self) -> Checking {
        Checking::FileCheck
    }
    fn run(&self, input: &Input<'_>, step: &Step) -> Result<Output, String> {
        let out = match compile(input, step)? {
            Ok(out) => out,
            Err(error) => return Ok(error),
        };
        let ptxas = match crate::ptxas::locate() {
            Ok(p) => p,
            Err(reason) => return Ok(Output::Skipped(reason)),
        };
        let mut report = String::new();
        for kernel in &out.kernels {
            let (_, i) = tritium_runtime::ptxas::compile(&ptxas, &out.ptx, arch(step), kernel).map_err(|e| e.to_string())?;
            let _ = writeln!(
                report,
                "{kernel}: registers={} spill_stores={} spill_loads={} stack_bytes={} shared_bytes={}",
                i.registers, i.spill_stores, i.spill_loads, i.stack_bytes, i.shared_bytes
            );
        }
        Ok(Output::Text(report))
    }
}
