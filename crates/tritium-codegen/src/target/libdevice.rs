//! NVIDIA's libdevice (`__nv_*` functions, the `extern_elementwise` calls of
//! `triton.language.extra.libdevice`) on the NVPTX target. The functions
//! that are one PTX operation — rounding-mode arithmetic and conversions,
//! bit casts, bit counts, classification, the `.approx` instructions — are
//! lowered here through NVVM intrinsics, exactly as libdevice defines them,
//! so they need no library. The rest are declared and resolved by linking
//! `libdevice.10.bc` (`Nvptx::libdevice`) before LLVM's optimisation; its
//! `__nvvm_reflect` queries are answered by the NVVMReflect pass LLVM's
//! NVPTX pipeline runs first (flush-to-zero off).
use std::path::Path;

use inkwell::module::{FlagBehavior, Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

use crate::error::{CodegenError, Result};
use crate::llvm::Llvm;

/// libdevice's rounding-mode suffixes and NVVM's names for them.
fn nvvm_mode(m: &str) -> Option<&'static str> {
    Some(match m {
        "rn" => "rn",
        "rz" => "rz",
        "rd" => "rm",
        "ru" => "rp",
        _ => return None,
    })
}

/// NVVM's type letters of libdevice's conversion operand names.
fn nvvm_conv_name(t: &str) -> Option<&'static str> {
    Some(match t {
        "float" => "f",
        "double" => "d",
        "int" => "i",
        "uint" => "ui",
        "ll" => "ll",
        "ull" => "ull",
        _ => return None,
    })
}

/// The NVVM intrinsic that is `symbol` itself (same operands, same result), if any.
fn nvvm_intrinsic(symbol: &str) -> Option<String> {
    let s = symbol.strip_prefix("__nv_")?;
    // arithmetic in a rounding mode: fadd_rz, dmul_ru, fmaf_rd, frcp_rn, dsqrt_rz, ...
    if let Some((op, mode)) = s.rsplit_once('_') {
        let mode = nvvm_mode(mode);
        let arith = |name: &str| -> Option<(String, char)> {
            let (w, op) = match name.as_bytes().first()? {
                b'f' => ('f', &name[1..]),
                b'd' => ('d', &name[1..]),
                _ => return None,
            };
            Some((op.to_string(), w))
        };
        if let (Some(mode), Some((o, w))) = (mode, arith(op)) {
            if matches!(o.as_str(), "add" | "mul" | "div" | "rcp" | "sqrt") {
                return Some(format!("llvm.nvvm.{o}.{mode}.{w}"));
            }
        }
        if let (Some(mode), "fmaf" | "fma") = (mode, op) {
            return Some(format!("llvm.nvvm.fma.{mode}.{}", if op == "fmaf" { 'f' } else { 'd' }));
        }
        // conversions: float2int_rz, ull2double_rd, double2float_rn, ...
        if let (Some(mode), Some((from, to))) = (mode, op.split_once('2')) {
            if let (Some(f), Some(t)) = (nvvm_conv_name(from), nvvm_conv_name(to)) {
                return Some(format!("llvm.nvvm.{f}2{t}.{mode}"));
            }
        }
    }
    Some(
        match s {
            "int_as_float" | "uint_as_float" => "llvm.nvvm.bitcast.i2f",
            "float_as_int" | "float_as_uint" => "llvm.nvvm.bitcast.f2i",
            "longlong_as_double" => "llvm.nvvm.bitcast.ll2d",
            "double_as_longlong" => "llvm.nvvm.bitcast.d2ll",
            "double2loint" => "llvm.nvvm.d2i.lo",
            "double2hiint" => "llvm.nvvm.d2i.hi",
            "mulhi" => "llvm.nvvm.mulhi.i",
            "umulhi" => "llvm.nvvm.mulhi.ui",
            "mul64hi" => "llvm.nvvm.mulhi.ll",
            "umul64hi" => "llvm.nvvm.mulhi.ull",
            "mul24" => "llvm.nvvm.mul24.i",
            "umul24" => "llvm.nvvm.mul24.ui",
            "sad" => "llvm.nvvm.sad.i",
            "usad" => "llvm.nvvm.sad.ui",
            "saturatef" => "llvm.nvvm.saturate.f",
            "fast_sinf" => "llvm.nvvm.sin.approx.f",
            "fast_cosf" => "llvm.nvvm.cos.approx.f",
            "fast_log2f" => "llvm.nvvm.lg2.approx.f",
            "fast_fdividef" => "llvm.nvvm.div.approx.f",
            "llrintf" => "llvm.nvvm.f2ll.rn",
            "llrint" => "llvm.nvvm.d2ll.rn",
            _ => return None,
        }
        .to_string(),
    )
}

