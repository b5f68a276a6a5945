//! `dot` on sm_90a with `wgmma` (MMA v3): each warpgroup (4 warps) issues
//! `wgmma.mma_async` on 64-row tiles of A and B read straight from shared
//! memory through 64-bit matrix descriptors; the accumulator stays in
//! registers in the v3 layout (`layout/mma.rs`). Operands arrive as
//! shared-memory values in NVMMA layouts (layout assignment), so a
//! descriptor is the tile's start address plus the layout's strides:
//! - K-major (A; B of tf32/fp8/int8): rows of `swizzle` bytes, 8-row groups
//!   `8 * swizzle` apart (SBO), K blocks `rows * swizzle` apart;
//! - MN-major (B of 16-bit types, N contiguous): N blocks of `swizzle`
//!   bytes `K * swizzle` apart (LBO), 8-row K groups `8 * swizzle` apart.
//!
//! Sequence per dot: `wgmma.fence`, one `wgmma.mma_async` per (M tile, N
//! tile, K step), `commit_group`, `wait_group N`: N is 0, or the dot's
//! `pending` when the pipeliner made it asynchronous (then `dot_wait` ends
//! it). The wait takes the accumulator registers in and out, so nothing
//! reads them before it.
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};
use tritium_analysis::Access;
use tritium_ir::{Op, ScalarKind};
use tritium_transforms::layout::linear::{combine, flatten};
use tritium_transforms::layout::{Layout, Mma, SharedLayout};

use super::shared::SharedBuffer;
use super::Lowering;
use crate::error::{CodegenError, Result};

/// How one wgmma operand tile is laid out, as the descriptor needs it.
struct Operand<'c> {
    buf: SharedBuffer<'c>,
    shape: Vec<u32>,
    /// Leading and stride byte offsets of the descriptor.
    lbo: u32,
    sbo: u32,
    /// Descriptor swizzle mode bits (1: 128 B, 2: 64 B, 3: 32 B).
    mode: u64,
    /// The contiguous dim is M or N (not K): wgmma's "transpose" flag.
    mn_major: bool,
}

impl Operand<'_> {
    /// Byte offset of element `c` of the tile.
    fn bytes(&self, c: [u32; 2]) -> u32 {
        combine(&self.buf.bases, flatten(&self.shape, &c)) * self.buf.elem_bytes
    }
}

fn operand_strides(layout: &SharedLayout, shape: &[u32], k_dim: usize) -> Option<(u32, u32, u64, bool)> {
    let SharedLayout::Nvmma { swizzle_bytes: sw, transposed, .. } = *layout else { return None };
    let mode = match sw {
        128 => 1,
        64 => 2,
        32 => 3,
        _ => return None,
    };
    // the contiguous dim: the tile's last unless transposed
    let contiguous = if transposed { 0 } else { 1 };
    let mn_major = contiguous != k_dim;
    let rows = shape[1 - contiguous];
    let (lbo, sbo) = if mn_major { (rows * sw, 8 * sw) } else { (1, 8 * sw) };
    Some((lbo, sbo, mode, mn_major))
}

