//! Software pipelining of loops whose loads feed shared memory (a dot's
//! operands: layout assignment staged them with a `convert_layout` to a
//! shared layout). Each such load gets a `local_alloc` of `num_stages`
//! tiles. Before the loop, the copies of the first `num_stages - 1`
//! iterations are issued; iteration `i` waits until its own copies landed
//! (`async_wait` leaves the later ones in flight), reads its stage through
//! `local_view`, and issues iteration `i + num_stages - 1`'s copies into the
//! stage iteration `i - 1` read. Copies past the loop's end are masked off
//! by a trip guard, and one `async_wait 0` after the loop drains them.
//!
//! On sm_90a a `tma_load` feeding a dot is staged by TMA instead: its
//! stages keep the box's layout and the dot reads them directly; a ring of
//! one mbarrier per stage (`mbarrier_init` before the prologue,
//! `mbarrier_inval` after the loop) replaces the commit groups: `tma_copy`
//! arms the stage's barrier and copies only where the trip guard holds, and
//! iteration `i` waits (`mbarrier_wait`) for the phase of parity
//! `(i / num_stages) % 2`, carried beside the stage indices.
//!
//! What runs ahead is the loads' "stage 0": the loads, the body ops that
//! compute their pointers, masks and `other`, and the loop-carried values
//! those read (the pointer increments), which start `num_stages - 1`
//! iterations ahead. A loop is left alone when any of that is also needed by
//! the rest of the body or after the loop, when its step is not a positive
//! constant, or when even two stages would not fit the shared-memory
//! budget (fewer stages are used first), or when every load it would stage
//! is one the caller names `synchronous` (too narrow for `cp.async`).
//!
//! Runs after layout assignment (it needs the shared layouts) and gives
//! every value it makes a layout; it neither renumbers values nor leaves
//! dead ops, so the layout map stays valid.
use std::collections::{HashMap, HashSet};

use tritium_ir::{Attr, Attrs, Block, Func, Function, Loc, Module, Op, Opcode, ScalarKind, Type, TypeTable, Value, ValueDef};

use crate::constant::is_zero;
use crate::effects::is_pure;
use crate::layout::{Layout, LayoutMap, SharedLayout};

#[derive(Clone, Debug, Default)]
pub struct PipelineOptions {
    /// Stages of loops without their own `num_stages` (the launch option).
    pub num_stages: u32,
    /// Shared memory the stages of one loop may take, in bytes.
    pub smem_budget: u32,
    /// Loads whose copies could not be asynchronous (narrower than a
    /// `cp.async`). A loop whose staged loads would all be such is left
    /// alone: its stages would be plain loads and shared stores where the
    /// loads were, overlapping nothing, while costing shared memory and the
    /// prologue's registers. Beside an asynchronous one they are staged
    /// (they usually share its index math, which must all run ahead).
    pub synchronous: HashSet<Op>,
    /// One `cp.async` commit group per staged load and stage (Triton 3.6's
    /// structure: A's copies, commit, B's copies, commit, and a wait for
    /// `(num_stages - 2) x loads` pending groups) instead of one group per
    /// stage. The same data is waited for either way; only where ptxas puts
    /// the group boundaries differs. Off by default.
    pub commit_per_load: bool,
}

/// Pipelines every eligible loop of `func`; returns how many.
pub fn pipeline_loops(m: &mut Module, func: Func, layouts: &mut LayoutMap, opts: &PipelineOptions) -> usize {
    let loops: Vec<(Block, Op)> = {
        let f = &m.funcs[func];
        // inner loops first: an outer loop's plan must see the inner one rewritten
        f.ops_preorder().into_iter().rev().filter(|&(_, op)| f.ops[op].opcode == Opcode::For).collect()
    };
    let mut done = 0;
    for (parent, for_op) in loops {
        let Some(plan) = plan_loop(&m.types, &m.funcs[func], layouts, for_op, opts) else { continue };
        let loc = m.funcs[func].ops[for_op].loc;
        let Module { types, funcs, .. } = m;
        Rewriter { f: &mut funcs[func], types, layouts, loc, commit_per_load: opts.commit_per_load }.apply(parent, &plan);
        done += 1;
    }
    done
}

