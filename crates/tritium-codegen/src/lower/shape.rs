//! Shape ops on N-D layouts: `arange`, `broadcast` and `expand_dims` move no
//! data (a broadcast source is first brought to the result's layout applied
//! to its own shape; expand_dims of a slice layout is its parent), while
//! `reshape`, `permute`, `join`, `split` and `cat` go through scratch shared
//! memory (`convert::gather`): sources written row-major, results read back
//! from the flat index their coordinates map to.
use inkwell::values::IntValue;
use tritium_ir::{Attr, Op, Opcode};

use super::{Lowering, Regs};
use crate::error::Result;
use crate::layout::BlockedLayout;

impl<'a, 'c> Lowering<'a, 'c> {
    /// The layout assigned to result `idx` of `op`.
    pub(super) fn result_layout(&self, op: Op, idx: usize) -> Result<BlockedLayout> {
        let v = self.op(op).results[idx];
        let dims = self.module.types.dims(self.ty(v)).to_vec();
        self.layouts
            .of(v, dims.len())
            .and_then(|l| BlockedLayout::new(l, &dims))
            .ok_or_else(|| self.unsupported(op, "result has no layout"))
    }

    pub(super) fn lower_arange(&mut self, op: Op) -> Result<()> {
        let tl = self.result_layout(op, 0)?;
        let regs = self.arange_in(op, &tl)?;
        self.set_result(op, 0, tl, regs)
    }

    pub(super) fn lower_broadcast(&mut self, op: Op) -> Result<()> {
        let src = self.op(op).operands[0];
        let dst = self.result_layout(op, 0)?;
        let src_shape = self.module.types.dims(self.ty(src)).to_vec();
        if src_shape.len() != dst.shape.len() {
            return Err(self.unsupported(op, "broadcast changes the rank"));
        }
        let want = BlockedLayout::new(dst.layout.clone(), &src_shape).ok_or_else(|| self.unsupported(op, "bad broadcast source"))?;
        let regs = self.to_layout(op, src, &want)?;
        let mut out = Vec::with_capacity(dst.elems_per_thread() as usize);
        for r in 0..dst.elems_per_thread() {
            let rd: Vec<u32> = dst.decompose(r).iter().enumerate().map(|(d, &x)| if want.full[d] == dst.full[d] { x } else { 0 }).collect();
            out.push(regs[want.compose(&rd) as usize]);
        }
        self.set_result(op, 0, dst, out)
    }

    pub(super) fn lower_expand_dims(&mut self, op: Op) -> Result<()> {
        let src = self.op(op).operands[0];
        let axis = self.op(op).attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
        let dst = self.result_layout(op, 0)?;
        let src_shape = self.module.types.dims(self.ty(src)).to_vec();
        if src_shape.is_empty() {
            let v = self.regs(src)?[0];
            let n = dst.elems_per_thread() as usize;
            return self.set_result(op, 0, dst, vec![v; n]);
        }
        let sliced = dst.layout.slice(axis).ok_or_else(|| self.unsupported(op, "axis out of range"))?;
        let want = BlockedLayout::new(sliced, &src_shape).ok_or_else(|| self.unsupported(op, "bad expand_dims source"))?;
        let regs = self.to_layout(op, src, &want)?;
        if regs.len() != dst.elems_per_thread() as usize {
            return Err(self.unsupported(op, "expand_dims layouts disagree"));
        }
        self.set_result(op, 0, dst, regs)
    }

    pub(super) fn lower_gather_op(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let opcode = data.opcode;
        let operands = data.operands.clone();
        let srcs: Vec<(BlockedLayout, Regs<'c>)> = operands.iter().map(|&v| self.native_of(op, v)).collect::<Result<_>>()?;
        let dsts: Vec<BlockedLayout> = (0..data.results.len()).map(|i| self.result_layout(op, i)).collect::<Result<_>>()?;
        let storage = self.storage_kind(op, self.ty(operands[0]))?;
        let src_shape = srcs[0].0.shape.clone();
        let src_numel = srcs[0].0.numel;
        let res_shape = dsts[0].shape.clone();
        let regs = match opcode {
            // same flat order; cat's two row-major sources concatenate to the result's
            Opcode::Reshape | Opcode::Cat => self.gather(op, &srcs, storage, &dsts, |lw, _, c| lw.linear(c, &res_shape))?,
            Opcode::Permute => {
                let order = data.attrs.get("order").and_then(Attr::as_int_array).map(<[i64]>::to_vec).unwrap_or_default();
                if order.len() != src_shape.len() {
                    return Err(self.unsupported(op, "permute order does not match the rank"));
                }
                self.gather(op, &srcs, storage, &dsts, |lw, _, c| {
                    let mut s: Vec<IntValue> = c.to_vec();
                    for (i, &o) in order.iter().enumerate() {
                        s[o as usize] = c[i];
                    }
                    lw.linear(&s, &src_shape)
                })?
            }
            Opcode::Join => self.gather(op, &srcs, storage, &dsts, |lw, _, c| {
                let (inner, k) = c.split_at(c.len() - 1);
                let b = &lw.llvm.builder;
                let within = lw.linear(inner, &src_shape)?;
                let base = b.build_int_mul(k[0], lw.i32_const(src_numel as u64), "")?;
                Ok(b.build_int_add(base, within, "")?)
            })?,
            // split: result k takes the elements whose last coordinate is k
            _ => self.gather(op, &srcs, storage, &dsts, |lw, k, c| {
                let mut full: Vec<IntValue> = c.to_vec();
                full.push(lw.i32_const(k as u64));
                lw.linear(&full, &src_shape)
            })?,
        };
        for (i, (regs, dst)) in regs.into_iter().zip(dsts).enumerate() {
            self.set_result(op, i, dst, regs)?;
        }
        Ok(())
    }
}
