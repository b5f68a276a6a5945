//! fp8 (e4m3fn, e5m2) values: they live in registers as their i8 bits (like
//! bf16 as i16), so every conversion is explicit here. The integer algorithms
//! below are the reference the interpreter (`interpreter/floats.py`) agrees
//! with bit for bit; targets with a hardware fp8 convert (`Target::has_fp8_convert`)
//! use PTX's `cvt.rn.satfinite.{e4m3,e5m2}x2` where its semantics are the same
//! (round to nearest even, saturate to max finite).
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tritium_ir::ScalarKind;

use super::Lowering;
use crate::error::{CodegenError, Result};

/// Shape of one fp8 format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fp8 {
    pub mant: u32,
    pub bias: i64,
    /// Largest finite code (sign clear): 448 = 0x7e for e4m3, 57344 = 0x7b for e5m2.
    pub max_code: u64,
    pub has_inf: bool,
    /// PTX's name in `cvt` (`e4m3`, `e5m2`).
    pub ptx: &'static str,
}

pub(crate) const NAN_CODE: u64 = 0x7f;

pub(crate) fn fp8_format(k: ScalarKind) -> Option<Fp8> {
    match k {
        ScalarKind::F8E4M3 => Some(Fp8 { mant: 3, bias: 7, max_code: 0x7e, has_inf: false, ptx: "e4m3" }),
        ScalarKind::F8E5M2 => Some(Fp8 { mant: 2, bias: 15, max_code: 0x7b, has_inf: true, ptx: "e5m2" }),
        _ => None,
    }
}

