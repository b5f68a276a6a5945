//! The tile passes as stages: `fold`, `canonicalize`, `cse`, `dce`, `dot_acc`,
//! `claim_tma` (one run each) and `passes` (the pipeline as codegen runs it). The output is the
//! printed module; running the stage again must change nothing.
use tritium_ir::{print, verify, Module};
use tritium_transforms::{canonicalize, claim_tma, eliminate_common_subexpressions, eliminate_dead_code, fold_constants, fuse_dot_accumulate, run_passes, PassOptions};

use crate::case::Step;
use crate::subtest::{Checking, Input, Output, SubTest};

type Pass = fn(&mut Module) -> Result<(), String>;

/// `$name` runs `$pass` and verifies the module it leaves.
macro_rules! verified {
    ($name:ident, $pass:path) => {
        fn $name(m: &mut Module) -> Result<(), String> {
            $pass(m);
            verify(m).map_err(|e| format!("the pass left a module that does not verify: {e}\n{}", print(m)))
        }
    };
}
verified!(fold, fold_constants);
verified!(canon, canonicalize);
verified!(cse, eliminate_common_subexpressions);
verified!(dce, eliminate_dead_code);
verified!(dot_acc, fuse_dot_accumulate);
verified!(tma, claim_tma_with_axis_info);

/// `claim_tma` as codegen runs it: offsets' alignment from axis info;
/// device-side descriptors included, whatever the default.
fn claim_tma_with_axis_info(m: &mut Module) -> usize {
    claim_tma(m, &tritium_codegen::offset_divisibility, true)
}

fn pipeline(m: &mut Module) -> Result<(), String> {
    let opts = PassOptions { verify_each: true, ..PassOptions::default() };
    run_passes(m, &opts, None).map(drop).map_err(|e| format!("pipeline: {e}"))
}

pub struct PassStage(&'static str, Pass);

static STAGES: [PassStage; 7] = [
    PassStage("fold", fold),
    PassStage("canonicalize", canon),
    PassStage("cse", cse),
    PassStage("dce", dce),
    PassStage("dot_acc", dot_acc),
    PassStage("claim_tma", tma),
    PassStage("passes", pipeline),
];

/// The pass named `name` (verifying after itself).
pub fn lookup(name: &str) -> Option<Pass> {
    STAGES.iter().find(|s| s.0 == name).map(|s| s.1)
}

/// The stage running pass `name`.
pub fn stage(name: &str) -> Option<&'static dyn SubTest> {
    STAGES.iter().find(|s| s.0 == name).map(|s| s as &dyn SubTest)
}

impl SubTest for PassStage {
    fn checking(&self) -> Checking {
        Checking::Exact
    }
    fn run(&self, input: &Input<'_>, _: &Step) -> Result<Output, String> {
        let mut m = input.module()?;
        (self.1)(&mut m)?;
        let out = print(&m);
        (self.1)(&mut m)?;
        if print(&m) != out {
            return Err(format!("not idempotent: a second run gives\n{}", print(&m)));
        }
        Ok(Output::Text(out))
    }
}
