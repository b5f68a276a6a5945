//! `dot` on tensor cores with `mma.sync` (MMA v2: m16n8k8 tf32, m16n8k16
//! f16/bf16, m16n8k32 int8/fp8), and without them (fp32 `ieee`, fp64) as
//! per-thread FMAs over operands staged in scratch shared memory.
//!
//! Layout assignment puts A and B in dot-operand layouts and the accumulator
//! in the MMA layout, so every instruction's fragments are registers the
//! thread already holds: the operand layouts' register bits are, in order,
//! the elements sharing one 32-bit register, the fragment's other registers,
//! then K repetitions, then M (A) or N (B) repetitions (`layout/mma.rs`);
//! the accumulator's are the four fragment registers, then N, then M
//! repetitions. `tf32x3` splits each fp32 operand into a tf32 head and a
//! tf32 tail and accumulates tail·head + head·tail + head·head.
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};
use tritium_ir::{Attr, Op, ScalarKind};
use tritium_transforms::layout::{DotOperand, Layout, Mma};

use super::ldmatrix::LdmatrixPlan;
use super::shared::{SharedBuffer, ThreadOffset};
use super::Lowering;
use crate::error::{CodegenError, Result};
use tritium_analysis::Access;
use tritium_transforms::layout::Operand;

/// The PTX type names and shape of one `mma.sync` variant.
struct MmaKind {
    shape: &'static str,
    a: &'static str,
    b: &'static str,
    acc: &'static str,
    /// Accumulator values per 32-bit register (2 for f16 pairs).
    acc_per_reg: u32,
    satfinite: bool,
}

/// The `mma.sync` instruction for `kind`: outputs, A (4 regs), B (2), C tied to the outputs.
fn mma_asm(kind: &MmaKind) -> String {
    if kind.acc_per_reg == 2 {
        return format!("mma.sync.aligned.{}.row.col.f16.f16.f16.f16 {{$0, $1}}, {{$2, $3, $4, $5}}, {{$6, $7}}, {{$8, $9}};", kind.shape);
    }
    format!(
        "mma.sync.aligned.{}.row.col{}.{}.{}.{}.{} {{$0, $1, $2, $3}}, {{$4, $5, $6, $7}}, {{$8, $9}}, {{$10, $11, $12, $13}};",
        kind.shape,
        if kind.satfinite { ".satfinite" } else { "" },
        kind.acc,
        kind.a,
        kind.b,
        kind.acc
    )
}

