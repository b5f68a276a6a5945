//! Constant folding with the GPU's exact semantics: integers wrap at their
//! width with signedness from the type; f32/f64 fold only where IEEE
//! round-to-nearest is what codegen emits. Whatever the runtime might do
//! differently (division by zero, MIN / -1, shifts past the width, approximate
//! math, f16/bf16/fp8) is left for the runtime. Also: uniform tensors become
//! tensor `const`s, `if` on a constant inlines the taken region, a `for` that
//! runs zero times becomes its inits.
use tritium_ir::{Attr, Function, Op, Opcode, ScalarKind, TypeTable};

use crate::constant::{self, exact_float, mask, sext, Const};
use crate::walk::{rewrite_module, Rewrite};

/// Folds every function of `m`; returns how many ops were rewritten.
pub fn fold_constants(m: &mut tritium_ir::Module) -> usize {
    rewrite_module(m, &mut fold_op)
}

fn fold_op(types: &TypeTable, f: &mut Function, op: Op) -> Rewrite {
    let od = &f.ops[op];
    let folded = match od.opcode {
        Opcode::If => {
            return match constant::value_of(types, f, od.operands[0]) {
                Some((_, Const::Int(c))) => Rewrite::Inline(if c & 1 == 1 { 0 } else { 1 }),
                _ => Rewrite::Keep,
            }
        }
        Opcode::For => return fold_for(types, f, op),
        Opcode::Select => {
            return match constant::value_of(types, f, od.operands[0]) {
                Some((_, Const::Int(c))) => Rewrite::with(vec![od.operands[if c & 1 == 1 { 1 } else { 2 }]]),
                _ => Rewrite::Keep,
            }
        }
        // already a constant: only the uniform shape ops become one
        Opcode::Const => return Rewrite::Keep,
        Opcode::Splat | Opcode::Broadcast | Opcode::ExpandDims | Opcode::Reshape | Opcode::Permute => {
            constant::value_of(types, f, od.operands[0]).map(|(_, c)| c)
        }
        Opcode::Cast => {
            let rounding = od.attrs.get("rounding").and_then(Attr::as_str).unwrap_or("");
            let to = types.scalar_kind(f.value_type(od.results[0]));
            match (constant::value_of(types, f, od.operands[0]), to) {
                (Some((from, c)), Some(to)) if rounding.is_empty() || rounding == "rtne" => cast(from, to, c),
                _ => None,
            }
        }
        Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::Rem | Opcode::And | Opcode::Or | Opcode::Xor
        | Opcode::Shl | Opcode::Shr | Opcode::Min | Opcode::Max | Opcode::Cmp | Opcode::Neg | Opcode::Not
        | Opcode::Abs | Opcode::Floor | Opcode::Ceil => evaluate(types, f, op),
        // Left to the runtime: values only a launch knows, approximate or
        // not-yet-reproduced math, memory, shape ops that move elements,
        // regions, calls and effects.
        Opcode::Arange | Opcode::ProgramId | Opcode::NumPrograms | Opcode::DivRn | Opcode::Umulhi | Opcode::Exp
        | Opcode::Exp2 | Opcode::Log | Opcode::Log2 | Opcode::Sqrt | Opcode::SqrtRn | Opcode::Rsqrt | Opcode::Sin
        | Opcode::Cos | Opcode::Erf | Opcode::Fma | Opcode::Clamp | Opcode::Bitcast | Opcode::PtrToInt
        | Opcode::IntToPtr | Opcode::Addptr | Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas
        | Opcode::Join | Opcode::Split | Opcode::Cat | Opcode::Reduce | Opcode::Scan | Opcode::Dot
        | Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy | Opcode::While | Opcode::Yield
        | Opcode::Condition | Opcode::Call | Opcode::Return | Opcode::Assert | Opcode::Print | Opcode::Barrier
        | Opcode::InlineAsm | Opcode::ConvertLayout | Opcode::BlockLoad | Opcode::BlockStore
        | Opcode::BlockAtomic | Opcode::Assume | Opcode::Gather | Opcode::Histogram
        | Opcode::ExternElementwise | Opcode::LocalAlloc | Opcode::LocalView | Opcode::AsyncCopy | Opcode::AsyncCommit
        | Opcode::AsyncWait | Opcode::DotWait | Opcode::TmaLoad | Opcode::TmaStore
        | Opcode::MbarrierInit | Opcode::MbarrierWait | Opcode::MbarrierInval | Opcode::TmaCopy
        | Opcode::TensormapCreate => None,
    };
    let Some(c) = folded else { return Rewrite::Keep };
    let res_ty = f.value_type(f.ops[op].results[0]);
    let Some(rk) = types.scalar_kind(res_ty) else { return Rewrite::Keep };
    let loc = f.ops[op].loc;
    let new = constant::make(f, res_ty, rk, c, loc);
    Rewrite::by_op(f, new)
}

