//! Constants, ids and index tensors: `const`, `splat`,
//! `program_id`, `num_programs`, `addptr`, and the hint ops (identity here;
//! their facts feed tritium-analysis' AxisInfo).
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use tritium_ir::{Attr, Op, Opcode};

use super::{Lowering, Regs};
use crate::error::Result;
use crate::target::Axis;

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_tensor_op(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let res_ty = self.ty(data.results[0]);
        let n = self.reg_count(data.results[0]);
        let regs: Regs<'c> = match data.opcode {
            Opcode::Const => {
                let elem = self.elem_type(op, res_ty)?;
                // bf16 and fp8 live as their bits: the value is rounded here
                let kind = self.kind(data.results[0]);
                let fp8 = kind.and_then(super::fp8::fp8_format);
                let v = if fp8.is_some() || kind == Some(tritium_ir::ScalarKind::BF16) {
                    let value = match data.attrs.get("value") {
                        Some(Attr::Float(v)) => *v,
                        Some(Attr::Int(i)) => *i as f64,
                        Some(Attr::Bool(b)) => *b as u8 as f64,
                        other => {
                            let what = if fp8.is_some() { "fp8" } else { "bf16" };
                            return Err(self.unsupported(op, format!("{what} constant {other:?}")));
                        }
                    };
                    let bits = match fp8 {
                        Some(f) => super::fp8::f64_to_fp8_bits(value, f) as u64,
                        None => f64_to_bf16_bits(value) as u64,
                    };
                    elem.into_int_type().const_int(bits, false).into()
                } else {
                    self.constant(op, elem, data.attrs.get("value"))?
                };
                vec![v; n]
            }
            Opcode::Splat => vec![self.regs(data.operands[0])?[0]; n],
            Opcode::ProgramId | Opcode::NumPrograms => {
                let axis = data.attrs.get("axis").and_then(Attr::as_int).and_then(Axis::from_index);
                let axis = axis.ok_or_else(|| self.unsupported(op, "axis must be 0, 1 or 2"))?;
                let v = if data.opcode == Opcode::ProgramId {
                    self.target.block_id(self.llvm, axis)?
                } else {
                    self.target.num_blocks(self.llvm, axis)?
                };
                vec![v.into()]
            }
            Opcode::Addptr => self.addptr(op)?,
            // multiple_of, max_contiguous, max_constancy
            _ => self.regs(data.operands[0])?.clone(),
        };
        self.set(op, regs);
        Ok(())
    }

    fn constant(&self, op: Op, elem: BasicTypeEnum<'c>, value: Option<&Attr>) -> Result<BasicValueEnum<'c>> {
        Ok(match (elem, value) {
            (BasicTypeEnum::IntType(t), Some(Attr::Int(v))) => t.const_int(*v as u64, true).into(),
            (BasicTypeEnum::IntType(t), Some(Attr::Bool(b))) => t.const_int(*b as u64, false).into(),
            (BasicTypeEnum::FloatType(t), Some(Attr::Float(v))) => t.const_float(*v).into(),
            (BasicTypeEnum::FloatType(t), Some(Attr::Int(v))) => t.const_float(*v as f64).into(),
            (BasicTypeEnum::FloatType(t), Some(Attr::Bool(b))) => t.const_float(*b as u8 as f64).into(),
            _ => return Err(self.unsupported(op, format!("constant {value:?} of type {elem}"))),
        })
    }

    fn addptr(&self, op: Op) -> Result<Regs<'c>> {
        let data = self.op(op);
        let ptr_ty = self.ty(data.operands[0]);
        let pointee = self.module.types.pointee(ptr_ty).ok_or_else(|| self.unsupported(op, "addptr on a non-pointer"))?;
        let elem = super::llvm_scalar_type(self.llvm, self.module, pointee).map_err(|r| self.unsupported(op, r))?;
        let off_kind = self.kind(data.operands[1]).ok_or_else(|| self.unsupported(op, "non-integer offset"))?;
        let i64t = self.llvm.context.i64_type();
        let ptrs = self.regs(data.operands[0])?;
        let offs = self.regs(data.operands[1])?;
        let b = &self.llvm.builder;
        let mut out = Vec::with_capacity(ptrs.len());
        for (p, o) in ptrs.iter().zip(offs) {
            // GEP sign-extends its index: unsigned and i1 offsets are widened first
            let mut o = o.into_int_value();
            if !off_kind.is_signed() && o.get_type().get_bit_width() < 64 {
                o = b.build_int_z_extend(o, i64t, "")?;
            }
            // SAFETY: a GEP without `inbounds` is defined for any index (wrapping arithmetic)
            let q = unsafe { b.build_gep(elem, p.into_pointer_value(), &[o], "")? };
            out.push(q.into());
        }
        Ok(out)
    }
}

/// `v` rounded to the nearest bf16 (ties to even), as bits. Rounds to f32 with
/// round-to-odd first, so the second rounding cannot double-round.
pub(crate) fn f64_to_bf16_bits(v: f64) -> u16 {
    if v.is_nan() {
        return 0x7fc0;
    }
    let mut f = v as f32;
    if f.is_infinite() && v.is_finite() {
        f = f32::MAX.copysign(v as f32);
    }
    let mut bits = f.to_bits();
    if f as f64 != v && bits & 1 == 0 {
        // step one ulp toward v: a larger magnitude is bits + 1 for either sign
        let toward_larger_magnitude = (v.abs() > (f as f64).abs()) as u32;
        bits = if toward_larger_magnitude == 1 { bits + 1 } else { bits - 1 };
    }
    if f.is_infinite() {
        return (bits >> 16) as u16;
    }
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::f64_to_bf16_bits;

    #[test]
    fn bf16_constants_round_once_to_nearest_even() {
        assert_eq!(f64_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f64_to_bf16_bits(-2.5), 0xc020);
        assert_eq!(f64_to_bf16_bits(f64::INFINITY), 0x7f80);
        assert_eq!(f64_to_bf16_bits(1e300), 0x7f80);
        assert_eq!(f64_to_bf16_bits(0.0), 0);
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa (1.0) wins
        assert_eq!(f64_to_bf16_bits(1.0 + 2f64.powi(-8)), 0x3f80);
        // just above the tie, below f32 precision: f32 rounding alone would give the tie
        assert_eq!(f64_to_bf16_bits(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3f81);
    }
}
