//! Tensors held in shared memory (a `Shared` layout): `convert_layout` into
//! one stores a thread's registers where the shared layout puts their
//! elements, and consumers (tensor-core dots) load any register layout's
//! elements back. Both layouts are linear maps, so an element's offset is
//! S(register part) XOR S(thread part): the thread part is computed once per
//! op, each register adds a constant. Runs of registers that land on
//! consecutive offsets move as one vector.
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use tritium_analysis::{Access, BufferKind};
use tritium_ir::{Op, Value, ValueDef};
use tritium_transforms::layout::linear::combine;
use tritium_transforms::layout::{Layout, LinearLayout, SharedLayout};

use super::Lowering;
use crate::error::{CodegenError, Result};

/// A thread's part of a shared-memory offset: `value` only sets bits of `bits`.
#[derive(Clone, Copy)]
pub(crate) struct ThreadOffset<'c> {
    pub value: IntValue<'c>,
    pub bits: u32,
}

/// Where a shared-memory value lives.
pub(crate) struct SharedBuffer<'c> {
    pub ptr: PointerValue<'c>,
    /// Byte range in this function's shared memory (for membar).
    pub range: (u32, u32),
    /// Element offset of each row-major index bit.
    pub bases: Vec<u32>,
    pub elem_bytes: u32,
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// The buffer of shared-memory value `v` (its defining op's allocation).
    pub(super) fn shared_buffer(&self, op: Op, v: Value) -> Result<SharedBuffer<'c>> {
        if let Some(stage) = self.staged_buffer(op, v)? {
            return Ok(stage);
        }
        let Some(Layout::Shared(s)) = self.layouts.of(v) else {
            return Err(CodegenError::Internal(format!("`{}`: operand %{} is not in shared memory", self.op(op).opcode, v.0)));
        };
        let ValueDef::OpResult(def, _) = self.func.values[v].def else {
            return Err(CodegenError::Internal("a shared-memory value that is a block argument".into()));
        };
        let offset = self
            .shared
            .alloc
            .offset_of(def, BufferKind::Explicit)
            .ok_or_else(|| CodegenError::Internal(format!("no shared buffer allocated for %{}", v.0)))?;
        let shape = self.module.types.dims(self.ty(v)).to_vec();
        let elem_bytes = crate::smem_plan::smem_elem_bytes(self.kind(v));
        let bytes = shape.iter().product::<u32>() * elem_bytes;
        Ok(SharedBuffer { ptr: self.smem_at(offset)?, range: (offset, offset + bytes), bases: shared_bases(s, &shape), elem_bytes })
    }

    /// The element offset this thread's lane and warp ids contribute under
    /// register layout `lin` into a shared layout with `bases`, and the
    /// offset bits it can touch.
    pub(super) fn shared_thread_offset(&self, lin: &LinearLayout, bases: &[u32]) -> Result<ThreadOffset<'c>> {
        let (lane, warp) = self.lane_warp()?;
        let b = &self.llvm.builder;
        let mut off = self.i32_const(0);
        let mut bits = 0u32;
        for (x, hw) in [(lane, &lin.lane), (warp, &lin.warp)] {
            for (i, &basis) in hw.iter().enumerate() {
                let c = combine(bases, basis);
                if c == 0 {
                    continue;
                }
                bits |= c;
                let bit = b.build_and(b.build_right_shift(x, self.i32_const(i as u64), false, "")?, self.i32_const(1), "")?;
                off = b.build_xor(off, b.build_int_mul(bit, self.i32_const(c as u64), "")?, "")?;
            }
        }
        Ok(ThreadOffset { value: off, bits })
    }

    /// Registers `regs` of layout `lin` (indices in `lin`'s numbering) moved
    /// between registers and `buf`: vector runs where consecutive registers
    /// are consecutive elements in shared memory. `store` = Some(values) writes.
    fn shared_access(
        &self,
        buf: &SharedBuffer<'c>,
        lin: &LinearLayout,
        thread: ThreadOffset<'c>,
        regs: &[u32],
        elem: BasicTypeEnum<'c>,
        store: Option<&[BasicValueEnum<'c>]>,
    ) -> Result<Vec<BasicValueEnum<'c>>> {
        let b = &self.llvm.builder;
        let i8t = self.llvm.context.i8_type();
        let mut out = Vec::with_capacity(regs.len());
        // registers whose constant shares bits with the thread part need an
        // XOR; the rest of the constant adds (an immediate in the address), so
        // one base per distinct overlapping part serves every register
        let mut bases: std::collections::HashMap<u32, IntValue<'c>> = std::collections::HashMap::new();
        let mut i = 0;
        while i < regs.len() {
            let first = combine(&buf.bases, combine(&lin.reg, regs[i]));
            // the longest run of following registers at first+1, first+2, ... (16 bytes at most)
            let mut n = 1;
            while i + n < regs.len()
                && (n * buf.elem_bytes as usize) < 16
                && combine(&buf.bases, combine(&lin.reg, regs[i + n])) == first + n as u32
            {
                n += 1;
            }
            let n = 1usize << (usize::BITS - 1 - n.leading_zeros()); // a power of two
            let n = (0..=n.trailing_zeros()).rev().map(|p| 1usize << p).find(|&k| first % k as u32 == 0).unwrap_or(1);
            let over = first & thread.bits;
            let base = match bases.get(&over) {
                Some(&v) => v,
                None => {
                    let v = b.build_xor(thread.value, self.i32_const(over as u64), "")?;
                    bases.insert(over, v);
                    v
                }
            };
            let idx = b.build_or(base, self.i32_const((first & !thread.bits) as u64), "")?;
            let byte = b.build_int_mul(idx, self.i32_const(buf.elem_bytes as u64), "")?;
            // SAFETY: a byte GEP inside the dynamic shared array
            let p = unsafe { b.build_gep(i8t, buf.ptr, &[byte], "")? };
            let vty = match elem {
                BasicTypeEnum::FloatType(f) => f.vec_type(n as u32).into(),
                BasicTypeEnum::IntType(t) => t.vec_type(n as u32).into(),
                BasicTypeEnum::PointerType(p) => p.vec_type(n as u32).into(),
                other => return Err(CodegenError::Internal(format!("shared-memory element of type {other}"))),
            };
            let vty: BasicTypeEnum<'c> = if n == 1 { elem } else { vty };
            match store {
                Some(vals) => {
                    let v: BasicValueEnum<'c> = if n == 1 {
                        vals[i]
                    } else {
                        let mut v = vty.into_vector_type().get_undef();
                        for k in 0..n {
                            v = b.build_insert_element(v, vals[i + k], self.i32_const(k as u64), "")?;
                        }
                        v.into()
                    };
                    let st = b.build_store(p, v)?;
                    let _ = st.set_alignment(buf.elem_bytes * n as u32);
                }
                None => {
                    let v = b.build_load(vty, p, "")?;
                    if let Some(inst) = v.as_instruction_value() {
                        let _ = inst.set_alignment(buf.elem_bytes * n as u32);
                    }
                    if n == 1 {
                        out.push(v);
                    } else {
                        for k in 0..n {
                            out.push(b.build_extract_element(v.into_vector_value(), self.i32_const(k as u64), "")?);
                        }
                    }
                }
            }
            i += n;
        }
        Ok(out)
    }

    /// Stores `vals` (already in shared-memory storage form, of type `elem`)
    /// as registers `regs` of layout `lin` into `buf`.
    pub(super) fn shared_write(
        &self,
        buf: &SharedBuffer<'c>,
        lin: &LinearLayout,
        thread: ThreadOffset<'c>,
        regs: &[u32],
        elem: BasicTypeEnum<'c>,
        vals: &[BasicValueEnum<'c>],
    ) -> Result<()> {
        self.shared_access(buf, lin, thread, regs, elem, Some(vals)).map(|_| ())
    }

    /// Loads registers `regs` of layout `lin` from `buf`.
    pub(super) fn load_shared(&self, buf: &SharedBuffer<'c>, lin: &LinearLayout, thread: ThreadOffset<'c>, regs: &[u32], elem: BasicTypeEnum<'c>) -> Result<Vec<BasicValueEnum<'c>>> {
        self.shared_access(buf, lin, thread, regs, elem, None)
    }

    /// `convert_layout` into a shared layout: every thread writes the
    /// elements it owns (copies are skipped) where the layout puts them.
    pub(super) fn store_shared_operand(&mut self, op: Op) -> Result<()> {
        let (src, res) = (self.op(op).operands[0], self.op(op).results[0]);
        let from = self.tl_of(op, src)?;
        let buf = self.shared_buffer(op, res)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::write(buf.range.0, buf.range.1));
        let regs = self.regs(src)?.clone();
        let thread = self.shared_thread_offset(&from.lin, &buf.bases)?;
        let all: Vec<u32> = (0..from.elems_per_thread()).collect();
        // threads holding copies write the same bytes: harmless, and cheaper than a predicate
        self.store_to_shared(&buf, &from.lin, thread, &all, &regs)?;
        if super::async_copy::is_nvmma(self.layouts.of(res)) {
            // wgmma and TMA read through the async proxy: order these
            // generic-proxy stores before them (membar's barrier follows)
            self.asm_void("fence.proxy.async.shared::cta;")?;
        }
        // the result has no registers: its consumers read the buffer
        self.values.insert(res, Vec::new());
        Ok(())
    }

    /// `convert_layout` out of shared memory (a stage some non-dot op
    /// reads): every thread loads the elements its layout gives it.
    pub(super) fn load_shared_operand(&mut self, op: Op) -> Result<()> {
        let (src, res) = (self.op(op).operands[0], self.op(op).results[0]);
        let buf = self.shared_buffer(op, src)?;
        let to = self.tl_of(op, res)?;
        self.smem_candidate_barrier()?;
        self.smem_access(Access::read(buf.range.0, buf.range.1));
        let thread = self.shared_thread_offset(&to.lin, &buf.bases)?;
        let all: Vec<u32> = (0..to.elems_per_thread()).collect();
        let (kind, storage, _) = self.storage_kind(op, self.ty(res))?;
        let vals = self.load_shared(&buf, &to.lin, thread, &all, storage)?;
        let b = &self.llvm.builder;
        let vals = match kind {
            Some(tritium_ir::ScalarKind::I1) => {
                let i1 = self.llvm.context.bool_type();
                vals.into_iter().map(|v| b.build_int_truncate(v.into_int_value(), i1, "").map(Into::into)).collect::<std::result::Result<_, _>>()?
            }
            _ => vals,
        };
        self.set(op, vals);
        Ok(())
    }

    /// How a register is kept in shared memory (`i1` as a byte).
    pub(super) fn to_smem_storage(&self, v: BasicValueEnum<'c>) -> Result<BasicValueEnum<'c>> {
        if let BasicValueEnum::IntValue(i) = v {
            if i.get_type().get_bit_width() == 1 {
                return Ok(self.llvm.builder.build_int_z_extend(i, self.llvm.context.i8_type(), "")?.into());
            }
        }
        Ok(v)
    }
}

/// The element offset of each row-major index bit of a tile of `shape`.
pub(crate) fn shared_bases(l: &SharedLayout, shape: &[u32]) -> Vec<u32> {
    l.bases(shape)
}
