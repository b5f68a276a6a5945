//! Layouts at lowering time: element coordinates of a thread's registers
//! (from the layout's linear form), `convert_layout` (a register permutation
//! when every element stays in its thread, else through scratch shared
//! memory, its rows padded apart where the target wants:
//! smem_plan::convert_row_pad), and the
//! scratch itself. Scratch is op-local, so every scratch
//! buffer sits at offset 0 (what `tritium_analysis::Allocation` gives
//! op-local buffers when nothing else is live; checked in `lower_module`).
//! Barriers: one between each scratch op's writes and reads, and a candidate
//! before its writes that membar erases unless an earlier access may
//! conflict (barriers.rs).
use inkwell::module::Linkage;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use tritium_analysis::{Access, BufferKind};
use tritium_ir::{Op, ScalarKind, Type};

use super::barriers::BarrierTrace;
use super::{Lowering, Regs};
use crate::error::{CodegenError, Result};
use crate::layout::{dim_mask, TensorLayout};

const SMEM_NAME: &str = crate::target::SHARED_ARRAY;

#[derive(Default)]
pub(crate) struct SmemState<'c> {
    /// Bytes `[lo, hi)` of the scratch op between `scratch_begin` and `scratch_sync`.
    pub(super) open: (u32, u32),
    /// The access trace and candidate barriers membar decides (barriers.rs).
    pub barriers: BarrierTrace<'c>,
}

/// The part of a coordinate that the lane and warp ids give, per dim: the
/// same for every register of a thread.
pub(crate) struct ThreadCoords<'c>(Vec<IntValue<'c>>);

impl<'a, 'c> Lowering<'a, 'c> {
    /// `convert_layout`: the same elements in another layout.
    pub(super) fn lower_convert_layout(&mut self, op: Op) -> Result<()> {
        let (src, res) = (self.op(op).operands[0], self.op(op).results[0]);
        if self.layouts.of(src).is_some_and(|l| l.is_shared()) {
            return self.load_shared_operand(op);
        }
        let from = self.tl_of(op, src)?;
        if self.layouts.of(res).is_some_and(|l| l.is_shared()) {
            return self.store_shared_operand(op);
        }
        let to = self.tl_of(op, res)?;
        let regs = self.regs(src)?.clone();
        if from.lin == to.lin {
            self.set(op, regs);
            return Ok(());
        }
        if let Some(perm) = from.lin.register_permutation_to(&to.lin) {
            let out = perm.iter().map(|&r| regs[r as usize]).collect();
            self.set(op, out);
            return Ok(());
        }
        let storage = self.storage_kind(op, self.ty(src))?;
        // rows padded apart where the target pads them (smem_plan::convert_row_pad):
        // written and read as a row-major array whose rows are `pad` elements longer
        let mut padded = to.shape().to_vec();
        if let (Some(cols), true) = (padded.last_mut(), self.target.pads_conversion_rows()) {
            *cols += crate::smem_plan::convert_row_pad(to.shape(), storage.2);
        }
        let stored = padded.clone();
        let out = self.gather_padded(op, &[(from, regs)], storage, &[to], &stored, |lw, _, _, c| lw.linear(c, &padded))?;
        self.set(op, out.into_iter().next().unwrap_or_default());
        Ok(())
    }

    /// Flat thread id split into (lane, warp).
    pub(super) fn lane_warp(&self) -> Result<(IntValue<'c>, IntValue<'c>)> {
        let b = &self.llvm.builder;
        let ws = self.target.warp_size();
        let lane = b.build_and(self.tid, self.i32_const(ws as u64 - 1), "")?;
        let warp = b.build_right_shift(self.tid, self.i32_const(ws.trailing_zeros() as u64), false, "")?;
        Ok((lane, warp))
    }

    /// The value of the bits of `x` whose bases (single bits of the row-major
    /// index) fall in dim `d` of `shape`, moved to their place in that dim's
    /// coordinate: runs of consecutive bits are one shift and mask.
    fn bits_along(&self, x: IntValue<'c>, bases: &[u32], shape: &[u32], d: usize) -> Result<IntValue<'c>> {
        let mask = dim_mask(shape, d);
        let start = mask.trailing_zeros();
        let b = &self.llvm.builder;
        let mut out = self.i32_const(0);
        let mut i = 0;
        while i < bases.len() {
            let basis = bases[i];
            if basis & mask == 0 {
                i += 1;
                continue;
            }
            if !basis.is_power_of_two() {
                return Err(CodegenError::Internal("a distributed layout whose bits mix".into()));
            }
            // extend the run while the next input bit lands on the next output bit
            let mut len = 1;
            while i + len < bases.len() && bases[i + len] == basis << len && bases[i + len] & mask != 0 {
                len += 1;
            }
            let at = basis.trailing_zeros() - start;
            let field = b.build_and(b.build_right_shift(x, self.i32_const(i as u64), false, "")?, self.i32_const((1u64 << len) - 1), "")?;
            let placed = b.build_left_shift(field, self.i32_const(at as u64), "")?;
            out = b.build_or(out, placed, "")?;
            i += len;
        }
        Ok(out)
    }

    /// Each dim's coordinate contributed by this thread's lane and warp ids.
    pub(super) fn thread_coords(&self, tl: &TensorLayout) -> Result<ThreadCoords<'c>> {
        let (lane, warp) = self.lane_warp()?;
        let shape = tl.shape();
        let b = &self.llvm.builder;
        (0..shape.len())
            .map(|d| Ok(b.build_or(self.bits_along(lane, &tl.lin.lane, shape, d)?, self.bits_along(warp, &tl.lin.warp, shape, d)?, "")?))
            .collect::<Result<_>>()
            .map(ThreadCoords)
    }

