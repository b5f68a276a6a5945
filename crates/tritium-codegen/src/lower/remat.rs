//! Removing layout conversions instead of doing them. Two cases:
//! - a value that is cheap to compute in any layout (an `arange`, `const` or
//!   `splat`, and elementwise chains / casts / compares / `addptr` of those
//!   over scalars) is *rematerialized* where another layout wants it:
//!   `rows[:, None]` computes `rows` directly in the slice of the 2-D layout,
//!   each thread the indices it owns, with no shared memory;
//! - an elementwise op or global access with an operand held in a
//!   non-canonical layout (a reduction's result) runs *in that layout*
//!   when its other operands are scalars, cheap, or held likewise, so
//!   `sum(x, 1) / n` and `store(out + rows, s, rows < M)` stay in the slice.
//!
//! Both lower the op through its usual lowering with the operands'
//! registers swapped for their copies in the chosen layout.
use tritium_ir::{Op, Opcode, Value};

use super::{Lowering, Regs};
use crate::error::Result;
use crate::layout::BlockedLayout;

/// Longest elementwise chain rematerialized (the leaves are cheap anyway;
/// this bounds the work for pathological chains).
const MAX_DEPTH: u32 = 12;

/// Elementwise ops lowered register by register that remat may re-run.
fn elementwise(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::Rem | Opcode::And | Opcode::Or | Opcode::Xor
        | Opcode::Shl | Opcode::Shr | Opcode::Min | Opcode::Max | Opcode::Cmp | Opcode::Neg | Opcode::Not
        | Opcode::Abs | Opcode::Select | Opcode::Cast | Opcode::Bitcast | Opcode::PtrToInt | Opcode::IntToPtr
        | Opcode::Addptr | Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy | Opcode::Umulhi
        | Opcode::Clamp | Opcode::Fma | Opcode::Floor | Opcode::Ceil | Opcode::DivRn | Opcode::SqrtRn
    )
}

/// Ops that may run in an operand's non-canonical layout.
fn layout_agnostic(opcode: Opcode) -> bool {
    elementwise(opcode)
        || matches!(
            opcode,
            Opcode::Exp | Opcode::Exp2 | Opcode::Log | Opcode::Log2 | Opcode::Sqrt | Opcode::Rsqrt | Opcode::Sin
            | Opcode::Cos | Opcode::Erf | Opcode::Load | Opcode::Store
        )
}

impl<'a, 'c> Lowering<'a, 'c> {
    fn is_tensor(&self, v: Value) -> bool {
        self.module.types.is_tensor(self.ty(v))
    }

