//! `axis-info`: the facts `ModuleAxisInfo` computes, one line per value of
//! every function, `@func %N: div=... contig=... const=... [value=...]`
//! (values numbered as the printer numbers them), for FileCheck.
use std::fmt::Write;

use tritium_analysis::{CallGraph, ModuleAxisInfo};
use tritium_ir::codec::number_values;

use crate::case::Step;
use crate::subtest::{Checking, Input, Output, SubTest};

pub struct AxisInfo;

impl SubTest for AxisInfo {
    fn checking(&self) -> Checking {
        Checking::FileCheck
    }
    fn run(&self, input: &Input<'_>, _: &Step) -> Result<Output, String> {
        let module = input.module()?;
        let graph = CallGraph::build(&module).map_err(|e| format!("call graph: {e}"))?;
        let info = ModuleAxisInfo::compute(&module, &graph);
        let mut out = String::new();
        for (id, func) in module.funcs.iter() {
            let mut values: Vec<_> = number_values(func).into_iter().collect();
            values.sort_by_key(|&(_, n)| n);
            for (v, n) in values {
                let facts = info.func(id).and_then(|f| f.dims(v)).map(|f| f.render()).unwrap_or_else(|| "<no facts>".into());
                let _ = writeln!(out, "@{} %{n}: {facts}", func.name);
            }
        }
        Ok(Output::Text(out))
    }
}