/// A load staged into shared memory by the `convert_layout` that is its
/// only use, or a `tma_load` (whose tile lands in shared memory in its
/// box's layout) converted to the canonical layout and from there (maybe
/// through a transpose) to a shared layout for a dot that reads the same
/// bytes: the ops between the load and `convert` are `through`.
struct Candidate {
    load: Op,
    convert: Op,
    through: Vec<Op>,
    tma: bool,
    /// How a stage is stored, and how `convert`'s users read it.
    stored: SharedLayout,
    shared: SharedLayout,
    tile_bytes: u32,
}

impl Candidate {
    fn is_tma(&self) -> bool {
        self.tma
    }
}

struct Plan {
    for_op: Op,
    body: Block,
    stages: u32,
    step: i64,
    candidates: Vec<Candidate>,
    /// Body ops that run ahead with the loads, in body order.
    slice: Vec<Op>,
    /// Loop-carried slots (0-based) that run ahead.
    carried: Vec<usize>,
}

fn plan_loop(types: &TypeTable, f: &Function, layouts: &LayoutMap, for_op: Op, opts: &PipelineOptions) -> Option<Plan> {
    let od = &f.ops[for_op];
    let mut stages = od.attrs.get("num_stages").and_then(Attr::as_int).map_or(opts.num_stages, |s| s.clamp(0, 8) as u32);
    if stages < 2 {
        return None;
    }
    let step = const_int(f, od.operands[2]).filter(|&s| s > 0)?;
    let body = f.regions[od.regions[0]].block;
    let (args, ops) = (&f.blocks[body].args, &f.blocks[body].ops);
    let yield_op = *ops.last()?;
    let pos: HashMap<Op, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let uses = f.users();
    let users_of = |v: Value| uses.get(&v).map(Vec::as_slice).unwrap_or(&[]);

    let mut candidates = Vec::new();
    // the one `convert_layout` in the body that uses `v`, and nothing else does
    let only_convert = |v: Value| match users_of(v) {
        &[c] if f.ops[c].opcode == Opcode::ConvertLayout && pos.contains_key(&c) => Some(c),
        _ => None,
    };
    for &op in ops {
        let d = &f.ops[op];
        let (convert, through) = match d.opcode {
            Opcode::Load if d.attrs.get("volatile").and_then(Attr::as_bool) != Some(true) => {
                let Some(convert) = only_convert(d.results[0]) else { continue };
                (convert, Vec::new())
            }
            // read where it landed: the round trip through registers goes
            Opcode::TmaLoad => match tma_reader(f, layouts, &uses, op, &only_convert) {
                Some(chain) => chain,
                None => continue,
            },
            _ => continue,
        };
        let Some(Layout::Shared(shared)) = layouts.of(f.ops[convert].results[0]) else { continue };
        let stored = match layouts.of(d.results[0]) {
            Some(Layout::Shared(s)) if d.opcode == Opcode::TmaLoad => s.clone(),
            _ => shared.clone(),
        };
        let ty = f.value_type(d.results[0]);
        let bits = types.scalar_kind(ty).map_or(0, ScalarKind::bits);
        let dims = types.dims(ty);
        if dims.len() != 2 || bits < 8 {
            continue;
        }
        let tile_bytes = dims.iter().product::<u32>() * bits / 8;
        // a stage must start on a swizzle atom of the NVMMA layouts
        if matches!(shared, SharedLayout::Nvmma { .. }) && tile_bytes % 1024 != 0 {
            continue;
        }
        let tma = d.opcode == Opcode::TmaLoad;
        candidates.push(Candidate { load: op, convert, through, tma, stored, shared: shared.clone(), tile_bytes });
    }
    if candidates.iter().all(|c| opts.synchronous.contains(&c.load)) {
        return None;
    }

    // stage 0: the loads' backward slice in the body, through the carried slots
    let mut slice = HashSet::new();
    let mut carried = HashSet::new();
    let mut work: Vec<Value> = candidates.iter().flat_map(|c| f.ops[c.load].operands.clone()).collect();
    while let Some(v) = work.pop() {
        match f.values[v].def {
            ValueDef::BlockArg(b, 0) if b == body => {}
            ValueDef::BlockArg(b, i) if b == body => {
                if carried.insert(i as usize - 1) {
                    work.push(*f.ops[yield_op].operands.get(i as usize - 1)?);
                }
            }
            ValueDef::OpResult(d, _) if pos.contains_key(&d) => {
                if slice.insert(d) {
                    if !is_pure(f, d) || !f.ops[d].regions.is_empty() {
                        return None;
                    }
                    work.extend(f.ops[d].operands.iter().copied());
                }
            }
            _ => {}
        }
    }
    // what runs ahead must be used by nothing that does not
    let mut variant: HashSet<Value> = args.iter().copied().collect();
    for &op in ops.iter().filter(|o| slice.contains(o)) {
        if f.ops[op].operands.iter().any(|v| variant.contains(v)) {
            variant.extend(f.ops[op].results.iter().copied());
        }
    }
    let loads: HashSet<Op> = candidates.iter().map(|c| c.load).collect();
    let runs_ahead_only = |v: Value| {
        users_of(v).iter().all(|&u| {
            if u == yield_op {
                f.ops[u].operands.iter().enumerate().all(|(i, &w)| w != v || carried.contains(&i))
            } else {
                slice.contains(&u) || loads.contains(&u)
            }
        })
    };
    for &op in &slice {
        for &r in &f.ops[op].results {
            if variant.contains(&r) && !runs_ahead_only(r) {
                return None;
            }
        }
    }
    for &i in &carried {
        if !runs_ahead_only(args[i + 1]) || !users_of(od.results[i]).is_empty() {
            return None;
        }
    }
    let per_stage: u32 = candidates.iter().map(|c| c.tile_bytes).sum();
    while stages > 2 && per_stage * stages > opts.smem_budget {
        stages -= 1;
    }
    if per_stage * stages > opts.smem_budget {
        return None;
    }
    let mut slice: Vec<Op> = slice.into_iter().collect();
    slice.sort_by_key(|o| pos[o]);
    let mut carried: Vec<usize> = carried.into_iter().collect();
    carried.sort_unstable();
    Some(Plan { for_op, body, stages, step, candidates, slice, carried })
}

