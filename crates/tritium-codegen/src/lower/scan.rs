//! `scan` (inclusive, any combine region over n operands, `reverse`) along
//! any axis of a blocked or sliced layout, without moving data: along the
//! axis an element sits at `rep * cover + (warp * lanes + lane) * spt + e`,
//! so the scan runs in that order: in-thread over `e`, Hillis-Steele warp
//! shuffles over the lanes holding distinct elements, one total per warp
//! through scratch shared memory, then a carry from one rep to the next.
//! `reverse` mirrors every index (e, lane, warp, rep) instead of flipping
//! data. Prefixes that exist only on some threads carry a runtime flag; the
//! combine region is evaluated on every thread and its result selected, so
//! it must be free of side effects (as Triton requires).
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use tritium_ir::{Attr, Op, Region};

use super::{Lowering, Regs};
use crate::error::Result;
use crate::layout::{BlockedLayout, TensorLayout};

/// A combined prefix of the n operands; `present` is None when every thread has one.
#[derive(Clone)]
struct Prefix<'c> {
    vals: Vec<BasicValueEnum<'c>>,
    present: Option<IntValue<'c>>,
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// `v` from the lane `src(lane)` computes, for any scalar type (split into i32 pieces).
    fn shuffle_from(&self, v: BasicValueEnum<'c>, src: IntValue<'c>) -> Result<BasicValueEnum<'c>> {
        self.shuffle_value(v, |w| self.target.shuffle_idx(self.llvm, w, src))
    }

    fn pick(&self, cond: IntValue<'c>, yes: &[BasicValueEnum<'c>], no: &[BasicValueEnum<'c>]) -> Result<Vec<BasicValueEnum<'c>>> {
        yes.iter().zip(no).map(|(&y, &n)| Ok(self.llvm.builder.build_select(cond, y, n, "")?)).collect()
    }

    /// `earlier ⊕ later`, where either side may be missing on some threads.
    fn join(&mut self, region: Region, earlier: Option<Prefix<'c>>, later: Prefix<'c>) -> Result<Prefix<'c>> {
        let Some(a) = earlier else { return Ok(later) };
        let mut v = self.combine(region, &a.vals, &later.vals)?;
        if let Some(fb) = later.present {
            v = self.pick(fb, &v, &a.vals)?;
        }
        if let Some(fa) = a.present {
            v = self.pick(fa, &v, &later.vals)?;
        }
        let present = match (a.present, later.present) {
            (Some(x), Some(y)) => Some(self.llvm.builder.build_or(x, y, "")?),
            _ => None,
        };
        Ok(Prefix { vals: v, present })
    }

    /// `prefix ⊕ x` (x itself where the prefix is missing).
    fn apply(&mut self, region: Region, prefix: &Option<Prefix<'c>>, x: Vec<BasicValueEnum<'c>>) -> Result<Vec<BasicValueEnum<'c>>> {
        let Some(p) = prefix else { return Ok(x) };
        let c = self.combine(region, &p.vals, &x)?;
        match p.present {
            Some(f) => self.pick(f, &c, &x),
            None => Ok(c),
        }
    }

    fn ult(&self, a: IntValue<'c>, b: IntValue<'c>) -> Result<IntValue<'c>> {
        Ok(self.llvm.builder.build_int_compare(IntPredicate::ULT, a, b, "")?)
    }

    pub(super) fn lower_scan(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let operands = data.operands.clone();
        let region = *data.regions.first().ok_or_else(|| self.unsupported(op, "scan without a combine region"))?;
        let axis = data.attrs.get("axis").and_then(Attr::as_int).unwrap_or(-1);
        let reverse = data.attrs.get("reverse").and_then(Attr::as_bool).unwrap_or(false);
        if operands.is_empty() || data.results.len() != operands.len() {
            return Err(self.unsupported(op, "scan needs n operands and n results"));
        }
        let whole = self.tl_of(op, operands[0])?;
        let tl = whole.blocked().ok_or_else(|| self.unsupported(op, format!("scan in layout {}", whole.layout)))?;
        let axis = usize::try_from(axis)
            .ok()
            .filter(|&a| a < tl.shape.len())
            .ok_or_else(|| self.unsupported(op, format!("scan axis {axis} out of range for rank {}", tl.shape.len())))?;
        let inputs: Vec<Regs<'c>> = operands.iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let results = self.op(op).results.clone();
        let n = operands.len();
        let ra = tl.layout.logical_dims()[axis];
        let spt = tl.spt[ra];
        let reps = tl.regs[ra] / spt;
        let (ul, uw) = (tl.useful_lanes(ra), tl.useful_warps(ra));
        let mut row_shape = tl.shape.clone();
        row_shape.remove(axis);
        let rows = tl
            .layout
            .slice(axis)
            .and_then(|l| BlockedLayout::from_flat(l, &row_shape))
            .ok_or_else(|| self.unsupported(op, "bad scan row layout"))?;
        let row_tl = TensorLayout::new(&whole.layout.slice(axis), &row_shape);
        // physical register index along the axis of virtual (scan-order) rep q, element e
        let phys = |q: u32, e: u32| -> u32 {
            let (q, e) = if reverse { (reps - 1 - q, spt - 1 - e) } else { (q, e) };
            q * spt + e
        };
        let row_regs = |r: u32, k: u32| -> usize {
            let mut rd = rows.decompose(r);
            rd[ra] = k;
            tl.compose(&rd) as usize
        };
        let mut out: Vec<Regs<'c>> = inputs.clone();

        // 1. in-thread inclusive scans; `totals[row][q]` is each chunk's last value
        let mut totals: Vec<Vec<Vec<BasicValueEnum<'c>>>> = Vec::new();
        for r in 0..rows.elems_per_thread() {
            let mut per_rep = Vec::with_capacity(reps as usize);
            for q in 0..reps {
                let mut acc: Option<Vec<BasicValueEnum<'c>>> = None;
                for e in 0..spt {
                    let reg = row_regs(r, phys(q, e));
                    let vals: Vec<BasicValueEnum<'c>> = inputs.iter().map(|i| i[reg]).collect();
                    let now = match acc {
                        None => vals,
                        Some(a) => self.combine(region, &a, &vals)?,
                    };
                    for k in 0..n {
                        out[k][reg] = now[k];
                    }
                    acc = Some(now);
                }
                per_rep.push(acc.ok_or_else(|| self.unsupported(op, "empty scan"))?);
            }
            totals.push(per_rep);
        }

        // 2. lanes: Hillis-Steele over the lanes holding distinct elements of the axis
        let b = &self.llvm.builder;
        let lane = b.build_and(self.tid, self.i32_const(self.target.warp_size() as u64 - 1), "")?;
        let shift = tl.lane_shift(ra);
        let mut lane_excl: Vec<Vec<Option<Prefix<'c>>>> = Vec::new();
        let mut warp_totals = totals.clone();
        if ul > 1 {
            let ld = b.build_and(self.lane_along(&tl, ra)?, self.i32_const(ul as u64 - 1), "")?;
            let b = &self.llvm.builder;
            let vl = if reverse { b.build_int_sub(self.i32_const(ul as u64 - 1), ld, "")? } else { ld };
            let from = |lw: &Self, delta: u32| -> Result<IntValue<'c>> {
                let d = lw.i32_const((delta << shift) as u64);
                let b = &lw.llvm.builder;
                Ok(if reverse { b.build_int_add(lane, d, "")? } else { b.build_int_sub(lane, d, "")? })
            };
            let field = self.i32_const(((ul - 1) << shift) as u64);
            let last_lane = if reverse { b.build_and(lane, b.build_not(field, "")?, "")? } else { b.build_or(lane, field, "")? };
            for (r, per_rep) in totals.iter().enumerate() {
                let mut row_excl = Vec::with_capacity(per_rep.len());
                for (q, t) in per_rep.iter().enumerate() {
                    let mut w = t.clone();
                    for j in 0..ul.trailing_zeros() {
                        let delta = 1u32 << j;
                        let src = from(self, delta)?;
                        let got: Vec<BasicValueEnum<'c>> = w.iter().map(|&v| self.shuffle_from(v, src)).collect::<Result<_>>()?;
                        let c = self.combine(region, &got, &w)?;
                        let has = self.llvm.builder.build_not(self.ult(vl, self.i32_const(delta as u64))?, "")?;
                        w = self.pick(has, &c, &w)?;
                    }
                    let src = from(self, 1)?;
                    let vals: Vec<BasicValueEnum<'c>> = w.iter().map(|&v| self.shuffle_from(v, src)).collect::<Result<_>>()?;
                    let has = self.llvm.builder.build_not(self.ult(vl, self.i32_const(1))?, "")?;
                    row_excl.push(Some(Prefix { vals, present: Some(has) }));
                    warp_totals[r][q] = w.iter().map(|&v| self.shuffle_from(v, last_lane)).collect::<Result<_>>()?;
                }
                lane_excl.push(row_excl);
            }
        } else {
            lane_excl = totals.iter().map(|p| vec![None; p.len()]).collect();
        }

        // 3. warps: each warp's total in scratch, then an exclusive prefix per warp
        let mut warp_excl: Vec<Vec<Option<Prefix<'c>>>> = totals.iter().map(|p| vec![None; p.len()]).collect();
        let mut block_totals = warp_totals.clone();
        let storage: Vec<_> = operands.iter().map(|&v| self.storage_kind(op, self.ty(v))).collect::<Result<_>>()?;
        let sizes: Vec<u32> = storage.iter().map(|s| s.2).collect();
        if let Some(slots) = crate::smem_plan::scan_slots(&whole, axis, &sizes) {
            let (starts, total) = (slots.starts, slots.total);
            let base = self.scratch_begin(op, total)?;
            let b = &self.llvm.builder;
            let wd = b.build_and(self.warp_along(&tl, ra)?, self.i32_const(uw as u64 - 1), "")?;
            let vw = if reverse { b.build_int_sub(self.i32_const(uw as u64 - 1), wd, "")? } else { wd };
            let mut firsts = Vec::with_capacity(rows.elems_per_thread() as usize);
            for (r, per_rep) in warp_totals.iter().enumerate() {
                let row = match &row_tl {
                    Some(t) => {
                        let c = self.coords(t, r as u32)?;
                        self.linear(&c, t.shape())?
                    }
                    None => self.i32_const(0),
                };
                let first = self.llvm.builder.build_int_mul(row, self.i32_const((reps * uw) as u64), "")?;
                for (q, t) in per_rep.iter().enumerate() {
                    let slot = self.llvm.builder.build_int_add(first, self.i32_const(q as u64 * uw as u64), "")?;
                    let idx = self.llvm.builder.build_int_add(slot, vw, "")?;
                    for (k, &v) in t.iter().enumerate() {
                        self.scratch_store(base, starts[k], idx, storage[k].2, storage[k].0, v)?;
                    }
                }
                firsts.push(first);
            }
            self.scratch_sync()?;
            for r in 0..warp_totals.len() {
                for q in 0..reps as usize {
                    let mut excl: Option<Vec<BasicValueEnum<'c>>> = None;
                    let mut all: Option<Vec<BasicValueEnum<'c>>> = None;
                    for w in 0..uw {
                        let idx = self.llvm.builder.build_int_add(firsts[r], self.i32_const(q as u64 * uw as u64 + w as u64), "")?;
                        let vals: Vec<BasicValueEnum<'c>> = (0..n)
                            .map(|k| self.scratch_load(base, starts[k], idx, storage[k].2, storage[k].0, storage[k].1))
                            .collect::<Result<_>>()?;
                        // warps before this one (in scan order) fold into its prefix
                        if w + 1 < uw {
                            excl = Some(match excl {
                                None => vals.clone(),
                                Some(a) => {
                                    let c = self.combine(region, &a, &vals)?;
                                    let before = self.ult(self.i32_const(w as u64), vw)?;
                                    self.pick(before, &c, &a)?
                                }
                            });
                        }
                        all = Some(match all {
                            None => vals,
                            Some(a) => self.combine(region, &a, &vals)?,
                        });
                    }
                    let has = self.ult(self.i32_const(0), vw)?;
                    warp_excl[r][q] = excl.map(|vals| Prefix { vals, present: Some(has) });
                    block_totals[r][q] = all.expect("uw > 1");
                }
            }
            self.scratch_done();
        }

        // 4. carry from earlier reps, then every element gets its full prefix
        for r in 0..rows.elems_per_thread() {
            let mut carry: Option<Prefix<'c>> = None;
            for q in 0..reps {
                let (ri, qi) = (r as usize, q as usize);
                let mut prefix = carry.clone();
                if let Some(w) = warp_excl[ri][qi].clone() {
                    prefix = Some(self.join(region, prefix, w)?);
                }
                if let Some(l) = lane_excl[ri][qi].clone() {
                    prefix = Some(self.join(region, prefix, l)?);
                }
                if prefix.is_some() {
                    for e in 0..spt {
                        let reg = row_regs(r, phys(q, e));
                        let x: Vec<BasicValueEnum<'c>> = out.iter().map(|o| o[reg]).collect();
                        let y = self.apply(region, &prefix, x)?;
                        for k in 0..n {
                            out[k][reg] = y[k];
                        }
                    }
                }
                if q + 1 < reps {
                    let total = Prefix { vals: block_totals[ri][qi].clone(), present: None };
                    carry = Some(self.join(region, carry, total)?);
                }
            }
        }
        for (res, regs) in results.into_iter().zip(out) {
            self.values.insert(res, regs);
        }
        Ok(())
    }

    /// Lane id along root dim `d` of blocked layout `tl`.
    fn lane_along(&self, tl: &BlockedLayout, d: usize) -> Result<IntValue<'c>> {
        let (lane, _) = self.lane_warp()?;
        let b = &self.llvm.builder;
        let x = b.build_right_shift(lane, self.i32_const(tl.lane_shift(d) as u64), false, "")?;
        Ok(b.build_and(x, self.i32_const(tl.root().threads_per_warp[d] as u64 - 1), "")?)
    }

    fn warp_along(&self, tl: &BlockedLayout, d: usize) -> Result<IntValue<'c>> {
        let (_, warp) = self.lane_warp()?;
        let b = &self.llvm.builder;
        let x = b.build_right_shift(warp, self.i32_const(tl.warp_shift(d) as u64), false, "")?;
        Ok(b.build_and(x, self.i32_const(tl.root().warps_per_cta[d] as u64 - 1), "")?)
    }
}
