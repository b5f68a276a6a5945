//! AMD buffer instructions: a buffer resource (base, range, format word)
//! made from a kernel argument, and raw buffer loads/stores of whole dwords
//! at a 32-bit byte offset. Out-of-range lanes read zeros and write nothing,
//! which is how masks are applied (no branch).
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};

use super::amdgpu::AmdArch;
use super::Access;
use crate::error::Result;
use crate::llvm::Llvm;

/// The resource's range in bytes: the `pointer_range = 32` guarantee (the
/// storage from the base on is at most 2^31 - 1 bytes).
const NUM_RECORDS: u64 = 0x7fff_ffff;
/// An offset past the range, given to masked-off lanes.
const OUT_OF_RANGE: u64 = 0x8000_0000;

/// The resource's fourth dword (destination selects and formats) for raw
/// dword accesses: one layout on CDNA (gfx9), another from RDNA 3 on.
fn format_word(arch: AmdArch) -> u64 {
    match arch {
        AmdArch::Gfx90a | AmdArch::Gfx942 | AmdArch::Gfx950 => 0x0002_0000,
        AmdArch::Gfx1100 | AmdArch::Gfx1200 => 0x3100_4000,
    }
}

/// The access as 32-bit dwords (None: sub-dword words stay global accesses).
fn dwords(access: Access) -> Option<u32> {
    (access.word_bits >= 32).then(|| access.words * access.word_bits / 32)
}

fn resource<'c>(llvm: &Llvm<'c>, arch: AmdArch, base: PointerValue<'c>) -> Result<PointerValue<'c>> {
    let cx = llvm.context;
    let args = [
        base.into(),
        cx.i16_type().const_zero().into(),
        cx.i32_type().const_int(NUM_RECORDS, false).into(),
        cx.i32_type().const_int(format_word(arch), false).into(),
    ];
    Ok(llvm.call_intrinsic("llvm.amdgcn.make.buffer.rsrc", &[base.get_type().into()], &args)?.into_pointer_value())
}

fn lane_offset<'c>(llvm: &Llvm<'c>, offset: IntValue<'c>, pred: Option<IntValue<'c>>) -> Result<IntValue<'c>> {
    Ok(match pred {
        Some(p) => {
            let far = llvm.context.i32_type().const_int(OUT_OF_RANGE, false);
            llvm.builder.build_select(p, offset, far, "")?.into_int_value()
        }
        None => offset,
    })
}

fn dword_type<'c>(llvm: &Llvm<'c>, n: u32) -> BasicTypeEnum<'c> {
    let i32t = llvm.context.i32_type();
    if n == 1 {
        i32t.into()
    } else {
        i32t.vec_type(n).into()
    }
}

fn word_type<'c>(llvm: &Llvm<'c>, access: Access) -> BasicTypeEnum<'c> {
    match (access.word_bits, access.float) {
        (32, true) => llvm.context.f32_type().into(),
        (64, true) => llvm.context.f64_type().into(),
        (bits, _) => llvm.context.custom_width_int_type(bits).into(),
    }
}

/// The words as one value of `n` dwords, and back.
fn words_type<'c>(llvm: &Llvm<'c>, access: Access) -> BasicTypeEnum<'c> {
    let w = word_type(llvm, access);
    if access.words == 1 {
        return w;
    }
    match w {
        BasicTypeEnum::FloatType(t) => t.vec_type(access.words).into(),
        BasicTypeEnum::IntType(t) => t.vec_type(access.words).into(),
        other => other,
    }
}

pub(super) fn load<'c>(
    llvm: &Llvm<'c>,
    arch: AmdArch,
    base: PointerValue<'c>,
    offset: IntValue<'c>,
    access: Access,
    pred: Option<IntValue<'c>>,
    other: Option<&[BasicValueEnum<'c>]>,
) -> Result<Option<Vec<BasicValueEnum<'c>>>> {
    let Some(n) = dwords(access) else { return Ok(None) };
    let b = &llvm.builder;
    let i32t = llvm.context.i32_type();
    let rsrc = resource(llvm, arch, base)?;
    let off = lane_offset(llvm, offset, pred)?;
    let zero = i32t.const_zero();
    let raw = llvm.call_intrinsic("llvm.amdgcn.raw.ptr.buffer.load", &[dword_type(llvm, n)], &[rsrc.into(), off.into(), zero.into(), zero.into()])?;
    let value = b.build_bit_cast(raw, words_type(llvm, access), "")?;
    let mut words = Vec::with_capacity(access.words as usize);
    for w in 0..access.words {
        let x = if access.words == 1 { value } else { b.build_extract_element(value.into_vector_value(), i32t.const_int(w as u64, false), "")? };
        // the hardware gave masked-off lanes zeros; `other` replaces them
        let x = match (pred, other) {
            (Some(p), Some(o)) => b.build_select(p, x, o[w as usize], "")?,
            _ => x,
        };
        words.push(x);
    }
    Ok(Some(words))
}

pub(super) fn store<'c>(
    llvm: &Llvm<'c>,
    arch: AmdArch,
    base: PointerValue<'c>,
    offset: IntValue<'c>,
    access: Access,
    words: &[BasicValueEnum<'c>],
    pred: Option<IntValue<'c>>,
) -> Result<bool> {
    let Some(n) = dwords(access) else { return Ok(false) };
    let b = &llvm.builder;
    let i32t = llvm.context.i32_type();
    let value: BasicValueEnum = if access.words == 1 {
        words[0]
    } else {
        let mut v = words_type(llvm, access).into_vector_type().get_undef();
        for (w, &x) in words.iter().enumerate() {
            v = b.build_insert_element(v, x, i32t.const_int(w as u64, false), "")?;
        }
        v.into()
    };
    let data = b.build_bit_cast(value, dword_type(llvm, n), "")?;
    let rsrc = resource(llvm, arch, base)?;
    let off = lane_offset(llvm, offset, pred)?;
    let zero = i32t.const_zero();
    let f = llvm.intrinsic("llvm.amdgcn.raw.ptr.buffer.store", &[dword_type(llvm, n)])?;
    let args: Vec<inkwell::values::BasicMetadataValueEnum> = vec![data.into(), rsrc.into(), off.into(), zero.into(), zero.into()];
    b.build_call(f, &args, "")?;
    Ok(true)
}
