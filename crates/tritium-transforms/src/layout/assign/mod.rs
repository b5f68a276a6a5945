//! Layout assignment: gives every tensor value of a function a layout and
//! makes the conversions that needs explicit `convert_layout` ops.
//!
//! Rules, per op, in program order:
//! - values made from scalars (`arange`, `const`, `splat`) take their rank's
//!   canonical blocked layout; loads, stores and atomics work in it too;
//! - an elementwise op runs in the layout of its *costly* operands (those
//!   that are not cheap to recompute) when they agree, else in the canonical
//!   one, so `sum(x, 1) / n` stays in the reduction's slice layout;
//! - a reduction's result is its operand's layout sliced along the axis, and
//!   `expand_dims` of such a slice along that axis is its parent again;
//!   `broadcast` keeps its operand's layout; a blocked `permute` is the
//!   permuted blocked layout (a register relabelling);
//! - `dot` results are MMA accumulators (v3 on sm_90a, else v2), operands
//!   dot-operand registers (v2) or NVMMA shared memory (v3);
//! - loop-carried values keep their initial layout unless the body yields a
//!   costly value in another one (a dot accumulator): then the loop carries
//!   that layout and the initial value is converted before the loop;
//! - function arguments and results are in the callee's canonical layouts.
//!
//! Where an operand is in another layout than its op needs, a *cheap* value
//! (an `arange`, `const` or `splat`, and elementwise, `broadcast` and
//! `expand_dims` chains of those) is recomputed in the wanted layout right
//! before the op; anything else gets one `convert_layout` after its
//! definition, shared by all its uses.
mod access;
mod control;
mod dot;

use std::collections::{HashMap, HashSet};

use tritium_ir::{Attr, Block, Func, Function, Module, Op, Opcode, TypeData, TypeTable, Value, ValueDef};

pub use super::dot_layouts::{dot_layouts, MmaSupport};
use super::{Blocked, Layout, LayoutMap, SharedLayout};

#[derive(Clone, Debug)]
pub struct LayoutOptions {
    pub num_warps: u32,
    pub warp_size: u32,
    /// The widest global access (bytes) the canonical layouts are sized for.
    pub max_access_bytes: u32,
    pub mma: MmaSupport,
    /// Global accesses (loads and stores, by op) whose pointers are
    /// contiguous along another dim than the last: that dim. Their layout
    /// puts the per-thread chunks there, so they stay coalesced and wide.
    pub fast_dims: HashMap<Op, usize>,
    /// Global accesses (by op) that move one element at a time whatever
    /// their layout (nothing known contiguous along any dim).
    pub scalar_accesses: HashSet<Op>,
}

/// Longest chain recomputed instead of converted.
const MAX_CHEAP_DEPTH: u32 = 12;
/// Rounds of the loop-carried fixed point before giving up (keeping the initial layouts).
const MAX_LOOP_ROUNDS: u32 = 4;

/// Assigns layouts to every tensor value of `func`, inserting the
/// conversions they need; `callees` holds each already-assigned function's
/// map (their argument and result layouts are what a call must match).
pub fn assign_layouts(module: &mut Module, func: Func, opts: &LayoutOptions, callees: &HashMap<Func, LayoutMap>) -> LayoutMap {
    let types = &module.types;
    let mut map = LayoutMap { canonical: canonical_layouts(types, &module.funcs[func], opts), layouts: HashMap::new() };
    // a call's argument and result layouts, by callee name
    let mut signatures = HashMap::new();
    for (&g, m) in callees {
        let callee = &module.funcs[g];
        let layout = |v: &Value| m.of(*v).cloned();
        let args: Vec<Option<Layout>> = callee.args().iter().map(layout).collect();
        let results: Vec<Option<Layout>> = callee.results.iter().map(|&t| m.canonical(types.dims(t).len())).collect();
        signatures.insert(callee.name.clone(), (args, results));
    }
    let mut f = module.funcs[func].clone();
    let mut a = Assigner {
        types,
        f: &mut f,
        opts,
        map: std::mem::take(&mut map),
        signatures: &signatures,
        op_block: HashMap::new(),
        converted: HashMap::new(),
        recomputed: HashMap::new(),
        dry: false,
        dot_fed: HashMap::new(),
        wanted: HashMap::new(),
    };
    a.index_blocks();
    a.find_dot_fed_loads();
    let entry = a.f.entry_block();
    for v in a.f.args().to_vec() {
        if let Some(l) = a.canonical_of(v) {
            a.map.layouts.insert(v, l);
        }
    }
    a.block(entry);
    a.erase_dead();
    let map = a.map;
    module.funcs[func] = f;
    map
}

