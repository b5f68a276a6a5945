//! Layout assignment through control flow: loops carry the layouts their
//! bodies settle on (a fixed point over dry runs of the body), and `if`
//! results take the layout both branches agree on.
use tritium_ir::{Block, Function, Op, Value};

use super::{Assigner, MAX_LOOP_ROUNDS};
use crate::layout::Layout;

impl Assigner<'_> {
    // -- control flow ------------------------------------------------------

    /// Runs the walk over `regions` without changing the IR and returns the
    /// layouts `ends` (the values a terminator yields) would get.
    fn dry_run(&mut self, regions: &[tritium_ir::Region], ends: impl Fn(&Function) -> Vec<Value>) -> Vec<Option<Layout>> {
        let saved = (self.map.layouts.clone(), self.dry);
        self.dry = true;
        for &r in regions {
            let rb = self.f.regions[r].block;
            self.block(rb);
        }
        let out = ends(self.f).iter().map(|&v| self.layout(v)).collect();
        self.map.layouts = saved.0;
        self.dry = saved.1;
        out
    }

    /// The carried layouts of a `for` loop: start from the initial values'; a
    /// costly value yielded in another layout pulls its slot to that layout,
    /// and a pointer walked for accesses takes the layout they want
    /// (`walked_pointer_layout`).
    fn carried_layouts(&mut self, args: &[Value], initial: Vec<Option<Layout>>, regions: &[tritium_ir::Region], yields: impl Fn(&Function) -> Vec<Value> + Copy) -> Vec<Option<Layout>> {
        let mut carried = initial;
        for _ in 0..MAX_LOOP_ROUNDS {
            for (&a, l) in args.iter().zip(&carried) {
                self.set(a, l.clone());
            }
            for a in args {
                self.wanted.remove(a);
            }
            let yielded = self.dry_run(regions, yields);
            let ys = yields(self.f);
            let mut next = carried.clone();
            for (k, (y, l)) in ys.iter().zip(&yielded).enumerate() {
                if l.is_some() && *l != carried[k] && !self.cheap(*y, 0) {
                    next[k] = l.clone();
                } else if let Some(walked) = self.walked_pointer_layout(args[k], *y, &carried[k]) {
                    next[k] = Some(walked);
                }
            }
            if next == carried {
                break;
            }
            carried = next;
        }
        carried
    }

    fn terminator_operands(f: &Function, r: tritium_ir::Region) -> Vec<Value> {
        let block = &f.blocks[f.regions[r].block];
        block.ops.last().map(|&t| f.ops[t].operands.clone()).unwrap_or_default()
    }

    pub(super) fn for_loop(&mut self, b: Block, op: Op) {
        let d = self.f.ops[op].clone();
        let region = d.regions[0];
        let body = self.f.regions[region].block;
        let args = self.f.blocks[body].args[1..].to_vec();
        let inits = d.operands[3..].to_vec();
        let initial: Vec<Option<Layout>> = inits.iter().map(|&v| self.layout(v)).collect();
        let carried = self.carried_layouts(&args, initial, &[region], move |f| Self::terminator_operands(f, region));
        for (k, l) in carried.iter().enumerate() {
            self.want(b, op, 3 + k, l.clone());
            self.set(args[k], l.clone());
            self.set(d.results[k], l.clone());
        }
        self.block(body);
        self.yield_into(body, &carried);
    }

    pub(super) fn while_loop(&mut self, b: Block, op: Op) {
        let d = self.f.ops[op].clone();
        let (before, after) = (d.regions[0], d.regions[1]);
        let (bb, ab) = (self.f.regions[before].block, self.f.regions[after].block);
        let before_args = self.f.blocks[bb].args.clone();
        let after_args = self.f.blocks[ab].args.clone();
        let initial: Vec<Option<Layout>> = d.operands.iter().map(|&v| self.layout(v)).collect();
        // the forwarded values' layouts flow to the after region's arguments
        let forwarded = |me: &mut Self| {
            let f = Self::terminator_operands(me.f, before);
            let ls: Vec<Option<Layout>> = f.iter().skip(1).map(|&v| me.layout(v)).collect();
            for (&a, l) in after_args.iter().zip(&ls) {
                me.set(a, l.clone());
            }
            ls
        };
        let mut carried = initial;
        for _ in 0..MAX_LOOP_ROUNDS {
            for (&a, l) in before_args.iter().zip(&carried) {
                self.set(a, l.clone());
            }
            let saved = (self.map.layouts.clone(), self.dry);
            self.dry = true;
            self.block(bb);
            forwarded(self);
            self.block(ab);
            let ys = Self::terminator_operands(self.f, after);
            let yielded: Vec<Option<Layout>> = ys.iter().map(|&v| self.layout(v)).collect();
            self.map.layouts = saved.0;
            self.dry = saved.1;
            let mut next = carried.clone();
            for (k, (y, l)) in ys.iter().zip(&yielded).enumerate() {
                if l.is_some() && *l != carried[k] && !self.cheap(*y, 0) {
                    next[k] = l.clone();
                }
            }
            if next == carried {
                break;
            }
            carried = next;
        }
        for (k, l) in carried.iter().enumerate() {
            self.want(b, op, k, l.clone());
            self.set(before_args[k], l.clone());
        }
        self.block(bb);
        let fl = forwarded(self);
        for (k, l) in fl.iter().enumerate() {
            self.set(d.results[k], l.clone());
        }
        self.block(ab);
        self.yield_into(ab, &carried);
    }

    pub(super) fn if_op(&mut self, op: Op) {
        let d = self.f.ops[op].clone();
        let blocks: Vec<Block> = d.regions.iter().map(|&r| self.f.regions[r].block).collect();
        for &rb in &blocks {
            self.block(rb);
        }
        let ends: Vec<Vec<Value>> = d.regions.iter().map(|&r| Self::terminator_operands(self.f, r)).collect();
        let mut out = Vec::with_capacity(d.results.len());
        for (k, &r) in d.results.iter().enumerate() {
            let vs: Vec<Value> = ends.iter().filter_map(|e| e.get(k).copied()).collect();
            let l = if self.is_tensor(r) { self.common_layout(&vs, self.rank(r)) } else { None };
            self.set(r, l.clone());
            out.push(l);
        }
        for &rb in &blocks {
            self.yield_into(rb, &out);
        }
    }

    /// Converts the operands of `block`'s terminator to `layouts`.
    fn yield_into(&mut self, block: Block, layouts: &[Option<Layout>]) {
        let Some(&term) = self.f.blocks[block].ops.last() else { return };
        for (k, l) in layouts.iter().enumerate() {
            if k < self.f.ops[term].operands.len() {
                self.want(block, term, k, l.clone());
            }
        }
    }
}
