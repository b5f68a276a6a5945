//! The stages a case's `RUN:` line may name, one `SubTest` each: what the
//! stage produces from the case's IR and how its checks read that output.
//! A RUN line is `stage[, stage...]`; every stage but the last must be a
//! tile pass, applied in order to the module the last one sees.
use tritium_ir::Module;

use crate::case::Step;
use crate::stages;

/// How a stage's output is compared with the case's check lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checking {
    /// The checks spell the whole output (one CHECK, then CHECK-NEXT per
    /// line), so `TRITIUM_TEST_BLESS=1` can rewrite them.
    Exact,
    /// FileCheck over a sample of the output (LLVM IR, PTX, facts).
    FileCheck,
    /// The stage checks itself and prints nothing; the case has no checks.
    SelfChecking,
}

/// A stage's answer for one case.
pub enum Output {
    Text(String),
    /// The stage could not run here (e.g. no ptxas); the reason is reported.
    Skipped(String),
}

/// The case's IR and the passes its RUN line applies before the stage.
pub struct Input<'c> {
    pub text: String,
    pub passes: Vec<&'c Step>,
}

impl Input<'_> {
    /// The input parsed and verified, with the RUN line's earlier passes applied.
    pub fn module(&self) -> Result<Module, String> {
        let mut m = tritium_ir::parse(&self.text).map_err(|e| format!("parse: {e}"))?;
        tritium_ir::verify(&m).map_err(|e| format!("the input does not verify: {e}"))?;
        for step in &self.passes {
            let pass = stages::passes::lookup(&step.name)
                .ok_or_else(|| format!("`{}` is not a tile pass: only passes may come before the last stage", step.name))?;
            pass(&mut m)?;
        }
        Ok(m)
    }
}

pub trait SubTest: Sync {
    fn checking(&self) -> Checking;
    fn run(&self, input: &Input<'_>, step: &Step) -> Result<Output, String>;
}

/// The stage named `name`.
pub fn lookup(name: &str) -> Option<&'static dyn SubTest> {
    Some(match name {
        "verify" => &stages::ir::Verify,
        "parse-print" => &stages::ir::ParsePrint,
        "roundtrip" => &stages::ir::Roundtrip,
        "axis-info" => &stages::analysis::AxisInfo,
        "allocation" => &stages::codegen::ALLOCATION,
        "membar" => &stages::codegen::MEMBAR,
        "pipelined" => &stages::codegen::PIPELINED,
        "llvm-ir" => &stages::codegen::LLVM_IR,
        "ptx" => &stages::codegen::PTX,
        "ptxas" => &stages::codegen::Ptxas,
        pass => stages::passes::stage(pass)?,
    })
}