    /// Logical coordinates of register `r` of this thread under `tl`.
    pub(super) fn coords_at(&self, tl: &TensorLayout, thread: &ThreadCoords<'c>, r: u32) -> Result<Vec<IntValue<'c>>> {
        let reg = crate::layout::unflatten(tl.shape(), tritium_transforms::layout::linear::combine(&tl.lin.reg, r));
        let b = &self.llvm.builder;
        // register and thread bits are disjoint: OR is the sum
        thread.0.iter().zip(reg).map(|(&t, c)| Ok(b.build_or(t, self.i32_const(c as u64), "")?)).collect()
    }

    /// `coords_at` with the thread part computed here (one register).
    pub(super) fn coords(&self, tl: &TensorLayout, r: u32) -> Result<Vec<IntValue<'c>>> {
        let t = self.thread_coords(tl)?;
        self.coords_at(tl, &t, r)
    }

    /// Row-major flat index of `coords` in `shape`.
    pub(super) fn linear(&self, coords: &[IntValue<'c>], shape: &[u32]) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        let mut idx = self.i32_const(0);
        for (c, &n) in coords.iter().zip(shape) {
            idx = b.build_int_mul(idx, self.i32_const(n as u64), "")?;
            idx = b.build_int_add(idx, *c, "")?;
        }
        Ok(idx)
    }

    /// The element kind of tensor type `ty` as scratch stores it (None for pointers).
    pub(super) fn storage_kind(&self, op: Op, ty: Type) -> Result<(Option<ScalarKind>, BasicTypeEnum<'c>, u32)> {
        let elem = self.module.types.elem(ty);
        let kind = self.module.types.scalar_kind(elem);
        let llty = super::llvm_scalar_type(self.llvm, self.module, elem).map_err(|r| self.unsupported(op, r))?;
        let (st, bytes): (BasicTypeEnum<'c>, u32) = match kind {
            Some(ScalarKind::I1) => (self.llvm.context.i8_type().into(), 1),
            Some(k) => (llty, k.bits() / 8),
            None => (llty, 8),
        };
        Ok((kind, st, bytes))
    }

    /// The dynamic shared array every function of the module addresses.
    fn smem_array(&self) -> PointerValue<'c> {
        // one array per module; a function's part starts `smem_base` bytes
        // in (0 in a kernel, an argument of a device function)
        self.llvm
            .module
            .get_global(SMEM_NAME)
            .unwrap_or_else(|| {
                let i8t = self.llvm.context.i8_type();
                let g = self.llvm.module.add_global(i8t.array_type(0), Some(AddressSpace::from(self.target.shared_addrspace())), SMEM_NAME);
                g.set_linkage(Linkage::External);
                // NVMMA swizzles (wgmma, TMA) XOR address bits up to 1024: tiles start on that boundary
                g.set_alignment(1024);
                g
            })
            .as_pointer_value()
    }

