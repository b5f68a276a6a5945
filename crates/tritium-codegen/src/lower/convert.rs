//! Layouts at lowering time: element coordinates of a thread's registers,
//! layout conversion through scratch shared memory, and the scratch itself.
//! Values whose assigned layout is not canonical live in `Lowering::native`;
//! an op lowered elsewhere (which expects canonical registers) gets them
//! converted first (`prepare_operands`). Scratch is op-local, so every scratch
//! buffer sits at offset 0 (what `tritium_analysis::Allocation` gives op-local
//! buffers when nothing else is live; checked in `lower_module`). Barriers:
//! one between each scratch op's writes and reads, and a candidate before its
//! writes that membar erases unless an earlier access may conflict (barriers.rs).
use std::collections::HashSet;

use inkwell::module::Linkage;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use tritium_analysis::{Access, BufferKind, BufferRequest};
use tritium_ir::{Function, Op, Opcode, ScalarKind, Type, Value};

use super::barriers::BarrierTrace;
use super::{Lowering, Regs};
use crate::error::Result;
use crate::layout::BlockedLayout;

const SMEM_NAME: &str = "tritium_smem";

pub(crate) struct SmemState<'c> {
    /// Bytes of the scratch op between `scratch_begin` and `scratch_sync`.
    open_bytes: u32,
    requests: Vec<BufferRequest>,
    /// The access trace and candidate barriers membar decides (barriers.rs).
    pub barriers: BarrierTrace<'c>,
    /// Values some terminator (`yield`, `condition`, `return`) uses: they are
    /// always kept in canonical registers too, since terminators read `values`.
    term_uses: HashSet<Value>,
    /// While an op is lowered in a layout other than the canonical one
    /// (remat.rs), that layout: memory ops size their accesses from it.
    pub(super) foreign: Vec<BlockedLayout>,
}

