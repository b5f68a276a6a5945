//! Payne-Hanek reduction of a huge |x| (>= 2^20) by pi/2, for sin and cos:
//! exact integer arithmetic on the significand against a 192-bit window of
//! 2/pi's bits (table `TWO_OVER_PI_BITS` in constant memory), so every
//! finite double reduces with ~2^-67 relative accuracy. Out of line
//! (`noinline`) so the fast path's registers do not pay for it.
//! `tests/test_codegen_math.py` mirrors these steps with Python integers.
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::values::{FunctionValue, IntValue};
use inkwell::{AddressSpace, IntPredicate};

use super::constants::{PIO2_D_HI, PIO2_D_LO, TWO_OVER_PI_BITS};
use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;

/// Smallest |x| the slow path handles: below it the Cody-Waite fast path's
/// multiples k of pi/2 stay under 2^20, where its products are exact.
pub(crate) const HUGE: f64 = 1048576.0;

const NAME: &str = "__tritium_rem_pio2_large";

/// `{r: f64, q: i32}` with x = (4n + q) pi/2 + r, |r| <= pi/4 (q in 0..4).
pub(crate) fn rem_pio2_large<'c>(llvm: &Llvm<'c>) -> Result<FunctionValue<'c>> {
    if let Some(f) = llvm.module.get_function(NAME) {
        return Ok(f);
    }
    let cx = llvm.context;
    let (f64t, i32t, i64t, i128t) = (cx.f64_type(), cx.i32_type(), cx.i64_type(), cx.i128_type());
    let ret = cx.struct_type(&[f64t.into(), i32t.into()], false);
    let func = llvm.module.add_function(NAME, ret.fn_type(&[f64t.into()], false), Some(Linkage::Internal));
    func.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(Attribute::get_named_enum_kind_id("noinline"), 0));

    let words: Vec<IntValue> = TWO_OVER_PI_BITS.iter().map(|&w| i64t.const_int(w, false)).collect();
    let table_ty = i64t.array_type(words.len() as u32);
    // address space 4: NVPTX constant memory (cached, uniform across the warp's reads)
    let table = llvm.module.add_global(table_ty, Some(AddressSpace::from(4u16)), "__tritium_two_over_pi");
    table.set_initializer(&i64t.const_array(&words));
    table.set_constant(true);
    table.set_linkage(Linkage::Internal);

    let saved = llvm.builder.get_insert_block();
    let b = &llvm.builder;
    b.position_at_end(cx.append_basic_block(func, "entry"));
    let x = func.get_nth_param(0).ok_or_else(|| CodegenError::Internal("rem_pio2 has no parameter".into()))?.into_float_value();
    let c64 = |v: u64| i64t.const_int(v, false);
    let c128 = |v: u64| i128t.const_int(v, false);
    let bits = b.build_bit_cast(x, i64t, "")?.into_int_value();
    let x_neg = b.build_int_compare(IntPredicate::SLT, bits, i64t.const_zero(), "")?;
    let biased = b.build_and(b.build_right_shift(bits, c64(52), false, "")?, c64(0x7ff), "")?;
    let m = b.build_or(b.build_and(bits, c64((1 << 52) - 1), "")?, c64(1 << 52), "")?;
    // |x| = m 2^e; bits of 2/pi worth >= 4 after scaling drop out (whole turns):
    // the window starts at table bit e + 64 - 2 (64 = the zero pad word)
    let t0 = b.build_int_add(biased, i64t.const_int((-1075i64 + 62) as u64, true), "")?;
    let w = b.build_right_shift(t0, c64(6), false, "")?;
    let sh = b.build_and(t0, c64(63), "")?;
    let mut tw = Vec::with_capacity(4);
    for k in 0..4 {
        let idx = b.build_int_add(w, c64(k), "")?;
        // SAFETY: 20 <= t0 <= 1033 for |x| >= 2^20 finite, so idx <= 19 < 21 words
        let p = unsafe { b.build_in_bounds_gep(table_ty, table.as_pointer_value(), &[c64(0), idx], "")? };
        tw.push(b.build_load(i64t, p, "")?.into_int_value());
    }
    let fshl = |a: IntValue<'c>, bb: IntValue<'c>, s: IntValue<'c>| -> Result<IntValue<'c>> {
        Ok(llvm.call_intrinsic("llvm.fshl", &[i64t.into()], &[a.into(), bb.into(), s.into()])?.into_int_value())
    };
    let p = [fshl(tw[0], tw[1], sh)?, fshl(tw[1], tw[2], sh)?, fshl(tw[2], tw[3], sh)?];
    // Q = m * P mod 2^192 (three words, q[2] most significant); |x| 2/pi = Q 2^-190 (mod 4)
    let wide_m = b.build_int_z_extend(m, i128t, "")?;
    let mut carry = i128t.const_zero();
    let mut q = [i64t.const_zero(); 3];
    for (i, &pw) in p.iter().rev().enumerate() {
        let prod = b.build_int_mul(wide_m, b.build_int_z_extend(pw, i128t, "")?, "")?;
        let sum = b.build_int_add(prod, carry, "")?;
        q[i] = b.build_int_truncate(sum, i64t, "")?;
        carry = b.build_right_shift(sum, c128(64), false, "")?;
    }
    // quadrant = the two integer bits, plus one when the fraction is >= 1/2
    let quad = b.build_right_shift(q[2], c64(62), false, "")?;
    let half = b.build_and(b.build_right_shift(q[2], c64(61), false, "")?, c64(1), "")?;
    let quad = b.build_int_add(quad, half, "")?;
    // the fraction as a signed 128-bit fixed point in [-1/2, 1/2) * 2^128
    let hi = fshl(q[2], q[1], c64(2))?;
    let lo = fshl(q[1], q[0], c64(2))?;
    let h = b.build_left_shift(b.build_int_z_extend(hi, i128t, "")?, c128(64), "")?;
    let h = b.build_or(h, b.build_int_z_extend(lo, i128t, "")?, "")?;
    let f_neg = b.build_int_compare(IntPredicate::SLT, h, i128t.const_zero(), "")?;
    let a = b.build_select(f_neg, b.build_int_neg(h, "")?, h, "")?.into_int_value();
    let lz = llvm.call_intrinsic("llvm.ctlz", &[i128t.into()], &[a.into(), cx.bool_type().const_zero().into()])?.into_int_value();
    let lz = llvm.call_intrinsic("llvm.umin", &[i128t.into()], &[lz.into(), c128(127).into()])?.into_int_value();
    let a = b.build_left_shift(a, lz, "")?;
    // two exact 53-bit pieces: f = (hi_i 2^75 + lo_i 2^22) 2^(-128 - lz)
    let hi_i = b.build_int_truncate(b.build_right_shift(a, c128(75), false, "")?, i64t, "")?;
    let lo_i = b.build_and(b.build_int_truncate(b.build_right_shift(a, c128(22), false, "")?, i64t, "")?, c64((1 << 53) - 1), "")?;
    let lz64 = b.build_int_truncate(lz, i64t, "")?;
    let pow2 = |offset: i64| -> Result<inkwell::values::FloatValue<'c>> {
        // 2^(offset - lz), always a normal double here (offset - lz >= -233)
        let e = b.build_int_sub(i64t.const_int((offset + 1023) as u64, true), lz64, "")?;
        Ok(b.build_bit_cast(b.build_left_shift(e, c64(52), "")?, f64t, "")?.into_float_value())
    };
    let fhi = b.build_float_mul(b.build_unsigned_int_to_float(hi_i, f64t, "")?, pow2(-53)?, "")?;
    let flo = b.build_float_mul(b.build_unsigned_int_to_float(lo_i, f64t, "")?, pow2(-106)?, "")?;
    // r = f pi/2 with pi/2 and the product's error carried in double-double
    let c1 = f64t.const_float(PIO2_D_HI);
    let rh = b.build_float_mul(fhi, c1, "")?;
    let fma = |a, bb, c| -> Result<inkwell::values::FloatValue<'c>> {
        Ok(llvm.call_intrinsic("llvm.fma", &[f64t.into()], &[a, bb, c])?.into_float_value())
    };
    let err = fma(fhi.into(), c1.into(), b.build_float_neg(rh, "")?.into())?;
    let tail = fma(flo.into(), c1.into(), b.build_float_mul(fhi, f64t.const_float(PIO2_D_LO), "")?.into())?;
    let r = b.build_float_add(rh, b.build_float_add(err, tail, "")?, "")?;
    let r = b.build_select(f_neg, b.build_float_neg(r, "")?, r, "")?.into_float_value();
    // sin/cos(-x): the reduction of |x| with r and q negated
    let r = b.build_select(x_neg, b.build_float_neg(r, "")?, r, "")?.into_float_value();
    let quad = b.build_select(x_neg, b.build_int_neg(quad, "")?, quad, "")?.into_int_value();
    let quad = b.build_and(b.build_int_truncate(quad, i32t, "")?, i32t.const_int(3, false), "")?;
    let out = b.build_insert_value(ret.get_undef(), r, 0, "")?;
    let out = b.build_insert_value(out, quad, 1, "")?;
    b.build_return(Some(&out))?;
    if let Some(s) = saved {
        llvm.builder.position_at_end(s);
    }
    Ok(func)
}
