//! Math ops: the fast ones map to the target's approximate f32 instructions
//! exactly as Triton's (exp through ex2.approx with log2(e) scaling, exp2
//! through ex2.approx.ftz, sqrt and rsqrt approx); log, log2, sin, cos, erf and f64 exp call `mathlib`'s
//! accurate helpers. f16/bf16 compute in f32 and round once.
#[path = "../mathlib/mod.rs"]
pub(crate) mod mathlib;

use inkwell::values::{BasicValueEnum, FloatValue};
use tritium_ir::{Op, Opcode, ScalarKind};

use super::Lowering;
use crate::error::Result;
use crate::target::ApproxFn;
use mathlib::MathFn;

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn lower_math(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let opcode = data.opcode;
        let kind = self.kind(data.operands[0]).ok_or_else(|| self.unsupported(op, "math on pointers"))?;
        if !kind.is_float() {
            return Err(self.unsupported(op, format!("`{opcode}` on {}", kind.name())));
        }
        let regs = self.regs(data.operands[0])?.clone();
        let b = &self.llvm.builder;
        let f32t = self.llvm.context.f32_type();
        let mut out = Vec::with_capacity(regs.len());
        for &v in &regs {
            let r: BasicValueEnum<'c> = match kind {
                ScalarKind::F32 | ScalarKind::F64 => self.math_scalar(op, opcode, v.into_float_value())?.into(),
                ScalarKind::F16 => {
                    let w = b.build_float_ext(v.into_float_value(), f32t, "")?;
                    self.target.narrow_f32(self.llvm, self.math_scalar(op, opcode, w)?.into(), false, false)?
                }
                ScalarKind::BF16 => {
                    let w = self.bf16_to_f32(v)?.into_float_value();
                    self.f32_to_bf16(self.math_scalar(op, opcode, w)?.into())?
                }
                k => return Err(self.unsupported(op, format!("`{opcode}` on {} is not lowered yet", k.name()))),
            };
            out.push(r);
        }
        self.set(op, out);
        Ok(())
    }

    fn approx(&self, f: ApproxFn, x: FloatValue<'c>) -> Result<FloatValue<'c>> {
        Ok(self.target.approx_f32(self.llvm, f, x.into())?.into_float_value())
    }

    fn math_scalar(&self, op: Op, opcode: Opcode, x: FloatValue<'c>) -> Result<FloatValue<'c>> {
        let is64 = x.get_type() == self.llvm.context.f64_type();
        let b = &self.llvm.builder;
        let fast_exp2 = |v: FloatValue<'c>| self.approx(ApproxFn::Exp2, v);
        let accurate = |f: MathFn| mathlib::call(self.llvm, f, x, &fast_exp2);
        let intr = |n: &str, v: FloatValue<'c>| -> Result<FloatValue<'c>> {
            Ok(self.llvm.call_intrinsic(n, &[v.get_type().into()], &[v.into()])?.into_float_value())
        };
        Ok(match (opcode, is64) {
            (Opcode::Exp, false) => {
                let t = b.build_float_mul(x, x.get_type().const_float(mathlib::LOG2E), "")?;
                self.approx(ApproxFn::Exp2, t)?
            }
            (Opcode::Exp2, false) => self.approx(ApproxFn::Exp2Ftz, x)?,
            (Opcode::Sqrt, false) => self.approx(ApproxFn::Sqrt, x)?,
            (Opcode::Rsqrt, false) => self.approx(ApproxFn::Rsqrt, x)?,
            (Opcode::Exp, true) => accurate(MathFn::Exp)?,
            (Opcode::Exp2, true) => accurate(MathFn::Exp2)?,
            // f64 has no approximate sqrt in PTX: both spellings are IEEE
            (Opcode::Sqrt, true) => intr("llvm.sqrt", x)?,
            (Opcode::Rsqrt, true) => b.build_float_div(x.get_type().const_float(1.0), intr("llvm.sqrt", x)?, "")?,
            (Opcode::Log, _) => accurate(MathFn::Log)?,
            (Opcode::Log2, _) => accurate(MathFn::Log2)?,
            (Opcode::Sin, _) => accurate(MathFn::Sin)?,
            (Opcode::Cos, _) => accurate(MathFn::Cos)?,
            (Opcode::Erf, _) => accurate(MathFn::Erf)?,
            _ => return Err(self.unsupported(op, format!("no lowering for `{opcode}`"))),
        })
    }
}
