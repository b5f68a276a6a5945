//! Multi-buffered TMA on sm_90a (the pipeliner's `tma_copy` and its ring of
//! mbarriers: `mbarrier_init`, `mbarrier_wait`, `mbarrier_inval`). The ring
//! is a `local_alloc` of one 8-byte mbarrier per stage; a stage's barrier
//! completes a phase once `count` copies were armed (`expect_tx`, thread 0)
//! and all their bytes landed, and the loop waits on phase parities it
//! carries (`tritium_transforms::pipeliner`).
//!
//! Barriers for membar: the ring's initialisation and invalidation write it
//! and a wait reads it; a copy writes its tile's stage (the whole buffer
//! when the stage is not a constant) but not the barrier word, since only
//! thread 0 arms it and the barrier that orders the stage's earlier reads
//! before the copy also orders every thread's earlier wait on that barrier.
//! After a wait the copies' writes have landed for every thread (membar's
//! `Node::Landed` over the tiles the ring guards), so the dot reading the
//! stage needs no `bar.sync` after the wait.
use inkwell::values::IntValue;
use tritium_analysis::{Access, BufferKind};
use tritium_ir::{Attr, Op, Opcode, Value};

use super::shared::SharedBuffer;
use super::Lowering;
use crate::error::Result;
use crate::smem_plan::smem_elem_bytes;

