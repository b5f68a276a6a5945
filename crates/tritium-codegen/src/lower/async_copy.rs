//! Multi-stage shared-memory buffers (the software pipeliner's): a
//! `local_alloc` is an explicit buffer of `stages x tile` in a shared
//! layout; `local_view` names one stage (consumers read it: a dot's
//! operands); `async_copy` fills a stage from global memory with `cp.async`
//! (4, 8 or 16 bytes per copy, masked lanes zero-filled through the
//! source size), or with a plain load and shared stores where it cannot
//! (narrower accesses, a non-zero `other`); `async_commit` and `async_wait`
//! are `cp.async.commit_group` and `cp.async.wait_group`.
use inkwell::values::{BasicValueEnum, IntValue};
use tritium_analysis::{Access, BufferKind};
use tritium_ir::{Attr, Op, Value, ValueDef};
use tritium_transforms::layout::linear::combine;
use tritium_transforms::layout::{Layout, SharedLayout};

use super::shared::SharedBuffer;
use super::Lowering;
use crate::error::{CodegenError, Result};
use crate::layout::elem_bytes;

impl<'a, 'c> Lowering<'a, 'c> {
    /// `local_alloc` and `local_view` hold no registers: consumers address
    /// the buffer (see `shared_buffer`).
    pub(super) fn lower_local_buffer(&mut self, op: Op) -> Result<()> {
        let res = self.op(op).results[0];
        self.values.insert(res, Vec::new());
        Ok(())
    }

    pub(super) fn lower_async_commit(&mut self, _op: Op) -> Result<()> {
        self.asm_void("cp.async.commit_group;")
    }

    pub(super) fn lower_async_wait(&mut self, op: Op) -> Result<()> {
        let n = self.op(op).attrs.get("pending").and_then(Attr::as_int).unwrap_or(0).clamp(0, 7);
        self.asm_void(&format!("cp.async.wait_group {n};"))?;
        if self.target.mma() == tritium_transforms::MmaSupport::V3 && self.proxy_fence {
            // the copies wrote through the generic proxy; wgmma reads through the async one
            self.asm_void("fence.proxy.async.shared::cta;")?;
        }
        Ok(())
    }

