//! Dead code elimination by liveness: ops with effects (all but pure ops,
//! non-volatile loads and `for`/`if`, see `effects`) are roots; a value is
//! live if a live op uses it. Unused pure ops go, inside regions too; `for`
//! and `if` lose the results (and loop-carried slots) nobody needs, and go
//! entirely when their regions have no effects and no result is used.
//! Ends by compacting each function's arenas.
use std::collections::HashSet;

use tritium_ir::rewrite::Visit;
use tritium_ir::{Block, Function, Module, Op, Opcode, Value, ValueDef};

use crate::effects::is_removable;

/// Whether `op` itself (regions aside) has an effect beyond its results.
/// `for` and `if` have none of their own (their regions' ops may); `while`
/// may not terminate, so removing it could change what the kernel does.
pub fn has_effect(f: &Function, op: Op) -> bool {
    let od = &f.ops[op];
    let structured = matches!(od.opcode, Opcode::For | Opcode::If | Opcode::Yield | Opcode::Condition);
    !structured && !is_removable(f, op)
}

/// Removes dead code in every function; returns how many ops were removed
/// (results and loop slots dropped count one each).
pub fn eliminate_dead_code(m: &mut Module) -> usize {
    let mut removed = 0;
    for id in m.funcs.keys().collect::<Vec<_>>() {
        let f = &mut m.funcs[id];
        removed += Dce::new(f).run(f);
        f.compact();
    }
    removed
}

struct Dce {
    live: HashSet<Value>,
    /// Ops kept regardless of their results (effects, or regions with effects).
    effectful: HashSet<Op>,
    /// The op whose region holds each block, and the block holding that op.
    parent: Vec<Option<(Op, Block)>>,
    /// The placed blocks, in pre-order.
    blocks: Vec<Block>,
    work: Vec<Value>,
}

impl Dce {
    fn new(f: &Function) -> Dce {
        let mut d = Dce {
            live: HashSet::new(),
            effectful: HashSet::new(),
            parent: vec![None; f.blocks.len()],
            blocks: Vec::new(),
            work: Vec::new(),
        };
        // pre-order: an op's enclosing ops were visited (and recorded as the
        // parents of its block) before it
        for visit in f.preorder() {
            let (block, op) = match visit {
                Visit::Block(_, b) => {
                    d.blocks.push(b);
                    continue;
                }
                Visit::Op(block, op) => (block, op),
            };
            for &r in &f.ops[op].regions {
                d.parent[f.regions[r].block.0 as usize] = Some((op, block));
            }
            // an op with effects makes every op enclosing it effectful
            if has_effect(f, op) {
                d.effectful.insert(op);
                let mut b = block;
                while let Some((p, pb)) = d.parent[b.0 as usize] {
                    if !d.effectful.insert(p) {
                        break;
                    }
                    b = pb;
                }
            }
        }
        d
    }

    fn mark(&mut self, v: Value) {
        if self.live.insert(v) {
            self.work.push(v);
        }
    }

    fn run(mut self, f: &mut Function) -> usize {
        // roots: an effectful op needs its operands, and a kept region op its
        // control operands (bounds, condition) and its terminators' conditions
        let effectful: Vec<Op> = self.effectful.iter().copied().collect();
        for op in effectful {
            self.op_live(f, op);
        }
        while let Some(v) = self.work.pop() {
            match f.values[v].def {
                ValueDef::OpResult(op, i) => {
                    self.op_live(f, op);
                    self.result_live(f, op, i as usize);
                }
                ValueDef::BlockArg(block, i) => {
                    let Some((p, _)) = self.parent[block.0 as usize] else { continue };
                    self.block_arg_live(f, p, block, i as usize);
                }
            }
        }
        self.rewrite(f)
    }

