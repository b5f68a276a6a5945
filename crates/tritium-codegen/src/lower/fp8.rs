//! fp8 values (e4m3fn, e5m2, Triton's e4b15, and the fnuz pair e4b8/e5b16):
//! they live in registers as their i8 bits (like bf16 as i16), so every
//! conversion is explicit here. The integer algorithms below are the
//! reference the interpreter (`interpreter/floats.py`) agrees with bit for
//! bit; a target's hardware convert is used only where its semantics are the
//! same: PTX's `cvt.rn.satfinite.{e4m3,e5m2}x2` (`Target::has_fp8_convert`)
//! and gfx942's `v_cvt_*_fp8/bf8` for the fnuz formats
//! (`Target::has_fnuz_fp8_convert`, `fp8_amd.rs`).
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tritium_ir::ScalarKind;

use super::Lowering;
use crate::error::{CodegenError, Result};

/// What a format does with the codes IEEE formats spend on NaN and infinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Specials {
    /// e5m2: the all-ones exponent holds ±inf (mantissa 0) and NaNs; NaN encodes as 0x7f.
    Ieee,
    /// e4m3fn: only S.1111.111 is NaN (encoded 0x7f); no infinity.
    Fn,
    /// e4m3fnuz / e5m2fnuz: 0x80 is the one NaN, there is no -0 and no
    /// infinity (±inf encodes as NaN, as Triton's AMD conversions do).
    Fnuz,
    /// Triton's e4b15: every code is a finite number. Casts follow Triton's
    /// NVIDIA conversion (an f16 recipe; f32 goes to f16 first with
    /// `cvt.rz`): ±inf become ±1.75; NaN becomes 1.75 with an f16 NaN's sign
    /// bit, and +1.75 from every wider source (the f32 → f16 `cvt` gives the
    /// canonical, positive NaN); the rounding mode is ignored (nearest, ties
    /// away). Arithmetic results saturate at ±1.875 keeping the sign, NaN too.
    AllFinite,
}

/// Shape of one fp8 format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fp8 {
    pub mant: u32,
    pub bias: i64,
    /// The code finite overflow saturates to (sign clear): 448 = 0x7e for
    /// e4m3, 57344 = 0x7b for e5m2, 240 and 57344 = 0x7f for the fnuz pair,
    /// 1.75 = 0x7e for e4b15 in casts (Triton clamps there; arithmetic
    /// results saturate at its top code 0x7f, 1.875, so values stay put).
    pub max_code: u64,
    pub specials: Specials,
    /// Round to nearest with ties away from zero (e4b15, as Triton's
    /// conversion adds half an ulp to the magnitude) instead of ties to even.
    pub ties_away: bool,
    /// PTX's name in `cvt` (`e4m3`, `e5m2`) where PTX has the format.
    pub ptx: Option<&'static str>,
}

pub(crate) fn fp8_format(k: ScalarKind) -> Option<Fp8> {
    let f = |mant, bias, max_code, specials, ptx| Fp8 { mant, bias, max_code, specials, ties_away: false, ptx };
    match k {
        ScalarKind::F8E4M3 => Some(f(3, 7, 0x7e, Specials::Fn, Some("e4m3"))),
        ScalarKind::F8E5M2 => Some(f(2, 15, 0x7b, Specials::Ieee, Some("e5m2"))),
        ScalarKind::F8E4B8 => Some(f(3, 8, 0x7f, Specials::Fnuz, None)),
        ScalarKind::F8E5B16 => Some(f(2, 16, 0x7f, Specials::Fnuz, None)),
        ScalarKind::F8E4B15 => Some(Fp8 { ties_away: true, ..f(3, 15, 0x7e, Specials::AllFinite, None) }),
        _ => None,
    }
}

impl Fp8 {
    /// The code a NaN from f32/f64 encodes as (e4b15: +1.75, the cast's max).
    fn nan_code(self) -> u64 {
        match self.specials {
            Specials::Ieee | Specials::Fn => 0x7f,
            Specials::Fnuz => 0x80,
            Specials::AllFinite => self.max_code,
        }
    }
}

