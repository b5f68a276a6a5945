//! Layouts of global accesses. Most run in their rank's canonical layout,
//! which is sized for the function's biggest tensor of that rank. Two kinds
//! get a layout of their own, sized for their own tile:
//! - accesses contiguous along another dim than the last
//!   (`LayoutOptions::fast_dims`), so they stay coalesced and wide;
//! - loads whose only uses are a dot's A or B operand: those go to shared
//!   memory anyway, and a canonical layout sized for a bigger accumulator
//!   would have several threads load (or `cp.async`) the same elements.
//!
//! A loop-carried pointer walked by cheap increments (`ptrs += BLOCK_K`) and
//! only read by accesses follows the layout those accesses want, so it is
//! carried in it instead of being converted every iteration.
use tritium_ir::{Op, Opcode, Value, ValueDef};

use super::Assigner;
use crate::layout::{Blocked, Layout};

impl Assigner<'_> {
    /// Whether global accesses may run in `l`: the canonical layout or a
    /// slice of it (a reduction's result stored directly); MMA and other
    /// layouts are converted first so accesses stay coalesced.
    pub(super) fn access_layout(&self, l: &Layout, rank: usize) -> bool {
        let canonical = self.map.canonical.values().any(|b| match l {
            Layout::Blocked(x) => x == b,
            _ => false,
        });
        canonical || matches!(l, Layout::Slice { parent, .. } if self.access_layout(parent, rank + 1))
    }

    /// The layout access `op` through `ptr` runs in when it is not the
    /// canonical one (see the module docs).
    pub(super) fn own_access_layout(&self, op: Op, ptr: Value) -> Option<Layout> {
        let fast = self.opts.fast_dims.get(&op).copied();
        if fast.is_none() && !self.dot_fed.contains(&op) {
            return None;
        }
        let ty = self.f.value_type(ptr);
        let shape = self.types.dims(ty).to_vec();
        let eb = self.types.pointee_bytes(ty)?;
        let last = shape.len().checked_sub(1)?;
        let fast = fast.unwrap_or(last);
        let mut order = vec![fast];
        order.extend((0..shape.len()).rev().filter(|&d| d != fast));
        let o = self.opts;
        Some(Layout::Blocked(Blocked::for_shape_in_order(&shape, order, eb, o.num_warps, o.warp_size, o.max_access_bytes)))
    }

    pub(super) fn find_dot_fed_loads(&mut self) {
        let users = self.f.users();
        for (_, op) in self.f.ops_preorder() {
            let d = &self.f.ops[op];
            if d.opcode != Opcode::Load || !self.is_tensor(d.results[0]) {
                continue;
            }
            let r = d.results[0];
            let Some(us) = users.get(&r) else { continue };
            let a_or_b = |u: Op| {
                let o = &self.f.ops[u].operands;
                self.f.ops[u].opcode == Opcode::Dot && o[2] != r
            };
            if us.iter().all(|&u| a_or_b(u)) {
                self.dot_fed.insert(op);
            }
        }
    }

    /// The layout a loop should carry `arg` (yielding `yielded` for it) in
    /// instead of `carried`: the one every op of the last dry run wanted it
    /// in, when it is a pointer walked by cheap steps and read by accesses.
    pub(super) fn walked_pointer_layout(&self, arg: Value, yielded: Value, carried: &Option<Layout>) -> Option<Layout> {
        let wants = self.wanted.get(&arg)?;
        let first = wants.first()?;
        if wants.iter().any(|l| l != first) || Some(first) == carried.as_ref() || !first.is_blocked_like() {
            return None;
        }
        let ValueDef::BlockArg(body, _) = self.f.values[arg].def else { return None };
        let steps_from_arg = |v: Value| -> bool {
            let ValueDef::OpResult(op, _) = self.f.values[v].def else { return false };
            let d = &self.f.ops[op];
            d.opcode == Opcode::Addptr
                && d.operands[0] == arg
                && d.operands[1..].iter().all(|&x| !self.is_tensor(x) || self.cheap(x, 0))
        };
        if yielded != arg && !steps_from_arg(yielded) {
            return None;
        }
        // every use in the body: an access through it, or the step
        for &op in &self.f.blocks[body].ops {
            let d = &self.f.ops[op];
            for (i, &v) in d.operands.iter().enumerate() {
                if v != arg {
                    continue;
                }
                let access = matches!(d.opcode, Opcode::Load | Opcode::Store) && i == 0;
                let step = d.results.first().is_some_and(|&r| r == yielded);
                let ends = d.opcode == Opcode::Yield;
                if !(access || step || ends) {
                    return None;
                }
            }
            if !d.regions.is_empty() && self.used_inside(op, arg) {
                return None;
            }
        }
        Some(first.clone())
    }

    /// Whether any op nested in `op`'s regions reads `v`.
    fn used_inside(&self, op: Op, v: Value) -> bool {
        self.f.ops[op].regions.iter().any(|&r| {
            let b = self.f.regions[r].block;
            self.f.blocks[b].ops.iter().any(|&o| self.f.ops[o].operands.contains(&v) || self.used_inside(o, v))
        })
    }
}
