//! The verifier: every rule of docs/ir.md a module must satisfy before any
//! analysis or codegen trusts it. Structure, scoping and terminators are
//! checked here; per-op typing rules live in `ops.rs`, `shapes.rs`, `blocks.rs`
//! and `lookup.rs`.
mod blocks;
mod lookup;
mod ops;
mod shapes;

use std::collections::HashSet;

use crate::entities::{Op, Region, Type, Value};
use crate::error::VerifyError;
use crate::module::{Function, LocData, Module};
use crate::ops::{Opcode, Results, CONTRACT};
use crate::types::MAX_TENSOR_NUMEL;

pub fn verify(m: &Module) -> Result<(), VerifyError> {
    let mut seen = HashSet::new();
    for f in m.funcs.values() {
        if !seen.insert(f.name.as_str()) {
            return Err(func_err(f, format!("function @{} defined twice", f.name)));
        }
    }
    for f in m.funcs.values() {
        Checker { m, f, visible: vec![false; f.values.len()] }.function()?;
    }
    Ok(())
}

fn func_err(f: &Function, msg: String) -> VerifyError {
    VerifyError { func: f.name.clone(), op: None, loc: LocData::default(), msg }
}

pub(crate) struct Checker<'a> {
    pub m: &'a Module,
    pub f: &'a Function,
    /// Values in scope at the current point of the walk.
    visible: Vec<bool>,
}

impl<'a> Checker<'a> {
    pub fn err(&self, op: Op, msg: impl Into<String>) -> VerifyError {
        let name = self.f.ops.get(op).map(|o| o.opcode.name().to_string());
        let loc = self.f.ops.get(op).and_then(|o| self.m.locs.get(o.loc)).cloned().unwrap_or_default();
        VerifyError { func: self.f.name.clone(), op: name, loc, msg: msg.into() }
    }
    pub fn show(&self, t: Type) -> String {
        self.m.types.display(t).to_string()
    }
    pub fn ty(&self, v: Value) -> Type {
        self.f.values[v].ty
    }

    /// A type must exist in the table and have power-of-two dims.
    fn check_type(&self, t: Type) -> Result<(), String> {
        self.check_type_from(t, 0)
    }

    /// `check_type`, with dims before `first` only required to be non-zero
    /// (a multi-stage buffer may have any number of stages).
    fn check_type_from(&self, t: Type, first: usize) -> Result<(), String> {
        if !self.m.types.contains(t) {
            return Err(format!("type index {} out of range", t.0));
        }
        let dims = self.m.types.dims(t);
        if let Some(d) = dims.iter().enumerate().find(|&(i, d)| if i < first { *d == 0 } else { !d.is_power_of_two() }).map(|(_, d)| d) {
            return Err(format!("tensor dim {d} of {} is not a power of two", self.show(t)));
        }
        // bounded before anything sizes registers or buffers from it: a huge
        // tensor must be an error here, not an allocation failure in LLVM
        let count = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
        if count.is_none_or(|c| c > MAX_TENSOR_NUMEL) {
            let n = count.map_or_else(|| "over 2^64".to_string(), |c| c.to_string());
            return Err(format!("{} has {n} elements, more than the {MAX_TENSOR_NUMEL} a tensor may hold", self.show(t)));
        }
        Ok(())
    }

    fn function(&mut self) -> Result<(), VerifyError> {
        let f = self.f;
        if !f.regions.contains(f.body) || !f.blocks.contains(f.regions[f.body].block) {
            return Err(func_err(f, "function body region is missing".into()));
        }
        if f.arg_attrs.len() != f.args().len() {
            return Err(func_err(f, format!("{} argument attribute dicts for {} arguments", f.arg_attrs.len(), f.args().len())));
        }
        for &t in f.arg_types().iter().chain(&f.results) {
            self.check_type(t).map_err(|e| func_err(f, e))?;
        }
        self.region(f.body, Opcode::Return, None)
    }