/// An elementwise op of constant operands, by the GPU's semantics.
fn evaluate(types: &TypeTable, f: &Function, op: Op) -> Option<Const> {
    let od = &f.ops[op];
    let mut args = Vec::with_capacity(od.operands.len());
    for &v in &od.operands {
        args.push(constant::value_of(types, f, v)?);
    }
    let &(k, _) = args.first()?;
    let vals: Vec<Const> = args.iter().map(|a| a.1).collect();
    let pred = od.attrs.get("pred").and_then(Attr::as_str);
    let nan = od.attrs.get("propagate_nan").and_then(Attr::as_bool).unwrap_or(false);
    if k.is_int() {
        int_op(od.opcode, k, &vals, pred)
    } else if exact_float(k) {
        float_op(od.opcode, k, &vals, pred, nan)
    } else {
        None
    }
}

/// `for` runs while `iv < ub` (bounds' signedness): `lb >= ub` means no trip.
fn fold_for(types: &TypeTable, f: &Function, op: Op) -> Rewrite {
    let od = &f.ops[op];
    let (Some((k, Const::Int(lb))), Some((_, Const::Int(ub)))) =
        (constant::value_of(types, f, od.operands[0]), constant::value_of(types, f, od.operands[1]))
    else {
        return Rewrite::Keep;
    };
    let runs = if k.is_signed() { sext(k.bits(), lb) < sext(k.bits(), ub) } else { lb < ub };
    if runs {
        return Rewrite::Keep;
    }
    Rewrite::with(od.operands[3..].to_vec())
}

fn int_op(opcode: Opcode, k: ScalarKind, a: &[Const], pred: Option<&str>) -> Option<Const> {
    let ints: Vec<u64> = a.iter().map(|c| if let Const::Int(v) = c { Some(*v) } else { None }).collect::<Option<_>>()?;
    let bits = k.bits();
    let signed = k.is_signed();
    let s = |v: u64| sext(bits, v);
    let m = |v: u64| Some(Const::Int(mask(bits, v)));
    let (x, y) = (ints[0], ints.get(1).copied().unwrap_or(0));
    match (opcode, ints.len()) {
        (Opcode::Add, 2) => m(x.wrapping_add(y)),
        (Opcode::Sub, 2) => m(x.wrapping_sub(y)),
        (Opcode::Mul, 2) => m(x.wrapping_mul(y)),
        // the runtime's answer for x / 0 and MIN / -1 is the hardware's, not ours
        (Opcode::Div | Opcode::Rem, 2) if y == 0 => None,
        (Opcode::Div | Opcode::Rem, 2) if signed && s(x) == sext(bits, mask(bits, 1 << (bits - 1))) && s(y) == -1 => None,
        (Opcode::Div, 2) if signed => m(s(x).wrapping_div(s(y)) as u64),
        (Opcode::Div, 2) => m(x / y),
        (Opcode::Rem, 2) if signed => m(s(x).wrapping_rem(s(y)) as u64),
        (Opcode::Rem, 2) => m(x % y),
        (Opcode::And, 2) => m(x & y),
        (Opcode::Or, 2) => m(x | y),
        (Opcode::Xor, 2) => m(x ^ y),
        // amounts read as unsigned; past the width LLVM's result is poison
        (Opcode::Shl | Opcode::Shr, 2) if y >= bits as u64 => None,
        (Opcode::Shl, 2) => m(x << y),
        (Opcode::Shr, 2) if signed => m((s(x) >> y) as u64),
        (Opcode::Shr, 2) => m(x >> y),
        (Opcode::Min, 2) => m(if signed { s(x).min(s(y)) as u64 } else { x.min(y) }),
        (Opcode::Max, 2) => m(if signed { s(x).max(s(y)) as u64 } else { x.max(y) }),
        (Opcode::Cmp, 2) => {
            let ord = if signed { s(x).cmp(&s(y)) } else { x.cmp(&y) };
            cmp_result(pred?, Some(ord))
        }
        (Opcode::Neg, 1) => m(x.wrapping_neg()),
        (Opcode::Not, 1) => m(!x),
        // llvm.abs without the poison flag: |MIN| wraps to MIN
        (Opcode::Abs, 1) if signed => m(s(x).wrapping_abs() as u64),
        (Opcode::Abs, 1) => m(x),
        _ => None,
    }
}