/// Compile-time encoding of `v` (constants): round to nearest even, finite
/// overflow saturates; infinities stay infinite where the format has them
/// (e4m3: max finite), NaN is 0x7f. Same steps as `Lowering::fp8_encode`.
pub(crate) fn f64_to_fp8_bits(v: f64, f: Fp8) -> u8 {
    if v.is_nan() {
        return NAN_CODE as u8;
    }
    let sign = if v.is_sign_negative() { 0x80u8 } else { 0 };
    let a = v.abs();
    let code = if a.is_infinite() && f.has_inf {
        f.max_code + 1
    } else if a < (2f64).powi(1 - f.bias as i32) {
        (a * (2f64).powi(f.bias as i32 - 1 + f.mant as i32)).round_ties_even() as u64
    } else {
        let u = a.to_bits();
        let drop = 52 - f.mant;
        let r = u + ((1u64 << (drop - 1)) - 1) + ((u >> drop) & 1);
        ((r >> drop) - (((1023 - f.bias) as u64) << f.mant)).min(f.max_code)
    };
    code as u8 | sign
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// fp8 bits (i8) to the f32 of the same value (exact; NaN stays NaN).
    pub(super) fn fp8_decode(&self, bits: IntValue<'c>, f: Fp8) -> Result<FloatValue<'c>> {
        let b = &self.llvm.builder;
        let i32t = self.llvm.context.i32_type();
        let f32t = self.llvm.context.f32_type();
        let c = |v: u64| i32t.const_int(v, false);
        let w = b.build_int_z_extend(bits, i32t, "")?;
        let mag = b.build_and(w, c(0x7f), "")?;
        // normal codes: shift the exponent+mantissa field into place and rebias
        let shifted = b.build_left_shift(mag, c(23 - f.mant as u64), "")?;
        let normal = b.build_int_add(shifted, c(((127 - f.bias) as u64) << 23), "")?;
        let normal = b.build_bit_cast(normal, f32t, "")?.into_float_value();
        // subnormal codes: the field is a count of 2^(1 - bias - mant) steps
        let sub = b.build_unsigned_int_to_float(mag, f32t, "")?;
        let sub = b.build_float_mul(sub, f32t.const_float((2f64).powi(1 - f.bias as i32 - f.mant as i32)), "")?;
        let is_sub = b.build_int_compare(IntPredicate::ULT, mag, c(1 << f.mant), "")?;
        let mut v = b.build_select(is_sub, sub, normal, "")?.into_float_value();
        let nan = f32t.const_float(f64::NAN);
        if f.has_inf {
            let inf = b.build_int_compare(IntPredicate::EQ, mag, c(f.max_code + 1), "")?;
            v = b.build_select(inf, f32t.const_float(f64::INFINITY), v, "")?.into_float_value();
            let is_nan = b.build_int_compare(IntPredicate::UGT, mag, c(f.max_code + 1), "")?;
            v = b.build_select(is_nan, nan, v, "")?.into_float_value();
        } else {
            let is_nan = b.build_int_compare(IntPredicate::EQ, mag, c(NAN_CODE), "")?;
            v = b.build_select(is_nan, nan, v, "")?.into_float_value();
        }
        let neg = b.build_int_compare(IntPredicate::UGE, w, c(0x80), "")?;
        Ok(b.build_select(neg, b.build_float_neg(v, "")?, v, "")?.into_float_value())
    }

    /// f32 or f64 `x` to fp8 bits (i8), rounded once (nearest even, or toward
    /// zero with `rtz`); finite overflow saturates to max finite; infinities
    /// saturate too when `sat_inf` (a cast, PTX satfinite) and otherwise stay
    /// infinite where the format has them (arithmetic results); NaN is 0x7f.
    pub(super) fn fp8_encode(&self, x: FloatValue<'c>, f: Fp8, rtz: bool, sat_inf: bool) -> Result<IntValue<'c>> {
        let is64 = x.get_type() == self.llvm.context.f64_type();
        if !is64 && !rtz && sat_inf && self.target.has_fp8_convert() {
            return self.fp8_encode_ptx(x, f, "f32");
        }
        let cx = self.llvm.context;
        let b = &self.llvm.builder;
        let (ft, it, mb, bias) = if is64 {
            (cx.f64_type(), cx.i64_type(), 52u32, 1023i64)
        } else {
            (cx.f32_type(), cx.i32_type(), 23, 127)
        };
        let c = |v: u64| it.const_int(v, false);
        let a = self.llvm.call_intrinsic("llvm.fabs", &[ft.into()], &[x.into()])?.into_float_value();
        let u = b.build_bit_cast(a, it, "")?.into_int_value();
        // normal range: round the significand to `mant` bits on the integer bits
        let drop = (mb - f.mant) as u64;
        let r = if rtz {
            u
        } else {
            let lsb = b.build_and(b.build_right_shift(u, c(drop), false, "")?, c(1), "")?;
            b.build_int_add(b.build_int_add(u, c((1 << (drop - 1)) - 1), "")?, lsb, "")?
        };
        let normal = b.build_int_sub(b.build_right_shift(r, c(drop), false, "")?, c(((bias - f.bias) as u64) << f.mant), "")?;
        // below the smallest normal: an exact power-of-two scaling, then rint/trunc
        let scaled = b.build_float_mul(a, ft.const_float((2f64).powi(f.bias as i32 - 1 + f.mant as i32)), "")?;
        let rounded = self.llvm.call_intrinsic(if rtz { "llvm.trunc" } else { "llvm.rint" }, &[ft.into()], &[scaled.into()])?;
        let sub = b.build_float_to_unsigned_int(rounded.into_float_value(), it, "")?;
        let small = b.build_float_compare(FloatPredicate::OLT, a, ft.const_float((2f64).powi(1 - f.bias as i32)), "")?;
        let code = b.build_select(small, sub, normal, "")?.into_int_value();
        let over = b.build_int_compare(IntPredicate::UGT, code, c(f.max_code), "")?;
        let mut code = b.build_select(over, c(f.max_code), code, "")?.into_int_value();
        if f.has_inf && !sat_inf {
            let inf = b.build_float_compare(FloatPredicate::OEQ, a, ft.const_float(f64::INFINITY), "")?;
            code = b.build_select(inf, c(f.max_code + 1), code, "")?.into_int_value();
        }
        let i8t = cx.i8_type();
        let code = b.build_int_truncate(code, i8t, "")?;
        let sign = b.build_right_shift(b.build_bit_cast(x, it, "")?.into_int_value(), c(if is64 { 63 } else { 31 }), false, "")?;
        let sign = b.build_left_shift(b.build_int_truncate(sign, i8t, "")?, i8t.const_int(7, false), "")?;
        let code = b.build_or(code, sign, "")?;
        let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
        Ok(b.build_select(nan, i8t.const_int(NAN_CODE, false), code, "")?.into_int_value())
    }

    /// f16 `x` to fp8 bits: one PTX `cvt` where the target has it, else exact widening to f32.
    pub(super) fn fp8_encode_f16(&self, x: FloatValue<'c>, f: Fp8, rtz: bool) -> Result<IntValue<'c>> {
        if !rtz && self.target.has_fp8_convert() {
            return self.fp8_encode_ptx(x, f, "f16x2");
        }
        let wide = self.llvm.builder.build_float_ext(x, self.llvm.context.f32_type(), "")?;
        self.fp8_encode(wide, f, rtz, true)
    }

    /// `cvt.rn.satfinite.<fp8>x2.<src>`: both halves get `x`, the low byte is
    /// kept. NaN is forced to 0x7f so every arch gives the same bits.
    fn fp8_encode_ptx(&self, x: FloatValue<'c>, f: Fp8, src: &str) -> Result<IntValue<'c>> {
        let cx = self.llvm.context;
        let b = &self.llvm.builder;
        let (asm, cons, arg) = if src == "f16x2" {
            let h = b.build_int_z_extend(b.build_bit_cast(x, cx.i16_type(), "")?.into_int_value(), cx.i32_type(), "")?;
            let pair = b.build_or(h, b.build_left_shift(h, cx.i32_type().const_int(16, false), "")?, "")?;
            (format!("cvt.rn.satfinite.{}x2.f16x2 $0, $1;", f.ptx), "=h,r", pair.into())
        } else {
            (format!("cvt.rn.satfinite.{}x2.f32 $0, $1, $1;", f.ptx), "=h,f", x.into())
        };
        let pair = self
            .llvm
            .inline_asm(&asm, cons, Some(cx.i16_type().into()), &[arg], false)?
            .ok_or_else(|| CodegenError::Internal("fp8 cvt asm returned nothing".into()))?;
        let code = b.build_int_truncate(pair.into_int_value(), cx.i8_type(), "")?;
        let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
        Ok(b.build_select(nan, cx.i8_type().const_int(NAN_CODE, false), code, "")?.into_int_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_round_and_saturate() {
        let e4 = fp8_format(ScalarKind::F8E4M3).unwrap();
        let e5 = fp8_format(ScalarKind::F8E5M2).unwrap();
        assert_eq!(f64_to_fp8_bits(1.0, e4), 0x38);
        assert_eq!(f64_to_fp8_bits(-1.0, e5), 0xbc);
        assert_eq!(f64_to_fp8_bits(448.0, e4), 0x7e);
        assert_eq!(f64_to_fp8_bits(464.0, e4), 0x7e); // tie to even, below the NaN slot
        assert_eq!(f64_to_fp8_bits(1e9, e4), 0x7e);
        assert_eq!(f64_to_fp8_bits(f64::INFINITY, e4), 0x7e);
        assert_eq!(f64_to_fp8_bits(f64::INFINITY, e5), 0x7c);
        assert_eq!(f64_to_fp8_bits(1e9, e5), 0x7b);
        assert_eq!(f64_to_fp8_bits(f64::NAN, e5), 0x7f);
        assert_eq!(f64_to_fp8_bits(2f64.powi(-9), e4), 0x01); // smallest subnormal
        assert_eq!(f64_to_fp8_bits(2f64.powi(-10), e4), 0x00); // tie to even (zero)
        assert_eq!(f64_to_fp8_bits(1.5 * 2f64.powi(-10), e4), 0x01);
        assert_eq!(f64_to_fp8_bits(2f64.powi(-16), e5), 0x01);
        assert_eq!(f64_to_fp8_bits(-0.0, e4), 0x80);
        assert_eq!(f64_to_fp8_bits(1.0 + 1.0 / 16.0, e4), 0x38); // tie to even (down)
        assert_eq!(f64_to_fp8_bits(1.0 + 3.0 / 16.0, e4), 0x3a); // tie to even (up)
    }
}
