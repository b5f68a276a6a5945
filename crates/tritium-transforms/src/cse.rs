//! Common subexpression elimination over structured regions: an op equal to
//! one already seen (opcode, operands, attributes, result types) in its block
//! or an enclosing one (those dominate it) reuses that op's results. Only ops
//! that read nothing that can change qualify: no memory, atomics, debug ops,
//! barriers, calls, or ops with regions.
use std::collections::HashMap;

use crate::effects::is_pure;
use tritium_ir::{Attrs, Block, Function, Module, Op, Opcode, Type, Value};

/// Whether `op` may be merged with an equal op.
pub fn is_cse_candidate(f: &Function, op: Op) -> bool {
    let od = &f.ops[op];
    if !od.regions.is_empty() || od.results.is_empty() || od.opcode.info().terminator {
        return false;
    }
    is_pure(f, op)
}

type Key = (Opcode, Vec<Value>, Vec<Type>);

struct Scope {
    table: HashMap<Key, Vec<(Attrs, Op)>>,
    /// Keys added per open block, removed when the block's walk ends.
    undo: Vec<Vec<Key>>,
    subst: HashMap<Value, Value>,
    removed: usize,
}

/// Merges equal pure ops in every function; returns how many were removed.
pub fn eliminate_common_subexpressions(m: &mut Module) -> usize {
    let mut removed = 0;
    for f in m.funcs.keys().collect::<Vec<_>>() {
        let f = &mut m.funcs[f];
        let mut s = Scope { table: HashMap::new(), undo: Vec::new(), subst: HashMap::new(), removed: 0 };
        let entry = f.entry_block();
        s.block(f, entry);
        removed += s.removed;
    }
    removed
}

impl Scope {
    fn block(&mut self, f: &mut Function, block: Block) {
        self.undo.push(Vec::new());
        let ops = std::mem::take(&mut f.blocks[block].ops);
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            for v in f.ops[op].operands.iter_mut() {
                if let Some(&n) = self.subst.get(v) {
                    *v = n;
                }
            }
            if is_cse_candidate(f, op) {
                let od = &f.ops[op];
                let types = od.results.iter().map(|&r| f.value_type(r)).collect();
                let key: Key = (od.opcode, od.operands.clone(), types);
                let bucket = self.table.entry(key.clone()).or_default();
                if let Some(&(_, prev)) = bucket.iter().find(|(a, _)| *a == od.attrs) {
                    for (&r, &p) in od.results.iter().zip(&f.ops[prev].results) {
                        self.subst.insert(r, p);
                    }
                    self.removed += 1;
                    continue;
                }
                bucket.push((od.attrs.clone(), op));
                if let Some(undo) = self.undo.last_mut() {
                    undo.push(key);
                }
            }
            for r in f.ops[op].regions.clone() {
                let b = f.regions[r].block;
                self.block(f, b);
            }
            out.push(op);
        }
        f.blocks[block].ops = out;
        // ops of this block do not dominate anything outside it
        for key in self.undo.pop().unwrap_or_default() {
            if let Some(bucket) = self.table.get_mut(&key) {
                bucket.pop();
                if bucket.is_empty() {
                    self.table.remove(&key);
                }
            }
        }
    }
}