impl<'a, 'c> Lowering<'a, 'c> {
    /// Stage `stage` of `local_alloc` buffer `buf`, with the range membar
    /// sees: that stage alone when `stage` is a constant, else the buffer.
    fn ring_stage(&self, op: Op, buf: Value, stage: Value) -> Result<SharedBuffer<'c>> {
        let reg = self.regs(stage)?[0].into_int_value();
        let mut s = self.stage_of(op, buf, reg)?;
        let constant = self.func.defining_op(stage).filter(|&d| self.op(d).opcode == Opcode::Const);
        if let Some(k) = constant.and_then(|d| self.op(d).attrs.get("value").and_then(Attr::as_int)) {
            let stages = self.module.types.dims(self.ty(buf))[0];
            // a constant stage is a literal index into the ring: one past it
            // (hand-written or mutated IR) is the op's error, not an overflow
            let k = u32::try_from(k).ok().filter(|&k| k < stages).ok_or_else(|| self.invalid(op, format!("stage {k} of a {stages}-stage ring")))?;
            let bytes = (s.range.1 - s.range.0) / stages.max(1);
            let lo = s.range.0 + k * bytes;
            s.range = (lo, lo + bytes);
        }
        Ok(s)
    }

    fn shared_addr(&self, b: &SharedBuffer<'c>) -> Result<IntValue<'c>> {
        Ok(self.llvm.builder.build_ptr_to_int(b.ptr, self.llvm.context.i32_type(), "")?)
    }

    /// The whole ring's address and bytes.
    fn ring(&self, op: Op) -> Result<(IntValue<'c>, u32, (u32, u32))> {
        let bars = self.op(op).operands[0];
        let all = self.stage_of(op, bars, self.i32_const(0))?;
        let stages = self.module.types.dims(self.ty(bars))[0];
        Ok((self.shared_addr(&all)?, stages, all.range))
    }

    /// Thread 0 initialises every stage's barrier for `count` arrivals;
    /// every thread then fences its earlier generic writes of shared memory
    /// for the async proxy (the copies and wgmma may land where scratch
    /// was), and a barrier publishes the ring before anyone waits on it.
    pub(super) fn lower_mbarrier_init(&mut self, op: Op) -> Result<()> {
        let count = self.op(op).attrs.get("count").and_then(Attr::as_int).unwrap_or(1);
        let (at, stages, range) = self.ring(op)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(range.0, range.1));
        let mut asm = "{ .reg .pred p; setp.eq.u32 p, $0, 0;".to_string();
        for s in 0..stages {
            asm.push_str(&format!(" @p mbarrier.init.shared::cta.b64 [$1+{}], {count};", 8 * s));
        }
        asm.push_str(" @p fence.mbarrier_init.release.cluster; fence.proxy.async.shared::cta; }");
        self.llvm.inline_asm(&asm, "r,r,~{memory}", None, &[self.tid.into(), at.into()], true)?;
        self.smem_fixed_barrier()
    }

    /// Every thread spins until the stage's barrier completed the phase of
    /// the given parity.
    pub(super) fn lower_mbarrier_wait(&mut self, op: Op) -> Result<()> {
        let [bars, stage, phase] = self.op(op).operands[..] else { unreachable!("verified: three operands") };
        let bar = self.ring_stage(op, bars, stage)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::read(bar.range.0, bar.range.1));
        let at = self.shared_addr(&bar)?;
        let parity = self.regs(phase)?[0];
        let tiles = self.ring_tiles(op, bars)?;
        self.llvm.inline_asm(
            "{ .reg .pred done; tma_ring_wait: mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; @!done bra tma_ring_wait; }",
            "r,r,~{memory}",
            None,
            &[at.into(), parity],
            true,
        )?;
        for (lo, hi) in tiles {
            self.smem_landed(lo, hi);
        }
        Ok(())
    }

    /// The byte ranges of the tile rings whose copies arm ring `bars`.
    fn ring_tiles(&self, op: Op, bars: Value) -> Result<Vec<(u32, u32)>> {
        let mut out = Vec::new();
        for (_, o) in self.func.ops_preorder() {
            let d = self.op(o);
            if d.opcode != Opcode::TmaCopy || d.operands[2] != bars {
                continue;
            }
            let buf = d.operands[0];
            let alloc = self.func.defining_op(buf).and_then(|a| self.shared.alloc.offset_of(a, BufferKind::Explicit));
            let lo = alloc.ok_or_else(|| self.invalid(op, format!("no shared buffer allocated for %{}", buf.0)))?;
            let bytes = self.module.types.dims(self.ty(buf)).iter().product::<u32>() * smem_elem_bytes(self.kind(buf));
            if !out.contains(&(lo, lo + bytes)) {
                out.push((lo, lo + bytes));
            }
        }
        Ok(out)
    }

    /// Thread 0 invalidates the ring once every thread is past its waits
    /// (membar's barrier: the waits read it), so its bytes may be reused.
    pub(super) fn lower_mbarrier_inval(&mut self, op: Op) -> Result<()> {
        let (at, stages, range) = self.ring(op)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(range.0, range.1));
        let mut asm = "{ .reg .pred p; setp.eq.u32 p, $0, 0;".to_string();
        for s in 0..stages {
            asm.push_str(&format!(" @p mbarrier.inval.shared::cta.b64 [$1+{}];", 8 * s));
        }
        asm.push_str(" }");
        self.llvm.inline_asm(&asm, "r,r,~{memory}", None, &[self.tid.into(), at.into()], true)?;
        Ok(())
    }

    /// `tma_copy(buf, stage, barriers, guard, map, ...)`: where the guard
    /// holds, thread 0 arms the stage's barrier with the tile's bytes and
    /// issues the box copies into the stage (as `tma_load` does into its
    /// own buffer; `lower/tma.rs`).
    pub(super) fn lower_tma_copy(&mut self, op: Op) -> Result<()> {
        let d = self.op(op);
        let [buf, stage, bars, guard] = d.operands[..4] else { unreachable!("verified: at least nine operands") };
        let dims = self.module.types.dims(self.ty(buf))[1..].to_vec();
        let dst = self.ring_stage(op, buf, stage)?;
        let bar = self.ring_stage(op, bars, stage)?;
        let eb = dst.elem_bytes;
        let b = tritium_transforms::tma_box(eb, &dims).map_err(|why| self.invalid(op, format!("no TMA box for this tile: {why}")))?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(dst.range.0, dst.range.1));
        let tile: u32 = dims.iter().product::<u32>() * eb;
        let (dst, bar) = (self.shared_addr(&dst)?, self.shared_addr(&bar)?);
        let guard = self.regs(guard)?[0].into_int_value();
        let builder = &self.llvm.builder;
        let leader = builder.build_int_compare(inkwell::IntPredicate::EQ, self.tid, self.i32_const(0), "")?;
        let issue = builder.build_and(leader, guard, "")?;
        let issue = builder.build_int_z_extend(issue, self.llvm.context.i32_type(), "")?;
        self.arm_and_copy_boxes(op, 4, (issue, "ne"), bar, dst, &b, eb, tile)?;
        Ok(())
    }
}