/// Per rank, the canonical blocked layout: sized from the biggest tensor of
/// that rank and the narrowest element accessed through its pointers.
fn canonical_layouts(types: &TypeTable, func: &Function, opts: &LayoutOptions) -> HashMap<usize, Blocked> {
    let mut biggest: HashMap<usize, Vec<u32>> = HashMap::new();
    let mut narrowest: HashMap<usize, u32> = HashMap::new();
    for (_, v) in func.values.iter() {
        let TypeData::Tensor { dims, .. } = types.data(v.ty) else { continue };
        let numel: u64 = dims.iter().map(|&d| d as u64).product();
        let e = biggest.entry(dims.len()).or_insert_with(|| dims.clone());
        if numel > e.iter().map(|&d| d as u64).product() {
            *e = dims.clone();
        }
        if let Some(b) = types.pointee_bytes(v.ty) {
            let n = narrowest.entry(dims.len()).or_insert(u32::MAX);
            *n = (*n).min(b);
        }
    }
    biggest
        .into_iter()
        .map(|(rank, shape)| {
            let eb = narrowest.get(&rank).copied().filter(|&b| b != u32::MAX).unwrap_or(4);
            (rank, Blocked::for_shape(&shape, eb, opts.num_warps, opts.warp_size, opts.max_access_bytes))
        })
        .collect()
}

struct Assigner<'a> {
    types: &'a TypeTable,
    f: &'a mut Function,
    opts: &'a LayoutOptions,
    map: LayoutMap,
    signatures: &'a HashMap<String, (Vec<Option<Layout>>, Vec<Option<Layout>>)>,
    /// The block each placed op is in.
    op_block: HashMap<Op, Block>,
    /// One conversion per (value, layout), placed after the value's definition.
    converted: HashMap<(Value, Layout), Value>,
    /// Recomputed cheap values per (value, layout, block they were placed in).
    recomputed: HashMap<(Value, Layout, Block), Value>,
    /// Deciding loop-carried layouts: record layouts, change no IR.
    dry: bool,
    /// Loads whose every use is a dot's A or B operand (staged in shared
    /// memory anyway, so their register layout is theirs to choose), with
    /// the operand's K dim where every use agrees on it.
    dot_fed: HashMap<Op, Option<usize>>,
    /// During a dry run: the layouts ops wanted a loop's block arguments in.
    wanted: HashMap<Value, Vec<Layout>>,
}

/// The elementwise ops (every tensor operand and result in one layout), as a
/// pattern, so `match`es list them by name and stay exhaustive.
macro_rules! elementwise {
    () => {
        Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::DivRn | Opcode::Rem | Opcode::And
            | Opcode::Or | Opcode::Xor | Opcode::Shl | Opcode::Shr | Opcode::Min | Opcode::Max | Opcode::Umulhi
            | Opcode::Cmp | Opcode::Neg | Opcode::Not | Opcode::Abs | Opcode::Floor | Opcode::Ceil | Opcode::SqrtRn
            | Opcode::Fma | Opcode::Select | Opcode::Clamp | Opcode::Exp | Opcode::Exp2 | Opcode::Log | Opcode::Log2
            | Opcode::Sqrt | Opcode::Rsqrt | Opcode::Sin | Opcode::Cos | Opcode::Erf | Opcode::Cast | Opcode::Bitcast
            | Opcode::PtrToInt | Opcode::IntToPtr | Opcode::Addptr | Opcode::MultipleOf | Opcode::MaxContiguous
            | Opcode::MaxConstancy
    };
}

