//! Typing rules of the block memory ops (`block_load`, `block_store`,
//! `block_atomic`): one access of a whole block described by a base pointer
//! and per-dimension shape, stride and offset scalars. The rank comes from
//! the block's type (the result, or the stored value); the operand count
//! must match it exactly.
use crate::attrs::Attr;
use crate::entities::{Op, Type};
use crate::ops::Opcode;
use crate::types::ScalarKind;

use super::ops::Rule;
use crate::ops::{GLOBAL_SCRATCH_ATTR, TENSORMAP_ATTR};
use super::Checker;

impl Checker<'_> {
    pub(super) fn block_access(&self, op: Op, opcode: Opcode, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        // the block's type: the loaded result, or the stored value (last operand)
        let block = if opcode == Opcode::BlockLoad { res[0] } else { ops[ops.len() - 1] };
        let dims = types.dims(block).to_vec();
        let r = dims.len();
        if r == 0 {
            return Err(format!("the block must be a tensor, got {}", self.show(block)));
        }
        let fixed = 1 + 3 * r;
        let ok_count = match opcode {
            Opcode::BlockLoad => ops.len() == fixed || ops.len() == fixed + 1,
            _ => ops.len() == fixed + 1,
        };
        if !ok_count {
            return Err(format!(
                "a rank-{r} block takes base, {r} shapes, {r} strides and {r} offsets{}, got {} operands",
                if opcode == Opcode::BlockLoad { " (then an optional 'other')" } else { ", then the value" },
                ops.len()
            ));
        }
        let elem = types.elem(block);
        if types.pointee(ops[0]) != Some(elem) || types.is_tensor(ops[0]) {
            return Err(format!("base must be a scalar pointer to {}, got {}", self.show(elem), self.show(ops[0])));
        }
        let scalar_int = |t: Type, bits: &[u32]| {
            !types.is_tensor(t) && self.kind(t).is_some_and(|k| k.is_int() && bits.contains(&k.bits()))
        };
        for (d, &t) in ops[1..1 + r].iter().enumerate() {
            if !scalar_int(t, &[32, 64]) {
                return Err(format!("shape {d} must be an i32 or i64 scalar, got {}", self.show(t)));
            }
        }
        for (d, &t) in ops[1 + r..1 + 2 * r].iter().enumerate() {
            if !scalar_int(t, &[64]) {
                return Err(format!("stride {d} must be an i64 scalar, got {}", self.show(t)));
            }
        }
        for (d, &t) in ops[1 + 2 * r..fixed].iter().enumerate() {
            // a scalar start (the block's rows d are start..start+B_d), or
            // one index per row (a gather/scatter along d)
            let per_row = types.is_tensor(t) && types.dims(t) == [dims[d]];
            if self.kind(t) != Some(ScalarKind::I32) || (types.is_tensor(t) && !per_row) {
                return Err(format!(
                    "offset {d} must be an i32 scalar or a tensor<{}xi32>, got {}",
                    dims[d],
                    self.show(t)
                ));
            }
        }
        if opcode == Opcode::BlockLoad {
            if let Some(&other) = ops.get(fixed) {
                if other != elem {
                    return Err(format!("'other' must be a {} scalar, got {}", self.show(elem), self.show(other)));
                }
            }
        }
        self.dims_attr(op, "boundary_check", r, false)?;
        self.dims_attr(op, "order", r, true)?;
        if opcode == Opcode::BlockAtomic {
            self.one_of(op, "kind", &["add", "max", "min", "and", "or", "xor"])?;
            self.atomic_attrs(op)?;
        }
        Ok(())
    }

    /// `tma_load` / `tma_store`: a kernel's `tensormap` argument, then a
    /// `block_load` / `block_store` whose offsets are scalars (a TMA box, not
    /// a gather) of rank 1 to 5 (what a tensor map can describe).
    pub(super) fn tma_access(&self, op: Op, opcode: Opcode, ops: &[Type], res: &[Type]) -> Rule {
        self.tma_operands(op, 0, opcode, ops, res)
    }

    /// `tma_copy(buf, stage, barriers, guard, <a tma_load's operands>)`:
    /// the load fills one stage of `buf`, armed on a ring of one mbarrier
    /// per stage (`stages x 1` i64).
    pub(super) fn tma_copy(&self, op: Op, ops: &[Type]) -> Rule {
        let types = &self.m.types;
        self.allocated(op)?;
        let bars = self.f.ops[op].operands[2];
        if !self.f.defining_op(bars).is_some_and(|d| self.f.ops[d].opcode == Opcode::LocalAlloc) {
            return Err("operand 2 (the barriers) must be a local_alloc result".to_string());
        }
        let stages = types.dims(ops[0]).first().copied().unwrap_or(0);
        if types.dims(ops[2]) != [stages, 1] || self.kind(ops[2]) != Some(ScalarKind::I64) {
            return Err(format!("the barriers must be {stages}x1 i64 (one per stage), got {}", self.show(ops[2])));
        }
        self.expect_scalar(ops[1], ScalarKind::I32, "stage")?;
        self.expect_scalar(ops[3], ScalarKind::I1, "guard")?;
        let tile = types.dims(ops[0]).get(1..).unwrap_or(&[]).to_vec();
        let elem = types.elem(ops[0]);
        let stage = crate::types::TypeData::Tensor { dims: tile, elem };
        let block = types.lookup(&stage).ok_or_else(|| format!("no stage type of {}", self.show(ops[0])))?;
        self.tma_operands(op, 4, Opcode::TmaLoad, &ops[4..], &[block])
    }

    /// The operands of a TMA access from `first` on (map, then the block
    /// op's own); `res` the loaded block when `opcode` is a load.
    fn tma_operands(&self, op: Op, first: usize, opcode: Opcode, ops: &[Type], res: &[Type]) -> Rule {
        let map = self.f.ops[op].operands[first];
        let is_map = match self.f.values[map].def {
            crate::ValueDef::BlockArg(b, i) => {
                b == self.f.entry_block()
                    && self.f.kernel
                    && self.f.arg_attrs.get(i as usize).and_then(|a| a.get(TENSORMAP_ATTR)).and_then(Attr::as_bool) == Some(true)
            }
            crate::ValueDef::OpResult(d, _) => self.f.ops[d].opcode == Opcode::TensormapCreate,
        };
        if !is_map || self.kind(ops[0]) != Some(ScalarKind::I64) || self.m.types.is_tensor(ops[0]) {
            return Err(format!(
                "operand 0 must be an i64 kernel argument marked '{TENSORMAP_ATTR}' or a tensormap_create result, got {}",
                self.show(ops[0])
            ));
        }
        let inner = if opcode == Opcode::TmaLoad { Opcode::BlockLoad } else { Opcode::BlockStore };
        self.block_access(op, inner, &ops[1..], res)?;
        let block = if opcode == Opcode::TmaLoad { res[0] } else { ops[ops.len() - 1] };
        let r = self.m.types.dims(block).len();
        if r > 5 {
            return Err(format!("a tensor map has at most 5 dimensions, the block has {r}"));
        }
        if ops[2 + 2 * r..2 + 3 * r].iter().any(|&t| self.m.types.is_tensor(t)) {
            return Err("a TMA access takes scalar offsets (a box), not per-row indices".to_string());
        }
        Ok(())
    }

    /// `tensormap_create(scratch, base, shapes..., strides...)`: the scratch
    /// is the kernel's `global_scratch` argument, then a rank-r array as a
    /// block op describes it without its last stride (r of 1 to 5), a box of r extents of 1 to 256,
    /// a swizzle TMA has and an i64 result (the map's address).
    pub(super) fn tensormap_create(&self, op: Op, ops: &[Type], res: &[Type]) -> Rule {
        let types = &self.m.types;
        let scratch = self.f.ops[op].operands[0];
        let is_scratch = match self.f.values[scratch].def {
            crate::ValueDef::BlockArg(b, i) => {
                b == self.f.entry_block() && self.f.kernel && self.f.arg_attrs.get(i as usize).is_some_and(|a| a.contains_key(GLOBAL_SCRATCH_ATTR))
            }
            _ => false,
        };
        if !is_scratch || self.kind(ops[0]) != Some(ScalarKind::I64) || types.is_tensor(ops[0]) {
            return Err(format!("operand 0 must be the i64 kernel argument marked '{GLOBAL_SCRATCH_ATTR}', got {}", self.show(ops[0])));
        }
        let n = ops.len() - 2;
        let r = n.div_ceil(2);
        if n % 2 != 1 || !(1..=5).contains(&r) {
            return Err(format!("takes the scratch, a base, then r shapes and r - 1 strides (r of 1 to 5), got {} operands", ops.len()));
        }
        if types.pointee(ops[1]).is_none() || types.is_tensor(ops[1]) {
            return Err(format!("base must be a scalar pointer, got {}", self.show(ops[1])));
        }
        for (d, &t) in ops[2..].iter().enumerate() {
            if types.is_tensor(t) || !self.kind(t).is_some_and(|k| k.is_int() && matches!(k.bits(), 32 | 64)) {
                let what = if d < r { format!("shape {d}") } else { format!("stride {}", d - r) };
                return Err(format!("{what} must be an i32 or i64 scalar, got {}", self.show(t)));
            }
        }
        let bx = self.attr(op, "box").and_then(Attr::as_int_array).unwrap_or(&[]);
        if bx.len() != r || bx.iter().any(|&b| !(1..=256).contains(&b)) {
            return Err(format!("box must list {r} extents of 1 to 256, got {bx:?}"));
        }
        let swizzle = self.attr(op, "swizzle").and_then(Attr::as_int).unwrap_or(-1);
        if !matches!(swizzle, 0 | 32 | 64 | 128) {
            return Err(format!("swizzle must be 0, 32, 64 or 128 bytes, got {swizzle}"));
        }
        if self.attr(op, "slot").and_then(Attr::as_int).is_none_or(|s| s < 0) {
            return Err("slot must not be negative".to_string());
        }
        if self.kind(res[0]) != Some(ScalarKind::I64) || types.is_tensor(res[0]) {
            return Err(format!("the result (the map's address) must be i64, got {}", self.show(res[0])));
        }
        Ok(())
    }

    /// `key` lists dimensions of a rank-`r` block in increasing order, each
    /// once; with `all`, every dimension (a permutation, in any order).
    fn dims_attr(&self, op: Op, key: &str, r: usize, all: bool) -> Rule {
        let list = self.attr(op, key).and_then(Attr::as_int_array).unwrap_or(&[]);
        let in_range = list.iter().all(|&d| (0..r as i64).contains(&d));
        let valid = if all {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            in_range && sorted == (0..r as i64).collect::<Vec<_>>()
        } else {
            in_range && list.windows(2).all(|w| w[0] < w[1])
        };
        if !valid {
            let want = if all { "a permutation of the block's dimensions" } else { "increasing dimensions of the block" };
            return Err(format!("attribute '{key}' must list {want} (rank {r}), got {list:?}"));
        }
        Ok(())
    }
}
