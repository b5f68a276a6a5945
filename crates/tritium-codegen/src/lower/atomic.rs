//! `atomic_rmw` and `atomic_cas` on global memory: each thread issues one
//! predicated atomic per element it owns (`Target::atomic_global`). Elements a
//! layout replicates over several threads (and scalars, which every thread
//! holds) are issued by one owner only; the old value then reaches the copies
//! through a small static shared-memory buffer between two barriers.
//! PROVISIONAL: those buffers are LLVM globals of this file (one per op), not
//! codegen B's scratch allocator; move them there once it owns scalar-atomic
//! scratch (docs/architecture.md, Allocation).
use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use tritium_ir::{Attr, Op, Opcode, ScalarKind, Value};

use super::{Lowering, Regs};
use crate::error::{CodegenError, Result};
use crate::layout::elem_bytes;
use crate::target::{AtomicAccess, AtomicOp, AtomicScope, AtomicSem};

impl<'a, 'c> Lowering<'a, 'c> {
    fn atomic_access(&self, op: Op, kind: ScalarKind) -> Result<AtomicAccess> {
        let data = self.op(op);
        let attr = |k: &str| data.attrs.get(k).and_then(Attr::as_str);
        let atomic_op = if data.opcode == Opcode::AtomicCas {
            AtomicOp::Cas
        } else {
            match attr("kind") {
                Some("add") => AtomicOp::Add,
                Some("max") => AtomicOp::Max,
                Some("min") => AtomicOp::Min,
                Some("and") => AtomicOp::And,
                Some("or") => AtomicOp::Or,
                Some("xor") => AtomicOp::Xor,
                Some("xchg") => AtomicOp::Xchg,
                other => return Err(self.unsupported(op, format!("unknown atomic kind {other:?}"))),
            }
        };
        let sem = match attr("sem").unwrap_or("acq_rel") {
            "relaxed" => AtomicSem::Relaxed,
            "acquire" => AtomicSem::Acquire,
            "release" => AtomicSem::Release,
            "acq_rel" => AtomicSem::AcqRel,
            other => return Err(self.unsupported(op, format!("unknown atomic sem {other:?}"))),
        };
        let scope = match attr("scope").unwrap_or("gpu") {
            "cta" => AtomicScope::Cta,
            "gpu" => AtomicScope::Gpu,
            "sys" => AtomicScope::Sys,
            other => return Err(self.unsupported(op, format!("unknown atomic scope {other:?}"))),
        };
        if kind.is_fp8() || kind == ScalarKind::I1 {
            return Err(self.unsupported(op, format!("atomics on {} elements", kind.name())));
        }
        Ok(AtomicAccess {
            op: atomic_op,
            sem,
            scope,
            bits: kind.bits(),
            float: kind.is_float(),
            signed: matches!(kind, ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 | ScalarKind::I64),
            bf16: kind == ScalarKind::BF16,
        })
    }