impl<'a, 'c> Lowering<'a, 'c> {
    fn wgmma_operand(&self, op: Op, v: tritium_ir::Value, k_dim: usize) -> Result<Operand<'c>> {
        let shape = self.module.types.dims(self.ty(v)).to_vec();
        let Some(Layout::Shared(layout)) = self.layouts.of(v).cloned() else {
            return Err(CodegenError::Internal("wgmma operand is not in shared memory".into()));
        };
        let (lbo, sbo, mode, mn_major) =
            operand_strides(&layout, &shape, k_dim).ok_or_else(|| self.unsupported(op, format!("wgmma operand in layout {layout:?}")))?;
        Ok(Operand { buf: self.shared_buffer(op, v)?, shape, lbo, sbo, mode, mn_major })
    }

    /// The 64-bit descriptor of `o`'s tile at `units` (a warpgroup's index)
    /// times element `unit`: the base every instruction of the dot offsets
    /// (see `offset_descriptor`).
    fn base_descriptor(&self, o: &Operand<'c>, unit: [u32; 2], units: IntValue<'c>) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        let cx = self.llvm.context;
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let dynamic = b.build_int_mul(units, i32t.const_int(o.bytes(unit) as u64, false), "")?;
        let addr = b.build_int_add(b.build_ptr_to_int(o.buf.ptr, i32t, "")?, dynamic, "")?;
        let start = b.build_and(b.build_right_shift(addr, i32t.const_int(4, false), false, "")?, i32t.const_int(0x3fff, false), "")?;
        let start = b.build_int_z_extend(start, i64t, "")?;
        let rest = ((o.lbo as u64 >> 4) & 0x3fff) << 16 | ((o.sbo as u64 >> 4) & 0x3fff) << 32 | o.mode << 62;
        Ok(b.build_or(start, i64t.const_int(rest, false), "")?)
    }

    /// `base` (from `base_descriptor`) moved to the tile starting at element
    /// `at`, 8-row aligned, where the swizzle leaves offsets additive. The
    /// start address field holds bits 4..18 of a shared address, all of
    /// them below 256 KiB, so adding to it never carries into the strides:
    /// one 64-bit add per instruction instead of recomputing the field.
    fn offset_descriptor(&self, o: &Operand<'c>, base: IntValue<'c>, at: [u32; 2]) -> Result<IntValue<'c>> {
        let off = (o.bytes(at) >> 4) as u64;
        if off == 0 {
            return Ok(base);
        }
        Ok(self.llvm.builder.build_int_add(base, self.llvm.context.i64_type().const_int(off, false), "")?)
    }

    pub(super) fn dot_wgmma(&mut self, op: Op, mma: &Mma, precision: &str) -> Result<()> {
        let data = self.op(op);
        let (a, b, acc_v, res) = (data.operands[0], data.operands[1], data.operands[2], data.results[0]);
        let (ka, kb, kacc) = match (self.kind(a), self.kind(b), self.kind(res)) {
            (Some(x), Some(y), Some(z)) => (x, y, z),
            _ => return Err(self.unsupported(op, "pointer dot operands")),
        };
        let name = |k: ScalarKind| -> Option<&'static str> {
            Some(match k {
                ScalarKind::F16 => "f16",
                ScalarKind::BF16 => "bf16",
                ScalarKind::F32 if precision != "ieee" => "tf32",
                ScalarKind::F8E4M3 => "e4m3",
                ScalarKind::F8E5M2 => "e5m2",
                ScalarKind::I8 => "s8",
                ScalarKind::U8 => "u8",
                _ => return None,
            })
        };
        let (na, nb) = match (name(ka), name(kb)) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err(self.unsupported(op, format!("wgmma with {ka:?} x {kb:?} operands"))),
        };
        let acc_name = match kacc {
            ScalarKind::F32 => "f32",
            ScalarKind::F16 => "f16",
            ScalarKind::I32 => "s32",
            other => return Err(self.unsupported(op, format!("wgmma accumulating {other:?}"))),
        };
        let (reg_ty, letter, acc_per_reg) = self.acc_registers(kacc);
        // A in shared memory (a descriptor) or in registers (four b32 per instruction)
        let oa = match self.layouts.of(a) {
            Some(Layout::DotOperand(_)) if ka.bits() == 16 => None,
            _ => Some(self.wgmma_operand(op, a, 1)?),
        };
        let ob = self.wgmma_operand(op, b, 0)?;
        if oa.as_ref().is_some_and(|o| o.mn_major) || (ob.mn_major && ka.bits() != 16) {
            return Err(CodegenError::Internal("wgmma operands must be K-major except 16-bit B".into()));
        }
        let a_shape = self.module.types.dims(self.ty(a)).to_vec();
        let (m, k) = (a_shape[0], a_shape[1]);
        let n = ob.shape[1];
        let (wm, wn) = (mma.warps_per_cta[0], mma.warps_per_cta[1]);
        let (groups_m, instr_n) = (wm / 4, mma.instr_shape[1]);
        let k_instr = 256 / ka.bits();
        let (rm, rn, rk) = ((m / (64 * groups_m)).max(1), (n / (instr_n * wn)).max(1), k / k_instr);
        let per_instr = (instr_n / 2) as usize; // accumulator values per thread per instruction
        let mut acc = self.regs(acc_v)?.clone();
        if acc.len() != (rm * rn) as usize * per_instr {
            return Err(CodegenError::Internal(format!("wgmma: {} accumulator registers for a {rm}x{rn} tiling", acc.len())));
        }
        let a_regs = match oa {
            None => Some(self.regs(a)?.clone()),
            Some(_) => None,
        };
        if a_regs.as_ref().is_some_and(|r| r.len() != (rm * rk * 8) as usize) {
            return Err(CodegenError::Internal(format!("wgmma: {} A registers for a {rm}x{rk} tiling", a_regs.as_ref().map_or(0, Vec::len))));
        }
        // operands were stored by generic-proxy stores: make them visible to wgmma
        self.smem_candidate_barrier()?;
        if let Some(oa) = &oa {
            self.smem_access(Access::read(oa.buf.range.0, oa.buf.range.1));
        }
        self.smem_access(Access::read(ob.buf.range.0, ob.buf.range.1));
        let group = self.uniform_warpgroup()?;
        let bld = &self.llvm.builder;
        let (gm, gn) = if groups_m > 1 {
            (bld.build_int_unsigned_rem(group, self.i32_const(groups_m as u64), "")?, bld.build_int_unsigned_div(group, self.i32_const(groups_m as u64), "")?)
        } else {
            (self.i32_const(0), group)
        };
        self.asm_void("wgmma.fence.sync.aligned;")?;
        let n_regs = per_instr / acc_per_reg;
        let regs_list = (0..n_regs).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        // A from registers has no transpose flag (it is K-major by construction)
        let flags = match (na, oa.is_some()) {
            ("s8" | "u8", _) => String::new(),
            ("f16" | "bf16", true) => format!(", 1, 1, 0, {}", ob.mn_major as u32),
            ("f16" | "bf16", false) => format!(", 1, 1, {}", ob.mn_major as u32),
            _ => ", 1, 1".to_string(),
        };
        let a_words = if oa.is_some() { 1 } else { 4 };
        let a_list = if oa.is_some() {
            format!("${}", 2 * n_regs)
        } else {
            format!("{{{}}}", (0..4).map(|i| format!("${}", 2 * n_regs + i)).collect::<Vec<_>>().join(", "))
        };
        let asm = format!(
            "wgmma.mma_async.sync.aligned.m64n{instr_n}k{k_instr}.{acc_name}.{na}.{nb} {{{regs_list}}}, {a_list}, ${db}, ${s}{flags};",
            db = 2 * n_regs + a_words,
            s = 2 * n_regs + a_words + 1,
        );
        let mut cons: Vec<String> = (0..n_regs).map(|_| format!("={letter}")).collect();
        cons.extend((0..n_regs).map(|i| i.to_string()));
        cons.extend((0..a_words).map(|_| if oa.is_some() { "l".to_string() } else { "r".to_string() }));
        // scale-d (accumulate) as a predicate operand: one `mov.pred` the
        // loop hoists, not a `setp` beside every instruction
        cons.extend(["l".to_string(), "b".to_string()]);
        let cons = cons.join(",");
        // a zero accumulator is not read: the first K step runs with scale-d
        // 0 (D = A·B) on undefined registers, so no zeros are kept live
        let zero_acc = self.is_zero_constant(acc_v);
        let undef: BasicValueEnum<'c> = match reg_ty {
            BasicTypeEnum::FloatType(t) => t.get_undef().into(),
            BasicTypeEnum::IntType(t) => t.get_undef().into(),
            other => return Err(CodegenError::Internal(format!("wgmma accumulator register {other}"))),
        };
        let ret = self.llvm.context.struct_type(&vec![reg_ty; n_regs], false);
        let base_a = match &oa {
            Some(oa) => Some(self.base_descriptor(oa, [64, 0], gm)?),
            None => None,
        };
        let base_b = self.base_descriptor(&ob, [0, instr_n], gn)?;
        for mi in 0..rm {
            for ni in 0..rn {
                let c0 = (mi * rn + ni) as usize * per_instr;
                for ki in 0..rk {
                    // this warpgroup's 64 rows of A and instr_n columns of B
                    let a_args: Vec<BasicValueEnum<'c>> = match (&oa, base_a, &a_regs) {
                        (Some(oa), Some(base), _) => vec![self.offset_descriptor(oa, base, [mi * groups_m * 64, ki * k_instr])?.into()],
                        // DotOperand registers: K pairs, rows +8, K +8, then K steps, then M tiles
                        (_, _, Some(regs)) => {
                            let r0 = ((mi * rk + ki) * 8) as usize;
                            regs[r0..r0 + 8].chunks(2).map(|c| self.pack_b32(c).map(Into::into)).collect::<Result<_>>()?
                        }
                        _ => return Err(CodegenError::Internal("wgmma A is neither shared nor registers".into())),
                    };
                    let db = self.offset_descriptor(&ob, base_b, [ki * k_instr, ni * wn * instr_n])?;
                    let first = zero_acc && ki == 0;
                    let mut args = if first {
                        vec![undef; n_regs]
                    } else {
                        self.acc_operands(&acc[c0..c0 + per_instr], acc_per_reg)?
                    };
                    args.extend(a_args);
                    args.extend([BasicValueEnum::from(db), self.llvm.context.bool_type().const_int(!first as u64, false).into()]);
                    let out = self
                        .llvm
                        .inline_asm(&asm, &cons, Some(ret.into()), &args, true)?
                        .ok_or_else(|| CodegenError::Llvm("wgmma asm returned nothing".into()))?
                        .into_struct_value();
                    for r in 0..n_regs {
                        let v = self.llvm.builder.build_extract_value(out, r as u32, "")?;
                        self.set_acc_reg(&mut acc, c0, r, acc_per_reg, v)?;
                    }
                }
            }
        }
        self.asm_void("wgmma.commit_group.sync.aligned;")?;
        // a dot the pipeliner made asynchronous leaves its group in flight
        // (the next iteration's dot chains on the same registers; `dot_wait`
        // after the loop ends it)
        let pending = self.op(op).attrs.get("pending").and_then(tritium_ir::Attr::as_int).unwrap_or(0).max(0) as u32;
        self.wgmma_wait(&mut acc, kacc, pending)?;
        self.set(op, acc);
        Ok(())
    }

    /// Whether `v` is a constant +0 (`tl.zeros`, an accumulator a dot starts from).
    fn is_zero_constant(&self, v: tritium_ir::Value) -> bool {
        let tritium_ir::ValueDef::OpResult(def, _) = self.func.values[v].def else { return false };
        let d = self.op(def);
        d.opcode == tritium_ir::Opcode::Const
            && match d.attrs.get("value") {
                Some(tritium_ir::Attr::Float(x)) => x.to_bits() == 0,
                Some(tritium_ir::Attr::Int(i)) => *i == 0,
                _ => false,
            }
    }

    /// This thread's warpgroup, lane 0's copy: ptxas then knows every lane
    /// holds the same value and keeps the descriptors built from it in
    /// uniform registers (not moved from vector registers per instruction).
    /// Made once, right after the thread id at the function's entry: the
    /// shuffle is convergent, so LLVM would not hoist it out of a loop.
    fn uniform_warpgroup(&mut self) -> Result<IntValue<'c>> {
        if let Some(g) = self.warpgroup {
            return Ok(g);
        }
        let b = &self.llvm.builder;
        let here = b.get_insert_block().ok_or_else(|| CodegenError::Internal("wgmma outside a block".into()))?;
        let after_tid = self.tid.as_instruction().and_then(|i| i.get_next_instruction());
        match after_tid {
            Some(next) => b.position_before(&next),
            None => return Err(CodegenError::Internal("the thread id is not an instruction".into())),
        }
        let group = b.build_right_shift(self.tid, self.i32_const(7), false, "")?;
        let group = self.target.shuffle_idx(self.llvm, group, self.i32_const(0))?;
        self.llvm.builder.position_at_end(here);
        self.warpgroup = Some(group);
        Ok(group)
    }

    /// `dot_wait`: each operand (an accumulator of an asynchronous dot) goes
    /// through `wgmma.wait_group`; on targets without wgmma it is the value.
    pub(super) fn lower_dot_wait(&mut self, op: Op) -> Result<()> {
        let data = self.op(op).clone();
        let pending = data.attrs.get("pending").and_then(tritium_ir::Attr::as_int).unwrap_or(0).max(0) as u32;
        for (&v, &r) in data.operands.iter().zip(&data.results) {
            let mut regs = self.regs(v)?.clone();
            let wgmma = matches!(self.layouts.of(v), Some(Layout::Mma(m)) if m.version == 3);
            if let (true, Some(kind)) = (wgmma, self.kind(v)) {
                self.wgmma_wait(&mut regs, kind, pending)?;
            }
            self.values.insert(r, regs);
        }
        Ok(())
    }

    /// `wgmma.wait_group pending`, passing every accumulator register
    /// through so nothing reads one before the wait.
    fn wgmma_wait(&mut self, acc: &mut [BasicValueEnum<'c>], kind: ScalarKind, pending: u32) -> Result<()> {
        let (reg_ty, letter, per_reg) = self.acc_registers(kind);
        let all = acc.len() / per_reg;
        let cons: Vec<String> = (0..all).map(|_| format!("={letter}")).chain((0..all).map(|i| i.to_string())).collect();
        let ret = self.llvm.context.struct_type(&vec![reg_ty; all], false);
        let args = self.acc_operands(acc, per_reg)?;
        let asm = format!("wgmma.wait_group.sync.aligned {pending};");
        let out = self
            .llvm
            .inline_asm(&asm, &cons.join(","), Some(ret.into()), &args, true)?
            .ok_or_else(|| CodegenError::Llvm("wgmma wait returned nothing".into()))?
            .into_struct_value();
        for r in 0..all {
            let v = self.llvm.builder.build_extract_value(out, r as u32, "")?;
            self.set_acc_reg(acc, 0, r, per_reg, v)?;
        }
        Ok(())
    }

    /// How accumulator elements of `kind` travel through wgmma's asm: the
    /// register type, its constraint letter, and elements per register
    /// (f16 pairs share a 32-bit register).
    fn acc_registers(&self, kind: ScalarKind) -> (BasicTypeEnum<'c>, &'static str, usize) {
        match kind {
            ScalarKind::F32 => (self.llvm.context.f32_type().into(), "f", 1),
            ScalarKind::F16 => (self.llvm.context.i32_type().into(), "r", 2),
            _ => (self.llvm.context.i32_type().into(), "r", 1),
        }
    }

    /// `acc`'s elements as asm operands, `per_reg` to a register.
    fn acc_operands(&self, acc: &[BasicValueEnum<'c>], per_reg: usize) -> Result<Vec<BasicValueEnum<'c>>> {
        acc.chunks(per_reg).map(|c| if per_reg == 2 { self.pack_b32(c).map(Into::into) } else { Ok(c[0]) }).collect()
    }

    /// Writes wgmma output register `r` (of the tile at `c0`) back into the accumulator.
    fn set_acc_reg(&self, acc: &mut [BasicValueEnum<'c>], c0: usize, r: usize, per_reg: usize, v: BasicValueEnum<'c>) -> Result<()> {
        if per_reg == 1 {
            acc[c0 + r] = v;
            return Ok(());
        }
        let b = &self.llvm.builder;
        let h = self.llvm.context.f16_type();
        let pair = b.build_bit_cast(v, h.vec_type(2), "")?.into_vector_value();
        acc[c0 + 2 * r] = b.build_extract_element(pair, self.i32_const(0), "")?;
        acc[c0 + 2 * r + 1] = b.build_extract_element(pair, self.i32_const(1), "")?;
        Ok(())
    }

    /// An inline-asm statement with no operands that must stay where it is.
    pub(super) fn asm_void(&self, asm: &str) -> Result<()> {
        self.llvm.inline_asm(asm, "", None, &[], true)?;
        Ok(())
    }
}
