//! Shape ops. `arange` computes each register's own index; `broadcast`,
//! `expand_dims` and `permute` move no data (layout assignment gives the
//! result a layout whose threads hold exactly the source elements they need,
//! so each result register is some source register: found by solving the
//! layouts' linear maps); `reshape`, `join`, `split` and `cat` go through
//! scratch shared memory (`convert::gather`): sources written row-major,
//! results read back from the flat index their coordinates map to.
use inkwell::values::IntValue;
use tritium_ir::{Attr, Op, Opcode};
use tritium_transforms::layout::linear::{combine, Solver};

use super::{Lowering, Regs};
use crate::error::{CodegenError, Result};
use crate::layout::{flatten, unflatten, TensorLayout};

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_arange(&mut self, op: Op) -> Result<()> {
        let tl = self.tl_of(op, self.op(op).results[0])?;
        let start = self.op(op).attrs.get("start").and_then(Attr::as_int).unwrap_or(0);
        let thread = self.thread_coords(&tl)?;
        let i32t = self.llvm.context.i32_type();
        let mut regs = Vec::with_capacity(tl.elems_per_thread() as usize);
        for r in 0..tl.elems_per_thread() {
            let c = self.coords_at(&tl, &thread, r)?[0];
            regs.push(self.llvm.builder.build_int_add(c, i32t.const_int(start as u64, true), "")?.into());
        }
        self.set(op, regs);
        Ok(())
    }

    /// `broadcast`, `expand_dims`, `permute`: each result register is the
    /// source register holding the element it maps to.
    pub(super) fn lower_relabel(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (src, res) = (data.operands[0], data.results[0]);
        let to = self.tl_of(op, res)?;
        let Some(from) = self.tl(src) else {
            // expand_dims of a scalar: every register is the scalar
            let v = self.regs(src)?[0];
            self.set(op, vec![v; to.elems_per_thread() as usize]);
            return Ok(());
        };
        let (src_shape, res_shape) = (from.shape().to_vec(), to.shape().to_vec());
        let opcode = data.opcode;
        let axis = data.attrs.get("axis").and_then(Attr::as_int).unwrap_or(0) as usize;
        let order: Vec<usize> = data.attrs.get("order").and_then(Attr::as_int_array).unwrap_or(&[]).iter().map(|&o| o as usize).collect();
        // the source element a result element (row-major index) comes from
        let project = |index: u32| -> u32 {
            let c = unflatten(&res_shape, index);
            let sc: Vec<u32> = match opcode {
                Opcode::Broadcast => c.iter().zip(&src_shape).map(|(&x, &n)| if n == 1 { 0 } else { x }).collect(),
                Opcode::ExpandDims => c.iter().enumerate().filter(|&(d, _)| d != axis).map(|(_, &x)| x).collect(),
                _ => {
                    let mut s = vec![0; c.len()];
                    for (i, &o) in order.iter().enumerate() {
                        s[o] = c[i];
                    }
                    s
                }
            };
            flatten(&src_shape, &sc)
        };
        let same_threads = |a: &[u32], b: &[u32]| a.iter().zip(b).all(|(&x, &y)| project(x) == y);
        if !same_threads(&to.lin.lane, &from.lin.lane) || !same_threads(&to.lin.warp, &from.lin.warp) {
            return Err(CodegenError::Internal(format!("`{opcode}`: source layout {} does not match result layout {}", from.layout, to.layout)));
        }
        let solver = Solver::new(&from.lin.reg);
        let regs = self.regs(src)?;
        let mut out = Regs::with_capacity(to.elems_per_thread() as usize);
        for r in 0..to.elems_per_thread() {
            let want = project(combine(&to.lin.reg, r));
            let k = solver.solve(want).ok_or_else(|| CodegenError::Internal(format!("`{opcode}`: element not held by the source's registers")))?;
            out.push(regs[k as usize]);
        }
        self.set(op, out);
        Ok(())
    }

    pub(super) fn lower_gather_op(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let opcode = data.opcode;
        let operands = data.operands.clone();
        let results = data.results.clone();
        let srcs: Vec<(TensorLayout, Regs<'c>)> =
            operands.iter().map(|&v| Ok((self.tl_of(op, v)?, self.regs(v)?.clone()))).collect::<Result<_>>()?;
        // splitting a [2] gives scalars: each read back as a [1] every thread holds
        let scalars = opcode == Opcode::Split && !self.module.types.is_tensor(self.ty(results[0]));
        let dsts: Vec<TensorLayout> = if scalars {
            let one = self.layouts.canonical(1).and_then(|l| TensorLayout::new(&l, &[1]));
            let one = one.ok_or_else(|| CodegenError::Internal("`split` to scalars: no rank-1 layout".into()))?;
            vec![one; results.len()]
        } else {
            results.iter().map(|&r| self.tl_of(op, r)).collect::<Result<_>>()?
        };
        let storage = self.storage_kind(op, self.ty(operands[0]))?;
        let src_shape = srcs[0].0.shape().to_vec();
        let src_numel = srcs[0].0.numel();
        let res_shape = dsts[0].shape().to_vec();
        let regs = match opcode {
            // same flat order; cat's two row-major sources concatenate to the result's
            Opcode::Reshape | Opcode::Cat => self.gather(op, &srcs, storage, &dsts, |lw, _, _, c| lw.linear(c, &res_shape))?,
            Opcode::Join => self.gather(op, &srcs, storage, &dsts, |lw, _, _, c| {
                let (inner, k) = c.split_at(c.len() - 1);
                let b = &lw.llvm.builder;
                let within = lw.linear(inner, &src_shape)?;
                let base = b.build_int_mul(k[0], lw.i32_const(src_numel as u64), "")?;
                Ok(b.build_int_add(base, within, "")?)
            })?,
            // split: result k takes the elements whose last coordinate is k
            _ => self.gather(op, &srcs, storage, &dsts, |lw, k, _, c| {
                let mut full: Vec<IntValue> = if scalars { Vec::new() } else { c.to_vec() };
                full.push(lw.i32_const(k as u64));
                lw.linear(&full, &src_shape)
            })?,
        };
        for (r, regs) in results.into_iter().zip(regs) {
            self.values.insert(r, regs);
        }
        Ok(())
    }
}
