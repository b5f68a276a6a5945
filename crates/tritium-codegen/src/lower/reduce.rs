//! `reduce` with an arbitrary combine region over n operands (argmax's value
//! and index): fold a thread's registers along the axis, then butterfly warp
//! shuffles over the lane bits that hold distinct elements of the axis, then
//! (when several warps split the axis) one partial per warp through scratch
//! shared memory. The combine region's body is lowered once per element pair
//! by the shared op lowering. The result is in the operand's layout sliced
//! along the axis: every thread holds the full result of its rows.
use inkwell::values::BasicValueEnum;
use tritium_ir::{Attr, Op, Region};

use super::{Lowering, Regs};
use crate::error::{CodegenError, Result};
use crate::layout::BlockedLayout;

impl<'a, 'c> Lowering<'a, 'c> {
    /// Runs the combine region on (accumulators, new elements).
    pub(super) fn combine(&mut self, region: Region, accs: &[BasicValueEnum<'c>], news: &[BasicValueEnum<'c>]) -> Result<Vec<BasicValueEnum<'c>>> {
        let block = self.func.region_block(region);
        let (term, body) = block.ops.split_last().ok_or_else(|| CodegenError::Internal("combine region without terminator".into()))?;
        for (a, v) in block.args.iter().zip(accs.iter().chain(news)) {
            self.values.insert(*a, vec![*v]);
        }
        for &op in body {
            self.lower_op(op)?;
        }
        self.op(*term).operands.iter().map(|&v| Ok(self.regs(v)?[0])).collect()
    }

    /// Lane `l` gets `v` from lane `l ^ mask`, for any scalar type.
    pub(super) fn shuffle_xor_any(&self, v: BasicValueEnum<'c>, mask: u32) -> Result<BasicValueEnum<'c>> {
        self.shuffle_value(v, |w| self.target.shuffle_xor(self.llvm, w, mask))
    }

    pub(super) fn lower_reduce(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let operands = data.operands.clone();
        let results = data.results.clone();
        let region = *data.regions.first().ok_or_else(|| self.unsupported(op, "reduce without a combine region"))?;
        let axis = data.attrs.get("axis").and_then(Attr::as_int).unwrap_or(-1);
        let (tl, first) = self.native_of(op, operands[0])?;
        let axis = usize::try_from(axis).ok().filter(|&a| a < tl.shape.len()).ok_or_else(|| self.unsupported(op, "axis out of range"))?;
        let mut inputs: Vec<Regs<'c>> = vec![first];
        for &v in &operands[1..] {
            inputs.push(self.to_layout(op, v, &tl)?);
        }
        let n = operands.len();
        let ra = tl.layout.logical_dims()[axis];
        let mut res_shape = tl.shape.clone();
        res_shape.remove(axis);
        let sliced = tl.layout.slice(axis).ok_or_else(|| self.unsupported(op, "axis out of range"))?;
        let out = BlockedLayout::new(sliced, &res_shape).ok_or_else(|| self.unsupported(op, "bad result layout"))?;

        // 1. in-thread, in increasing coordinate order
        let mut accs: Vec<Vec<BasicValueEnum<'c>>> = Vec::with_capacity(out.elems_per_thread() as usize);
        for r in 0..out.elems_per_thread() {
            let mut rd = out.decompose(r);
            let mut acc: Option<Vec<BasicValueEnum<'c>>> = None;
            for k in 0..tl.regs[ra] {
                rd[ra] = k;
                let reg = tl.compose(&rd) as usize;
                let vals: Vec<BasicValueEnum<'c>> = inputs.iter().map(|i| i[reg]).collect();
                acc = Some(match acc {
                    None => vals,
                    Some(a) => self.combine(region, &a, &vals)?,
                });
            }
            accs.push(acc.ok_or_else(|| self.unsupported(op, "empty reduction"))?);
        }
        // 2. across the lanes that hold distinct elements of the axis
        let lane_bits = tl.useful_lanes(ra).trailing_zeros();
        for j in 0..lane_bits {
            let mask = 1 << (tl.lane_shift(ra) + j);
            for acc in accs.iter_mut() {
                let other: Vec<BasicValueEnum<'c>> = acc.iter().map(|&v| self.shuffle_xor_any(v, mask)).collect::<Result<_>>()?;
                *acc = self.combine(region, acc, &other)?;
            }
        }
        // 3. across warps: one partial per (result element, warp) in scratch
        let uw = tl.useful_warps(ra);
        if uw > 1 {
            let out_numel = out.numel.max(1);
            let storage: Vec<_> = operands.iter().map(|&v| self.storage_kind(op, self.ty(v))).collect::<Result<_>>()?;
            let mut starts = Vec::with_capacity(n);
            let mut total = 0u32;
            for s in &storage {
                starts.push(total);
                total += (out_numel * uw * s.2).next_multiple_of(16);
            }
            let base = self.scratch_begin(op, total)?;
            let b = &self.llvm.builder;
            let warp = b.build_and(self.warp_along(&tl, ra)?, self.i32_const(uw as u64 - 1), "")?;
            let mut rows = Vec::with_capacity(accs.len());
            for (r, acc) in accs.iter().enumerate() {
                let c = self.coords(&out, r as u32)?;
                let row = self.llvm.builder.build_int_mul(self.linear(&c, &out.shape)?, self.i32_const(uw as u64), "")?;
                let idx = self.llvm.builder.build_int_add(row, warp, "")?;
                for (k, &v) in acc.iter().enumerate() {
                    self.scratch_store(base, starts[k], idx, storage[k].2, storage[k].0, v)?;
                }
                rows.push(row);
            }
            self.scratch_sync()?;
            for (r, acc) in accs.iter_mut().enumerate() {
                let mut folded: Option<Vec<BasicValueEnum<'c>>> = None;
                for w in 0..uw {
                    let idx = self.llvm.builder.build_int_add(rows[r], self.i32_const(w as u64), "")?;
                    let vals: Vec<BasicValueEnum<'c>> = (0..n)
                        .map(|k| self.scratch_load(base, starts[k], idx, storage[k].2, storage[k].0, storage[k].1))
                        .collect::<Result<_>>()?;
                    folded = Some(match folded {
                        None => vals,
                        Some(a) => self.combine(region, &a, &vals)?,
                    });
                }
                *acc = folded.expect("uw > 1");
            }
            self.scratch_done();
        }
        for k in 0..n {
            let regs: Regs<'c> = accs.iter().map(|a| a[k]).collect();
            if res_shape.is_empty() {
                self.values.insert(results[k], vec![regs[0]]);
            } else {
                self.set_result(op, k, out.clone(), regs)?;
            }
        }
        Ok(())
    }
}
