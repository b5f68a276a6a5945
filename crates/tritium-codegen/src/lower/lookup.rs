//! Ops that address elements by value: `gather` (the source goes to
//! scratch shared memory row-major, each result register reads the element
//! its index names) and `histogram` (i32 counters in scratch, zeroed, then
//! one shared-memory atomic add per owned in-range input element, then read
//! back in the result's layout); and `assume`, which becomes `llvm.assume`.
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp, IntPredicate};
use tritium_ir::{Attr, Op, ScalarKind};

use super::Lowering;
use crate::error::Result;

impl<'a, 'c> Lowering<'a, 'c> {
    /// `gather(src, index) {axis}`. An index is taken modulo the axis length
    /// (lengths are powers of two), so a bad index never leaves the scratch
    /// area (Triton leaves it undefined; the interpreter reports it).
    pub(super) fn lower_gather(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (src, index, res) = (data.operands[0], data.operands[1], data.results[0]);
        let axis = data.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
        let src_tl = self.tl_of(op, src)?;
        let res_tl = self.tl_of(op, res)?;
        if self.tl_of(op, index)?.lin != res_tl.lin {
            return Err(self.unsupported(op, "the index tensor is not in the result's layout"));
        }
        let src_shape = src_tl.shape().to_vec();
        let signed = self.kind(index).is_some_and(ScalarKind::is_signed);
        let idx: Vec<IntValue<'c>> =
            self.regs(index)?.iter().map(|v| self.to_i32(v.into_int_value(), signed)).collect::<Result<_>>()?;
        let storage = self.storage_kind(op, self.ty(src))?;
        let srcs = [(src_tl, self.regs(src)?.clone())];
        let len_mask = self.i32_const(src_shape[axis] as u64 - 1);
        let mut regs = self.gather(op, &srcs, storage, &[res_tl], |lw, _, r, c| {
            let mut at = c.to_vec();
            at[axis] = lw.llvm.builder.build_and(idx[r as usize], len_mask, "")?;
            lw.linear(&at, &src_shape)
        })?;
        self.set(op, regs.remove(0));
        Ok(())
    }

    /// `histogram(input[, mask]) {num_bins}`.
    pub(super) fn lower_histogram(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (input, res) = (data.operands[0], data.results[0]);
        let bins = data.attrs.get("num_bins").and_then(Attr::as_int).unwrap_or(0) as u64;
        let kind = self.kind(input).ok_or_else(|| self.invalid(op, "histogram of pointers"))?;
        let values = self.regs(input)?.clone();
        let masks = data.operands.get(1).map(|&m| self.regs(m).cloned()).transpose()?;
        let owner = self.owner_pred(input)?;
        let res_tl = self.tl_of(op, res)?;
        let i32t = self.llvm.context.i32_type();
        let base = self.scratch_begin(op, bins as u32 * 4)?;
        let res_thread = self.thread_coords(&res_tl)?;
        for r in 0..res_tl.elems_per_thread() {
            let c = self.coords_at(&res_tl, &res_thread, r)?;
            self.scratch_store(base, 0, c[0], 4, Some(ScalarKind::I32), i32t.const_zero().into())?;
        }
        self.smem_fixed_barrier()?;
        let (lo, hi) = self.smem.open;
        self.smem_access(tritium_analysis::Access::write(lo, hi));
        let b = &self.llvm.builder;
        let w = values[0].into_int_value().get_type();
        for (r, v) in values.iter().enumerate() {
            let v = v.into_int_value();
            // in range: 0 <= v < bins in the input's own signedness and width
            let below = b.build_int_compare(IntPredicate::ULT, v, w.const_int(bins, false), "")?;
            let mut count = below;
            if let Some(m) = &masks {
                count = b.build_and(count, m[r].into_int_value(), "")?;
            }
            if let Some(o) = owner {
                count = b.build_and(count, o, "")?;
            }
            let bin = b.build_select(below, self.to_i32(v, kind.is_signed())?, i32t.const_zero(), "")?.into_int_value();
            let at = b.build_int_mul(bin, self.i32_const(4), "")?;
            // SAFETY: a byte GEP inside this op's scratch area (bin < bins)
            let p = unsafe { b.build_gep(self.llvm.context.i8_type(), base, &[at], "")? };
            let one = b.build_int_z_extend(count, i32t, "")?;
            b.build_atomicrmw(AtomicRMWBinOp::Add, p, one, AtomicOrdering::Monotonic)?;
        }
        self.scratch_sync()?;
        let mut out: Vec<BasicValueEnum<'c>> = Vec::with_capacity(res_tl.elems_per_thread() as usize);
        for r in 0..res_tl.elems_per_thread() {
            let c = self.coords_at(&res_tl, &res_thread, r)?;
            out.push(self.scratch_load(base, 0, c[0], 4, Some(ScalarKind::I32), i32t.into())?);
        }
        self.scratch_done();
        self.set(op, out);
        Ok(())
    }

    /// `assume(cond)`: `llvm.assume` on each register of the condition.
    pub(super) fn lower_assume(&mut self, op: Op) -> Result<()> {
        for v in self.regs(self.op(op).operands[0])?.clone() {
            self.llvm.call_intrinsic_void("llvm.assume", &[v])?;
        }
        Ok(())
    }

    /// An integer index as i32: truncated, or extended by its signedness.
    fn to_i32(&self, v: IntValue<'c>, signed: bool) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        let i32t = self.llvm.context.i32_type();
        let w = v.get_type().get_bit_width();
        Ok(match w.cmp(&32) {
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Greater => b.build_int_truncate(v, i32t, "")?,
            std::cmp::Ordering::Less if signed => b.build_int_s_extend(v, i32t, "")?,
            std::cmp::Ordering::Less => b.build_int_z_extend(v, i32t, "")?,
        })
    }
}