/// Compile-time encoding of `v` (constants, a cast from f64): rounded once
/// (ties to even, or away for e4b15), finite overflow saturates; infinities
/// stay infinite where the format has them; NaN per `Specials` (e4b15:
/// +1.75 whatever its sign, as from f32). Same steps as `Lowering::fp8_encode`.
pub(crate) fn f64_to_fp8_bits(v: f64, f: Fp8) -> u8 {
    let sign = if v.is_sign_negative() { 0x80u8 } else { 0 };
    if v.is_nan() {
        return f.nan_code() as u8;
    }
    let a = v.abs();
    if a.is_infinite() && f.specials == Specials::Fnuz {
        return f.nan_code() as u8;
    }
    let code = if a.is_infinite() && f.specials == Specials::Ieee {
        f.max_code + 1
    } else if a < (2f64).powi(1 - f.bias as i32) {
        let scaled = a * (2f64).powi(f.bias as i32 - 1 + f.mant as i32);
        (if f.ties_away { scaled.round() } else { scaled.round_ties_even() }) as u64
    } else {
        let u = a.to_bits();
        let drop = 52 - f.mant;
        let r = if f.ties_away { u + (1u64 << (drop - 1)) } else { u + ((1u64 << (drop - 1)) - 1) + ((u >> drop) & 1) };
        ((r >> drop) - (((1023 - f.bias) as u64) << f.mant)).min(f.max_code)
    };
    if code == 0 && f.specials == Specials::Fnuz {
        return 0; // no negative zero
    }
    code as u8 | sign
}

