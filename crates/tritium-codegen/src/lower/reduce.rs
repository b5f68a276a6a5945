//! `reduce` with an arbitrary combine region over n operands (argmax's value
//! and index), in any register layout (blocked, MMA, their slices): fold a
//! thread's registers along the axis (in coordinate order), then butterfly
//! warp shuffles over the lane bits whose basis moves along the axis, then
//! (when warp bits move along it) one partial per warp through scratch
//! shared memory. The combine region's body is lowered once per element pair
//! by the shared op lowering. The result is in the operand's layout sliced
//! along the axis: every thread holds the full result of its rows.
use inkwell::values::BasicValueEnum;
use tritium_ir::{Attr, Op, Region};

use super::{Lowering, Regs};
use crate::error::{CodegenError, Result};
use crate::layout::dim_mask;

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
        let tl = self.tl_of(op, operands[0])?;
        let rank = tl.shape().len();
        let axis = usize::try_from(axis).ok().filter(|&a| a < rank).ok_or_else(|| self.unsupported(op, "axis out of range"))?;
        let inputs: Vec<Regs<'c>> = operands.iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let n = operands.len();
        let along = dim_mask(tl.shape(), axis);
        let lin = &tl.lin;
        // register bits along the axis, in increasing coordinate order; the
        // others (the result's registers, in order) and duplicates (zero bases)
        let mut along_bits: Vec<usize> = (0..lin.reg.len()).filter(|&i| lin.reg[i] & along != 0).collect();
        along_bits.sort_by_key(|&i| lin.reg[i]);
        let kept_bits: Vec<usize> = (0..lin.reg.len()).filter(|&i| lin.reg[i] & !along != 0).collect();
        let out_regs = 1u32 << kept_bits.len();

        // 1. in-thread, in increasing coordinate order
        let mut accs: Vec<Vec<BasicValueEnum<'c>>> = Vec::with_capacity(out_regs as usize);
        for r in 0..out_regs {
            let base: u32 = kept_bits.iter().enumerate().filter(|(j, _)| r >> j & 1 == 1).map(|(_, &i)| 1 << i).sum();
            let mut acc: Option<Vec<BasicValueEnum<'c>>> = None;
            for k in 0..1u32 << along_bits.len() {
                let reg = base | along_bits.iter().enumerate().filter(|(j, _)| k >> j & 1 == 1).map(|(_, &i)| 1u32 << i).sum::<u32>();
                let vals: Vec<BasicValueEnum<'c>> = inputs.iter().map(|i| i[reg as usize]).collect();
                acc = Some(match acc {
                    None => vals,
                    Some(a) => self.combine(region, &a, &vals)?,
                });
            }
            accs.push(acc.ok_or_else(|| self.unsupported(op, "empty reduction"))?);
        }
        // 2. across the lanes that hold distinct elements of the axis
        for (i, &basis) in lin.lane.iter().enumerate() {
            if basis & along == 0 {
                continue;
            }
            for acc in accs.iter_mut() {
                let other: Vec<BasicValueEnum<'c>> = acc.iter().map(|&v| self.shuffle_xor_any(v, 1 << i)).collect::<Result<_>>()?;
                *acc = self.combine(region, acc, &other)?;
            }
        }
        // 3. across warps: one partial per (result element, warp) in scratch
        let warp_bits: Vec<usize> = (0..lin.warp.len()).filter(|&i| lin.warp[i] & along != 0).collect();
        let storage: Vec<_> = operands.iter().map(|&v| self.storage_kind(op, self.ty(v))).collect::<Result<_>>()?;
        let sizes: Vec<u32> = storage.iter().map(|s| s.2).collect();
        if let Some((uw, slots)) = crate::smem_plan::reduce_slots(&tl, axis, &sizes) {
            let (starts, total) = (slots.starts, slots.total);
            let base = self.scratch_begin(op, total)?;
            // this warp's position along the axis: its along-axis warp bits, packed
            let (_, warp_id) = self.lane_warp()?;
            let b = &self.llvm.builder;
            let mut warp = self.i32_const(0);
            for (j, &i) in warp_bits.iter().enumerate() {
                let bit = b.build_and(b.build_right_shift(warp_id, self.i32_const(i as u64), false, "")?, self.i32_const(1), "")?;
                warp = b.build_or(warp, b.build_left_shift(bit, self.i32_const(j as u64), "")?, "")?;
            }
            let out_tl = results.first().and_then(|&r| self.tl(r));
            let thread = match &out_tl {
                Some(t) => Some(self.thread_coords(t)?),
                None => None,
            };
            let mut rows = Vec::with_capacity(accs.len());
            for (r, acc) in accs.iter().enumerate() {
                let flat = match (&out_tl, &thread) {
                    (Some(t), Some(th)) => {
                        let c = self.coords_at(t, th, r as u32)?;
                        self.linear(&c, t.shape())?
                    }
                    _ => self.i32_const(0),
                };
                let row = self.llvm.builder.build_int_mul(flat, self.i32_const(uw as u64), "")?;
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
        for (k, &res) in results.iter().enumerate() {
            let regs: Regs<'c> = accs.iter().map(|a| a[k]).collect();
            if rank == 1 {
                self.values.insert(res, vec![regs[0]]);
            } else {
                if regs.len() != self.reg_count(res) {
                    return Err(CodegenError::Internal(format!("reduce: {} result registers, layout has {}", regs.len(), self.reg_count(res))));
                }
                self.values.insert(res, regs);
            }
        }
        Ok(())
    }
}
