//! Warp shuffles of any scalar value (ints, floats, pointers): the target
//! shuffles 32-bit words, so a value travels as its integer bits, widened to
//! one word or split into two. Reductions (butterfly) and scans (from a
//! computed lane) differ only in which word shuffle they pass in.
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};

use super::Lowering;
use crate::error::{CodegenError, Result};

impl<'a, 'c> Lowering<'a, 'c> {
    /// `v` moved between lanes by `word`, a shuffle of one i32.
    pub(super) fn shuffle_value(
        &self,
        v: BasicValueEnum<'c>,
        word: impl Fn(IntValue<'c>) -> Result<IntValue<'c>>,
    ) -> Result<BasicValueEnum<'c>> {
        let b = &self.llvm.builder;
        let cx = self.llvm.context;
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let ty = v.get_type();
        let as_int: IntValue = match ty {
            BasicTypeEnum::IntType(_) => v.into_int_value(),
            BasicTypeEnum::PointerType(_) => b.build_ptr_to_int(v.into_pointer_value(), i64t, "")?,
            BasicTypeEnum::FloatType(f) => {
                let bits = match f.get_bit_width() {
                    16 => cx.i16_type(),
                    32 => i32t,
                    _ => i64t,
                };
                b.build_bit_cast(v, bits, "")?.into_int_value()
            }
            other => return Err(CodegenError::Internal(format!("cannot shuffle {other}"))),
        };
        let w = as_int.get_type().get_bit_width();
        let shuffled = if w <= 32 {
            let x = if w < 32 { b.build_int_z_extend(as_int, i32t, "")? } else { as_int };
            let s = word(x)?;
            if w < 32 {
                b.build_int_truncate(s, as_int.get_type(), "")?
            } else {
                s
            }
        } else {
            let lo = b.build_int_truncate(as_int, i32t, "")?;
            let hi = b.build_int_truncate(b.build_right_shift(as_int, i64t.const_int(32, false), false, "")?, i32t, "")?;
            let (lo, hi) = (word(lo)?, word(hi)?);
            let hi = b.build_left_shift(b.build_int_z_extend(hi, i64t, "")?, i64t.const_int(32, false), "")?;
            b.build_or(hi, b.build_int_z_extend(lo, i64t, "")?, "")?
        };
        Ok(match ty {
            BasicTypeEnum::IntType(_) => shuffled.into(),
            BasicTypeEnum::PointerType(p) => b.build_int_to_ptr(shuffled, p, "")?.into(),
            _ => b.build_bit_cast(shuffled, ty, "")?,
        })
    }
}