    /// Whether tensor `v` can be recomputed in any layout from scalars.
    pub(super) fn cheap(&self, v: Value, depth: u32) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let tritium_ir::ValueDef::OpResult(op, 0) = self.func.values[v].def else { return false };
        let data = self.op(op);
        if data.results.len() != 1 || !data.regions.is_empty() {
            return false;
        }
        match data.opcode {
            Opcode::Arange | Opcode::Const | Opcode::Splat => true,
            o if elementwise(o) => data.operands.iter().all(|&o| !self.is_tensor(o) || self.cheap(o, depth + 1)),
            _ => false,
        }
    }

    /// `v`'s registers in `dst` when held there already or cheap to recompute.
    pub(super) fn held_or_remat(&mut self, op: Op, v: Value, dst: &BlockedLayout) -> Result<Option<Regs<'c>>> {
        if let Some((l, regs)) = self.native.get(&v) {
            if l == dst {
                return Ok(Some(regs.clone()));
            }
        }
        if self.layout(self.ty(v)).as_ref() == Some(dst) {
            if let Some(regs) = self.values.get(&v) {
                return Ok(Some(regs.clone()));
            }
        }
        if !self.cheap(v, 0) {
            return Ok(None);
        }
        self.remat(op, v, dst).map(Some)
    }

    /// Recomputes cheap tensor `v` in layout `dst`.
    fn remat(&mut self, op: Op, v: Value, dst: &BlockedLayout) -> Result<Regs<'c>> {
        let tritium_ir::ValueDef::OpResult(def, _) = self.func.values[v].def else {
            return Err(self.unsupported(op, "rematerializing a block argument"));
        };
        let n = dst.elems_per_thread() as usize;
        match self.op(def).opcode {
            Opcode::Arange => self.arange_in(def, dst),
            // uniform: any copy's first register is the scalar
            Opcode::Const | Opcode::Splat => {
                let (_, regs) = self.native_of(op, v)?;
                Ok(vec![regs[0]; n])
            }
            _ => {
                let operands = self.op(def).operands.clone();
                let mut swapped = Vec::with_capacity(operands.len());
                for &o in &operands {
                    if self.is_tensor(o) {
                        let regs = match self.held_or_remat(op, o, dst)? {
                            Some(r) => r,
                            None => return Err(self.unsupported(op, "rematerializing a value with a costly operand")),
                        };
                        swapped.push(Some(regs));
                    } else {
                        swapped.push(None);
                    }
                }
                self.lower_swapped(def, dst, &swapped)
            }
        }
    }

    /// Lowers `op` with the registers of its operands replaced (where
    /// `Some`) and its results in layout `dst`; returns result 0's registers
    /// (empty for ops without results). The values table is restored after.
    fn lower_swapped(&mut self, op: Op, dst: &BlockedLayout, swapped: &[Option<Regs<'c>>]) -> Result<Regs<'c>> {
        let data = self.op(op);
        let mut saved = Vec::new();
        for (&o, regs) in data.operands.iter().zip(swapped) {
            if let Some(regs) = regs {
                saved.push((o, self.values.insert(o, regs.clone())));
            }
        }
        for &r in &data.results {
            saved.push((r, self.values.remove(&r)));
        }
        self.smem.foreign.push(dst.clone());
        let lowered = self.lower_op(op);
        self.smem.foreign.pop();
        let out = data.results.first().and_then(|r| self.values.get(r).cloned()).unwrap_or_default();
        // restore in reverse so an operand given twice gets its first saved entry back
        for (v, old) in saved.into_iter().rev() {
            match old {
                Some(r) => self.values.insert(v, r),
                None => self.values.remove(&v),
            };
        }
        lowered?;
        Ok(out)
    }

    /// The layout the registers being lowered are in: the canonical one
    /// unless an op runs in an operand's layout (`lower_in_operand_layout`).
    pub(super) fn current_layout(&self, v: Value) -> Option<BlockedLayout> {
        match self.smem.foreign.last() {
            Some(l) if self.is_tensor(v) => Some(l.clone()),
            _ => self.layout(self.ty(v)),
        }
    }

    /// Runs a layout-agnostic op in the layout of an operand held only in a
    /// non-canonical layout, when every other tensor operand is held there
    /// too or is cheap. Returns false (nothing done) otherwise.
    pub(super) fn lower_in_operand_layout(&mut self, op: Op) -> Result<bool> {
        let data = self.op(op);
        if !layout_agnostic(data.opcode) || data.results.len() > 1 || !self.smem.foreign.is_empty() {
            return Ok(false);
        }
        // an operand with no canonical registers picks the layout
        let Some(dst) = data.operands.iter().find(|v| !self.values.contains_key(v)).and_then(|v| self.native.get(v)).map(|(l, _)| l.clone())
        else {
            return Ok(false);
        };
        let operands = data.operands.clone();
        let mut swapped = Vec::with_capacity(operands.len());
        for &o in &operands {
            if !self.is_tensor(o) {
                swapped.push(None);
                continue;
            }
            let held = self.native.get(&o).is_some_and(|(l, _)| *l == dst);
            if !held && !self.cheap(o, 0) {
                return Ok(false);
            }
            swapped.push(self.held_or_remat(op, o, &dst)?);
        }
        let regs = self.lower_swapped(op, &dst, &swapped)?;
        if !self.op(op).results.is_empty() {
            self.set_result(op, 0, dst, regs)?;
        }
        Ok(true)
    }

    /// `arange` computed in layout `tl`: each register's own index.
    pub(super) fn arange_in(&self, op: Op, tl: &BlockedLayout) -> Result<Regs<'c>> {
        let start = self.op(op).attrs.get("start").and_then(tritium_ir::Attr::as_int).unwrap_or(0);
        let i32t = self.llvm.context.i32_type();
        let mut regs = Vec::with_capacity(tl.elems_per_thread() as usize);
        for r in 0..tl.elems_per_thread() {
            let c = self.coords(tl, r)?[0];
            regs.push(self.llvm.builder.build_int_add(c, i32t.const_int(start as u64, true), "")?.into());
        }
        Ok(regs)
    }
}