/// The PTX instruction (and inline-asm constraints) of the integer-to-float
/// conversions that round toward zero. They cannot go through their NVVM
/// intrinsics: LLVM 19's instcombine turns `llvm.nvvm.{i,ui,ll,ull}2{f,d}.rz`
/// into `sitofp`/`uitofp`, which round to nearest, so the GPU ran
/// `cvt.rn` for `int2float_rz` (1 ulp off the exact answer). Inline assembly
/// is opaque to that rewrite.
fn int_to_float_rz(symbol: &str) -> Option<(&'static str, &'static str)> {
    Some(match symbol.strip_prefix("__nv_")? {
        "int2float_rz" => ("cvt.rz.f32.s32 $0, $1;", "=f,r"),
        "uint2float_rz" => ("cvt.rz.f32.u32 $0, $1;", "=f,r"),
        "ll2float_rz" => ("cvt.rz.f32.s64 $0, $1;", "=f,l"),
        "ull2float_rz" => ("cvt.rz.f32.u64 $0, $1;", "=f,l"),
        "ll2double_rz" => ("cvt.rz.f64.s64 $0, $1;", "=d,l"),
        "ull2double_rz" => ("cvt.rz.f64.u64 $0, $1;", "=d,l"),
        _ => return None,
    })
}

/// A generic LLVM intrinsic overloaded on the argument type that is `symbol`.
fn llvm_intrinsic(symbol: &str) -> Option<&'static str> {
    let s = symbol.strip_prefix("__nv_")?;
    Some(match s.strip_suffix('f').filter(|b| !b.is_empty() && !matches!(s, "erf" | "saturatef")).unwrap_or(s) {
        "fabs" => "llvm.fabs",
        "floor" => "llvm.floor",
        "ceil" => "llvm.ceil",
        "trunc" => "llvm.trunc",
        "rint" => "llvm.rint",
        "nearbyint" => "llvm.nearbyint",
        "round" => "llvm.round",
        "copysign" => "llvm.copysign",
        "fma" => "llvm.fma",
        "sqrt" => "llvm.sqrt",
        _ => return None,
    })
}