impl<'a, 'c> Lowering<'a, 'c> {
    /// fp8 bits (i8) to the f32 of the same value (exact; NaN stays NaN).
    pub(super) fn fp8_decode(&self, bits: IntValue<'c>, f: Fp8) -> Result<FloatValue<'c>> {
        if f.specials == Specials::Fnuz && self.target.has_fnuz_fp8_convert() {
            return self.fp8_decode_amd(bits, f);
        }
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
        match f.specials {
            Specials::Ieee => {
                let inf = b.build_int_compare(IntPredicate::EQ, mag, c(f.max_code + 1), "")?;
                v = b.build_select(inf, f32t.const_float(f64::INFINITY), v, "")?.into_float_value();
                let is_nan = b.build_int_compare(IntPredicate::UGT, mag, c(f.max_code + 1), "")?;
                v = b.build_select(is_nan, nan, v, "")?.into_float_value();
            }
            Specials::Fn => {
                let is_nan = b.build_int_compare(IntPredicate::EQ, mag, c(0x7f), "")?;
                v = b.build_select(is_nan, nan, v, "")?.into_float_value();
            }
            Specials::Fnuz | Specials::AllFinite => {}
        }
        let neg = b.build_int_compare(IntPredicate::UGE, w, c(0x80), "")?;
        let v = b.build_select(neg, b.build_float_neg(v, "")?, v, "")?.into_float_value();
        if f.specials != Specials::Fnuz {
            return Ok(v);
        }
        let is_nan = b.build_int_compare(IntPredicate::EQ, w, c(0x80), "")?;
        Ok(b.build_select(is_nan, nan, v, "")?.into_float_value())
    }

    /// f32 or f64 `x` to fp8 bits (i8), rounded once (nearest, ties per
    /// `Fp8::ties_away`, or toward zero with `rtz`); finite overflow
    /// saturates to `max_code`; infinities saturate too when `sat_inf` (a
    /// cast, PTX satfinite) and otherwise stay infinite where the format has
    /// them (arithmetic results); NaN and the fnuz rules per `Specials`.
    pub(super) fn fp8_encode(&self, x: FloatValue<'c>, f: Fp8, rtz: bool, sat_inf: bool) -> Result<IntValue<'c>> {
        // e4b15 casts round to nearest whatever the mode asked: Triton's
        // conversion has no other (its f32 → f16 step truncates, then the
        // recipe rounds half away, which is one rounding to nearest)
        let rtz = rtz && f.specials != Specials::AllFinite;
        let is64 = x.get_type() == self.llvm.context.f64_type();
        if !is64 && !rtz && sat_inf && f.ptx.is_some() && self.target.has_fp8_convert() {
            return self.fp8_encode_ptx(x, f, "f32");
        }
        if !is64 && !rtz && f.specials == Specials::Fnuz && self.target.has_fnuz_fp8_convert() {
            return self.fp8_encode_amd(x, f);
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
        } else if f.ties_away {
            b.build_int_add(u, c(1 << (drop - 1)), "")?
        } else {
            let lsb = b.build_and(b.build_right_shift(u, c(drop), false, "")?, c(1), "")?;
            b.build_int_add(b.build_int_add(u, c((1 << (drop - 1)) - 1), "")?, lsb, "")?
        };
        let normal = b.build_int_sub(b.build_right_shift(r, c(drop), false, "")?, c(((bias - f.bias) as u64) << f.mant), "")?;
        // below the smallest normal: an exact power-of-two scaling, then round/trunc
        let scaled = b.build_float_mul(a, ft.const_float((2f64).powi(f.bias as i32 - 1 + f.mant as i32)), "")?;
        let round = match (rtz, f.ties_away) {
            (true, _) => "llvm.trunc",
            (false, true) => "llvm.round",
            (false, false) => "llvm.rint",
        };
        let rounded = self.llvm.call_intrinsic(round, &[ft.into()], &[scaled.into()])?;
        let sub = b.build_float_to_unsigned_int(rounded.into_float_value(), it, "")?;
        let small = b.build_float_compare(FloatPredicate::OLT, a, ft.const_float((2f64).powi(1 - f.bias as i32)), "")?;
        let code = b.build_select(small, sub, normal, "")?.into_int_value();
        // e4b15 arithmetic keeps its top code (1.875, which loads and stores
        // carry); only casts clamp at 1.75 as Triton's conversion does
        let sat = if f.specials == Specials::AllFinite && !sat_inf { 0x7f } else { f.max_code };
        let over = b.build_int_compare(IntPredicate::UGT, code, c(sat), "")?;
        let mut code = b.build_select(over, c(sat), code, "")?.into_int_value();
        if f.specials == Specials::Ieee && !sat_inf {
            let inf = b.build_float_compare(FloatPredicate::OEQ, a, ft.const_float(f64::INFINITY), "")?;
            code = b.build_select(inf, c(f.max_code + 1), code, "")?.into_int_value();
        }
        let i8t = cx.i8_type();
        let code = b.build_int_truncate(code, i8t, "")?;
        let sign = b.build_right_shift(b.build_bit_cast(x, it, "")?.into_int_value(), c(if is64 { 63 } else { 31 }), false, "")?;
        let sign = b.build_left_shift(b.build_int_truncate(sign, i8t, "")?, i8t.const_int(7, false), "")?;
        let signed = b.build_or(code, sign, "")?;
        match f.specials {
            // NaN and ±inf are the one NaN code; zero (and what rounds to it) is +0
            Specials::Fnuz => {
                let zero = b.build_int_compare(IntPredicate::EQ, code, i8t.const_zero(), "")?;
                let signed = b.build_select(zero, i8t.const_zero(), signed, "")?.into_int_value();
                let not_finite = b.build_float_compare(FloatPredicate::UGE, a, ft.const_float(f64::INFINITY), "")?;
                Ok(b.build_select(not_finite, i8t.const_int(f.nan_code(), false), signed, "")?.into_int_value())
            }
            // NaN saturates: a cast to +max (f32/f64 NaN loses its sign in
            // Triton's f32 → f16 step), an arithmetic result keeping its sign
            Specials::AllFinite => {
                let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
                let max = if sat_inf { i8t.const_int(sat, false) } else { b.build_or(sign, i8t.const_int(sat, false), "")? };
                Ok(b.build_select(nan, max, signed, "")?.into_int_value())
            }
            Specials::Ieee | Specials::Fn => {
                let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
                Ok(b.build_select(nan, i8t.const_int(f.nan_code(), false), signed, "")?.into_int_value())
            }
        }
    }

    /// f16 `x` to fp8 bits: one PTX `cvt` where the target has it, e4b15 on
    /// the f16 bits, else exact widening to f32.
    pub(super) fn fp8_encode_f16(&self, x: FloatValue<'c>, f: Fp8, rtz: bool) -> Result<IntValue<'c>> {
        if !rtz && f.ptx.is_some() && self.target.has_fp8_convert() {
            return self.fp8_encode_ptx(x, f, "f16x2");
        }
        if f.specials == Specials::AllFinite {
            return self.e4b15_from_f16_bits(x, f);
        }
        let wide = self.llvm.builder.build_float_ext(x, self.llvm.context.f32_type(), "")?;
        self.fp8_encode(wide, f, rtz, true)
    }

    /// e4b15 from f16, computed on the f16 bits as Triton's conversion does:
    /// the magnitude bits clamped to 1.75's (NaN and inf too, which are
    /// larger as integers), half an e4b15 ulp added (ties away), the top
    /// 7 bits kept, and the f16 sign bit put back, so -NaN gives 0xfe.
    /// (Widening first would lose that sign: NVIDIA's f16 → f32 `cvt` makes
    /// every NaN the positive canonical one.) Exact and the same for any
    /// rounding mode: Triton ignores it.
    fn e4b15_from_f16_bits(&self, x: FloatValue<'c>, f: Fp8) -> Result<IntValue<'c>> {
        let cx = self.llvm.context;
        let b = &self.llvm.builder;
        let i16t = cx.i16_type();
        let c = |v: u64| i16t.const_int(v, false);
        let h = b.build_bit_cast(x, i16t, "")?.into_int_value();
        let mag = b.build_and(h, c(0x7fff), "")?;
        // 1.75 as f16 bits; its e4b15 code is max_code
        let top = c(f.max_code << 7);
        let big = b.build_int_compare(IntPredicate::UGT, mag, top, "")?;
        let mag = b.build_select(big, top, mag, "")?.into_int_value();
        let code = b.build_right_shift(b.build_int_add(mag, c(0x40), "")?, c(7), false, "")?;
        let sign = b.build_and(b.build_right_shift(h, c(8), false, "")?, c(0x80), "")?;
        Ok(b.build_int_truncate(b.build_or(code, sign, "")?, cx.i8_type(), "")?)
    }

    /// `cvt.rn.satfinite.<fp8>x2.<src>`: both halves get `x`, the low byte is
    /// kept. NaN is forced to 0x7f so every arch gives the same bits.
    fn fp8_encode_ptx(&self, x: FloatValue<'c>, f: Fp8, src: &str) -> Result<IntValue<'c>> {
        let cx = self.llvm.context;
        let b = &self.llvm.builder;
        let ptx = f.ptx.ok_or_else(|| CodegenError::Internal("PTX has no cvt for this fp8 format".into()))?;
        let (asm, cons, arg) = if src == "f16x2" {
            let h = b.build_int_z_extend(b.build_bit_cast(x, cx.i16_type(), "")?.into_int_value(), cx.i32_type(), "")?;
            let pair = b.build_or(h, b.build_left_shift(h, cx.i32_type().const_int(16, false), "")?, "")?;
            (format!("cvt.rn.satfinite.{ptx}x2.f16x2 $0, $1;"), "=h,r", pair.into())
        } else {
            (format!("cvt.rn.satfinite.{ptx}x2.f32 $0, $1, $1;"), "=h,f", x.into())
        };
        let pair = self
            .llvm
            .inline_asm(&asm, cons, Some(cx.i16_type().into()), &[arg], false)?
            .ok_or_else(|| CodegenError::Internal("fp8 cvt asm returned nothing".into()))?;
        let code = b.build_int_truncate(pair.into_int_value(), cx.i8_type(), "")?;
        let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
        Ok(b.build_select(nan, cx.i8_type().const_int(f.nan_code(), false), code, "")?.into_int_value())
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

    #[test]
    fn e4b15_rounds_ties_away_and_saturates_at_1_75() {
        let f = fp8_format(ScalarKind::F8E4B15).unwrap();
        assert_eq!(f64_to_fp8_bits(1.0, f), 0x78); // exponent 15 = bias
        assert_eq!(f64_to_fp8_bits(1.0 + 1.0 / 16.0, f), 0x79); // tie: away from zero
        assert_eq!(f64_to_fp8_bits(-(1.0 + 1.0 / 16.0), f), 0xf9);
        assert_eq!(f64_to_fp8_bits(1.75, f), 0x7e);
        assert_eq!(f64_to_fp8_bits(1.8, f), 0x7e); // 1.875 (0x7f) is never produced
        assert_eq!(f64_to_fp8_bits(f64::INFINITY, f), 0x7e);
        assert_eq!(f64_to_fp8_bits(f64::NEG_INFINITY, f), 0xfe);
        // NaN from a wide format is +1.75 whatever its sign (Triton's f32 → f16 step)
        assert_eq!(f64_to_fp8_bits(-f64::NAN, f), 0x7e);
        assert_eq!(f64_to_fp8_bits(f64::NAN, f), 0x7e);
        assert_eq!(f64_to_fp8_bits(2f64.powi(-18), f), 0x01); // half the smallest subnormal: away
        assert_eq!(f64_to_fp8_bits(-0.0, f), 0x80);
    }

    #[test]
    fn fnuz_formats_have_one_nan_and_no_negative_zero() {
        for (k, max, max_code) in [(ScalarKind::F8E4B8, 240.0, 0x7f), (ScalarKind::F8E5B16, 57344.0, 0x7f)] {
            let f = fp8_format(k).unwrap();
            assert_eq!(f64_to_fp8_bits(max, f), max_code);
            assert_eq!(f64_to_fp8_bits(1e9, f), max_code);
            assert_eq!(f64_to_fp8_bits(-1e9, f), 0x80 | max_code);
            assert_eq!(f64_to_fp8_bits(f64::INFINITY, f), 0x80);
            assert_eq!(f64_to_fp8_bits(f64::NEG_INFINITY, f), 0x80);
            assert_eq!(f64_to_fp8_bits(f64::NAN, f), 0x80);
            assert_eq!(f64_to_fp8_bits(-0.0, f), 0x00);
            assert_eq!(f64_to_fp8_bits(-1e-30, f), 0x00);
        }
        let e4 = fp8_format(ScalarKind::F8E4B8).unwrap();
        assert_eq!(f64_to_fp8_bits(1.0, e4), 0x40); // exponent 8 = bias
        assert_eq!(f64_to_fp8_bits(2f64.powi(-10), e4), 0x01); // smallest subnormal
        let e5 = fp8_format(ScalarKind::F8E5B16).unwrap();
        assert_eq!(f64_to_fp8_bits(1.0, e5), 0x40);
        assert_eq!(f64_to_fp8_bits(2f64.powi(-17), e5), 0x01);
    }
}