impl Assigner<'_> {
    fn index_blocks(&mut self) {
        for b in self.f.blocks_preorder() {
            for &op in &self.f.blocks[b].ops {
                self.op_block.insert(op, b);
            }
        }
    }

    fn rank(&self, v: Value) -> usize {
        self.types.dims(self.f.value_type(v)).len()
    }
    fn is_tensor(&self, v: Value) -> bool {
        self.types.is_tensor(self.f.value_type(v))
    }
    fn canonical_of(&self, v: Value) -> Option<Layout> {
        if !self.is_tensor(v) {
            return None;
        }
        self.map.canonical(self.rank(v))
    }
    fn layout(&self, v: Value) -> Option<Layout> {
        self.map.of(v).cloned()
    }
    fn set(&mut self, v: Value, l: Option<Layout>) {
        if let (true, Some(l)) = (self.is_tensor(v), l) {
            self.map.layouts.insert(v, l);
        }
    }

    /// Whether `v` is recomputed rather than converted (see the module docs).
    fn cheap(&self, v: Value, depth: u32) -> bool {
        if depth > MAX_CHEAP_DEPTH {
            return false;
        }
        let ValueDef::OpResult(op, 0) = self.f.values[v].def else { return false };
        let d = &self.f.ops[op];
        if d.results.len() != 1 || !d.regions.is_empty() {
            return false;
        }
        match d.opcode {
            Opcode::Arange | Opcode::Const | Opcode::Splat => true,
            elementwise!() | Opcode::Broadcast | Opcode::ExpandDims => {
                d.operands.iter().all(|&x| !self.is_tensor(x) || self.cheap(x, depth + 1))
            }
            _ => false,
        }
    }

    /// Whether `v` is a `broadcast` or `expand_dims` result: moving it to
    /// another layout is moving its smaller source and redoing it.
    fn reshaped(&self, v: Value) -> bool {
        self.f.defining_op(v).is_some_and(|d| matches!(self.f.ops[d].opcode, Opcode::Broadcast | Opcode::ExpandDims))
    }

    /// The layout shared by the costly tensor operands among `vs`, if they
    /// agree; else the canonical one for `rank`. While a loop's carried
    /// layouts are being decided (a dry run), block arguments hold only a
    /// guess, so the other costly operands decide first: `m = max(m, rowmax(x))`
    /// then carries `m` in the reduction's layout instead of keeping the
    /// guess because `m` voted for it.
    fn common_layout(&self, vs: &[Value], rank: usize) -> Option<Layout> {
        let tensors: Vec<Value> = vs.iter().copied().filter(|&v| self.is_tensor(v)).collect();
        let layouts: Vec<Option<Layout>> = tensors.iter().map(|&v| self.layout(v)).collect();
        if let Some(first) = layouts.first() {
            if layouts.iter().all(|l| l == first) && first.is_some() {
                return first.clone();
            }
        }
        let guess = |v: Value| self.dry && matches!(self.f.values[v].def, ValueDef::BlockArg(..));
        let agreed = |keep: &dyn Fn(Value) -> bool| -> Option<Option<Layout>> {
            let costly: Vec<&Option<Layout>> =
                tensors.iter().zip(&layouts).filter(|(&v, _)| !self.cheap(v, 0) && keep(v)).map(|(_, l)| l).collect();
            let first = *costly.first()?;
            (first.is_some() && costly.iter().all(|l| *l == first)).then(|| first.clone())
        };
        // a broadcast moves more cheaply than the full tensor beside it: its
        // source converts and it is redone (`in_layout`)
        let decided = agreed(&|v| !guess(v) && !self.reshaped(v)).or_else(|| agreed(&|v| !guess(v))).or_else(|| agreed(&|_| true));
        if let Some(l) = decided {
            return l;
        }
        self.map.canonical(rank)
    }

    // -- the walk ---------------------------------------------------------

    fn block(&mut self, b: Block) {
        let ops = self.f.blocks[b].ops.clone();
        for op in ops {
            self.op(b, op);
        }
    }

    fn op(&mut self, b: Block, op: Op) {
        let d = self.f.ops[op].clone();
        let res0 = d.results.first().copied();
        let rank0 = res0.map(|r| self.rank(r)).unwrap_or(0);
        match d.opcode {
            // scalars (a device tensor map's address too)
            Opcode::Const | Opcode::Splat | Opcode::Arange | Opcode::ProgramId | Opcode::NumPrograms
            | Opcode::TensormapCreate => {
                let l = res0.and_then(|r| self.canonical_of(r));
                self.set_results(op, l);
            }
            elementwise!() | Opcode::InlineAsm | Opcode::ExternElementwise => {
                let l = self.common_layout(&d.operands, rank0);
                self.want_all(b, op, &d.operands, l.clone());
                self.set_results(op, l);
            }
            Opcode::Load | Opcode::Store => {
                let ptr_rank = self.rank(d.operands[0]);
                let mut l = self.common_layout(&d.operands, ptr_rank);
                if let Some(own) = self.own_access_layout(op, d.operands[0]) {
                    l = Some(own);
                } else if !l.as_ref().is_some_and(|l| self.access_layout(l, ptr_rank) || self.stores_in_place(op, l)) {
                    l = self.map.canonical(ptr_rank);
                }
                self.want_all(b, op, &d.operands, l.clone());
                self.set_results(op, l);
            }
            // made by the software pipeliner after assignment, which gives
            // their values layouts itself; elsewhere (hand-written IR), plain ones
            Opcode::LocalAlloc => {
                let rank = res0.map(|r| self.rank(r)).unwrap_or(2);
                self.set_results(op, Some(Layout::Shared(SharedLayout::row_major(rank))));
            }
            Opcode::LocalView => {
                let l = match self.layout(d.operands[0]) {
                    Some(Layout::Shared(s)) => s.stage(),
                    _ => SharedLayout::row_major(rank0.max(1)),
                };
                self.set_results(op, Some(Layout::Shared(l)));
            }
            Opcode::AsyncCopy => {
                for i in 2..d.operands.len() {
                    let l = self.canonical_of(d.operands[i]);
                    self.want(b, op, i, l);
                }
            }
            // made by the pipeliner after layouts; nothing of theirs has a layout
            Opcode::AsyncCommit | Opcode::AsyncWait | Opcode::MbarrierInit | Opcode::MbarrierWait | Opcode::MbarrierInval
            | Opcode::TmaCopy => {}
            // each result is its operand, in the operand's layout
            Opcode::DotWait => {
                for (&v, &r) in d.operands.iter().zip(&d.results) {
                    let l = self.layout(v);
                    self.set(r, l);
                }
            }
            Opcode::TmaLoad => self.tma_load(b, op),
            Opcode::TmaStore => {
                let value = d.operands.len() - 1;
                let l = self.tma_layout(d.operands[value]).map(Layout::Shared);
                self.want(b, op, value, l);
            }
            // block memory ops are expanded before layouts are assigned (run_passes)
            Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::Print | Opcode::Assert | Opcode::Reshape | Opcode::Join
            | Opcode::Split | Opcode::Cat | Opcode::BlockLoad | Opcode::BlockStore | Opcode::BlockAtomic
            | Opcode::Assume | Opcode::Gather | Opcode::Histogram => self.all_canonical(b, op),
            Opcode::Reduce | Opcode::Scan => {
                let first = d.operands[0];
                let mut l = self.layout(first).filter(|l| !l.is_shared());
                if d.opcode == Opcode::Scan && !l.as_ref().is_some_and(Layout::is_blocked_like) {
                    l = self.canonical_of(first);
                }
                self.want_all(b, op, &d.operands, l.clone());
                let axis = d.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
                let out = if d.opcode == Opcode::Reduce { l.map(|l| l.slice(axis)) } else { l };
                self.set_results(op, out);
                // the combine region works on scalars
                for &r in &d.regions {
                    let rb = self.f.regions[r].block;
                    self.block(rb);
                }
            }
            Opcode::ExpandDims => {
                let src = d.operands[0];
                let axis = d.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
                let parent = self.layout(src).and_then(|l| l.unslice(axis).cloned());
                let out = match parent {
                    Some(p) => Some(p),
                    None => {
                        let canon = res0.and_then(|r| self.canonical_of(r));
                        if self.is_tensor(src) {
                            let want = canon.as_ref().map(|c| c.slice(axis));
                            self.want_all(b, op, &[src], want);
                        }
                        canon
                    }
                };
                self.set_results(op, out);
            }
            Opcode::Broadcast => {
                let l = self.layout(d.operands[0]).filter(|l| !l.is_shared()).or_else(|| self.canonical_of(d.operands[0]));
                self.want_all(b, op, &d.operands, l.clone());
                self.set_results(op, l);
            }
            Opcode::Permute => {
                let order: Vec<usize> =
                    d.attrs.get("order").and_then(Attr::as_int_array).unwrap_or(&[]).iter().map(|&o| o as usize).collect();
                let src = d.operands[0];
                let l = match self.layout(src).and_then(|l| l.permuted(&order)) {
                    Some(p) => p,
                    None => {
                        let canon = self.canonical_of(src);
                        self.want_all(b, op, &[src], canon.clone());
                        match canon.and_then(|c| c.permuted(&order)) {
                            Some(p) => p,
                            None => return,
                        }
                    }
                };
                self.set_results(op, Some(l));
            }
            Opcode::Dot => self.dot(b, op),
            Opcode::ConvertLayout => {
                let l = self.layout(d.operands[0]);
                self.set_results(op, l);
            }
            Opcode::Call => {
                let callee = d.attrs.get("callee").and_then(Attr::as_str).unwrap_or("").to_string();
                let (args, results) = self.signatures.get(&callee).cloned().unwrap_or_default();
                for (i, &v) in d.operands.iter().enumerate() {
                    let l = args.get(i).cloned().flatten().or_else(|| self.canonical_of(v));
                    self.want(b, op, i, l);
                }
                for (i, &r) in d.results.iter().enumerate() {
                    let l = results.get(i).cloned().flatten().or_else(|| self.canonical_of(r));
                    self.set(r, l);
                }
            }
            Opcode::Return => self.all_canonical(b, op),
            Opcode::Barrier => {}
            Opcode::For => self.for_loop(b, op),
            Opcode::While => self.while_loop(b, op),
            Opcode::If => self.if_op(op),
            // placed by their parent's rule
            Opcode::Yield | Opcode::Condition => {}
        }
    }

    fn set_results(&mut self, op: Op, l: Option<Layout>) {
        for r in self.f.ops[op].results.clone() {
            let l = if self.is_tensor(r) { l.clone() } else { None };
            self.set(r, l);
        }
    }

    fn all_canonical(&mut self, b: Block, op: Op) {
        let d = self.f.ops[op].clone();
        for (i, &v) in d.operands.iter().enumerate() {
            let l = self.canonical_of(v);
            self.want(b, op, i, l);
        }
        for &r in &d.results {
            let l = self.canonical_of(r);
            self.set(r, l);
        }
    }

    /// Makes each tensor operand of `op` that is among `operands` be in `l`.
    fn want_all(&mut self, b: Block, op: Op, operands: &[Value], l: Option<Layout>) {
        let all = self.f.ops[op].operands.clone();
        for (i, v) in all.iter().enumerate() {
            if operands.contains(v) && self.is_tensor(*v) {
                self.want(b, op, i, l.clone());
            }
        }
    }

    /// Makes operand `i` of `op` (placed in `b`) be in layout `l`.
    fn want(&mut self, b: Block, op: Op, i: usize, l: Option<Layout>) {
        let v = self.f.ops[op].operands[i];
        let Some(l) = l else { return };
        if !self.is_tensor(v) || self.layout(v).as_ref() == Some(&l) {
            return;
        }
        if self.dry {
            if matches!(self.f.values[v].def, ValueDef::BlockArg(..)) {
                self.wanted.entry(v).or_default().push(l);
            }
            return;
        }
        let new = self.in_layout(b, op, v, &l);
        self.f.ops[op].operands[i] = new;
    }

    /// `v` in layout `l`, usable at `at` (in block `b`).
    fn in_layout(&mut self, b: Block, at: Op, v: Value, l: &Layout) -> Value {
        if self.layout(v).as_ref() == Some(l) {
            return v;
        }
        // a value in shared memory is always stored there by a conversion;
        // a broadcast or expand_dims is redone from its converted source
        if (self.cheap(v, 0) || self.reshaped(v)) && !l.is_shared() {
            if let Some(&done) = self.recomputed.get(&(v, l.clone(), b)) {
                return done;
            }
            let new = self.recompute(b, at, v, l);
            self.recomputed.insert((v, l.clone(), b), new);
            return new;
        }
        if let Some(&done) = self.converted.get(&(v, l.clone())) {
            return done;
        }
        let ty = self.f.value_type(v);
        let (block, index, loc) = match self.f.values[v].def {
            ValueDef::OpResult(def, _) => {
                let block = self.op_block[&def];
                let idx = self.f.blocks[block].ops.iter().position(|&o| o == def).map_or(0, |i| i + 1);
                (block, idx, self.f.ops[def].loc)
            }
            ValueDef::BlockArg(block, _) => (block, 0, self.f.ops[at].loc),
        };
        let conv = self.f.create_op(Opcode::ConvertLayout, &[v], &[ty], Default::default(), Vec::new(), loc);
        self.f.insert_op(block, index, conv);
        self.op_block.insert(conv, block);
        let out = self.f.ops[conv].results[0];
        self.map.layouts.insert(out, l.clone());
        self.converted.insert((v, l.clone()), out);
        out
    }

    /// Clones the cheap definition of `v` right before `at`, in layout `l`.
    fn recompute(&mut self, b: Block, at: Op, v: Value, l: &Layout) -> Value {
        let ValueDef::OpResult(def, _) = self.f.values[v].def else { return v };
        let d = self.f.ops[def].clone();
        let mut operands = d.operands.clone();
        for (i, &x) in d.operands.iter().enumerate() {
            if !self.is_tensor(x) {
                continue;
            }
            let want = match d.opcode {
                Opcode::ExpandDims => {
                    let axis = d.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
                    l.slice(axis)
                }
                _ => l.clone(),
            };
            operands[i] = self.in_layout(b, at, x, &want);
        }
        let types: Vec<_> = d.results.iter().map(|&r| self.f.value_type(r)).collect();
        let clone = self.f.create_op(d.opcode, &operands, &types, d.attrs.clone(), Vec::new(), d.loc);
        let pos = self.f.blocks[b].ops.iter().position(|&o| o == at).unwrap_or(0);
        self.f.insert_op(b, pos, clone);
        self.op_block.insert(clone, b);
        let out = self.f.ops[clone].results[0];
        self.map.layouts.insert(out, l.clone());
        out
    }

    // -- TMA -----------------------------------------------------------------

    /// The NVMMA layout a TMA box of `v`'s block lands in (the swizzle the
    /// launcher encodes the tensor map with: `tma::tma_box`).
    fn tma_layout(&self, v: Value) -> Option<SharedLayout> {
        let t = self.f.value_type(v);
        let eb = self.types.scalar_kind(t).map(|k| k.bits().div_ceil(8))?;
        crate::tma::tma_box(eb, self.types.dims(t)).ok().map(|b| b.layout(eb))
    }

    /// A `tma_load`'s tile lands in shared memory in its box's layout; its
    /// users read it through one conversion to the canonical layout, made
    /// right after it (so loops, branches and elementwise ops never see a
    /// shared-memory value). During a dry run the result just counts as canonical.
    fn tma_load(&mut self, b: Block, op: Op) {
        let res = self.f.ops[op].results[0];
        let canonical = self.canonical_of(res);
        if self.dry {
            self.set(res, canonical);
            return;
        }
        let Some(shared) = self.tma_layout(res) else {
            self.set(res, canonical);
            return;
        };
        self.set(res, Some(Layout::Shared(shared)));
        let Some(canonical) = canonical else { return };
        let out = self.in_layout(b, op, res, &canonical);
        let conv = self.f.defining_op(out).expect("in_layout made a conversion");
        self.f.replace_all_uses(res, out);
        self.f.ops[conv].operands[0] = res;
    }

    /// Drops pure ops whose results nothing uses (the originals of values
    /// that were recomputed elsewhere), innermost first.
    fn erase_dead(&mut self) {
        if self.dry {
            return;
        }
        loop {
            let uses = self.f.use_counts();
            let mut dead = Vec::new();
            for (blk, op) in self.f.ops_preorder() {
                let d = &self.f.ops[op];
                if d.opcode.info().pure && d.regions.is_empty() && d.results.iter().all(|r| !uses.contains_key(r)) {
                    dead.push((blk, op));
                }
            }
            if dead.is_empty() {
                break;
            }
            for (blk, op) in dead {
                self.f.erase_op(blk, op);
                for r in self.f.ops[op].results.clone() {
                    self.map.layouts.remove(&r);
                }
            }
        }
    }
}
