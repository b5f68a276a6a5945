//! Layouts of global accesses. Most run in their rank's canonical layout,
//! which is sized for the function's biggest tensor of that rank. Two kinds
//! get a layout of their own, sized for their own tile:
//! - accesses contiguous along another dim than the last
//!   (`LayoutOptions::fast_dims`), so they stay coalesced and wide;
//! - loads whose only uses are a dot's A or B operand: those go to shared
//!   memory anyway, and a canonical layout sized for a bigger accumulator
//!   would have several threads load (or `cp.async`) the same elements.
//!   On CDNA (MFMA), one that moves an element at a time whatever its
//!   layout gives each thread 8 bytes along K, the staged operand's
//!   contiguous dim, so its LDS writes are `ds_write_b64` instead of four
//!   `ds_write_b16`.
//!
//! A loop-carried pointer walked by cheap increments (`ptrs += BLOCK_K`) and
//! only read by accesses follows the layout those accesses want, so it is
//! carried in it instead of being converted every iteration.
use tritium_ir::{Op, Opcode, Value, ValueDef};

use super::Assigner;
use crate::layout::{Blocked, Layout, MmaSupport};

/// Bytes along K each thread loads of an AMD dot operand whose global access
/// is per element: one `ds_write_b64` (Triton's AMD backend gives such loads
/// 4 fp16 along K too).
const AMD_OPERAND_RUN_BYTES: u32 = 8;

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

    /// Whether store `op` runs in its value's AMD matrix-core layout `l`
    /// rather than converting to a blocked one: where it moves one element
    /// at a time whatever its layout, a conversion through LDS would buy no
    /// wider access (as Triton's AMD backend stores such accumulators).
    pub(super) fn stores_in_place(&self, op: Op, l: &Layout) -> bool {
        self.f.ops[op].opcode == Opcode::Store
            && matches!(self.opts.mma, MmaSupport::Mfma | MmaSupport::Wmma)
            && matches!(l, Layout::Mma(_))
            && self.opts.scalar_accesses.contains(&op)
    }

    /// The layout access `op` through `ptr` runs in when it is not the
    /// canonical one (see the module docs).
    pub(super) fn own_access_layout(&self, op: Op, ptr: Value) -> Option<Layout> {
        let fast = self.opts.fast_dims.get(&op).copied();
        if fast.is_none() && !self.dot_fed.contains_key(&op) {
            return None;
        }
        let ty = self.f.value_type(ptr);
        let shape = self.types.dims(ty).to_vec();
        let eb = self.types.pointee_bytes(ty)?;
        let last = shape.len().checked_sub(1)?;
        let o = self.opts;
        let mut run_bytes = o.max_access_bytes;
        // AMD stages dot operands K-contiguous (mma::amd_dot_layouts): where
        // the global access is per element anyway, runs along K cost it
        // nothing and make the LDS writes wide. Not on WMMA: the bench
        // matmul on gfx1100 then spills (0 -> 48 with 8-byte runs, 53 with 16)
        let k_run = match (fast, self.dot_fed.get(&op)) {
            (None, Some(&Some(k))) if o.mma == MmaSupport::Mfma && o.scalar_accesses.contains(&op) => Some(k),
            _ => None,
        };
        if k_run.is_some() {
            run_bytes = AMD_OPERAND_RUN_BYTES;
        }
        let fast = fast.or(k_run).unwrap_or(last);
        let mut order = vec![fast];
        order.extend((0..shape.len()).rev().filter(|&d| d != fast));
        Some(Layout::Blocked(Blocked::for_shape_in_order(&shape, order, eb, o.num_warps, o.warp_size, run_bytes)))
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
                // A [.., M, K]: K last; B [.., K, N]: K next to last
                let rank = self.types.dims(self.f.value_type(r)).len();
                let mut ks = us.iter().flat_map(|&u| {
                    let o = &self.f.ops[u].operands;
                    [(o[0] == r).then(|| rank - 1), (o[1] == r).then(|| rank - 2)].into_iter().flatten()
                });
                let first = ks.next();
                let agreed = if ks.all(|k| Some(k) == first) { first } else { None };
                self.dot_fed.insert(op, agreed);
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
