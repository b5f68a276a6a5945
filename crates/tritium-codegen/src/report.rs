//! What code generation will make of a module's memory accesses and loops,
//! for tools (the interpreter's profiler): per global load, store and atomic,
//! the elements one thread moves per access and what limits it, by the same
//! rule the lowering uses (`lower::memory::elems_per_access`, before layouts
//! cap it by the elements a thread owns); per `for` loop, its trip count
//! when axis info knows every bound. The tile passes run first, as in
//! `compile_ptx`.
use tritium_analysis::axis_info::pow2_floor;
use tritium_analysis::{CallGraph, FuncAxisInfo, ModuleAxisInfo};
use tritium_ir::{Function, LocData, Module, Opcode, Region};

use crate::error::{CodegenError, Result};
use crate::layout::elem_bytes;
use crate::lower::memory::elems_per_access;
use crate::{run_passes, PassOptions};

/// One memory op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessReport {
    pub loc: LocData,
    pub op: &'static str,
    pub elem_bytes: u32,
    /// Elements per access (1 for a scalar pointer).
    pub width: u64,
    /// What stops a wider access: "contiguity", "alignment", "mask",
    /// "max access size" (16 bytes: fully vectorized) or "scalar".
    pub limit: &'static str,
    pub contiguity: u64,
    pub divisibility: u64,
    pub mask_constancy: Option<u64>,
}

/// One `for` loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopReport {
    pub loc: LocData,
    pub trip_count: Option<u64>,
}

pub fn report(module: &Module, max_access_bytes: u32) -> Result<(Vec<AccessReport>, Vec<LoopReport>)> {
    tritium_ir::verify(module)?;
    let mut owned = module.clone();
    run_passes(&mut owned, &PassOptions::default(), None)?;
    let graph = CallGraph::build(&owned).map_err(CodegenError::CallGraph)?;
    let facts = ModuleAxisInfo::compute(&owned, &graph);
    let mut out = (Vec::new(), Vec::new());
    for (id, func) in owned.funcs.iter() {
        if let Some(info) = facts.func(id) {
            walk(&owned, func, info, max_access_bytes, func.body, &mut out);
        }
    }
    Ok(out)
}

fn walk(module: &Module, func: &Function, facts: &FuncAxisInfo, max_bytes: u32, region: Region,
        out: &mut (Vec<AccessReport>, Vec<LoopReport>)) {
    let loc = |o| module.locs.get(func.ops[o].loc).cloned().unwrap_or_default();
    for &op in &func.region_block(region).ops {
        let data = &func.ops[op];
        for &r in &data.regions {
            walk(module, func, facts, max_bytes, r, out);
        }
        let (name, mask) = match data.opcode {
            Opcode::Load => ("load", data.operands.get(1).copied()),
            Opcode::Store => ("store", data.operands.get(2).copied()),
            Opcode::AtomicRmw | Opcode::AtomicCas => ("atomic", None),
            Opcode::For => {
                let bound = |i: usize| data.operands.get(i).and_then(|&v| facts.dims(v)).and_then(|f| f.value);
                let trip_count = match (bound(0), bound(1), bound(2)) {
                    (Some(lo), Some(hi), Some(step)) if step > 0 => Some(((hi - lo).max(0) as u64).div_ceil(step as u64)),
                    (Some(lo), Some(hi), Some(step)) if step < 0 => Some(((lo - hi).max(0) as u64).div_ceil(step.unsigned_abs())),
                    _ => None,
                };
                out.1.push(LoopReport { loc: loc(op), trip_count });
                continue;
            }
            _ => continue,
        };
        let Some(&ptr) = data.operands.first() else { continue };
        let types = &module.types;
        let ty = func.value_type(ptr);
        let Some(kind) = types.pointee(ty).and_then(|p| types.scalar_kind(p)) else { continue };
        let eb = elem_bytes(kind);
        let p = facts.get(ptr);
        let m = mask.map(|m| facts.get(m));
        let (width, limit) = if !types.is_tensor(ty) || data.opcode != Opcode::Load && data.opcode != Opcode::Store {
            (1, if types.is_tensor(ty) { "atomic" } else { "scalar" })
        } else {
            let width = elems_per_access(p, m, eb, max_bytes, u64::MAX);
            let eb = eb as u64;
            let bounds = [("contiguity", p.contiguity), ("alignment", (p.divisibility / eb).max(1)),
                          ("mask", m.map_or(u64::MAX, |m| m.constancy)), ("max access size", (max_bytes as u64 / eb).max(1))];
            let limit = if width * eb >= max_bytes as u64 {
                "max access size"
            } else {
                bounds.iter().find(|(_, b)| pow2_floor(*b) == width).map_or("max access size", |(n, _)| n)
            };
            (width, limit)
        };
        out.0.push(AccessReport { loc: loc(op), op: name, elem_bytes: eb, width, limit, contiguity: p.contiguity,
                                  divisibility: p.divisibility, mask_constancy: m.map(|m| m.constancy) });
    }
}
