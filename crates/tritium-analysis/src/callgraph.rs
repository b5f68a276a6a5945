//! The call graph of a module: functions are nodes, `call` ops edges. Gives
//! the walk orders per-function analyses need (callees first for allocation
//! and membar, callers first for argument facts). Recursion and calls to
//! unknown functions are errors, since every function is compiled once with
//! a fixed shared-memory size.
use std::collections::HashMap;

use tritium_ir::{Attr, Func, Module, Op, Opcode, Region};

#[derive(Clone, Debug)]
pub struct CallGraph {
    /// Per function: its call sites and the function each one calls.
    pub calls: HashMap<Func, Vec<(Op, Func)>>,
    /// Every function, callees before their callers.
    pub post_order: Vec<Func>,
}

impl CallGraph {
    pub fn build(module: &Module) -> Result<CallGraph, String> {
        let by_name: HashMap<&str, Func> = module.funcs.iter().map(|(id, f)| (f.name.as_str(), id)).collect();
        let mut calls = HashMap::new();
        for (id, f) in module.funcs.iter() {
            let mut sites = Vec::new();
            collect_calls(module, id, f.body, &by_name, &mut sites)?;
            calls.insert(id, sites);
        }
        let mut post_order = Vec::new();
        let mut state: HashMap<Func, u8> = HashMap::new(); // 1 = on the stack, 2 = done
        for id in module.funcs.keys() {
            visit(module, id, &calls, &mut state, &mut post_order)?;
        }
        Ok(CallGraph { calls, post_order })
    }

    /// Keeps only the functions `keep` holds, with their call sites; a kept
    /// function must not call a dropped one (true of the set reachable from
    /// chosen roots). Analyses then walk only those functions.
    pub fn retain(&mut self, keep: impl Fn(Func) -> bool) {
        self.post_order.retain(|&f| keep(f));
        self.calls.retain(|&f, _| keep(f));
    }

    /// Callers before callees.
    pub fn pre_order(&self) -> Vec<Func> {
        self.post_order.iter().rev().copied().collect()
    }
}

fn collect_calls(module: &Module, func: Func, region: Region, by_name: &HashMap<&str, Func>, out: &mut Vec<(Op, Func)>) -> Result<(), String> {
    let f = &module.funcs[func];
    for &op in &f.region_block(region).ops {
        let data = &f.ops[op];
        if data.opcode == Opcode::Call {
            let name = data.attrs.get("callee").and_then(Attr::as_str).unwrap_or("");
            let callee = by_name.get(name).ok_or_else(|| format!("@{} calls unknown function @{name}", f.name))?;
            out.push((op, *callee));
        }
        for &r in &data.regions {
            collect_calls(module, func, r, by_name, out)?;
        }
    }
    Ok(())
}

fn visit(module: &Module, id: Func, calls: &HashMap<Func, Vec<(Op, Func)>>, state: &mut HashMap<Func, u8>, out: &mut Vec<Func>) -> Result<(), String> {
    match state.get(&id) {
        Some(2) => return Ok(()),
        Some(_) => return Err(format!("recursive call cycle through @{}", module.funcs[id].name)),
        None => {}
    }
    state.insert(id, 1);
    for &(_, callee) in calls.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
        visit(module, callee, calls, state, out)?;
    }
    state.insert(id, 2);
    out.push(id);
    Ok(())
}
