//! The rewrite driver shared by fold and canonicalize: one pre-order walk per
//! function in which every op first sees its operands' replacements, then its
//! visitor decides to keep it, replace its results, or inline one of its
//! regions. Definitions precede uses in pre-order, so one walk suffices.
use std::collections::{HashMap, VecDeque};

use tritium_ir::{Block, Function, Module, Op, Region, TypeTable, Value};

/// What a visitor does with an op.
pub enum Rewrite {
    Keep,
    /// Drop the op; `insert` (new unplaced ops) go where it was, and its
    /// results become `values`.
    Replace { insert: Vec<Op>, values: Vec<Value> },
    /// Drop the op and splice the ops of its region `n` in its place; the
    /// region's terminator operands become the results (`if` regions only:
    /// they have no block arguments).
    Inline(usize),
    /// Keep the op, from which the visitor removed results or block
    /// arguments in place; each removed value is replaced by its partner.
    Pruned(Vec<(Value, Value)>),
}

impl Rewrite {
    pub fn with(values: Vec<Value>) -> Rewrite {
        Rewrite::Replace { insert: Vec::new(), values }
    }
    /// Replaces the op by the single-result op `new`.
    pub fn by_op(f: &Function, new: Op) -> Rewrite {
        Rewrite::Replace { insert: vec![new], values: f.ops[new].results.clone() }
    }
}

pub type Visitor<'v> = dyn FnMut(&TypeTable, &mut Function, Op) -> Rewrite + 'v;

/// Runs `visit` over every function of `m`; returns how many ops it rewrote.
pub fn rewrite_module(m: &mut Module, visit: &mut Visitor<'_>) -> usize {
    let Module { types, funcs, .. } = m;
    let mut changed = 0;
    for id in funcs.keys().collect::<Vec<_>>() {
        let f = &mut funcs[id];
        let mut w = Walker { types, subst: HashMap::new(), changed: 0 };
        let body = f.body;
        w.region(f, body, visit);
        changed += w.changed;
    }
    changed
}

struct Walker<'t> {
    types: &'t TypeTable,
    subst: HashMap<Value, Value>,
    changed: usize,
}

impl Walker<'_> {
    fn resolve(&self, mut v: Value) -> Value {
        while let Some(&n) = self.subst.get(&v) {
            v = n;
        }
        v
    }

    fn region(&mut self, f: &mut Function, r: Region, visit: &mut Visitor<'_>) {
        let block = f.regions[r].block;
        self.block(f, block, visit);
    }

    fn block(&mut self, f: &mut Function, block: Block, visit: &mut Visitor<'_>) {
        let mut queue: VecDeque<Op> = std::mem::take(&mut f.blocks[block].ops).into();
        let mut out = Vec::with_capacity(queue.len());
        while let Some(op) = queue.pop_front() {
            for i in 0..f.ops[op].operands.len() {
                let v = f.ops[op].operands[i];
                f.ops[op].operands[i] = self.resolve(v);
            }
            let is_terminator = f.ops[op].opcode.info().terminator;
            let action = if is_terminator { Rewrite::Keep } else { visit(self.types, f, op) };
            if let Rewrite::Pruned(replaced) = &action {
                self.changed += 1;
                self.subst.extend(replaced.iter().copied());
            }
            match action {
                Rewrite::Keep | Rewrite::Pruned(_) => {
                    for r in f.ops[op].regions.clone() {
                        self.region(f, r, visit);
                    }
                    out.push(op);
                }
                Rewrite::Replace { insert, values } => {
                    self.changed += 1;
                    out.extend(insert);
                    for (r, v) in f.ops[op].results.clone().into_iter().zip(values) {
                        if r != v {
                            self.subst.insert(r, v);
                        }
                    }
                }
                Rewrite::Inline(n) => {
                    self.changed += 1;
                    let inner = f.regions[f.ops[op].regions[n]].block;
                    let mut ops = std::mem::take(&mut f.blocks[inner].ops);
                    // the verifier guarantees a terminator ends the region
                    let Some(term) = ops.pop() else { continue };
                    for (r, v) in f.ops[op].results.clone().into_iter().zip(f.ops[term].operands.clone()) {
                        self.subst.insert(r, v);
                    }
                    for &o in ops.iter().rev() {
                        queue.push_front(o);
                    }
                }
            }
        }
        f.blocks[block].ops = out;
    }
}
