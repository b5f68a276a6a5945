//! `dot` on AMD matrix cores: MFMA 16x16x16 (CDNA: gfx90a, gfx942, gfx950;
//! wave64) and WMMA 16x16x16 (RDNA 3: gfx1100; wave32), f16 or bf16
//! operands into f32 accumulators. Operands are staged in shared memory as
//! for mma.sync, and each instruction's fragments are loaded from there in
//! the operand layouts of `layout/mma.rs` (lane l: row or column l % 16);
//! the accumulator stays in registers in the Mma layout.
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValueEnum, VectorValue};
use tritium_ir::{Op, ScalarKind};
use tritium_transforms::layout::{DotOperand, Mma, Operand, MFMA};

use super::shared::{SharedBuffer, ThreadOffset};
use super::Lowering;
use crate::error::{CodegenError, Result};
use tritium_analysis::Access;
use tritium_transforms::LinearLayout;

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn dot_amd(&mut self, op: Op, mma: &Mma) -> Result<()> {
        let data = self.op(op);
        let (a, b, acc_v, res) = (data.operands[0], data.operands[1], data.operands[2], data.results[0]);
        let (ka, kb, kacc) = (self.kind(a), self.kind(b), self.kind(res));
        let operand_kind = match (ka, kb, kacc) {
            (Some(x), Some(y), Some(ScalarKind::F32)) if x == y && matches!(x, ScalarKind::F16 | ScalarKind::BF16) => x,
            _ => return Err(self.unsupported(op, format!("AMD matrix cores with {ka:?} x {kb:?} -> {kacc:?}"))),
        };
        let mfma = mma.version == MFMA;
        let kw: u32 = if mfma { 4 } else { 16 };
        let acc_regs: u32 = if mfma { 4 } else { 8 };
        let shape = self.module.types.dims(self.ty(res)).to_vec();
        let (a_shape, b_shape) = (self.module.types.dims(self.ty(a)).to_vec(), self.module.types.dims(self.ty(b)).to_vec());
        let rank = shape.len();
        let (m, n, k) = (shape[rank - 2], shape[rank - 1], a_shape[rank - 1]);
        let da = DotOperand { parent: mma.clone(), operand: Operand::A, k_width: kw };
        let db = DotOperand { parent: mma.clone(), operand: Operand::B, k_width: kw };
        let (la, lb) = (da.linear(&a_shape), db.linear(&b_shape));
        let w = &mma.warps_per_cta;
        let reps = |dim: u32, cover: u32| (dim / cover).max(1);
        let (rm, rn, rk) = (reps(m, 16 * w[rank - 2]), reps(n, 16 * w[rank - 1]), reps(k, da.k_instr()));
        let rb = if rank == 3 { reps(shape[0], w[0]) } else { 1 };
        if la.num_regs() != rb * rm * rk * kw || lb.num_regs() != rb * rn * rk * kw {
            return Err(CodegenError::Internal(format!("dot: operand layouts ({}, {} registers) do not match the matrix-core tiling", la.num_regs(), lb.num_regs())));
        }
        let (abuf, bbuf) = (self.shared_buffer(op, a)?, self.shared_buffer(op, b)?);
        self.smem_candidate_barrier()?;
        self.smem_access(Access::read(abuf.range.0, abuf.range.1));
        self.smem_access(Access::read(bbuf.range.0, bbuf.range.1));
        let (at, bt) = (self.shared_thread_offset(&la, &abuf.bases)?, self.shared_thread_offset(&lb, &bbuf.bases)?);
        let (ea, eb) = (self.elem_type(op, self.ty(a))?, self.elem_type(op, self.ty(b))?);
        let cx = self.llvm.context;
        let f32t = cx.f32_type();
        let acc_ty = f32t.vec_type(acc_regs);
        // bf16 travels as i16 bits, which is what the bf16 instructions take
        let (name, frag_ty): (&str, VectorType<'c>) = match (mfma, operand_kind) {
            (true, ScalarKind::F16) => ("llvm.amdgcn.mfma.f32.16x16x16f16", cx.f16_type().vec_type(4)),
            (true, _) => ("llvm.amdgcn.mfma.f32.16x16x16bf16.1k", cx.i16_type().vec_type(4)),
            (false, ScalarKind::F16) => ("llvm.amdgcn.wmma.f32.16x16x16.f16", cx.f16_type().vec_type(16)),
            (false, _) => ("llvm.amdgcn.wmma.f32.16x16x16.bf16", cx.i16_type().vec_type(16)),
        };
        // MFMA intrinsics have fixed types; WMMA's are overloaded on (C/D, A/B)
        let overloads: Vec<BasicTypeEnum<'c>> = if mfma { vec![] } else { vec![acc_ty.into(), frag_ty.into()] };
        let f = self.llvm.intrinsic(name, &overloads)?;
        let fragment = |lw: &Self, buf: &SharedBuffer<'c>, lin: &LinearLayout, thread: ThreadOffset<'c>, elem, first: u32| -> Result<VectorValue<'c>> {
            let regs: Vec<u32> = (first..first + kw).collect();
            let vals = lw.load_shared(buf, lin, thread, &regs, elem)?;
            lw.vector_of(frag_ty, &vals)
        };
        let mut acc = self.regs(acc_v)?.clone();
        let i32t = cx.i32_type();
        for bi in 0..rb {
            for ki in 0..rk {
                let mut b_frags = Vec::with_capacity(rn as usize);
                for ni in 0..rn {
                    b_frags.push(fragment(self, &bbuf, &lb, bt, eb, ((bi * rn + ni) * rk + ki) * kw)?);
                }
                for mi in 0..rm {
                    let a_frag = fragment(self, &abuf, &la, at, ea, ((bi * rm + mi) * rk + ki) * kw)?;
                    for (ni, b_frag) in b_frags.iter().enumerate() {
                        let c0 = (((bi * rm + mi) * rn + ni as u32) * acc_regs) as usize;
                        let c = self.vector_of(acc_ty, &acc[c0..c0 + acc_regs as usize])?;
                        let mut args: Vec<inkwell::values::BasicMetadataValueEnum<'c>> = vec![a_frag.into(), (*b_frag).into(), c.into()];
                        if mfma {
                            // cbsz, abid, blgp: no broadcast between blocks of lanes
                            args.extend((0..3).map(|_| inkwell::values::BasicMetadataValueEnum::from(i32t.const_zero())));
                        }
                        let d = self
                            .llvm
                            .builder
                            .build_call(f, &args, "")?
                            .try_as_basic_value()
                            .basic()
                            .ok_or_else(|| CodegenError::Internal(format!("{name} returned nothing")))?
                            .into_vector_value();
                        for j in 0..acc_regs {
                            acc[c0 + j as usize] = self.llvm.builder.build_extract_element(d, i32t.const_int(j as u64, false), "")?;
                        }
                    }
                }
            }
        }
        self.set(op, acc);
        Ok(())
    }

    /// `vals` as one vector of type `ty`.
    fn vector_of(&self, ty: VectorType<'c>, vals: &[BasicValueEnum<'c>]) -> Result<VectorValue<'c>> {
        let i32t = self.llvm.context.i32_type();
        let mut v = ty.get_undef();
        for (i, &x) in vals.iter().enumerate() {
            v = self.llvm.builder.build_insert_element(v, x, i32t.const_int(i as u64, false), "")?;
        }
        Ok(v)
    }
}