/// For `tma_load` `op` (its tile in its box's NVMMA layout): the conversion
/// to a dot's shared layout that reads the same bytes, and the ops between
/// (the conversion to the canonical layout, maybe a 2-D transpose), when
/// each is the only use of the one before.
fn tma_reader(f: &Function, layouts: &LayoutMap, uses: &HashMap<Value, Vec<Op>>, op: Op, only_convert: &dyn Fn(Value) -> Option<Op>) -> Option<(Op, Vec<Op>)> {
    let Some(Layout::Shared(SharedLayout::Nvmma { swizzle_bytes, transposed, elem_bytes })) = layouts.of(f.ops[op].results[0]) else {
        return None;
    };
    let canonical = only_convert(f.ops[op].results[0])?;
    let mut through = vec![canonical];
    let mut v = f.ops[canonical].results[0];
    let mut flipped = false;
    if let Some(&[p]) = uses.get(&v).map(Vec::as_slice) {
        let d = &f.ops[p];
        if d.opcode == Opcode::Permute && d.attrs.get("order").and_then(Attr::as_int_array) == Some(&[1, 0][..]) {
            through.push(p);
            v = d.results[0];
            flipped = true;
        }
    }
    let convert = only_convert(v)?;
    let want = SharedLayout::Nvmma { swizzle_bytes: *swizzle_bytes, transposed: *transposed != flipped, elem_bytes: *elem_bytes };
    (layouts.of(f.ops[convert].results[0]) == Some(&Layout::Shared(want))).then_some((convert, through))
}

/// Every value `block`'s ops (and the ops of their regions) define.
fn defined_within(f: &Function, block: Block) -> HashSet<Value> {
    let mut out = HashSet::new();
    for &op in &f.blocks[block].ops {
        out.extend(f.ops[op].results.iter().copied());
        for &r in &f.ops[op].regions {
            let b = f.regions[r].block;
            out.extend(f.blocks[b].args.iter().copied());
            out.extend(defined_within(f, b));
        }
    }
    out
}

/// The integer `v` holds if a `const` op defines it.
fn const_int(f: &Function, v: Value) -> Option<i64> {
    let op = f.defining_op(v)?;
    let d = &f.ops[op];
    (d.opcode == Opcode::Const).then(|| d.attrs.get("value").and_then(Attr::as_int)).flatten()
}

struct Rewriter<'a> {
    f: &'a mut Function,
    types: &'a mut TypeTable,
    layouts: &'a mut LayoutMap,
    loc: Loc,
    /// `PipelineOptions::commit_per_load`.
    commit_per_load: bool,
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

    fn apply(&mut self, parent: Block, plan: &Plan) {
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