impl<'c> SmemState<'c> {
    pub fn new(func: &Function) -> SmemState<'c> {
        let mut term_uses = HashSet::new();
        for (_, block) in func.blocks.iter() {
            if let Some(&last) = block.ops.last() {
                let d = &func.ops[last];
                if matches!(d.opcode, Opcode::Yield | Opcode::Condition | Opcode::Return) {
                    term_uses.extend(d.operands.iter().copied());
                }
            }
        }
        SmemState {
            open_bytes: 0,
            requests: Vec::new(),
            barriers: BarrierTrace::default(),
            term_uses,
            foreign: Vec::new(),
        }
    }
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// Converts native-layout operands of `op` to canonical registers.
    pub(super) fn prepare_operands(&mut self, op: Op) -> Result<()> {
        for v in self.op(op).operands.clone() {
            if self.values.contains_key(&v) || !self.native.contains_key(&v) {
                continue;
            }
            let canon = self.layout(self.ty(v)).ok_or_else(|| self.unsupported(op, "no canonical layout for an operand"))?;
            let regs = self.to_layout(op, v, &canon)?;
            self.values.insert(v, regs);
        }
        Ok(())
    }

    /// `v`'s layout and registers as held.
    pub(super) fn native_of(&self, op: Op, v: Value) -> Result<(BlockedLayout, Regs<'c>)> {
        if let Some(n) = self.native.get(&v) {
            return Ok(n.clone());
        }
        let l = self.layout(self.ty(v)).ok_or_else(|| self.unsupported(op, "expected a tensor operand"))?;
        Ok((l, self.regs(v)?.clone()))
    }

    /// Records result `idx` of `op` held in layout `tl`.
    pub(super) fn set_result(&mut self, op: Op, idx: usize, tl: BlockedLayout, regs: Regs<'c>) -> Result<()> {
        let v = self.op(op).results[idx];
        if self.layout(self.ty(v)).as_ref() == Some(&tl) {
            self.values.insert(v, regs);
            return Ok(());
        }
        self.native.insert(v, (tl, regs));
        if self.smem.term_uses.contains(&v) {
            let canon = self.layout(self.ty(v)).ok_or_else(|| self.unsupported(op, "no canonical layout for a result"))?;
            let regs = self.to_layout(op, v, &canon)?;
            self.values.insert(v, regs);
        }
        Ok(())
    }

    /// `v`'s registers in layout `dst`: as held, recomputed when cheap
    /// (remat.rs), else moved through scratch.
    pub(super) fn to_layout(&mut self, op: Op, v: Value, dst: &BlockedLayout) -> Result<Regs<'c>> {
        if let Some(regs) = self.held_or_remat(op, v, dst)? {
            return Ok(regs);
        }
        let (src, regs) = self.native_of(op, v)?;
        if &src == dst {
            return Ok(regs);
        }
        let kind = self.storage_kind(op, self.ty(v))?;
        let shape = dst.shape.clone();
        self.gather(op, &[(src, regs)], kind, &[dst.clone()], |lw, _, c| lw.linear(c, &shape))
            .map(|mut v| v.remove(0))
    }

    /// Flat thread id split into (lane, warp).
    fn lane_warp(&self) -> Result<(IntValue<'c>, IntValue<'c>)> {
        let b = &self.llvm.builder;
        let ws = self.target.warp_size();
        let lane = b.build_and(self.tid, self.i32_const(ws as u64 - 1), "")?;
        let warp = b.build_right_shift(self.tid, self.i32_const(ws.trailing_zeros() as u64), false, "")?;
        Ok((lane, warp))
    }

    /// Lane id along root dim `d` of `tl`.
    pub(super) fn lane_along(&self, tl: &BlockedLayout, d: usize) -> Result<IntValue<'c>> {
        let (lane, _) = self.lane_warp()?;
        let b = &self.llvm.builder;
        let x = b.build_right_shift(lane, self.i32_const(tl.lane_shift(d) as u64), false, "")?;
        Ok(b.build_and(x, self.i32_const(tl.root().threads_per_warp[d] as u64 - 1), "")?)
    }

    pub(super) fn warp_along(&self, tl: &BlockedLayout, d: usize) -> Result<IntValue<'c>> {
        let (_, warp) = self.lane_warp()?;
        let b = &self.llvm.builder;
        let x = b.build_right_shift(warp, self.i32_const(tl.warp_shift(d) as u64), false, "")?;
        Ok(b.build_and(x, self.i32_const(tl.root().warps_per_cta[d] as u64 - 1), "")?)
    }

    /// Logical coordinates of register `r` of this thread under `tl`.
    pub(super) fn coords(&self, tl: &BlockedLayout, r: u32) -> Result<Vec<IntValue<'c>>> {
        let root = tl.root();
        let rd = tl.decompose(r);
        let b = &self.llvm.builder;
        let mut out = Vec::with_capacity(tl.shape.len());
        for d in tl.layout.logical_dims() {
            let t = b.build_int_mul(self.warp_along(tl, d)?, self.i32_const(root.threads_per_warp[d] as u64), "")?;
            let t = b.build_int_add(t, self.lane_along(tl, d)?, "")?;
            let t = b.build_int_mul(t, self.i32_const(root.size_per_thread[d] as u64), "")?;
            let c = b.build_int_add(t, self.i32_const(tl.reg_offset(d, rd[d]) as u64), "")?;
            out.push(b.build_and(c, self.i32_const(tl.full[d] as u64 - 1), "")?);
        }
        Ok(out)
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

    /// Starts a scratch use of `bytes` by `op`; returns the scratch base.
    pub(super) fn scratch_begin(&mut self, op: Op, bytes: u32) -> Result<PointerValue<'c>> {
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(0, bytes));
        self.smem.open_bytes = bytes;
        let at = self.smem_position();
        self.smem.requests.push(BufferRequest { op, kind: BufferKind::Scratch, bytes, align: 16, start: at, end: at });
        // one dynamic shared array per module, shared by all its functions; this
        // function's part starts `smem_base` bytes in (0 in a kernel, an argument
        // of a device function), and its scratch sits at offset 0 of that part
        let g = self.llvm.module.get_global(SMEM_NAME).unwrap_or_else(|| {
            let i8t = self.llvm.context.i8_type();
            let g = self.llvm.module.add_global(i8t.array_type(0), Some(AddressSpace::from(self.target.shared_addrspace())), SMEM_NAME);
            g.set_linkage(Linkage::External);
            g.set_alignment(16);
            g
        });
        self.scratch_ptr(g.as_pointer_value(), self.smem_base)
    }

    /// The scratch requests lowering made so far, in order (for module allocation).
    pub(super) fn scratch_requests(&self) -> &[BufferRequest] {
        &self.smem.requests
    }

    /// The position of the next scratch use or call in this function's
    /// shared-memory timeline: one per use and per call, in lowering order
    /// (each is fenced by barriers, so its interval is a single point).
    pub(super) fn smem_position(&self) -> u32 {
        (self.smem.requests.len() + self.calls.sites.len()) as u32
    }

    /// Between a scratch use's writes and its reads.
    pub(super) fn scratch_sync(&mut self) -> Result<()> {
        self.smem_fixed_barrier()?;
        self.smem_access(Access::read(0, self.smem.open_bytes));
        Ok(())
    }

    /// After a scratch use's reads (they were traced at `scratch_sync`).
    pub(super) fn scratch_done(&mut self) {
        self.smem.open_bytes = 0;
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
    /// `index(dst_no, coords)` into that concatenation.
    pub(super) fn gather(
        &mut self,
        op: Op,
        srcs: &[(BlockedLayout, Regs<'c>)],
        (kind, st, eb): (Option<ScalarKind>, BasicTypeEnum<'c>, u32),
        dsts: &[BlockedLayout],
        index: impl Fn(&Self, usize, &[IntValue<'c>]) -> Result<IntValue<'c>>,
    ) -> Result<Vec<Regs<'c>>> {
        let total: u32 = srcs.iter().map(|(l, _)| l.numel).sum();
        let base = self.scratch_begin(op, total * eb)?;
        let mut prefix = 0;
        for (l, regs) in srcs {
            for (r, &v) in regs.iter().enumerate() {
                let c = self.coords(l, r as u32)?;
                let idx = self.linear(&c, &l.shape)?;
                self.scratch_store(base, prefix * eb, idx, eb, kind, v)?;
            }
            prefix += l.numel;
        }
        self.scratch_sync()?;
        let mut out = Vec::with_capacity(dsts.len());
        for (k, d) in dsts.iter().enumerate() {
            let mut regs = Vec::with_capacity(d.elems_per_thread() as usize);
            for r in 0..d.elems_per_thread() {
                let c = self.coords(d, r)?;
                let idx = index(self, k, &c)?;
                regs.push(self.scratch_load(base, 0, idx, eb, kind, st)?);
            }
            out.push(regs);
        }
        self.scratch_done();
        Ok(out)
    }
}