    /// `op` stays: what it always needs becomes live.
    fn op_live(&mut self, f: &Function, op: Op) {
        let od = &f.ops[op];
        match od.opcode {
            Opcode::For => (0..3).for_each(|i| self.mark(od.operands[i])),
            Opcode::If => self.mark(od.operands[0]),
            Opcode::While => {
                // kept whole: every slot and the exit condition
                for &v in &od.operands {
                    self.mark(v);
                }
                for &r in &od.regions {
                    let b = f.regions[r].block;
                    for &a in &f.blocks[b].args {
                        self.mark(a);
                    }
                    if let Some(&t) = f.blocks[b].ops.last() {
                        for &v in &f.ops[t].operands {
                            self.mark(v);
                        }
                    }
                }
                for &r in &od.results {
                    self.mark(r);
                }
            }
            Opcode::Reduce | Opcode::Scan => {
                // combine regions are kept whole
                for &v in &od.operands {
                    self.mark(v);
                }
                for &r in &od.regions {
                    let b = f.regions[r].block;
                    for &o in &f.blocks[b].ops {
                        for &v in &f.ops[o].operands {
                            self.mark(v);
                        }
                    }
                }
            }
            _ if od.regions.is_empty() => {
                for &v in &od.operands {
                    self.mark(v);
                }
            }
            _ => {}
        }
    }

    /// Result `i` of `op` is live: the values producing it become live.
    fn result_live(&mut self, f: &Function, op: Op, i: usize) {
        let od = &f.ops[op];
        match od.opcode {
            Opcode::For => {
                self.mark(od.operands[3 + i]);
                let body = f.regions[od.regions[0]].block;
                self.mark(f.blocks[body].args[1 + i]);
            }
            Opcode::If => {
                for &r in &od.regions {
                    self.yielded_live(f, f.regions[r].block, i);
                }
            }
            _ => {}
        }
    }

    /// Block argument `i` of a region of `p` is live.
    fn block_arg_live(&mut self, f: &Function, p: Op, block: Block, i: usize) {
        let od = &f.ops[p];
        if od.opcode == Opcode::For && i > 0 {
            // a carried value: its init, its next value and its result slot
            self.mark(od.operands[3 + i - 1]);
            self.yielded_live(f, block, i - 1);
            self.mark(od.results[i - 1]);
        }
        // `while` and reduce/scan args are marked whole by op_live
        self.op_live(f, p);
    }

    fn yielded_live(&mut self, f: &Function, block: Block, i: usize) {
        if let Some(&t) = f.blocks[block].ops.last() {
            if let Some(&v) = f.ops[t].operands.get(i) {
                self.mark(v);
            }
        }
    }

    fn op_kept(&self, f: &Function, op: Op) -> bool {
        let od = &f.ops[op];
        od.opcode.info().terminator || self.effectful.contains(&op) || od.results.iter().any(|r| self.live.contains(r))
    }

    fn rewrite(&self, f: &mut Function) -> usize {
        let mut removed = 0;
        for &block in &self.blocks {
            let before = f.blocks[block].ops.len();
            let kept: Vec<Op> = f.blocks[block].ops.iter().copied().filter(|&op| self.op_kept(f, op)).collect();
            removed += before - kept.len();
            for &op in &kept {
                removed += self.drop_dead_slots(f, op);
            }
            f.blocks[block].ops = kept;
        }
        removed
    }

    /// Drops `for`/`if` results no one needs (with their loop slots).
    fn drop_dead_slots(&self, f: &mut Function, op: Op) -> usize {
        let opcode = f.ops[op].opcode;
        if opcode != Opcode::For && opcode != Opcode::If {
            return 0;
        }
        let mut dropped = 0;
        for i in (0..f.ops[op].results.len()).rev() {
            if self.live.contains(&f.ops[op].results[i]) {
                continue;
            }
            let regions = f.ops[op].regions.clone();
            if opcode == Opcode::For {
                let body = f.regions[regions[0]].block;
                if self.live.contains(&f.blocks[body].args[1 + i]) {
                    continue;
                }
                f.ops[op].operands.remove(3 + i);
                f.remove_block_arg(body, 1 + i);
            }
            for r in regions {
                let b = f.regions[r].block;
                if let Some(&t) = f.blocks[b].ops.last() {
                    f.ops[t].operands.remove(i);
                }
            }
            f.remove_op_result(op, i);
            dropped += 1;
        }
        dropped
    }
}
