//! Conversions: `cast` (by value, with docs/ir.md's signedness and rounding
//! rules), `bitcast`, `ptr_to_int` and `int_to_ptr`, register by register;
//! fp8 conversions live in fp8.rs.
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use inkwell::{FloatPredicate, IntPredicate};
use tritium_ir::{Attr, Op, Opcode, ScalarKind};

use super::fp8::fp8_format;
use super::Lowering;
use crate::error::Result;

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_cast(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (src, dst) = (data.operands[0], data.results[0]);
        let to = self.elem_type(op, self.ty(dst))?;
        self.elem_type(op, self.ty(src))?; // rejects element types we cannot hold
        let regs = self.regs(src)?.clone();
        if data.opcode == Opcode::Cast {
            if let Some(out) = self.narrow_in_pairs(op, &regs)? {
                self.set(op, out);
                return Ok(());
            }
        }
        let b = &self.llvm.builder;
        let mut out = Vec::with_capacity(regs.len());
        for v in regs {
            out.push(match data.opcode {
                Opcode::Bitcast if to.is_pointer_type() => v,
                Opcode::Bitcast => b.build_bit_cast(v, to, "")?,
                Opcode::PtrToInt => b.build_ptr_to_int(v.into_pointer_value(), to.into_int_type(), "")?.into(),
                Opcode::IntToPtr => b.build_int_to_ptr(v.into_int_value(), to.into_pointer_type(), "")?.into(),
                _ => self.cast_value(op, v, self.kind(src), self.kind(dst), to)?,
            });
        }
        self.set(op, out);
        Ok(())
    }

    /// f32 → f16/bf16 (to nearest even) two registers per instruction where
    /// the target converts pairs: a thread's registers come in pairs of
    /// neighbouring elements (the MMA layouts' consecutive columns), which
    /// is how a dot operand packs them anyway. None: no pairs here.
    fn narrow_in_pairs(&self, op: Op, regs: &[BasicValueEnum<'c>]) -> Result<Option<Vec<BasicValueEnum<'c>>>> {
        let data = self.op(op);
        let (from, to) = (self.kind(data.operands[0]), self.kind(data.results[0]));
        let to_bf16 = match (from, to) {
            (Some(ScalarKind::F32), Some(ScalarKind::F16)) => false,
            (Some(ScalarKind::F32), Some(ScalarKind::BF16)) => true,
            _ => return Ok(None),
        };
        let rounding = data.attrs.get("rounding").and_then(Attr::as_str).unwrap_or("");
        if !matches!(rounding, "" | "rtne") || regs.len() % 2 != 0 {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(regs.len());
        for pair in regs.chunks(2) {
            match self.target.narrow_f32_pair(self.llvm, pair[0], pair[1], to_bf16)? {
                Some(two) => out.extend(two),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    fn cast_value(
        &self,
        op: Op,
        v: BasicValueEnum<'c>,
        from: Option<ScalarKind>,
        to: Option<ScalarKind>,
        to_ty: BasicTypeEnum<'c>,
    ) -> Result<BasicValueEnum<'c>> {
        let b = &self.llvm.builder;
        let (from, to) = match (from, to) {
            (Some(f), Some(t)) => (f, t),
            // pointer to pointer: opaque pointers need no instruction
            (None, None) => return Ok(v),
            _ => return Err(self.unsupported(op, "cast between a pointer and a number (use ptr_to_int/int_to_ptr)")),
        };
        let rounding = self.op(op).attrs.get("rounding").and_then(Attr::as_str).unwrap_or("");
        let rtz = match rounding {
            "" | "rtne" => false,
            "rtz" if from.is_float() && to.is_float() && to.bits() < from.bits() => true,
            r => return Err(self.unsupported(op, format!("rounding {r:?} from {} to {}", from.name(), to.name()))),
        };
        if from == to {
            return Ok(v);
        }
        let f32t = self.llvm.context.f32_type();
        // fp8 values are i8 bits (see fp8.rs): decoding to f32 is exact, and
        // every source reaches the encoder in f32 or f64 without rounding
        if let Some(f) = fp8_format(from) {
            let wide = self.fp8_decode(v.into_int_value(), f)?;
            return self.cast_value(op, wide.into(), Some(ScalarKind::F32), Some(to), to_ty);
        }
        if let Some(f) = fp8_format(to) {
            return Ok(match from {
                ScalarKind::F64 | ScalarKind::F32 => self.fp8_encode(v.into_float_value(), f, rtz, true)?,
                ScalarKind::F16 => self.fp8_encode_f16(v.into_float_value(), f, rtz)?,
                ScalarKind::BF16 => self.fp8_encode(self.bf16_to_f32(v)?.into_float_value(), f, rtz, true)?,
                // |n| > 2^24 rounds in f32 but saturates in fp8 either way
                _ => {
                    let wide = self.cast_value(op, v, Some(from), Some(ScalarKind::F32), f32t.into())?;
                    self.fp8_encode(wide.into_float_value(), f, false, true)?
                }
            }
            .into());
        }
        // bf16 values are i16 bits (see lower/mod.rs): go through f32
        if from == ScalarKind::BF16 {
            let wide = self.bf16_to_f32(v)?;
            return self.cast_value(op, wide, Some(ScalarKind::F32), Some(to), if to == ScalarKind::F32 { f32t.into() } else { to_ty });
        }
        if to == ScalarKind::BF16 {
            let exact_in_f32 = match from {
                ScalarKind::F32 | ScalarKind::F16 => true,
                k => k.is_int() && k.bits() <= 16,
            };
            if !exact_in_f32 && !rtz {
                // one rounding where the target converts directly (sm_90);
                // else through f32, rounding twice as Triton does on sm_80
                if let Some(bits) = self.target.round_to_bf16(self.llvm, v, from)? {
                    return Ok(bits);
                }
            }
            let wide = if from == ScalarKind::F32 { v } else { self.cast_value(op, v, Some(from), Some(ScalarKind::F32), f32t.into())? };
            return self.target.narrow_f32(self.llvm, wide, true, rtz);
        }
        Ok(match (from.is_float(), to.is_float()) {
            (false, false) => {
                let (x, t) = (v.into_int_value(), to_ty.into_int_type());
                if to == ScalarKind::I1 {
                    b.build_int_compare(IntPredicate::NE, x, x.get_type().const_zero(), "")?.into()
                } else if from.bits() == to.bits() {
                    v
                } else if from.bits() > to.bits() {
                    b.build_int_truncate(x, t, "")?.into()
                } else if from.is_signed() {
                    b.build_int_s_extend(x, t, "")?.into()
                } else {
                    b.build_int_z_extend(x, t, "")?.into()
                }
            }
            (false, true) => {
                let (x, t) = (v.into_int_value(), to_ty.into_float_type());
                if from.is_signed() {
                    b.build_signed_int_to_float(x, t, "")?.into()
                } else {
                    b.build_unsigned_int_to_float(x, t, "")?.into()
                }
            }
            (true, false) => {
                let x = v.into_float_value();
                if to == ScalarKind::I1 {
                    b.build_float_compare(FloatPredicate::UNE, x, x.get_type().const_zero(), "")?.into()
                } else {
                    // saturating, NaN → 0 (PTX cvt.rzi; plain fptosi is poison out of range)
                    let intr = if to.is_signed() { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
                    self.llvm.call_intrinsic(intr, &[to_ty, x.get_type().into()], &[x.into()])?
                }
            }
            (true, true) => {
                let (x, t) = (v.into_float_value(), to_ty.into_float_type());
                let narrowing = to.bits() < from.bits();
                if rtz {
                    if from != ScalarKind::F32 || to != ScalarKind::F16 {
                        return Err(self.unsupported(op, format!("rtz rounding from {} to {}", from.name(), to.name())));
                    }
                    return self.target.narrow_f32(self.llvm, v, false, true);
                }
                if narrowing {
                    b.build_float_trunc(x, t, "")?.into()
                } else {
                    b.build_float_ext(x, t, "")?.into()
                }
            }
        })
    }
}