fn ptx_operand(kind: ScalarKind, precision: &str) -> Option<&'static str> {
    Some(match kind {
        ScalarKind::F16 => "f16",
        ScalarKind::BF16 => "bf16",
        ScalarKind::F32 if precision != "ieee" => "tf32",
        ScalarKind::I8 => "s8",
        ScalarKind::U8 => "u8",
        ScalarKind::F8E4M3 => "e4m3",
        ScalarKind::F8E5M2 => "e5m2",
        _ => return None,
    })
}

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_dot(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (a, b, res) = (data.operands[0], data.operands[1], data.results[0]);
        let precision = data.attrs.get("input_precision").and_then(Attr::as_str).unwrap_or("tf32").to_string();
        match (self.layouts.of(res).cloned(), self.layouts.of(a).is_some_and(Layout::is_shared), self.layouts.of(b).is_some_and(Layout::is_shared)) {
            (Some(Layout::Mma(m)), true, true) if m.version == 2 => self.dot_mma_v2(op, &m, &precision),
            (Some(Layout::Mma(m)), true, true) if m.version == 3 => self.dot_wgmma(op, &m, &precision),
            // A from registers (`register_operand_a` in layout assignment)
            (Some(Layout::Mma(m)), false, true) if m.version == 3 && matches!(self.layouts.of(a), Some(Layout::DotOperand(_))) => {
                self.dot_wgmma(op, &m, &precision)
            }
            (Some(Layout::Mma(m)), true, true) if m.version >= tritium_transforms::layout::MFMA => self.dot_amd(op, &m),
            _ => self.dot_fma(op),
        }
    }

    fn mma_kind(&self, op: Op, a: ScalarKind, b: ScalarKind, acc: ScalarKind, precision: &str) -> Result<MmaKind> {
        let (pa, pb) = match (ptx_operand(a, precision), ptx_operand(b, precision)) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err(self.unsupported(op, format!("mma.sync with {a:?} x {b:?} operands"))),
        };
        let shape = match a.bits() {
            32 => "m16n8k8",
            16 => "m16n8k16",
            _ => "m16n8k32",
        };
        let (acc_name, acc_per_reg) = match acc {
            ScalarKind::F32 => ("f32", 1),
            ScalarKind::F16 if a == ScalarKind::F16 => ("f16", 2),
            ScalarKind::I32 => ("s32", 1),
            other => return Err(self.unsupported(op, format!("mma.sync accumulating {other:?} from {a:?}"))),
        };
        Ok(MmaKind { shape, a: pa, b: pb, acc: acc_name, acc_per_reg, satfinite: acc == ScalarKind::I32 })
    }

    /// Packs `elems` (consecutive K elements of one fragment register) into an i32.
    pub(super) fn pack_b32(&self, elems: &[BasicValueEnum<'c>]) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        let i32t = self.llvm.context.i32_type();
        if elems.len() == 1 {
            return Ok(b.build_bit_cast(elems[0], i32t, "")?.into_int_value());
        }
        let vty = match elems[0].get_type() {
            BasicTypeEnum::FloatType(f) => f.vec_type(elems.len() as u32),
            BasicTypeEnum::IntType(t) => t.vec_type(elems.len() as u32),
            other => return Err(CodegenError::Internal(format!("mma operand of type {other}"))),
        };
        let mut v = vty.get_undef();
        for (i, &e) in elems.iter().enumerate() {
            v = b.build_insert_element(v, e, self.i32_const(i as u64), "")?;
        }
        Ok(b.build_bit_cast(v, i32t, "")?.into_int_value())
    }

    /// Splits packed f16 pairs back into two halves.
    fn unpack_f16x2(&self, reg: IntValue<'c>) -> Result<[BasicValueEnum<'c>; 2]> {
        let b = &self.llvm.builder;
        let h = self.llvm.context.f16_type();
        let v = b.build_bit_cast(reg, h.vec_type(2), "")?.into_vector_value();
        Ok([b.build_extract_element(v, self.i32_const(0), "")?, b.build_extract_element(v, self.i32_const(1), "")?])
    }

    /// mma.sync over operands staged in shared memory: per K step, the B
    /// fragments of every N tile, then per M tile its A fragment and the
    /// MMAs (one accumulator tile each), so only one K step of the operands
    /// is ever in registers. Fragments load with `ldmatrix` where
    /// `LdmatrixPlan` accepts the layouts, else element by element.
    fn dot_mma_v2(&mut self, op: Op, mma: &Mma, precision: &str) -> Result<()> {
        let data = self.op(op);
        let (a, b, acc_v, res) = (data.operands[0], data.operands[1], data.operands[2], data.results[0]);
        let ka = self.kind(a).ok_or_else(|| self.unsupported(op, "pointer dot operands"))?;
        let kb = self.kind(b).ok_or_else(|| self.unsupported(op, "pointer dot operands"))?;
        let kacc = self.kind(res).ok_or_else(|| self.unsupported(op, "pointer accumulator"))?;
        let kind = self.mma_kind(op, ka, kb, kacc, precision)?;
        let shape = self.module.types.dims(self.ty(res)).to_vec();
        let (a_shape, b_shape) = (self.module.types.dims(self.ty(a)).to_vec(), self.module.types.dims(self.ty(b)).to_vec());
        let rank = shape.len();
        let (m, n, k) = (shape[rank - 2], shape[rank - 1], a_shape[rank - 1]);
        let k_width = 32 / ka.bits();
        let operand = |which| DotOperand { parent: mma.clone(), operand: which, k_width };
        let (da, db) = (operand(Operand::A), operand(Operand::B));
        let (la, lb) = (da.linear(&a_shape), db.linear(&b_shape));
        let w = &mma.warps_per_cta;
        let reps = |dim: u32, cover: u32| (dim / cover).max(1);
        let (rm, rn, rk) = (reps(m, 16 * w[rank - 2]), reps(n, 8 * w[rank - 1]), reps(k, da.k_instr()));
        let rb = if rank == 3 { reps(shape[0], w[0]) } else { 1 };
        let kw = k_width;
        if la.num_regs() != rb * rm * rk * 4 * kw || lb.num_regs() != rb * rn * rk * 2 * kw {
            return Err(CodegenError::Internal(format!("dot: operand layouts ({}, {} registers) do not match the MMA tiling", la.num_regs(), lb.num_regs())));
        }
        let (abuf, bbuf) = (self.shared_buffer(op, a)?, self.shared_buffer(op, b)?);
        self.smem_candidate_barrier()?;
        self.smem_access(Access::read(abuf.range.0, abuf.range.1));
        self.smem_access(Access::read(bbuf.range.0, bbuf.range.1));
        // ldmatrix where the staged layout keeps each fragment's 16-byte rows
        // whole (A: the four words of a fragment; B: two N tiles' two words
        // each, or one tile's where N has one); ld.shared otherwise
        let b_sel = if rn >= 2 { vec![kw, 2 * kw * rk] } else { vec![kw] };
        let ldm = self.ldmatrix;
        let mut a_ldm = LdmatrixPlan::new(&la, &abuf.bases, abuf.elem_bytes, &[kw, 2 * kw]).filter(|_| ldm).map(|p| self.ldmatrix_reader(&abuf, p)).transpose()?;
        let mut b_ldm = LdmatrixPlan::new(&lb, &bbuf.bases, bbuf.elem_bytes, &b_sel).filter(|_| ldm).map(|p| self.ldmatrix_reader(&bbuf, p)).transpose()?;
        let at = if a_ldm.is_none() { Some(self.shared_thread_offset(&la, &abuf.bases)?) } else { None };
        let bt = if b_ldm.is_none() { Some(self.shared_thread_offset(&lb, &bbuf.bases)?) } else { None };
        let (ea, eb) = (self.elem_type(op, self.ty(a))?, self.elem_type(op, self.ty(b))?);
        let mut acc = self.regs(acc_v)?.clone();
        let split = precision == "tf32x3";
        let asm = mma_asm(&kind);
        let acc_letter = if kind.acc == "f32" { "f" } else { "r" };
        let n_out = 4 / kind.acc_per_reg as usize;
        let mut cons: Vec<String> = (0..n_out).map(|_| format!("={acc_letter}")).collect();
        cons.extend((0..6).map(|_| "r".to_string()));
        cons.extend((0..n_out).map(|i| i.to_string()));
        let cons = cons.join(",");
        let acc_ty: BasicTypeEnum<'c> = if acc_letter == "f" { self.llvm.context.f32_type().into() } else { self.llvm.context.i32_type().into() };
        let ret = self.llvm.context.struct_type(&vec![acc_ty; n_out], false);
        // tf32x3's three products, smallest first: tail·head, head·tail, head·head
        let products: Vec<(usize, usize)> = if split { vec![(1, 0), (0, 1), (0, 0)] } else { vec![(0, 0)] };
        let fragment = |lw: &Self, buf: &SharedBuffer<'c>, lin, thread: Option<ThreadOffset<'c>>, elem, first: u32, words: u32| -> Result<Vec<Vec<IntValue<'c>>>> {
            let thread = thread.ok_or_else(|| CodegenError::Internal("dot: an operand read with neither ldmatrix nor ld.shared".into()))?;
            let regs: Vec<u32> = (first..first + words * kw).collect();
            let vals = lw.load_shared(buf, lin, thread, &regs, elem)?;
            if split {
                return lw.split_tf32(&vals);
            }
            Ok(vec![vals.chunks(kw as usize).map(|c| lw.pack_b32(c)).collect::<Result<_>>()?])
        };
        // ldmatrix's words are the packed registers; tf32x3 splits their fp32 values
        let from_words = |lw: &Self, words: &[IntValue<'c>]| -> Result<Vec<Vec<IntValue<'c>>>> {
            if !split {
                return Ok(vec![words.to_vec()]);
            }
            let f32t = lw.llvm.context.f32_type();
            let vals: Vec<BasicValueEnum<'c>> = words.iter().map(|&w| lw.llvm.builder.build_bit_cast(w, f32t, "")).collect::<std::result::Result<_, _>>()?;
            lw.split_tf32(&vals)
        };
        for bi in 0..rb {
            for ki in 0..rk {
                let mut b_frags = Vec::with_capacity(rn as usize);
                for ni in 0..rn {
                    let b0 = ((bi * rn + ni) * rk + ki) * 2 * kw;
                    match &mut b_ldm {
                        // one instruction loads the tiles ni .. ni + matrices / 2
                        Some(r) if ni % (r.matrices() / 2) == 0 => {
                            for tile in self.ldmatrix(r, &bbuf, &lb, b0)?.chunks(2) {
                                b_frags.push(from_words(self, tile)?);
                            }
                        }
                        Some(_) => {}
                        None => b_frags.push(fragment(self, &bbuf, &lb, bt, eb, b0, 2)?),
                    }
                }
                for mi in 0..rm {
                    let a0 = ((bi * rm + mi) * rk + ki) * 4 * kw;
                    let a_frag = match &mut a_ldm {
                        Some(r) => from_words(self, &self.ldmatrix(r, &abuf, &la, a0)?)?,
                        None => fragment(self, &abuf, &la, at, ea, a0, 4)?,
                    };
                    for (ni, b_frag) in b_frags.iter().enumerate() {
                        let c0 = (((bi * rm + mi) * rn + ni as u32) * 4) as usize;
                        for &(pa, pb) in &products {
                            let mut args: Vec<BasicValueEnum<'c>> = Vec::with_capacity(6 + n_out);
                            args.extend(a_frag[pa].iter().map(|&r| BasicValueEnum::from(r)));
                            args.extend(b_frag[pb].iter().map(|&r| BasicValueEnum::from(r)));
                            if kind.acc_per_reg == 2 {
                                args.push(self.pack_b32(&acc[c0..c0 + 2])?.into());
                                args.push(self.pack_b32(&acc[c0 + 2..c0 + 4])?.into());
                            } else {
                                args.extend_from_slice(&acc[c0..c0 + 4]);
                            }
                            let out = self
                                .llvm
                                .inline_asm(&asm, &cons, Some(ret.into()), &args, false)?
                                .ok_or_else(|| CodegenError::Llvm("mma asm returned nothing".into()))?
                                .into_struct_value();
                            let bld = &self.llvm.builder;
                            if kind.acc_per_reg == 2 {
                                for j in 0..2 {
                                    let reg = bld.build_extract_value(out, j as u32, "")?.into_int_value();
                                    let [x, y] = self.unpack_f16x2(reg)?;
                                    acc[c0 + 2 * j] = x;
                                    acc[c0 + 2 * j + 1] = y;
                                }
                            } else {
                                for j in 0..4 {
                                    acc[c0 + j] = bld.build_extract_value(out, j as u32, "")?;
                                }
                            }
                        }
                    }
                }
            }
        }
        self.set(op, acc);
        Ok(())
    }

    /// fp32 registers as tf32 (head, tail): head rounds x to tf32 (to
    /// nearest, ties away), tail rounds the remainder x - head.
    fn split_tf32(&self, regs: &[BasicValueEnum<'c>]) -> Result<Vec<Vec<IntValue<'c>>>> {
        let i32t = self.llvm.context.i32_type();
        let f32t = self.llvm.context.f32_type();
        let b = &self.llvm.builder;
        let mut heads = Vec::with_capacity(regs.len());
        let mut tails = Vec::with_capacity(regs.len());
        for &x in regs {
            let head = self.cvt_tf32(x)?;
            let hf = b.build_bit_cast(head, f32t, "")?.into_float_value();
            let rest = b.build_float_sub(x.into_float_value(), hf, "")?;
            tails.push(self.cvt_tf32(rest.into())?);
            heads.push(head);
        }
        let _ = i32t;
        Ok(vec![heads, tails])
    }

    fn cvt_tf32(&self, x: BasicValueEnum<'c>) -> Result<IntValue<'c>> {
        let i32t = self.llvm.context.i32_type();
        let bits = self.llvm.builder.build_bit_cast(x, i32t, "")?;
        self.llvm
            .inline_asm("cvt.rna.tf32.f32 $0, $1;", "=r,r", Some(i32t.into()), &[bits], false)?
            .map(|v| v.into_int_value())
            .ok_or_else(|| CodegenError::Llvm("cvt.rna.tf32 returned nothing".into()))
    }
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// A dot without tensor cores: A and B written row-major to scratch,
    /// then every accumulator register sums its row of A times its column of
    /// B in the accumulator's type, in increasing K.
    fn dot_fma(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (a, b, acc_v, res) = (data.operands[0], data.operands[1], data.operands[2], data.results[0]);
        let (ta, tb, tr) = (self.tl_of(op, a)?, self.tl_of(op, b)?, self.tl_of(op, res)?);
        let kres = self.kind(res).ok_or_else(|| self.unsupported(op, "pointer accumulator"))?;
        let (sa, sb) = (self.storage_kind(op, self.ty(a))?, self.storage_kind(op, self.ty(b))?);
        let a_shape = ta.shape().to_vec();
        let rank = a_shape.len();
        let (m, k) = (a_shape[rank - 2], a_shape[rank - 1]);
        let n = tr.shape()[rank - 1];
        let a_bytes = (ta.numel() * sa.2).next_multiple_of(16);
        let base = self.scratch_begin(op, a_bytes + tb.numel() * sb.2)?;
        for (t, v, start, st) in [(&ta, a, 0, sa), (&tb, b, a_bytes, sb)] {
            let thread = self.thread_coords(t)?;
            for (r, &x) in self.regs(v)?.clone().iter().enumerate() {
                let c = self.coords_at(t, &thread, r as u32)?;
                let idx = self.linear(&c, t.shape())?;
                self.scratch_store(base, start, idx, st.2, st.0, x)?;
            }
        }
        self.scratch_sync()?;
        // per accumulator register: the flat index of its row's first A
        // element and of its column's first B element
        let thread = self.thread_coords(&tr)?;
        let mut starts = Vec::with_capacity(tr.elems_per_thread() as usize);
        for r in 0..tr.elems_per_thread() {
            let c = self.coords_at(&tr, &thread, r)?;
            let bld = &self.llvm.builder;
            let (row, col) = (c[rank - 2], c[rank - 1]);
            let (a_first, b_first) = if rank == 3 {
                (bld.build_int_mul(c[0], self.i32_const((m * k) as u64), "")?, bld.build_int_mul(c[0], self.i32_const((k * n) as u64), "")?)
            } else {
                (self.i32_const(0), self.i32_const(0))
            };
            let a_row = bld.build_int_add(a_first, bld.build_int_mul(row, self.i32_const(k as u64), "")?, "")?;
            starts.push((a_row, bld.build_int_add(b_first, col, "")?));
        }
        // K in increasing order, as a loop: unrolled it would be
        // elements x K multiply-adds, which LLVM and ptxas take minutes over
        let f = self.current_fn()?;
        let cx = self.llvm.context;
        let (body, exit) = (cx.append_basic_block(f, "dot.k"), cx.append_basic_block(f, "dot.done"));
        let pre = self.current_block()?;
        let init = self.regs(acc_v)?.clone();
        self.llvm.builder.build_unconditional_branch(body)?;
        self.llvm.builder.position_at_end(body);
        let kk = self.llvm.builder.build_phi(cx.i32_type(), "k")?;
        kk.add_incoming(&[(&self.i32_const(0), pre)]);
        let phis: Vec<_> = init
            .iter()
            .map(|v| {
                let p = self.llvm.builder.build_phi(v.get_type(), "acc")?;
                p.add_incoming(&[(v, pre)]);
                Ok(p)
            })
            .collect::<Result<_>>()?;
        let kv = kk.as_basic_value().into_int_value();
        let b_step = self.llvm.builder.build_int_mul(kv, self.i32_const(n as u64), "")?;
        let mut out = Vec::with_capacity(phis.len());
        for (p, &(a_row, b_col)) in phis.iter().zip(&starts) {
            let bld = &self.llvm.builder;
            let ia = bld.build_int_add(a_row, kv, "")?;
            let ib = bld.build_int_add(b_col, b_step, "")?;
            let x = self.scratch_load(base, 0, ia, sa.2, sa.0, sa.1)?;
            let y = self.scratch_load(base, a_bytes, ib, sb.2, sb.0, sb.1)?;
            let (x, y) = (self.widen_to(op, x, self.kind(a), kres)?, self.widen_to(op, y, self.kind(b), kres)?);
            let bld = &self.llvm.builder;
            let sum = p.as_basic_value();
            out.push(if kres.is_float() {
                let prod = bld.build_float_mul(x.into_float_value(), y.into_float_value(), "")?;
                BasicValueEnum::from(bld.build_float_add(sum.into_float_value(), prod, "")?)
            } else {
                let prod = bld.build_int_mul(x.into_int_value(), y.into_int_value(), "")?;
                bld.build_int_add(sum.into_int_value(), prod, "")?.into()
            });
        }
        let bld = &self.llvm.builder;
        let next = bld.build_int_add(kv, self.i32_const(1), "")?;
        let latch = self.current_block()?;
        for (p, v) in phis.iter().zip(&out) {
            p.add_incoming(&[(v, latch)]);
        }
        kk.add_incoming(&[(&next, latch)]);
        let more = bld.build_int_compare(inkwell::IntPredicate::ULT, next, self.i32_const(k as u64), "")?;
        bld.build_conditional_branch(more, body, exit)?;
        bld.position_at_end(exit);
        self.scratch_done();
        self.set(op, out);
        Ok(())
    }

    /// An operand element as the accumulator's type (exact for the widenings a dot needs).
    fn widen_to(&self, op: Op, x: BasicValueEnum<'c>, from: Option<ScalarKind>, to: ScalarKind) -> Result<BasicValueEnum<'c>> {
        let b = &self.llvm.builder;
        let from = from.ok_or_else(|| self.unsupported(op, "pointer dot operands"))?;
        if from == to {
            return Ok(x);
        }
        let acc_ty = super::llvm_scalar_type(self.llvm, self.module, self.module.types.lookup(&tritium_ir::TypeData::Scalar(to)).ok_or_else(|| CodegenError::Internal("accumulator type not interned".into()))?)
            .map_err(|r| self.unsupported(op, r))?;
        Ok(match (from, to.is_float()) {
            (ScalarKind::BF16, true) => {
                let f = self.bf16_to_f32(x)?;
                if to == ScalarKind::F32 { f } else { b.build_float_ext(f.into_float_value(), acc_ty.into_float_type(), "")?.into() }
            }
            (k, true) if k.is_float() => b.build_float_ext(x.into_float_value(), acc_ty.into_float_type(), "")?.into(),
            (k, false) if k.is_signed() => b.build_int_s_extend(x.into_int_value(), acc_ty.into_int_type(), "")?.into(),
            (_, false) => b.build_int_z_extend(x.into_int_value(), acc_ty.into_int_type(), "")?.into(),
            (k, true) => return Err(self.unsupported(op, format!("a dot of {k:?} operands without tensor cores"))),
        })
    }
}
