//! Structured control flow: `for`, `if`, `while` become LLVM basic blocks with
//! phi nodes. A loop-carried tensor is carried register by register (each
//! thread's share under its layout), so a tensor of n registers is n phis.
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, FunctionValue, PhiValue};
use inkwell::IntPredicate;
use tritium_analysis::Node;
use tritium_ir::{Op, Region};

use super::{Lowering, Regs};
use crate::error::{CodegenError, Result};

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn current_fn(&self) -> Result<FunctionValue<'c>> {
        self.llvm
            .builder
            .get_insert_block()
            .and_then(|b| b.get_parent())
            .ok_or_else(|| CodegenError::Internal("builder is not inside a function".into()))
    }

    pub(super) fn current_block(&self) -> Result<BasicBlock<'c>> {
        self.llvm.builder.get_insert_block().ok_or_else(|| CodegenError::Internal("builder has no block".into()))
    }

    /// Lowers every op of `region`'s block but its terminator, whose operands'
    /// registers are returned (`yield`/`condition` values, the condition first).
    fn lower_region(&mut self, region: Region) -> Result<Vec<Regs<'c>>> {
        let block = self.func.region_block(region);
        let (term, body) = block.ops.split_last().ok_or_else(|| CodegenError::Internal("region without terminator".into()))?;
        for &op in body {
            self.lower_op(op)?;
        }
        self.op(*term).operands.iter().map(|&v| self.regs(v).cloned()).collect()
    }

    /// One phi per register of each value in `inits`, each entered from `from`.
    fn phis(&self, inits: &[Regs<'c>], from: BasicBlock<'c>) -> Result<Vec<Vec<PhiValue<'c>>>> {
        inits
            .iter()
            .map(|regs| {
                regs.iter()
                    .map(|v| {
                        let phi = self.llvm.builder.build_phi(v.get_type(), "")?;
                        phi.add_incoming(&[(v, from)]);
                        Ok(phi)
                    })
                    .collect()
            })
            .collect()
    }

    fn add_incoming(phis: &[Vec<PhiValue<'c>>], values: &[Regs<'c>], from: BasicBlock<'c>) {
        for (ps, vs) in phis.iter().zip(values) {
            for (p, v) in ps.iter().zip(vs) {
                p.add_incoming(&[(v, from)]);
            }
        }
    }

    fn phi_regs(phis: &[Vec<PhiValue<'c>>]) -> Vec<Regs<'c>> {
        phis.iter().map(|ps| ps.iter().map(|p| p.as_basic_value()).collect()).collect()
    }

    fn bind_block_args(&mut self, region: Region, values: Vec<Regs<'c>>) {
        let args = self.func.region_block(region).args.clone();
        for (a, v) in args.into_iter().zip(values) {
            self.values.insert(a, v);
        }
    }

    fn bind_results(&mut self, op: Op, values: Vec<Regs<'c>>) {
        for (r, v) in self.op(op).results.clone().into_iter().zip(values) {
            self.values.insert(r, v);
        }
    }

    /// `for (iv = lb; iv < ub; iv += step)`, compared with the bounds' signedness,
    /// so zero and negative trip counts run no iteration.
    pub(super) fn lower_for(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let kind = self.kind(data.operands[0]).ok_or_else(|| self.unsupported(op, "loop bounds must be integers"))?;
        let scalar = |lw: &Self, i: usize| -> Result<BasicValueEnum<'c>> { Ok(lw.regs(data.operands[i])?[0]) };
        let (lb, ub, step) = (scalar(self, 0)?, scalar(self, 1)?, scalar(self, 2)?);
        let inits: Vec<Regs<'c>> = data.operands[3..].iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let f = self.current_fn()?;
        let cx = self.llvm.context;
        let (header, body, exit) =
            (cx.append_basic_block(f, "for.header"), cx.append_basic_block(f, "for.body"), cx.append_basic_block(f, "for.exit"));
        let pre = self.current_block()?;
        let b = &self.llvm.builder;
        b.build_unconditional_branch(header)?;
        b.position_at_end(header);
        let iv = b.build_phi(lb.get_type(), "iv")?;
        iv.add_incoming(&[(&lb, pre)]);
        let phis = self.phis(&inits, pre)?;
        let pred = if kind.is_signed() { IntPredicate::SLT } else { IntPredicate::ULT };
        let ivv = iv.as_basic_value().into_int_value();
        let go = b.build_int_compare(pred, ivv, ub.into_int_value(), "")?;
        b.build_conditional_branch(go, body, exit)?;
        b.position_at_end(body);
        let mut args = vec![vec![iv.as_basic_value()]];
        args.extend(Self::phi_regs(&phis));
        let region = data.regions[0];
        self.bind_block_args(region, args);
        self.smem_enter();
        let yields = self.lower_region(region)?;
        let trace = self.smem_leave()?;
        self.smem_record(Node::Loop(trace));
        let b = &self.llvm.builder;
        let next = b.build_int_add(ivv, step.into_int_value(), "")?;
        let latch = self.current_block()?;
        b.build_unconditional_branch(header)?;
        iv.add_incoming(&[(&next, latch)]);
        Self::add_incoming(&phis, &yields, latch);
        b.position_at_end(exit);
        self.bind_results(op, Self::phi_regs(&phis));
        Ok(())
    }

    pub(super) fn lower_if(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let cond = self.regs(data.operands[0])?;
        if cond.len() != 1 {
            return Err(self.unsupported(op, "`if` on a tensor condition"));
        }
        let cond = cond[0].into_int_value();
        let f = self.current_fn()?;
        let cx = self.llvm.context;
        let (then_bb, else_bb, merge) =
            (cx.append_basic_block(f, "if.then"), cx.append_basic_block(f, "if.else"), cx.append_basic_block(f, "if.end"));
        self.llvm.builder.build_conditional_branch(cond, then_bb, else_bb)?;
        let mut arms = Vec::with_capacity(2);
        let mut traces = Vec::with_capacity(2);
        for (bb, region) in [(then_bb, data.regions[0]), (else_bb, data.regions[1])] {
            self.llvm.builder.position_at_end(bb);
            self.smem_enter();
            let yields = self.lower_region(region)?;
            traces.push(self.smem_leave()?);
            arms.push((yields, self.current_block()?));
            self.llvm.builder.build_unconditional_branch(merge)?;
        }
        let else_trace = traces.pop().expect("two arms");
        self.smem_record(Node::If(traces.pop().expect("two arms"), else_trace));
        self.llvm.builder.position_at_end(merge);
        let phis = self.phis(&arms[0].0, arms[0].1)?;
        Self::add_incoming(&phis, &arms[1].0, arms[1].1);
        self.bind_results(op, Self::phi_regs(&phis));
        Ok(())
    }

    /// `while`: the before region computes the condition and the values it
    /// forwards (to the after region, or out as the results on exit).
    pub(super) fn lower_while(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let inits: Vec<Regs<'c>> = data.operands.iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let f = self.current_fn()?;
        let cx = self.llvm.context;
        let (before, after, exit) =
            (cx.append_basic_block(f, "while.before"), cx.append_basic_block(f, "while.after"), cx.append_basic_block(f, "while.exit"));
        let pre = self.current_block()?;
        self.llvm.builder.build_unconditional_branch(before)?;
        self.llvm.builder.position_at_end(before);
        let phis = self.phis(&inits, pre)?;
        self.bind_block_args(data.regions[0], Self::phi_regs(&phis));
        self.smem_enter();
        let mut cond = self.lower_region(data.regions[0])?;
        let cond_trace = self.smem_leave()?;
        let forwarded = cond.split_off(1);
        let c = cond[0][0].into_int_value();
        self.llvm.builder.build_conditional_branch(c, after, exit)?;
        self.llvm.builder.position_at_end(after);
        self.bind_block_args(data.regions[1], forwarded.clone());
        self.smem_enter();
        let yields = self.lower_region(data.regions[1])?;
        // the before region runs once, then (after, before) any number of times
        let mut iteration = self.smem_leave()?;
        iteration.extend(cond_trace.iter().cloned());
        for node in cond_trace {
            self.smem_record(node);
        }
        self.smem_record(Node::Loop(iteration));
        let latch = self.current_block()?;
        self.llvm.builder.build_unconditional_branch(before)?;
        Self::add_incoming(&phis, &yields, latch);
        self.llvm.builder.position_at_end(exit);
        self.bind_results(op, forwarded);
        Ok(())
    }
}
