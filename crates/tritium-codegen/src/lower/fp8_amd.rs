//! gfx942's hardware converts for the fnuz fp8 formats (e4m3fnuz = "fp8",
//! e5m2fnuz = "bf8" in AMD's names): `v_cvt_f32_{fp8,bf8}` decodes and
//! `v_cvt_pk_{fp8,bf8}_f32` rounds to nearest even. The guards around them
//! pin the cases the ISA leaves to modes (overflow without the clamp bit, the
//! sign of a zero result, NaN/inf) to the integer algorithm's answers in
//! fp8.rs, so both paths and the interpreter agree bit for bit.
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

use super::fp8::{Fp8, Specials};
use super::Lowering;
use crate::error::{CodegenError, Result};

impl<'a, 'c> Lowering<'a, 'c> {
    fn amd_fp8_name(f: Fp8) -> Result<&'static str> {
        match (f.specials, f.mant) {
            (Specials::Fnuz, 3) => Ok("fp8"),
            (Specials::Fnuz, 2) => Ok("bf8"),
            _ => Err(CodegenError::Internal("gfx942 converts only the fnuz fp8 formats".into())),
        }
    }

    /// fnuz bits to f32 with `v_cvt_f32_{fp8,bf8}` (exact); 0x80 is NaN.
    pub(super) fn fp8_decode_amd(&self, bits: IntValue<'c>, f: Fp8) -> Result<FloatValue<'c>> {
        let b = &self.llvm.builder;
        let i32t = self.llvm.context.i32_type();
        let f32t = self.llvm.context.f32_type();
        let w = b.build_int_z_extend(bits, i32t, "")?;
        let name = format!("llvm.amdgcn.cvt.f32.{}", Self::amd_fp8_name(f)?);
        let v = self.llvm.call_intrinsic(&name, &[], &[w.into(), i32t.const_zero().into()])?.into_float_value();
        let is_nan = b.build_int_compare(IntPredicate::EQ, w, i32t.const_int(0x80, false), "")?;
        Ok(b.build_select(is_nan, f32t.const_float(f64::NAN), v, "")?.into_float_value())
    }

    /// f32 to fnuz bits with `v_cvt_pk_{fp8,bf8}_f32` (round to nearest even):
    /// finite values are clamped to ±max first (saturation), a zero result is
    /// +0, NaN and ±inf are the NaN code 0x80.
    pub(super) fn fp8_encode_amd(&self, x: FloatValue<'c>, f: Fp8) -> Result<IntValue<'c>> {
        let cx = self.llvm.context;
        let b = &self.llvm.builder;
        let (f32t, i32t, i8t) = (cx.f32_type(), cx.i32_type(), cx.i8_type());
        let max = (2f64 - (2f64).powi(-(f.mant as i32))) * (2f64).powi(((1 << (7 - f.mant)) - 1) - f.bias as i32);
        let clamped = self.llvm.call_intrinsic("llvm.maxnum", &[f32t.into()], &[x.into(), f32t.const_float(-max).into()])?;
        let clamped = self.llvm.call_intrinsic("llvm.minnum", &[f32t.into()], &[clamped, f32t.const_float(max).into()])?;
        let name = format!("llvm.amdgcn.cvt.pk.{}.f32", Self::amd_fp8_name(f)?);
        let packed = self.llvm.call_intrinsic(
            &name,
            &[],
            &[clamped, clamped, i32t.const_zero().into(), cx.bool_type().const_zero().into()],
        )?;
        let code = b.build_int_truncate(packed.into_int_value(), i8t, "")?;
        let neg_zero = b.build_int_compare(IntPredicate::EQ, code, i8t.const_int(0x80, false), "")?;
        let code = b.build_select(neg_zero, i8t.const_zero(), code, "")?.into_int_value();
        let a = self.llvm.call_intrinsic("llvm.fabs", &[f32t.into()], &[x.into()])?.into_float_value();
        let not_finite = b.build_float_compare(FloatPredicate::UGE, a, f32t.const_float(f64::INFINITY), "")?;
        Ok(b.build_select(not_finite, i8t.const_int(0x80, false), code, "")?.into_int_value())
    }
}
