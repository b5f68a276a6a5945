//! Elementwise arithmetic, comparisons and selects: each op maps register by
//! register (operands share one type, hence one layout) to an LLVM
//! instruction or intrinsic, with signedness taken from the IR element type.
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use llvm_sys::LLVMFastMathAllowContract;
use tritium_ir::{Attr, Op, Opcode, ScalarKind, CONTRACT};

use super::{Lowering, Regs};
use crate::error::Result;

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_arith(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let opcode = data.opcode;
        let operands: Vec<&Regs<'c>> = data.operands.iter().map(|&v| self.regs(v)).collect::<Result<_>>()?;
        // `select`'s element type is its second operand's; cmp's is its operands'
        let typed = if opcode == Opcode::Select { data.operands[1] } else { data.operands[0] };
        let kind = self.kind(typed);
        if opcode != Opcode::Select && kind.is_none() {
            return Err(self.unsupported(op, "arithmetic on pointers"));
        }
        let n = operands[0].len();
        let mut out = Vec::with_capacity(n);
        for r in 0..n {
            let args: Vec<BasicValueEnum<'c>> = operands.iter().map(|regs| regs[r]).collect();
            out.push(self.arith_scalar(op, opcode, kind, &args)?);
        }
        self.set(op, out);
        Ok(())
    }

    fn arith_scalar(&self, op: Op, opcode: Opcode, kind: Option<ScalarKind>, a: &[BasicValueEnum<'c>]) -> Result<BasicValueEnum<'c>> {
        let b = &self.llvm.builder;
        if opcode == Opcode::Select {
            return Ok(b.build_select(a[0].into_int_value(), a[1], a[2], "")?);
        }
        let Some(kind) = kind else { return Err(self.unsupported(op, "arithmetic on pointers")) };
        if kind == ScalarKind::BF16 {
            // exact widening; one rounding back is correctly rounded for + - * / sqrt
            // (f32 has more than 2 * 8 + 2 significand bits)
            let wide: Vec<BasicValueEnum<'c>> = a.iter().map(|&v| self.bf16_to_f32(v)).collect::<Result<_>>()?;
            let r = self.arith_scalar(op, opcode, Some(ScalarKind::F32), &wide)?;
            return if opcode == Opcode::Cmp { Ok(r) } else { self.f32_to_bf16(r) };
        }
        if let Some(f) = super::fp8::fp8_format(kind) {
            // as the interpreter: f32 arithmetic, one rounding back (finite overflow saturates)
            let wide: Vec<BasicValueEnum<'c>> =
                a.iter().map(|&v| Ok(self.fp8_decode(v.into_int_value(), f)?.into())).collect::<Result<_>>()?;
            let r = self.arith_scalar(op, opcode, Some(ScalarKind::F32), &wide)?;
            return if opcode == Opcode::Cmp { Ok(r) } else { Ok(self.fp8_encode(r.into_float_value(), f, false, false)?.into()) };
        }
        let attrs = &self.op(op).attrs;
        let propagate_nan = attrs.get("propagate_nan").and_then(Attr::as_bool).unwrap_or(false);
        let ty = a[0].get_type();
        let call = |intr: &str, args: &[BasicValueEnum<'c>]| self.llvm.call_intrinsic(intr, &[ty], args);
        if kind.is_float() {
            let (x, y) = (a[0].into_float_value(), a.get(1).map(|v| v.into_float_value()));
            let y = || y.expect("binary op has two operands (IR verified)");
            // `contract` (enable_fp_fusion): LLVM may fuse this op with its
            // neighbours, so `a * b + c` becomes one fma when both carry it
            let contract = attrs.get(CONTRACT).and_then(Attr::as_bool).unwrap_or(false);
            let fusable = |v: FloatValue<'c>| -> BasicValueEnum<'c> {
                if let Some(inst) = v.as_instruction().filter(|_| contract) {
                    inst.set_fast_math_flags(LLVMFastMathAllowContract);
                }
                v.into()
            };
            return Ok(match opcode {
                Opcode::Add => fusable(b.build_float_add(x, y(), "")?),
                Opcode::Sub => fusable(b.build_float_sub(x, y(), "")?),
                Opcode::Mul => fusable(b.build_float_mul(x, y(), "")?),
                Opcode::Div if kind == ScalarKind::F32 => self.target.fast_div_f32(self.llvm, a[0], a[1])?,
                Opcode::Div | Opcode::DivRn => b.build_float_div(x, y(), "")?.into(),
                Opcode::Rem => b.build_float_rem(x, y(), "")?.into(),
                Opcode::Min => call(if propagate_nan { "llvm.minimum" } else { "llvm.minnum" }, a)?,
                Opcode::Max => call(if propagate_nan { "llvm.maximum" } else { "llvm.maxnum" }, a)?,
                Opcode::Clamp => {
                    let (lo, hi) = if propagate_nan { ("llvm.maximum", "llvm.minimum") } else { ("llvm.maxnum", "llvm.minnum") };
                    let t = call(lo, &a[..2])?;
                    call(hi, &[t, a[2]])?
                }
                Opcode::Cmp => {
                    let pred = match attrs.get("pred").and_then(Attr::as_str) {
                        Some("eq") => FloatPredicate::OEQ,
                        Some("ne") => FloatPredicate::UNE,
                        Some("lt") => FloatPredicate::OLT,
                        Some("le") => FloatPredicate::OLE,
                        Some("gt") => FloatPredicate::OGT,
                        Some("ge") => FloatPredicate::OGE,
                        p => return Err(self.unsupported(op, format!("comparison predicate {p:?}"))),
                    };
                    b.build_float_compare(pred, x, y(), "")?.into()
                }
                Opcode::Neg => b.build_float_neg(x, "")?.into(),
                Opcode::Abs => call("llvm.fabs", a)?,
                Opcode::Floor => call("llvm.floor", a)?,
                Opcode::Ceil => call("llvm.ceil", a)?,
                Opcode::SqrtRn => call("llvm.sqrt", a)?,
                Opcode::Fma => call("llvm.fma", a)?,
                _ => return Err(self.unsupported(op, format!("`{opcode}` on {}", kind.name()))),
            });
        }
        let signed = kind.is_signed();
        let (x, y) = (a[0].into_int_value(), a.get(1).map(|v| v.into_int_value()));
        let y = || y.expect("binary op has two operands (IR verified)");
        Ok(match opcode {
            Opcode::Add => b.build_int_add(x, y(), "")?.into(),
            Opcode::Sub => b.build_int_sub(x, y(), "")?.into(),
            Opcode::Mul => b.build_int_mul(x, y(), "")?.into(),
            Opcode::Div | Opcode::Rem => self.int_div_rem(opcode == Opcode::Div, signed, x, y())?.into(),
            Opcode::And => b.build_and(x, y(), "")?.into(),
            Opcode::Or => b.build_or(x, y(), "")?.into(),
            Opcode::Xor => b.build_xor(x, y(), "")?.into(),
            Opcode::Shl | Opcode::Shr => self.int_shift(opcode == Opcode::Shl, signed, x, y())?.into(),
            Opcode::Min => call(if signed { "llvm.smin" } else { "llvm.umin" }, a)?,
            Opcode::Max => call(if signed { "llvm.smax" } else { "llvm.umax" }, a)?,
            Opcode::Clamp => return Err(self.unsupported(op, "clamp on integers")),
            Opcode::Umulhi => {
                let bits = x.get_type().get_bit_width();
                let wide = self.llvm.context.custom_width_int_type(bits * 2);
                // the high half of the *unsigned* product, whatever the type's
                // signedness (as Triton's umulhi and the interpreter)
                let p = b.build_int_mul(b.build_int_z_extend(x, wide, "")?, b.build_int_z_extend(y(), wide, "")?, "")?;
                let hi = b.build_right_shift(p, wide.const_int(bits as u64, false), false, "")?;
                b.build_int_truncate(hi, x.get_type(), "")?.into()
            }
            Opcode::Cmp => {
                let pred = match (attrs.get("pred").and_then(Attr::as_str), signed) {
                    (Some("eq"), _) => IntPredicate::EQ,
                    (Some("ne"), _) => IntPredicate::NE,
                    (Some("lt"), true) => IntPredicate::SLT,
                    (Some("le"), true) => IntPredicate::SLE,
                    (Some("gt"), true) => IntPredicate::SGT,
                    (Some("ge"), true) => IntPredicate::SGE,
                    (Some("lt"), false) => IntPredicate::ULT,
                    (Some("le"), false) => IntPredicate::ULE,
                    (Some("gt"), false) => IntPredicate::UGT,
                    (Some("ge"), false) => IntPredicate::UGE,
                    (p, _) => return Err(self.unsupported(op, format!("comparison predicate {p:?}"))),
                };
                b.build_int_compare(pred, x, y(), "")?.into()
            }
            Opcode::Neg => b.build_int_neg(x, "")?.into(),
            Opcode::Not => b.build_not(x, "")?.into(),
            Opcode::Abs if signed => call("llvm.abs", &[a[0], self.llvm.context.bool_type().const_zero().into()])?,
            Opcode::Abs => a[0],
            _ => return Err(self.unsupported(op, format!("`{opcode}` on {}", kind.name()))),
        })
    }

    /// `x / y` or `x % y` with the GPU's answers where LLVM has none (its
    /// division by zero and signed MIN / -1 are undefined): x / 0 is all
    /// ones, x % 0 is x, MIN / -1 wraps to MIN and MIN % -1 is 0, as
    /// `div`/`rem` do on NVIDIA GPUs and as the interpreter does.
    fn int_div_rem(&self, div: bool, signed: bool, x: IntValue<'c>, y: IntValue<'c>) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        let ty = x.get_type();
        let zero = b.build_int_compare(IntPredicate::EQ, y, ty.const_zero(), "")?;
        let mut bad = zero;
        if signed {
            let bits = ty.get_bit_width();
            let min = ty.const_int(1u64 << (bits - 1), false);
            let overflow = b.build_and(
                b.build_int_compare(IntPredicate::EQ, x, min, "")?,
                b.build_int_compare(IntPredicate::EQ, y, ty.const_all_ones(), "")?,
                "",
            )?;
            bad = b.build_or(zero, overflow, "")?;
        }
        // a divisor of 1 where the result is fixed below keeps LLVM's op defined
        let safe = b.build_select(bad, ty.const_int(1, false), y, "")?.into_int_value();
        let q = match (div, signed) {
            (true, true) => b.build_int_signed_div(x, safe, "")?,
            (true, false) => b.build_int_unsigned_div(x, safe, "")?,
            (false, true) => b.build_int_signed_rem(x, safe, "")?,
            (false, false) => b.build_int_unsigned_rem(x, safe, "")?,
        };
        // by 0: all ones / x; MIN / -1 = MIN = x / 1 and MIN % -1 = 0 = x % 1 already
        let by_zero = if div { ty.const_all_ones() } else { x };
        Ok(b.build_select(zero, by_zero, q, "")?.into_int_value())
    }

    /// `x << y` / `x >> y` with PTX's clamped amounts (LLVM's shift by the
    /// width or more is poison): the amount is read unsigned; past the width
    /// `shl` and logical `shr` give 0 and arithmetic `shr` the sign fill.
    fn int_shift(&self, left: bool, signed: bool, x: IntValue<'c>, y: IntValue<'c>) -> Result<IntValue<'c>> {
        let b = &self.llvm.builder;
        let ty = x.get_type();
        let width = ty.const_int(ty.get_bit_width() as u64, false);
        let past = b.build_int_compare(IntPredicate::UGE, y, width, "")?;
        if !left && signed {
            let max = ty.const_int(ty.get_bit_width() as u64 - 1, false);
            let amount = b.build_select(past, max, y, "")?.into_int_value();
            return Ok(b.build_right_shift(x, amount, true, "")?);
        }
        let amount = b.build_select(past, ty.const_zero(), y, "")?.into_int_value();
        let r = if left { b.build_left_shift(x, amount, "")? } else { b.build_right_shift(x, amount, false, "")? };
        Ok(b.build_select(past, ty.const_zero(), r, "")?.into_int_value())
    }
}
