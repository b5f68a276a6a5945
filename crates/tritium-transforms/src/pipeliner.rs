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

use tritium_ir::{Attr, Block, Func, Function, Module, Op, Opcode, ScalarKind, TypeTable, Value, ValueDef};

use crate::effects::is_pure;
use crate::layout::{Layout, LayoutMap, SharedLayout};

mod rewrite;
use rewrite::Rewriter;

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