    /// `term`: the terminator the region's block must end in.
    fn region(&mut self, r: Region, term: Opcode, parent: Option<Op>) -> Result<(), VerifyError> {
        let f = self.f;
        let block = f.regions[r].block;
        let b = &f.blocks[block];
        for &a in &b.args {
            self.visible[a.index_usize()] = true;
        }
        let mut defined: Vec<Value> = b.args.clone();
        for (i, &op) in b.ops.iter().enumerate() {
            let Some(od) = f.ops.get(op) else {
                return Err(func_err(f, format!("block refers to missing op {}", op.0)));
            };
            for (slot, &v) in od.operands.iter().enumerate() {
                if !f.values.contains(v) {
                    return Err(self.err(op, format!("operand {slot} refers to a missing value")));
                }
                if !self.visible[v.index_usize()] {
                    return Err(self.err(op, format!("operand {slot} is not defined before this use (or not in an enclosing block)")));
                }
            }
            let info = od.opcode.info();
            let last = i + 1 == b.ops.len();
            if info.terminator {
                if !last {
                    return Err(self.err(op, "terminator must be the last op of its block"));
                }
                if od.opcode != term {
                    return Err(self.err(op, format!("this block must end in '{term}', not '{}'", info.name)));
                }
            } else if last {
                return Err(self.err(op, format!("block must end in '{term}'")));
            }
            self.generic(op)?;
            self.op_rules(op, parent)?;
            let kinds = region_terms(od.opcode);
            for (&r, &t) in od.regions.iter().zip(kinds) {
                self.region(r, t, Some(op))?;
            }
            for &v in &od.results {
                self.visible[v.index_usize()] = true;
                defined.push(v);
            }
        }
        if b.ops.is_empty() {
            let msg = format!("empty block: must end in '{term}'");
            return Err(match parent {
                Some(p) => self.err(p, format!("region {msg}")),
                None => func_err(f, msg),
            });
        }
        for v in defined {
            self.visible[v.index_usize()] = false;
        }
        Ok(())
    }

    /// Arity, region count, attributes and result types from the op table.
    fn generic(&self, op: Op) -> Result<(), VerifyError> {
        let od = &self.f.ops[op];
        let info = od.opcode.info();
        let n = od.operands.len() as u64;
        let too_few = n < info.min_operands as u64;
        let too_many = info.max_operands.is_some_and(|max| n > max as u64);
        if too_few || too_many {
            let expected = match info.max_operands {
                Some(max) if max == info.min_operands => format!("{max}"),
                Some(max) => format!("{} to {max}", info.min_operands),
                None => format!("at least {}", info.min_operands),
            };
            return Err(self.err(op, format!("expected {expected} operands, got {n}")));
        }
        if let Results::Fixed(r) = info.results {
            if od.results.len() != r as usize {
                return Err(self.err(op, format!("expected {r} results, got {}", od.results.len())));
            }
        }
        if od.regions.len() != info.regions as usize {
            return Err(self.err(op, format!("expected {} regions, got {}", info.regions, od.regions.len())));
        }
        for &r in &od.regions {
            if !self.f.regions.contains(r) || !self.f.blocks.contains(self.f.regions[r].block) {
                return Err(self.err(op, "refers to a missing region"));
            }
        }
        for spec in info.attrs {
            match od.attrs.get(spec.name) {
                None if spec.required => {
                    return Err(self.err(op, format!("missing required attribute '{}'", spec.name)))
                }
                Some(a) if !a.matches(spec.kind) => {
                    return Err(self.err(
                        op,
                        format!("attribute '{}' must be {}, got {}", spec.name, spec.kind.describe(), a.kind_name()),
                    ))
                }
                _ => {}
            }
        }
        // unknown attributes pass (passes may annotate ops), but `contract`
        // changes the generated code, so it must not sit where it means nothing
        if od.attrs.contains_key(CONTRACT) && !info.attrs.iter().any(|s| s.name == CONTRACT) {
            return Err(self.err(op, format!("attribute '{CONTRACT}' is only for float add, sub and mul")));
        }
        for &v in &od.results {
            if !self.f.values.contains(v) {
                return Err(self.err(op, "refers to a missing result value"));
            }
            let stages = usize::from(od.opcode == Opcode::LocalAlloc);
            self.check_type_from(self.ty(v), stages).map_err(|e| self.err(op, e))?;
        }
        Ok(())
    }
}

/// The terminator each region of an op ends in: `while`'s before-region in
/// `condition`, every other region (`for`, `if`, `reduce`, `scan`) in `yield`.
fn region_terms(opcode: Opcode) -> &'static [Opcode] {
    match opcode {
        Opcode::While => &[Opcode::Condition, Opcode::Yield],
        _ => &[Opcode::Yield, Opcode::Yield],
    }
}

trait IndexUsize {
    fn index_usize(self) -> usize;
}
impl IndexUsize for Value {
    fn index_usize(self) -> usize {
        self.0 as usize
    }
}