fn cmp_result(pred: &str, ord: Option<std::cmp::Ordering>) -> Option<Const> {
    use std::cmp::Ordering::*;
    let b = match (pred, ord) {
        // floats: ordered compares are false on NaN, `ne` is unordered
        ("ne", None) => true,
        (_, None) => false,
        ("eq", Some(o)) => o == Equal,
        ("ne", Some(o)) => o != Equal,
        ("lt", Some(o)) => o == Less,
        ("le", Some(o)) => o != Greater,
        ("gt", Some(o)) => o == Greater,
        ("ge", Some(o)) => o != Less,
        _ => return None,
    };
    Some(Const::Int(b as u64))
}

fn float_op(opcode: Opcode, k: ScalarKind, a: &[Const], pred: Option<&str>, propagate_nan: bool) -> Option<Const> {
    let fl: Vec<f64> = a.iter().map(|c| if let Const::Float(v) = c { Some(*v) } else { None }).collect::<Option<_>>()?;
    let (x, y) = (fl[0], fl.get(1).copied().unwrap_or(0.0));
    let f32k = k == ScalarKind::F32;
    // f32 arithmetic in f32, so each result is rounded once, like add.rn.f32
    // a NaN result's payload is the hardware's choice: leave it to the hardware
    let bin = |g: fn(f32, f32) -> f32, h: fn(f64, f64) -> f64| {
        let r = if f32k { g(x as f32, y as f32) as f64 } else { h(x, y) };
        (!r.is_nan()).then_some(Const::Float(r))
    };
    match (opcode, fl.len()) {
        (Opcode::Add, 2) => bin(|a, b| a + b, |a, b| a + b),
        (Opcode::Sub, 2) => bin(|a, b| a - b, |a, b| a - b),
        (Opcode::Mul, 2) => bin(|a, b| a * b, |a, b| a * b),
        (Opcode::Min | Opcode::Max, 2) => {
            // minnum's choice between -0 and +0 is unspecified: leave it
            if x == 0.0 && y == 0.0 && x.is_sign_negative() != y.is_sign_negative() {
                return None;
            }
            if x.is_nan() || y.is_nan() {
                // NaN payloads are the hardware's: fold only the non-NaN answer
                return match (propagate_nan, x.is_nan(), y.is_nan()) {
                    (false, true, false) => Some(Const::Float(y)),
                    (false, false, true) => Some(Const::Float(x)),
                    _ => None,
                };
            }
            Some(Const::Float(if opcode == Opcode::Min { x.min(y) } else { x.max(y) }))
        }
        (Opcode::Cmp, 2) => cmp_result(pred?, x.partial_cmp(&y)),
        // sign-bit operations and exact roundings; NaNs keep their bits
        (Opcode::Neg, 1) => Some(Const::Float(-x)),
        (Opcode::Abs, 1) => Some(Const::Float(x.abs())),
        (Opcode::Floor, 1) if !x.is_nan() => Some(Const::Float(x.floor())),
        (Opcode::Ceil, 1) if !x.is_nan() => Some(Const::Float(x.ceil())),
        _ => None,
    }
}