    /// Pointer to byte `offset` of this function's shared memory.
    pub(super) fn smem_at(&self, offset: u32) -> Result<PointerValue<'c>> {
        let at = self.llvm.builder.build_int_add(self.smem_base, self.i32_const(offset as u64), "")?;
        self.scratch_ptr(self.smem_array(), at)
    }

    /// Pointer to byte `at` of the module's shared array (`at` includes the base).
    pub(super) fn smem_ptr(&self, at: IntValue<'c>) -> Result<PointerValue<'c>> {
        self.scratch_ptr(self.smem_array(), at)
    }

    /// Starts `op`'s use of its planned scratch (`bytes` of it); returns the
    /// scratch base. A candidate barrier precedes the writes (membar decides).
    pub(super) fn scratch_begin(&mut self, op: Op, bytes: u32) -> Result<PointerValue<'c>> {
        let planned = self.shared.plan.scratch.get(&op).copied().unwrap_or(0);
        let offset = self.shared.alloc.offset_of(op, BufferKind::Scratch);
        let Some(offset) = offset.filter(|_| bytes <= planned) else {
            return Err(CodegenError::Internal(format!("`{}` uses {bytes} scratch bytes, {planned} were planned", self.op(op).opcode)));
        };
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(offset, offset + bytes));
        self.smem.open = (offset, offset + bytes);
        self.smem_at(offset)
    }

    /// Between a scratch use's writes and its reads.
    pub(super) fn scratch_sync(&mut self) -> Result<()> {
        self.smem_fixed_barrier()?;
        let (lo, hi) = self.smem.open;
        self.smem_access(Access::read(lo, hi));
        Ok(())
    }

    /// After a scratch use's reads (they were traced at `scratch_sync`).
    pub(super) fn scratch_done(&mut self) {
        self.smem.open = (0, 0);
    }

    fn scratch_ptr(&self, base: PointerValue<'c>, byte_off: IntValue<'c>) -> Result<PointerValue<'c>> {
        let i8t = self.llvm.context.i8_type();
        // SAFETY: a plain byte GEP inside the dynamic shared array
        Ok(unsafe { self.llvm.builder.build_gep(i8t, base, &[byte_off], "")? })
    }

    /// Stores `v` as element `idx` of an array of `eb`-byte elements at byte `start` of scratch.
    pub(super) fn scratch_store(&self, base: PointerValue<'c>, start: u32, idx: IntValue<'c>, eb: u32, kind: Option<ScalarKind>, v: BasicValueEnum<'c>) -> Result<()> {
        let b = &self.llvm.builder;
        let off = b.build_int_add(b.build_int_mul(idx, self.i32_const(eb as u64), "")?, self.i32_const(start as u64), "")?;
        let p = self.scratch_ptr(base, off)?;
        let v = if kind == Some(ScalarKind::I1) { b.build_int_z_extend(v.into_int_value(), self.llvm.context.i8_type(), "")?.into() } else { v };
        b.build_store(p, v)?;
        Ok(())
    }

    pub(super) fn scratch_load(&self, base: PointerValue<'c>, start: u32, idx: IntValue<'c>, eb: u32, kind: Option<ScalarKind>, st: BasicTypeEnum<'c>) -> Result<BasicValueEnum<'c>> {
        let b = &self.llvm.builder;
        let off = b.build_int_add(b.build_int_mul(idx, self.i32_const(eb as u64), "")?, self.i32_const(start as u64), "")?;
        let p = self.scratch_ptr(base, off)?;
        let v = b.build_load(st, p, "")?;
        if kind == Some(ScalarKind::I1) {
            let v = v.into_int_value();
            return Ok(b.build_int_compare(IntPredicate::NE, v, v.get_type().const_zero(), "")?.into());
        }
        Ok(v)
    }

    /// Writes each source (row-major, one after another) to scratch, then
    /// fills each destination layout's registers from flat index
    /// `index(dst_no, register, coords)` into that concatenation.
    pub(super) fn gather(
        &mut self,
        op: Op,
        srcs: &[(TensorLayout, Regs<'c>)],
        storage: (Option<ScalarKind>, BasicTypeEnum<'c>, u32),
        dsts: &[TensorLayout],
        index: impl Fn(&Self, usize, u32, &[IntValue<'c>]) -> Result<IntValue<'c>>,
    ) -> Result<Vec<Regs<'c>>> {
        self.gather_padded(op, srcs, storage, dsts, &[], index)
    }

    /// `gather`, the one source stored as a row-major array of shape
    /// `stored` (its own shape with longer rows) when that is not empty.
    pub(super) fn gather_padded(
        &mut self,
        op: Op,
        srcs: &[(TensorLayout, Regs<'c>)],
        (kind, st, eb): (Option<ScalarKind>, BasicTypeEnum<'c>, u32),
        dsts: &[TensorLayout],
        stored: &[u32],
        index: impl Fn(&Self, usize, u32, &[IntValue<'c>]) -> Result<IntValue<'c>>,
    ) -> Result<Vec<Regs<'c>>> {
        let total: u32 = if stored.is_empty() { srcs.iter().map(|(l, _)| l.numel()).sum() } else { stored.iter().product() };
        let base = self.scratch_begin(op, total * eb)?;
        let mut prefix = 0;
        for (l, regs) in srcs {
            let thread = self.thread_coords(l)?;
            let shape = if stored.is_empty() { l.shape() } else { stored };
            for (r, &v) in regs.iter().enumerate() {
                let c = self.coords_at(l, &thread, r as u32)?;
                let idx = self.linear(&c, shape)?;
                self.scratch_store(base, prefix * eb, idx, eb, kind, v)?;
            }
            prefix += l.numel();
        }
        self.scratch_sync()?;
        let mut out = Vec::with_capacity(dsts.len());
        for (k, d) in dsts.iter().enumerate() {
            let thread = self.thread_coords(d)?;
            let mut regs = Vec::with_capacity(d.elems_per_thread() as usize);
            for r in 0..d.elems_per_thread() {
                let c = self.coords_at(d, &thread, r)?;
                let idx = index(self, k, r, &c)?;
                regs.push(self.scratch_load(base, 0, idx, eb, kind, st)?);
            }
            out.push(regs);
        }
        self.scratch_done();
        Ok(out)
    }
}
