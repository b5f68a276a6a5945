//! Constant values as the passes see them: what a value is known to equal
//! (a `const`, a splat/broadcast/reshape of one, an `equal_to_1` argument),
//! in the exact representation codegen gives it, and how to write one back.
use tritium_ir::{Attr, Function, Loc, Op, Opcode, ScalarKind, Type, TypeTable, Value, ValueDef};

/// A uniform value: integers as their bit pattern masked to the type's width,
/// floats (f32 and f64 only) as the exact value codegen materializes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Int(u64),
    Float(f64),
}

pub fn mask(bits: u32, v: u64) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Two's complement reading of a masked pattern.
pub fn sext(bits: u32, v: u64) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

/// Kinds whose float arithmetic the folder reproduces bit for bit.
pub fn exact_float(k: ScalarKind) -> bool {
    matches!(k, ScalarKind::F32 | ScalarKind::F64)
}

/// Rounds an f64 to `k`'s precision the way the constant is materialized.
pub fn round_to(k: ScalarKind, x: f64) -> f64 {
    if k == ScalarKind::F32 {
        x as f32 as f64
    } else {
        x
    }
}

/// The constant a `const` attribute denotes for element kind `k`.
pub fn from_attr(k: ScalarKind, a: &Attr) -> Option<Const> {
    let bits = k.bits();
    match (a, k.is_int()) {
        (Attr::Int(v), true) => Some(Const::Int(mask(bits, *v as u64))),
        (Attr::Bool(b), true) => Some(Const::Int(*b as u64)),
        (Attr::Float(_), true) => None,
        (_, false) if !exact_float(k) => None,
        (Attr::Int(v), false) => Some(Const::Float(round_to(k, *v as f64))),
        (Attr::Bool(b), false) => Some(Const::Float(*b as u8 as f64)),
        (Attr::Float(x), false) => Some(Const::Float(round_to(k, *x))),
        _ => None,
    }
}

/// The attribute that writes `c` back for kind `k`.
pub fn to_attr(k: ScalarKind, c: Const) -> Attr {
    match c {
        Const::Int(v) if k == ScalarKind::I1 => Attr::Bool(v & 1 == 1),
        Const::Int(v) if k.is_signed() => Attr::Int(sext(k.bits(), v)),
        Const::Int(v) => Attr::Int(v as i64),
        Const::Float(x) => Attr::Float(x),
    }
}

/// Ops whose result equals their (first) operand at every element.
fn forwards_uniform(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::Splat | Opcode::Broadcast | Opcode::ExpandDims | Opcode::Reshape | Opcode::Permute)
}

/// The scalar kind and uniform value `v` is known to have, if any.
pub fn value_of(types: &TypeTable, f: &Function, v: Value) -> Option<(ScalarKind, Const)> {
    let k = types.scalar_kind(f.value_type(v))?;
    match f.values[v].def {
        ValueDef::BlockArg(b, i) => {
            // an integer argument specialized as equal to 1 is the constant 1
            let attrs = f.arg_attrs.get(i as usize).filter(|_| b == f.entry_block())?;
            let one = attrs.get("equal_to_1").and_then(Attr::as_bool) == Some(true);
            (one && k.is_int() && !types.is_tensor(f.value_type(v))).then_some((k, Const::Int(1)))
        }
        ValueDef::OpResult(op, _) => {
            let od = &f.ops[op];
            if od.opcode == Opcode::Const {
                return from_attr(k, od.attrs.get("value")?).map(|c| (k, c));
            }
            if forwards_uniform(od.opcode) {
                return value_of(types, f, od.operands[0]);
            }
            None
        }
    }
}

/// An unplaced `const` op of type `ty` (element kind `k`) holding `c`.
pub fn make(f: &mut Function, ty: Type, k: ScalarKind, c: Const, loc: Loc) -> Op {
    f.create_const(ty, to_attr(k, c), loc)
}

/// Whether `v` is zero everywhere (a zero constant, splat or cast or not) in
/// any element kind, f16 included: what `cp.async`'s zero fill gives masked
/// lanes, and the accumulator of a dot that adds nothing.
pub fn is_zero(f: &Function, v: Value) -> bool {
    let Some(op) = f.defining_op(v) else { return false };
    let d = &f.ops[op];
    match d.opcode {
        Opcode::Const => match d.attrs.get("value") {
            Some(Attr::Int(0)) => true,
            Some(Attr::Float(x)) => x.to_bits() == 0,
            _ => false,
        },
        // every cast takes zero to zero
        Opcode::Splat | Opcode::Cast => is_zero(f, d.operands[0]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_round_trip_through_attributes() {
        for (k, v) in [(ScalarKind::I8, -1i64), (ScalarKind::U8, 255), (ScalarKind::I64, i64::MIN), (ScalarKind::U64, -1)] {
            let c = from_attr(k, &Attr::Int(v)).unwrap();
            assert_eq!(from_attr(k, &to_attr(k, c)), Some(c));
        }
        assert_eq!(from_attr(ScalarKind::I8, &Attr::Int(300)), Some(Const::Int(44)));
        assert_eq!(sext(8, 0xff), -1);
        assert_eq!(from_attr(ScalarKind::F32, &Attr::Float(0.1)), Some(Const::Float(0.1f32 as f64)));
        assert_eq!(from_attr(ScalarKind::F16, &Attr::Float(0.5)), None);
        assert_eq!(to_attr(ScalarKind::I1, Const::Int(1)), Attr::Bool(true));
    }
}