    /// The buffer a `local_alloc` value, or one stage of it (`local_view`)
    /// lives in: its pointer at the stage, the whole buffer's bytes for
    /// membar, and the tile layout's element offsets.
    pub(super) fn staged_buffer(&self, op: Op, v: Value) -> Result<Option<SharedBuffer<'c>>> {
        let ValueDef::OpResult(def, _) = self.func.values[v].def else { return Ok(None) };
        let d = self.op(def);
        if d.opcode != tritium_ir::Opcode::LocalView {
            return Ok(None);
        }
        let (buf, stage) = (d.operands[0], d.operands[1]);
        let mut at = self.stage_of(op, buf, self.regs(stage)?[0].into_int_value())?;
        // a view reads the stage's bytes through its own layout, which for a
        // transposed view (`desc.load(...).T` staged by TMA) is the stage's
        // layout transposed. Its dims cannot tell: a square tile's transpose
        // has the stage's dims (tutorial 06 with HEAD_DIM = 64 read K's
        // [64, 64] stages untransposed, a silent wrong answer)
        let Some(Layout::Shared(layout)) = self.layouts.of(v) else {
            return Err(CodegenError::Internal(format!("view %{} is not in shared memory", v.0)));
        };
        at.bases = layout.bases(self.module.types.dims(self.ty(v)));
        Ok(Some(at))
    }

    /// Stage `stage` of multi-stage buffer `buf` (a `local_alloc` result).
    pub(super) fn stage_of(&self, op: Op, buf: Value, stage: IntValue<'c>) -> Result<SharedBuffer<'c>> {
        let ValueDef::OpResult(alloc, _) = self.func.values[buf].def else {
            return Err(CodegenError::Internal("a staged buffer that is a block argument".into()));
        };
        let Some(Layout::Shared(layout)) = self.layouts.of(buf).cloned() else {
            return Err(CodegenError::Internal(format!("`{}`: buffer %{} is not in shared memory", self.op(op).opcode, buf.0)));
        };
        let offset = self
            .shared
            .alloc
            .offset_of(alloc, BufferKind::Explicit)
            .ok_or_else(|| CodegenError::Internal(format!("no shared buffer allocated for %{}", buf.0)))?;
        let dims = self.module.types.dims(self.ty(buf)).to_vec();
        let eb = crate::smem_plan::smem_elem_bytes(self.kind(buf));
        let tile: u32 = dims[1..].iter().product::<u32>() * eb;
        let b = &self.llvm.builder;
        let at = b.build_int_add(self.smem_base, self.i32_const(offset as u64), "")?;
        let at = b.build_int_add(at, b.build_int_mul(stage, self.i32_const(tile as u64), "")?, "")?;
        let ptr = self.smem_ptr(at)?;
        Ok(SharedBuffer { ptr, range: (offset, offset + tile * dims[0]), bases: layout.stage().bases(&dims[1..]), elem_bytes: eb })
    }

    /// `async_copy(buf, stage, ptrs, mask?, other?)`.
    pub(super) fn lower_async_copy(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (buf, stage, ptr) = (data.operands[0], data.operands[1], data.operands[2]);
        let (mask, other) = (data.operands.get(3).copied(), data.operands.get(4).copied());
        let stage = self.regs(stage)?[0].into_int_value();
        let dst = self.stage_of(op, buf, stage)?;
        let tl = self.tl_of(op, ptr)?;
        let (kind, _, eb) = self.storage(op, ptr)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(dst.range.0, dst.range.1));
        let thread = self.shared_thread_offset(&tl.lin, &dst.bases)?;
        let vec = self.vector_width(ptr, mask, eb);
        // registers vec apart must also land on consecutive shared offsets
        let contiguous = |r: u32, n: u32| (0..n).all(|i| combine(&dst.bases, combine(&tl.lin.reg, r + i)) == combine(&dst.bases, combine(&tl.lin.reg, r)) + i);
        let bytes = vec * elem_bytes(kind);
        let async_ok = other.is_none() && matches!(bytes, 4 | 8 | 16) && (0..tl.elems_per_thread()).step_by(vec as usize).all(|r| contiguous(r, vec));
        if !async_ok {
            // a plain load, then the registers stored where the layout puts them
            let regs = self.load_regs(op, ptr, mask, other)?;
            let all: Vec<u32> = (0..tl.elems_per_thread()).collect();
            return self.store_to_shared(&dst, &tl.lin, thread, &all, &regs);
        }
        let ptrs = self.regs(ptr)?.clone();
        let masks = mask.map(|m| self.regs(m).cloned()).transpose()?;
        // registers whose mask axis info proves equal read one register's
        // (the others' compares are then dead: B's rows 8 apart share a
        // K-tail test when K is a multiple of 16)
        let same_mask = mask.and_then(|m| self.facts.dims(m)).map_or(0, |f| tl.lin.regs_within_blocks(&f.constancy));
        let cache = if bytes == 16 { "cg" } else { "ca" };
        let asm = format!("cp.async.{cache}.shared.global [$0], [$1], {bytes}, $2;");
        let i32t = self.llvm.context.i32_type();
        let base = self.llvm.builder.build_ptr_to_int(dst.ptr, i32t, "")?;
        // a register's offset is (thread ^ over) | rest with `rest` clear of
        // the thread's bits, so (thread ^ over) + rest: the stage's base plus
        // the thread part is summed once per distinct `over` (usually one)
        // and each copy adds an immediate, not a register of its own
        let mut thread_at: std::collections::HashMap<u32, IntValue<'c>> = std::collections::HashMap::new();
        for g in (0..tl.elems_per_thread()).step_by(vec as usize) {
            let b = &self.llvm.builder;
            let c = combine(&dst.bases, combine(&tl.lin.reg, g));
            let over = c & thread.bits;
            let at = match thread_at.get(&over) {
                Some(&v) => v,
                None => {
                    let idx = b.build_xor(thread.value, self.i32_const(over as u64), "")?;
                    let v = b.build_int_add(base, b.build_int_mul(idx, self.i32_const(eb as u64), "")?, "")?;
                    thread_at.insert(over, v);
                    v
                }
            };
            let addr = b.build_int_add(at, self.i32_const(((c & !thread.bits) * eb) as u64), "")?;
            // masked lanes copy nothing and zero-fill: source size 0
            let size: IntValue<'c> = match &masks {
                Some(m) => b.build_int_z_extend(m[(g & !same_mask) as usize].into_int_value(), i32t, "")?,
                None => self.i32_const(1),
            };
            let size = b.build_int_mul(size, self.i32_const(bytes as u64), "")?;
            let args: [BasicValueEnum<'c>; 3] = [addr.into(), ptrs[g as usize], size.into()];
            self.llvm.inline_asm(&asm, "r,l,r", None, &args, true)?;
        }
        Ok(())
    }

    /// Writes `regs` (registers `which` of layout `lin`) into `buf`.
    pub(super) fn store_to_shared(
        &self,
        buf: &SharedBuffer<'c>,
        lin: &tritium_transforms::LinearLayout,
        thread: super::shared::ThreadOffset<'c>,
        which: &[u32],
        regs: &[BasicValueEnum<'c>],
    ) -> Result<()> {
        let storage: Vec<BasicValueEnum<'c>> = regs.iter().map(|&r| self.to_smem_storage(r)).collect::<Result<_>>()?;
        let ty = storage.first().map(|r| r.get_type()).ok_or_else(|| CodegenError::Internal("empty tensor".into()))?;
        self.shared_write(buf, lin, thread, which, ty, &storage)
    }
}

/// Whether `l` is an NVMMA layout (read through the async proxy).
pub(crate) fn is_nvmma(l: Option<&Layout>) -> bool {
    matches!(l, Some(Layout::Shared(SharedLayout::Nvmma { .. })))
}