    /// The predicate "this thread owns the elements it holds of a value of
    /// `v`'s type" (None when every thread does): thread 0 for scalars, and
    /// threads whose copy-selecting id bits are zero for replicated tensors.
    pub(super) fn owner_pred(&self, v: Value) -> Result<Option<IntValue<'c>>> {
        let b = &self.llvm.builder;
        let copy_bits = match self.tl(v) {
            None => return Ok(Some(b.build_int_compare(IntPredicate::EQ, self.tid, self.i32_const(0), "")?)),
            Some(l) => l.copy_bits(),
        };
        if copy_bits == 0 {
            return Ok(None);
        }
        let bits = b.build_and(self.tid, self.i32_const(copy_bits as u64), "")?;
        Ok(Some(b.build_int_compare(IntPredicate::EQ, bits, self.i32_const(0), "")?))
    }

    pub(super) fn lower_atomic(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let ptr = data.operands[0];
        let (value_operands, mask) = if data.opcode == Opcode::AtomicCas {
            (vec![data.operands[1], data.operands[2]], None)
        } else {
            (vec![data.operands[1]], data.operands.get(2).copied())
        };
        let res = data.results[0];
        let kind = self.kind(res).ok_or_else(|| self.unsupported(op, "atomics on pointer elements"))?;
        let access = self.atomic_access(op, kind)?;
        let owner = self.owner_pred(ptr)?;
        let ptrs = self.regs(ptr)?.clone();
        let values: Vec<Regs<'c>> = value_operands.iter().map(|&v| self.regs(v).cloned()).collect::<Result<_>>()?;
        let masks = mask.map(|m| self.regs(m).cloned()).transpose()?;
        let b = &self.llvm.builder;
        let mut old = Vec::with_capacity(ptrs.len());
        for (r, p) in ptrs.iter().enumerate() {
            let pred = match (masks.as_ref().map(|m| m[r].into_int_value()), owner) {
                (Some(m), Some(o)) => Some(b.build_and(m, o, "")?),
                (m, o) => m.or(o),
            };
            let operands: Vec<BasicValueEnum> = values.iter().map(|v| v[r]).collect();
            let v = self.target.atomic_global(self.llvm, p.into_pointer_value(), access, &operands, pred).map_err(|e| match e {
                CodegenError::Unsupported { reason, .. } => self.unsupported(op, reason),
                e => e,
            })?;
            old.push(v);
        }
        if owner.is_some() && self.is_used(res) {
            old = self.broadcast_from_owners(res, kind, old, owner.expect("checked"))?;
        }
        self.set(op, old);
        Ok(())
    }

    fn is_used(&self, v: Value) -> bool {
        self.func.ops.values().any(|d| d.operands.contains(&v))
    }

    /// Copies each owner's `regs` to the threads holding copies of the same
    /// elements: owners write to a static shared buffer (row-major), a barrier,
    /// everyone reads. A barrier before the writes keeps a previous execution's
    /// readers (a loop) from seeing them early.
    fn broadcast_from_owners(&mut self, v: Value, kind: ScalarKind, regs: Regs<'c>, owner: IntValue<'c>) -> Result<Regs<'c>> {
        let layout = self.tl(v);
        let eb = elem_bytes(kind);
        let numel = layout.as_ref().map(|l| l.numel()).unwrap_or(1);
        let buf = self.static_shared(numel * eb);
        let st = regs[0].get_type();
        let cx = self.llvm.context;
        let f = self.llvm.builder.get_insert_block().and_then(|bb| bb.get_parent()).ok_or_else(|| CodegenError::Internal("no current function".into()))?;
        let write = cx.append_basic_block(f, "atomic_bcast_write");
        let read = cx.append_basic_block(f, "atomic_bcast_read");
        self.smem_fixed_barrier()?;
        let mut idxs = Vec::with_capacity(regs.len());
        for r in 0..regs.len() {
            idxs.push(match &layout {
                Some(l) => {
                    let c = self.coords(l, r as u32)?;
                    self.linear(&c, l.shape())?
                }
                None => self.i32_const(0),
            });
        }
        let b = &self.llvm.builder;
        b.build_conditional_branch(owner, write, read)?;
        b.position_at_end(write);
        for (r, &val) in regs.iter().enumerate() {
            b.build_store(self.elem_ptr(buf, idxs[r], eb)?, val)?;
        }
        b.build_unconditional_branch(read)?;
        b.position_at_end(read);
        self.smem_fixed_barrier()?;
        let b = &self.llvm.builder;
        idxs.iter().map(|&i| Ok(b.build_load(st, self.elem_ptr(buf, i, eb)?, "")?)).collect()
    }

    fn elem_ptr(&self, buf: PointerValue<'c>, idx: IntValue<'c>, eb: u32) -> Result<PointerValue<'c>> {
        let b = &self.llvm.builder;
        let off = b.build_int_mul(idx, self.i32_const(eb as u64), "")?;
        // SAFETY: idx < numel, the buffer holds numel elements of eb bytes
        Ok(unsafe { b.build_gep(self.llvm.context.i8_type(), buf, &[off], "")? })
    }

    /// A fresh static shared-memory buffer of `bytes` (see the module note).
    fn static_shared(&self, bytes: u32) -> PointerValue<'c> {
        let ty = self.llvm.context.i8_type().array_type(bytes);
        let g = self.llvm.module.add_global(ty, Some(AddressSpace::from(self.target.shared_addrspace())), "tritium_atomic_bcast");
        g.set_linkage(Linkage::Internal);
        g.set_initializer(&ty.get_undef());
        g.set_alignment(8);
        g.as_pointer_value()
    }
}