/// The target's own lowering of libdevice function `symbol` on `args`
/// (result type `ret`), or None when only the library has it.
pub(crate) fn lower_call<'c>(
    llvm: &Llvm<'c>,
    symbol: &str,
    args: &[BasicValueEnum<'c>],
    ret: BasicTypeEnum<'c>,
) -> Result<Option<BasicValueEnum<'c>>> {
    let b = &llvm.builder;
    if let Some((asm, constraints)) = int_to_float_rz(symbol) {
        return llvm.inline_asm(asm, constraints, Some(ret), args, false);
    }
    if let Some(name) = nvvm_intrinsic(symbol) {
        let f = llvm.intrinsic(&name, &[])?;
        let args: Vec<_> = args.iter().map(|&a| a.into()).collect();
            let v = b.build_call(f, &args, "")?.try_as_basic_value().basic();
        return Ok(v);
    }
    if let Some(name) = llvm_intrinsic(symbol) {
        return Ok(Some(llvm.call_intrinsic(name, &[args[0].get_type()], args)?));
    }
    let s = symbol.strip_prefix("__nv_").unwrap_or(symbol);
    let i32t = llvm.context.i32_type();
    let int = |i: usize| args[i].into_int_value();
    let float = |i: usize| args[i].into_float_value();
    let to_i32 = |v: IntValue<'c>| -> Result<BasicValueEnum<'c>> {
        let w = v.get_type().get_bit_width();
        Ok(if w == 32 {
            v.into()
        } else if w > 32 {
            b.build_int_truncate(v, i32t, "")?.into()
        } else {
            b.build_int_z_extend(v, i32t, "")?.into()
        })
    };
    let flag = |c: IntValue<'c>| -> Result<Option<BasicValueEnum<'c>>> { Ok(Some(b.build_int_z_extend(c, i32t, "")?.into())) };
    let fconst = |x: FloatValue<'c>, v: f64| x.get_type().const_float(v);
    let fabs = |x: FloatValue<'c>| -> Result<FloatValue<'c>> {
        Ok(llvm.call_intrinsic("llvm.fabs", &[x.get_type().into()], &[x.into()])?.into_float_value())
    };
    let approx = |name: &str, x: FloatValue<'c>| -> Result<FloatValue<'c>> {
        Ok(llvm.call_intrinsic(name, &[], &[x.into()])?.into_float_value())
    };
    let v: BasicValueEnum<'c> = match s {
        "abs" | "llabs" => llvm.call_intrinsic("llvm.abs", &[args[0].get_type()], &[args[0], llvm.context.bool_type().const_zero().into()])?,
        "clz" | "clzll" => {
            let c = llvm.call_intrinsic("llvm.ctlz", &[args[0].get_type()], &[args[0], llvm.context.bool_type().const_zero().into()])?;
            to_i32(c.into_int_value())?
        }
        "popc" | "popcll" => to_i32(llvm.call_intrinsic("llvm.ctpop", &[args[0].get_type()], &[args[0]])?.into_int_value())?,
        "brev" | "brevll" => llvm.call_intrinsic("llvm.bitreverse", &[args[0].get_type()], &[args[0]])?,
        "ffs" | "ffsll" => {
            let x = int(0);
            let tz = llvm.call_intrinsic("llvm.cttz", &[args[0].get_type()], &[args[0], llvm.context.bool_type().const_zero().into()])?;
            let pos = b.build_int_add(to_i32(tz.into_int_value())?.into_int_value(), i32t.const_int(1, false), "")?;
            let zero = b.build_int_compare(IntPredicate::EQ, x, x.get_type().const_zero(), "")?;
            b.build_select(zero, i32t.const_zero(), pos, "")?
        }
        // halving adds without overflow: floor((x + y) / 2) = (x & y) + ((x ^ y) >> 1),
        // ceil((x + y) / 2) = (x | y) - ((x ^ y) >> 1)
        "hadd" | "uhadd" | "rhadd" | "urhadd" => {
            let (x, y) = (int(0), int(1));
            let half = b.build_right_shift(b.build_xor(x, y, "")?, x.get_type().const_int(1, false), !s.starts_with('u'), "")?;
            if s.ends_with("rhadd") {
                b.build_int_sub(b.build_or(x, y, "")?, half, "")?.into()
            } else {
                b.build_int_add(b.build_and(x, y, "")?, half, "")?.into()
            }
        }
        // libdevice's byte_perm reads only bits 0-2 of the selector's low four
        // nibbles (it masks with 0x7777); prmt's default mode would take bit 3
        // of a nibble as "replicate the byte's sign"
        "byte_perm" => {
            let selector = b.build_and(int(2), i32t.const_int(0x7777, false), "")?;
            llvm.call_intrinsic("llvm.nvvm.prmt", &[], &[args[0], args[1], selector.into()])?
        }
        "isnanf" | "isnand" => return flag(b.build_float_compare(FloatPredicate::UNO, float(0), float(0), "")?),
        "isinff" | "isinfd" => {
            let x = float(0);
            return flag(b.build_float_compare(FloatPredicate::OEQ, fabs(x)?, fconst(x, f64::INFINITY), "")?);
        }
        "finitef" | "isfinited" => {
            let x = float(0);
            return flag(b.build_float_compare(FloatPredicate::OLT, fabs(x)?, fconst(x, f64::INFINITY), "")?);
        }
        "signbitf" | "signbitd" => {
            let x = float(0);
            let bits = x.get_type().get_bit_width();
            let it = llvm.context.custom_width_int_type(bits);
            let u = b.build_bit_cast(x, it, "")?.into_int_value();
            to_i32(b.build_right_shift(u, it.const_int(bits as u64 - 1, false), false, "")?)?
        }
        "fdimf" | "fdim" => {
            // x - y when x > y, +0 when x <= y, NaN when either is NaN
            let (x, y) = (float(0), float(1));
            let diff = b.build_float_sub(x, y, "")?;
            let gt = b.build_float_compare(FloatPredicate::UGT, x, y, "")?;
            b.build_select(gt, diff, fconst(x, 0.0), "")?
        }
        "hiloint2double" => {
            let f = llvm.intrinsic("llvm.nvvm.lohi.i2d", &[])?;
            b.build_call(f, &[args[1].into(), args[0].into()], "")?.try_as_basic_value().basic().ok_or_else(|| internal(symbol))?
        }
        "fsub_rn" | "fsub_rz" | "fsub_rd" | "fsub_ru" | "dsub_rn" | "dsub_rz" | "dsub_rd" | "dsub_ru" => {
            // subtraction is the addition of the negation, in the same rounding mode
            let w = if s.starts_with('f') { 'f' } else { 'd' };
            let mode = nvvm_mode(&s[5..]).ok_or_else(|| internal(symbol))?;
            let neg = b.build_float_neg(float(1), "")?;
            llvm.call_intrinsic(&format!("llvm.nvvm.add.{mode}.{w}"), &[], &[args[0], neg.into()])?
        }
        // the fast (approximate) forms libdevice builds from sin/cos/lg2/ex2.approx
        "fast_logf" => b.build_float_mul(approx("llvm.nvvm.lg2.approx.f", float(0))?, fconst(float(0), std::f64::consts::LN_2), "")?.into(),
        "fast_log10f" => b.build_float_mul(approx("llvm.nvvm.lg2.approx.f", float(0))?, fconst(float(0), std::f64::consts::LOG10_2), "")?.into(),
        "fast_expf" | "fast_exp10f" => {
            let k = if s == "fast_expf" { std::f64::consts::LOG2_E } else { std::f64::consts::LOG2_10 };
            approx("llvm.nvvm.ex2.approx.f", b.build_float_mul(float(0), fconst(float(0), k), "")?)?.into()
        }
        "fast_powf" => {
            let l = approx("llvm.nvvm.lg2.approx.f", float(0))?;
            approx("llvm.nvvm.ex2.approx.f", b.build_float_mul(float(1), l, "")?)?.into()
        }
        "fast_tanf" => {
            let (sn, cs) = (approx("llvm.nvvm.sin.approx.f", float(0))?, approx("llvm.nvvm.cos.approx.f", float(0))?);
            llvm.call_intrinsic("llvm.nvvm.div.approx.f", &[], &[sn.into(), cs.into()])?
        }
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn internal(symbol: &str) -> CodegenError {
    CodegenError::Internal(format!("libdevice lowering of {symbol} returned nothing"))
}