/// `cast` by value (docs/ir.md), only where codegen's answer is certain.
fn cast(from: ScalarKind, to: ScalarKind, c: Const) -> Option<Const> {
    match (c, to.is_int()) {
        (Const::Int(v), true) => {
            if to == ScalarKind::I1 {
                return Some(Const::Int((v != 0) as u64));
            }
            // extend by the source's signedness, then keep the target's bits
            let wide = if from.is_signed() { sext(from.bits(), v) as u64 } else { v };
            Some(Const::Int(mask(to.bits(), wide)))
        }
        (Const::Int(v), false) if exact_float(to) => {
            let x = if from.is_signed() { sext(from.bits(), v) as f64 } else { v as f64 };
            // i64 → f64 rounds once; to f32 it must round once too, from the integer
            let r = match (to, from.is_signed()) {
                (ScalarKind::F32, true) => sext(from.bits(), v) as f32 as f64,
                (ScalarKind::F32, false) => v as f32 as f64,
                _ => x,
            };
            Some(Const::Float(r))
        }
        (Const::Float(x), true) => {
            if to == ScalarKind::I1 {
                return Some(Const::Int((x != 0.0 || x.is_nan()) as u64));
            }
            // out-of-range conversions are poison in LLVM: leave them
            let t = x.trunc();
            if x.is_nan() {
                return None;
            }
            let bits = to.bits();
            let (lo, hi) = if to.is_signed() {
                (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1))
            } else {
                (0.0, 2f64.powi(bits as i32))
            };
            if !(t >= lo && t < hi) {
                return None;
            }
            Some(Const::Int(mask(bits, if to.is_signed() { t as i64 as u64 } else { t as u64 })))
        }
        (Const::Float(x), false) if exact_float(to) => Some(Const::Float(constant::round_to(to, x))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarKind::*;

    fn i(v: u64) -> Const {
        Const::Int(v)
    }

    #[test]
    fn integer_semantics() {
        assert_eq!(int_op(Opcode::Add, I8, &[i(0x7f), i(1)], None), Some(i(0x80)));
        assert_eq!(int_op(Opcode::Div, I32, &[i(mask(32, -7i64 as u64)), i(2)], None), Some(i(mask(32, -3i64 as u64))));
        assert_eq!(int_op(Opcode::Rem, I32, &[i(mask(32, -7i64 as u64)), i(2)], None), Some(i(mask(32, -1i64 as u64))));
        assert_eq!(int_op(Opcode::Div, U32, &[i(0xffff_fff9), i(2)], None), Some(i(0x7fff_fffc)));
        assert_eq!(int_op(Opcode::Div, I32, &[i(1), i(0)], None), None);
        assert_eq!(int_op(Opcode::Div, I32, &[i(0x8000_0000), i(0xffff_ffff)], None), None);
        assert_eq!(int_op(Opcode::Shl, I32, &[i(1), i(32)], None), None);
        assert_eq!(int_op(Opcode::Shr, I8, &[i(0x80), i(7)], None), Some(i(0xff)));
        assert_eq!(int_op(Opcode::Shr, U8, &[i(0x80), i(7)], None), Some(i(1)));
        assert_eq!(int_op(Opcode::Cmp, I8, &[i(0xff), i(1)], Some("lt")), Some(i(1)));
        assert_eq!(int_op(Opcode::Cmp, U8, &[i(0xff), i(1)], Some("lt")), Some(i(0)));
        assert_eq!(int_op(Opcode::Abs, I8, &[i(0x80)], None), Some(i(0x80)));
        assert_eq!(int_op(Opcode::Umulhi, U32, &[i(3), i(4)], None), None);
    }

    #[test]
    fn float_semantics() {
        let f = Const::Float;
        let third = (1.0f32 / 3.0) as f64;
        assert_eq!(float_op(Opcode::Add, F32, &[f(third), f(third)], None, false), Some(f((third as f32 + third as f32) as f64)));
        assert_eq!(float_op(Opcode::Cmp, F32, &[f(f64::NAN), f(1.0)], Some("ne"), false), Some(i(1)));
        assert_eq!(float_op(Opcode::Cmp, F32, &[f(f64::NAN), f(1.0)], Some("eq"), false), Some(i(0)));
        assert_eq!(float_op(Opcode::Min, F32, &[f(-0.0), f(0.0)], None, false), None);
        assert_eq!(float_op(Opcode::Exp, F32, &[f(1.0)], None, false), None);
        assert_eq!(float_op(Opcode::Div, F32, &[f(1.0), f(3.0)], None, false), None);
    }

    #[test]
    fn cast_semantics() {
        assert_eq!(cast(I8, I32, i(0xff)), Some(i(0xffff_ffff)));
        assert_eq!(cast(U8, I32, i(0xff)), Some(i(0xff)));
        assert_eq!(cast(I1, I32, i(1)), Some(i(1)));
        assert_eq!(cast(I32, I1, i(2)), Some(i(1)));
        assert_eq!(cast(F32, I8, Const::Float(200.0)), None);
        assert_eq!(cast(F32, I8, Const::Float(-3.7)), Some(i(mask(8, -3i64 as u64))));
        assert_eq!(cast(U64, F32, i(u64::MAX)), Some(Const::Float(u64::MAX as f32 as f64)));
        assert_eq!(cast(F64, F32, Const::Float(0.1)), Some(Const::Float(0.1f32 as f64)));
        assert_eq!(cast(F32, F16, Const::Float(0.5)), None);
    }
}
