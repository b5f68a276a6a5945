//! The rewrite of one planned loop (`Plan`, from `plan_loop`): stage
//! buffers and mbarriers before the loop, the prologue's copies, the loop's
//! waits, stage views and next copies, `cp.async` commit groups, and the
//! drain after it.
use std::collections::HashMap;

use tritium_ir::{Attr, Attrs, Block, Function, Loc, Op, Opcode, ScalarKind, Type, TypeTable, Value};

use super::{defined_within, Candidate, Plan};
use crate::constant::is_zero;
use crate::layout::{Layout, LayoutMap, SharedLayout};

pub(super) struct Rewriter<'a> {
    pub(super) f: &'a mut Function,
    pub(super) types: &'a mut TypeTable,
    pub(super) layouts: &'a mut LayoutMap,
    pub(super) loc: Loc,
    /// `PipelineOptions::commit_per_load`.
    pub(super) commit_per_load: bool,
}

/// Where new ops go: `block` at `index`, which advances.
struct Cursor {
    block: Block,
    index: usize,
}

impl Rewriter<'_> {
    fn emit(&mut self, at: &mut Cursor, opcode: Opcode, operands: &[Value], result: Option<Type>, attrs: Attrs) -> Option<Value> {
        let results: Vec<Type> = result.into_iter().collect();
        let op = self.f.create_op(opcode, operands, &results, attrs, Vec::new(), self.loc);
        self.f.insert_op(at.block, at.index, op);
        at.index += 1;
        self.f.ops[op].results.first().copied()
    }

    fn value(&mut self, at: &mut Cursor, opcode: Opcode, operands: &[Value], ty: Type) -> Value {
        self.emit(at, opcode, operands, Some(ty), Attrs::new()).expect("one result")
    }

    fn constant(&mut self, at: &mut Cursor, ty: Type, v: i64) -> Value {
        let op = self.f.create_const(ty, Attr::Int(v), self.loc);
        self.f.insert_op(at.block, at.index, op);
        at.index += 1;
        self.f.ops[op].results[0]
    }

    fn less_than(&mut self, at: &mut Cursor, a: Value, b: Value) -> Value {
        let i1 = self.types.scalar(ScalarKind::I1);
        let attrs = [("pred".to_string(), Attr::Str("lt".into()))].into_iter().collect();
        self.emit(at, Opcode::Cmp, &[a, b], Some(i1), attrs).expect("one result")
    }

    fn set_layout(&mut self, v: Value, l: Option<Layout>) {
        if let Some(l) = l {
            self.layouts.layouts.insert(v, l);
        }
    }

    pub(super) fn apply(&mut self, parent: Block, plan: &Plan) {
        let s = plan.stages;
        let od = self.f.ops[plan.for_op].clone();
        let (lb, ub) = (od.operands[0], od.operands[1]);
        let iv_ty = self.f.value_type(lb);
        let i32t = self.types.scalar(ScalarKind::I32);
        let args = self.f.blocks[plan.body].args.clone();
        let yield_op = *self.f.blocks[plan.body].ops.last().expect("a terminated body");
        let for_index = self.f.blocks[parent].ops.iter().position(|&o| o == plan.for_op).expect("the loop in its block");
        let mut at = Cursor { block: parent, index: for_index };

        let mut allocs = Vec::new();
        for c in &plan.candidates {
            let ty = self.f.value_type(self.f.ops[c.load].results[0]);
            let mut dims = vec![s];
            dims.extend_from_slice(self.types.dims(ty));
            let elem = self.types.elem(ty);
            let buf_ty = self.types.tensor(&dims, elem);
            let buf = self.value(&mut at, Opcode::LocalAlloc, &[], buf_ty);
            self.set_layout(buf, Some(Layout::Shared(c.stored.staged())));
            allocs.push(buf);
        }
        let copies = plan.candidates.iter().any(|c| !c.is_tma());
        let tmas = plan.candidates.iter().filter(|c| c.is_tma()).count();
        // TMA tiles complete on a ring of one mbarrier per stage, each
        // armed once per copy of that stage
        let bars = (tmas > 0).then(|| {
            let i64t = self.types.scalar(ScalarKind::I64);
            let ring_ty = self.types.tensor(&[s, 1], i64t);
            let bars = self.value(&mut at, Opcode::LocalAlloc, &[], ring_ty);
            self.set_layout(bars, Some(Layout::Shared(SharedLayout::row_major(2))));
            let count = [("count".to_string(), Attr::Int(tmas as i64))].into_iter().collect();
            self.emit(&mut at, Opcode::MbarrierInit, &[bars], None, count);
            bars
        });

        // the prologue: iterations 0 .. s-2 of stage 0
        let mut carried_now: Vec<Value> = plan.carried.iter().map(|&i| od.operands[3 + i]).collect();
        for j in 0..s - 1 {
            let iv = if j == 0 {
                lb
            } else {
                let off = self.constant(&mut at, iv_ty, plan.step * j as i64);
                self.value(&mut at, Opcode::Add, &[lb, off], iv_ty)
            };
            let guard = self.less_than(&mut at, iv, ub);
            let mut map: HashMap<Value, Value> = HashMap::new();
            map.insert(args[0], iv);
            for (k, &i) in plan.carried.iter().enumerate() {
                map.insert(args[i + 1], carried_now[k]);
            }
            for &op in &plan.slice {
                self.clone_op(&mut at, op, &mut map);
            }
            let stage = self.constant(&mut at, i32t, j as i64);
            for (c, &buf) in plan.candidates.iter().zip(&allocs) {
                let load = self.f.ops[c.load].operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect::<Vec<_>>();
                self.copy(&mut at, c, buf, stage, bars, &load, guard);
                if self.commit_per_load && !c.is_tma() {
                    self.emit(&mut at, Opcode::AsyncCommit, &[], None, Attrs::new());
                }
            }
            if copies && !self.commit_per_load {
                self.emit(&mut at, Opcode::AsyncCommit, &[], None, Attrs::new());
            }
            let yields = self.f.ops[yield_op].operands.clone();
            carried_now = plan.carried.iter().map(|&i| *map.get(&yields[i]).unwrap_or(&yields[i])).collect();
        }
        for (k, &i) in plan.carried.iter().enumerate() {
            self.f.ops[plan.for_op].operands[3 + i] = carried_now[k];
        }
        let init_read = self.constant(&mut at, i32t, 0);
        let init_write = self.constant(&mut at, i32t, s as i64 - 1);
        // drain the copies issued past the end (they zero-fill their stage);
        // TMA copies past the end are never issued, and every one issued was
        // waited for, so the ring may go
        let mut after = Cursor { block: parent, index: at.index + 1 };
        if copies {
            let wait0 = [("pending".to_string(), Attr::Int(0))].into_iter().collect();
            self.emit(&mut after, Opcode::AsyncWait, &[], None, wait0);
        }
        if let Some(bars) = bars {
            self.emit(&mut after, Opcode::MbarrierInval, &[bars], None, Attrs::new());
        }

        // the stages this iteration reads and writes, carried by the loop:
        // read = i % s wraps with a compare and select, write = (i - 1) % s
        // is the previous iteration's read (no division in the body)
        let read = self.add_carried(plan, init_read, i32t);
        let write = self.add_carried(plan, init_write, i32t);
        let mut end = self.before_terminator(plan.body);
        let one = self.constant(&mut end, i32t, 1);
        let next = self.value(&mut end, Opcode::Add, &[read, one], i32t);
        let n = self.constant(&mut end, i32t, s as i64);
        let i1 = self.types.scalar(ScalarKind::I1);
        let eq = [("pred".to_string(), Attr::Str("eq".into()))].into_iter().collect();
        let wraps = self.emit(&mut end, Opcode::Cmp, &[next, n], Some(i1), eq).expect("one result");
        let zero = self.constant(&mut end, i32t, 0);
        let next = self.value(&mut end, Opcode::Select, &[wraps, zero, next], i32t);
        let yield_op = *self.f.blocks[plan.body].ops.last().expect("a terminated body");
        self.f.ops[yield_op].operands.extend([next, read]);
        // the parity of the phase the read stage's barrier completes this
        // iteration: (i / s) % 2, flipping each time the read stage wraps
        let phase = bars.map(|_| {
            let init = self.constant(&mut at, i32t, 0);
            let phase = self.add_carried(plan, init, i32t);
            let mut end = self.before_terminator(plan.body);
            let one = self.constant(&mut end, i32t, 1);
            let flipped = self.value(&mut end, Opcode::Xor, &[phase, one], i32t);
            let next = self.value(&mut end, Opcode::Select, &[wraps, flipped, phase], i32t);
            self.f.ops[yield_op].operands.push(next);
            phase
        });

        // the body's head: the guard, the wait, the views
        let mut at = Cursor { block: plan.body, index: 0 };
        let iv = args[0];
        let dist = self.constant(&mut at, iv_ty, plan.step * (s as i64 - 1));
        let iv_ahead = self.value(&mut at, Opcode::Add, &[iv, dist], iv_ty);
        let guard = self.less_than(&mut at, iv_ahead, ub);
        if copies {
            // the groups issued after this iteration's stage: s - 2 stages of
            // one group each, or of one group per asynchronous load
            let groups = if self.commit_per_load { plan.candidates.iter().filter(|c| !c.is_tma()).count() as i64 } else { 1 };
            let wait = [("pending".to_string(), Attr::Int((s as i64 - 2) * groups))].into_iter().collect();
            self.emit(&mut at, Opcode::AsyncWait, &[], None, wait);
        }
        if let (Some(bars), Some(phase)) = (bars, phase) {
            self.emit(&mut at, Opcode::MbarrierWait, &[bars, read, phase], None, Attrs::new());
        }
        for (c, &buf) in plan.candidates.iter().zip(&allocs) {
            let staged = self.f.ops[c.convert].results[0];
            let ty = self.f.value_type(staged);
            let view = self.value(&mut at, Opcode::LocalView, &[buf, read], ty);
            self.set_layout(view, Some(Layout::Shared(c.shared.clone())));
            self.f.replace_all_uses(staged, view);
            self.f.erase_op(plan.body, c.convert);
            for &op in c.through.iter().rev() {
                self.f.erase_op(plan.body, op);
            }
        }
        // stage 0 in the body computes for iteration i + s - 1
        for &op in &plan.slice {
            for v in self.f.ops[op].operands.iter_mut() {
                if *v == iv {
                    *v = iv_ahead;
                }
            }
        }
        // the copies go last, after the dots: they overwrite the stage
        // iteration i - 1 read, which an asynchronous dot of that iteration
        // may still be reading until this iteration's dot has waited for it
        for (c, &buf) in plan.candidates.iter().zip(&allocs) {
            let load = self.f.ops[c.load].operands.clone();
            self.f.erase_op(plan.body, c.load);
            let mut end = self.before_terminator(plan.body);
            self.copy(&mut end, c, buf, write, bars, &load, guard);
            if self.commit_per_load && !c.is_tma() {
                self.emit(&mut end, Opcode::AsyncCommit, &[], None, Attrs::new());
            }
        }
        if copies && !self.commit_per_load {
            let mut end = self.before_terminator(plan.body);
            self.emit(&mut end, Opcode::AsyncCommit, &[], None, Attrs::new());
        }
        self.make_dots_async(parent, plan);
    }

    /// A new loop-carried slot of `plan`'s loop starting at `init`; its
    /// body argument (the caller adds the yielded value).
    fn add_carried(&mut self, plan: &Plan, init: Value, ty: Type) -> Value {
        self.f.ops[plan.for_op].operands.push(init);
        self.f.add_op_result(plan.for_op, ty);
        self.f.add_block_arg(plan.body, ty)
    }

    fn before_terminator(&self, block: Block) -> Cursor {
        Cursor { block, index: self.f.blocks[block].ops.len().saturating_sub(1) }
    }

    /// Lets wgmma dots that only accumulate across iterations run on while
    /// the next iteration starts (`pending = 1`): such a dot's accumulator
    /// is the loop-carried value it alone reads and it alone yields, and its
    /// operands are stages of this loop or values made before it (nothing
    /// in the body rewrites their shared memory while the dot reads it). One
    /// `dot_wait` right after the loop ends the last ones before anything
    /// reads their results.
    fn make_dots_async(&mut self, parent: Block, plan: &Plan) {
        let body = plan.body;
        let ops = self.f.blocks[body].ops.clone();
        let yield_op = *ops.last().expect("a terminated body");
        let args = self.f.blocks[body].args.clone();
        let uses = self.f.users();
        let only_user = |v: Value, u: Op| uses.get(&v).is_some_and(|us| us.as_slice() == [u]);
        let in_body = defined_within(self.f, body);
        let staged_or_outside = |f: &Function, v: Value| {
            !in_body.contains(&v) && !args.contains(&v)
                || f.defining_op(v).is_some_and(|d| f.ops[d].opcode == Opcode::LocalView)
        };
        let mut slots = Vec::new();
        for &op in &ops {
            let d = &self.f.ops[op];
            if d.opcode != Opcode::Dot || !matches!(self.layouts.of(d.results[0]), Some(Layout::Mma(m)) if m.version == 3) {
                continue;
            }
            let (acc, res) = (d.operands[2], d.results[0]);
            let Some(k) = args[1..].iter().position(|&a| a == acc) else { continue };
            // yielded into its own slot and nowhere else
            let slots_of_res: Vec<usize> =
                self.f.ops[yield_op].operands.iter().enumerate().filter(|&(_, &v)| v == res).map(|(j, _)| j).collect();
            let chained = only_user(acc, op) && only_user(res, yield_op) && slots_of_res == [k];
            let operands_stay = d.operands[..2].iter().all(|&v| staged_or_outside(self.f, v));
            if chained && operands_stay {
                self.f.ops[op].attrs.insert("pending".into(), Attr::Int(1));
                slots.push(k);
            }
        }
        if slots.is_empty() {
            return;
        }
        let results: Vec<Value> = slots.iter().map(|&k| self.f.ops[plan.for_op].results[k]).collect();
        let tys: Vec<Type> = results.iter().map(|&r| self.f.value_type(r)).collect();
        let attrs = [("pending".to_string(), Attr::Int(0))].into_iter().collect();
        let wait = self.f.create_op(Opcode::DotWait, &results, &tys, attrs, Vec::new(), self.loc);
        let index = self.f.blocks[parent].ops.iter().position(|&o| o == plan.for_op).expect("the loop in its block");
        self.f.insert_op(parent, index + 1, wait);
        for (i, &r) in results.iter().enumerate() {
            let waited = self.f.ops[wait].results[i];
            let l = self.layouts.of(r).cloned();
            self.set_layout(waited, l);
            self.f.replace_all_uses(r, waited);
            self.f.ops[wait].operands[i] = r;
        }
    }

    /// Clones slice op `op` at `at`, its operands through `map`; maps its results.
    fn clone_op(&mut self, at: &mut Cursor, op: Op, map: &mut HashMap<Value, Value>) {
        let d = self.f.ops[op].clone();
        let operands: Vec<Value> = d.operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
        let tys: Vec<Type> = d.results.iter().map(|&r| self.f.value_type(r)).collect();
        let new = self.f.create_op(d.opcode, &operands, &tys, d.attrs.clone(), Vec::new(), d.loc);
        self.f.insert_op(at.block, at.index, new);
        at.index += 1;
        for (k, &r) in d.results.iter().enumerate() {
            let nr = self.f.ops[new].results[k];
            map.insert(r, nr);
            let l = self.layouts.of(r).cloned();
            self.set_layout(nr, l);
        }
    }

    /// Candidate `c`'s copy into `stage` of `buf` where scalar `guard`
    /// holds, `load` its operands: a `tma_copy` armed on the stage's
    /// barrier of ring `bars`, else an `async_copy`.
    #[allow(clippy::too_many_arguments)]
    fn copy(&mut self, at: &mut Cursor, c: &Candidate, buf: Value, stage: Value, bars: Option<Value>, load: &[Value], guard: Value) {
        match bars.filter(|_| c.is_tma()) {
            Some(bars) => {
                let mut operands = vec![buf, stage, bars, guard];
                operands.extend_from_slice(load);
                let attrs = self.f.ops[c.load].attrs.clone();
                self.emit(at, Opcode::TmaCopy, &operands, None, attrs);
            }
            None => self.async_copy(at, buf, stage, load, guard),
        }
    }

    /// `async_copy` of a load's operands (`ptr, mask?, other?`) into `stage`
    /// of `buf`, masked by scalar `guard` too.
    fn async_copy(&mut self, at: &mut Cursor, buf: Value, stage: Value, load: &[Value], guard: Value) {
        let ptr = load[0];
        let dims = self.types.dims(self.f.value_type(ptr)).to_vec();
        let i1 = self.types.scalar(ScalarKind::I1);
        let mask_ty = self.types.tensor(&dims, i1);
        let layout = load.get(1).and_then(|&m| self.layouts.of(m)).or_else(|| self.layouts.of(ptr)).cloned();
        let g = self.value(at, Opcode::Splat, &[guard], mask_ty);
        self.set_layout(g, layout.clone());
        let mask = match load.get(1) {
            Some(&m) => {
                let both = self.value(at, Opcode::And, &[m, g], mask_ty);
                self.set_layout(both, layout);
                both
            }
            None => g,
        };
        let mut operands = vec![buf, stage, ptr, mask];
        if let Some(&other) = load.get(2).filter(|&&o| !is_zero(self.f, o)) {
            operands.push(other);
        }
        self.emit(at, Opcode::AsyncCopy, &operands, None, Attrs::new());
    }
}