/// Declares libdevice function `symbol` (to be linked) and calls it.
pub(crate) fn declare_call<'c>(
    llvm: &Llvm<'c>,
    symbol: &str,
    args: &[BasicValueEnum<'c>],
    ret: BasicTypeEnum<'c>,
) -> Result<BasicValueEnum<'c>> {
    let f = match llvm.module.get_function(symbol) {
        Some(f) => f,
        None => {
            let params: Vec<_> = args.iter().map(|a| a.get_type().into()).collect();
            llvm.module.add_function(symbol, ret.fn_type(&params, false), Some(Linkage::External))
        }
    };
    let args: Vec<_> = args.iter().map(|&a| a.into()).collect();
    llvm.builder.build_call(f, &args, "")?.try_as_basic_value().basic().ok_or_else(|| internal(symbol))
}

/// Links `path` into the module when it declares `__nv_*` functions without
/// bodies; libdevice's definitions become internal, so LLVM keeps only the
/// ones called and inlines them.
pub(crate) fn link(llvm: &Llvm<'_>, path: Option<&Path>) -> Result<()> {
    let wanted: Vec<String> = llvm
        .module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0 && f.get_name().to_bytes().starts_with(b"__nv_"))
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let Some(path) = path else {
        return Err(CodegenError::Internal(format!("{} declared without a libdevice to link", wanted.join(", "))));
    };
    let lib = Module::parse_bitcode_from_path(path, llvm.context)
        .map_err(|e| CodegenError::Option(format!("cannot read libdevice {}: {e}", path.display())))?;
    lib.set_triple(&llvm.module.get_triple());
    lib.set_data_layout(&llvm.module.get_data_layout());
    let from_lib: Vec<String> =
        lib.get_functions().filter(|f| f.count_basic_blocks() > 0).map(|f| f.get_name().to_string_lossy().into_owned()).collect();
    let globals: Vec<String> = lib.get_globals().map(|g| g.get_name().to_string_lossy().into_owned()).collect();
    llvm.module.link_in_module(lib).map_err(|e| CodegenError::Llvm(format!("linking libdevice {}: {e}", path.display())))?;
    for name in &from_lib {
        if let Some(f) = llvm.module.get_function(name) {
            f.set_linkage(Linkage::Internal);
        }
    }
    for name in &globals {
        if let Some(g) = llvm.module.get_global(name) {
            g.set_linkage(Linkage::Internal);
        }
    }
    let zero = llvm.context.i32_type().const_zero();
    llvm.module.add_basic_value_flag("nvvm-reflect-ftz", FlagBehavior::Override, zero);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_mode_functions_name_their_intrinsics() {
        assert_eq!(nvvm_intrinsic("__nv_fadd_rz").as_deref(), Some("llvm.nvvm.add.rz.f"));
        assert_eq!(nvvm_intrinsic("__nv_ddiv_ru").as_deref(), Some("llvm.nvvm.div.rp.d"));
        assert_eq!(nvvm_intrinsic("__nv_fmaf_rd").as_deref(), Some("llvm.nvvm.fma.rm.f"));
        assert_eq!(nvvm_intrinsic("__nv_dsqrt_rn").as_deref(), Some("llvm.nvvm.sqrt.rn.d"));
        assert_eq!(nvvm_intrinsic("__nv_ull2double_rz").as_deref(), Some("llvm.nvvm.ull2d.rz"));
        assert_eq!(nvvm_intrinsic("__nv_double2float_rd").as_deref(), Some("llvm.nvvm.d2f.rm"));
        assert_eq!(nvvm_intrinsic("__nv_byte_perm"), None); // the selector is masked first
        assert_eq!(int_to_float_rz("__nv_ull2float_rz"), Some(("cvt.rz.f32.u64 $0, $1;", "=f,l")));
        assert_eq!(int_to_float_rz("__nv_int2float_rd"), None); // NVVM's rd/ru intrinsics survive instcombine
        assert_eq!(nvvm_intrinsic("__nv_fsub_rn"), None); // add of the negation, in lower/extern_fn.rs
        assert_eq!(nvvm_intrinsic("__nv_sinf"), None);
        assert_eq!(llvm_intrinsic("__nv_floorf"), Some("llvm.floor"));
        assert_eq!(llvm_intrinsic("__nv_round"), Some("llvm.round"));
        assert_eq!(llvm_intrinsic("__nv_erff"), None);
    }
}
