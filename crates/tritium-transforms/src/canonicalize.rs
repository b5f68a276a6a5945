//! Algebraic identities that hold for every input, so they never change what
//! a kernel computes: x+0, x*1, x*0, x&-1, x|0, x^x, ... on INTEGERS only
//! (floats have -0.0 and NaN), double negation, casts and shape ops to the
//! same type, `select` with equal arms, `addptr` by 0. Integer arguments
//! specialized `equal_to_1` count as the constant 1, so `i * stride` loses its
//! multiply in the tile IR itself. Loops lose the carried slots they never
//! change (`carried.rs`).
use tritium_ir::{Attr, Function, Module, Op, Opcode, TypeTable, Value};

use crate::carried;
use crate::constant::{self, mask, Const};
use crate::walk::{rewrite_module, Rewrite};

/// Canonicalizes every function of `m`; returns how many ops were rewritten.
pub fn canonicalize(m: &mut Module) -> usize {
    rewrite_module(m, &mut canonicalize_op)
}

/// The integer constant `v` holds, if it is one.
fn int(types: &TypeTable, f: &Function, v: Value) -> Option<u64> {
    match constant::value_of(types, f, v) {
        Some((k, Const::Int(c))) if k.is_int() => Some(c),
        _ => None,
    }
}

fn canonicalize_op(types: &TypeTable, f: &mut Function, op: Op) -> Rewrite {
    let od = &f.ops[op];
    if matches!(od.opcode, Opcode::For | Opcode::While) {
        let replaced = carried::drop_invariant_slots(f, op);
        return if replaced.is_empty() { Rewrite::Keep } else { Rewrite::Pruned(replaced) };
    }
    if od.results.len() != 1 || !od.regions.is_empty() {
        return Rewrite::Keep;
    }
    let opcode = od.opcode;
    let res_ty = f.value_type(od.results[0]);
    let ops = od.operands.clone();
    let same = |i: usize| Rewrite::with(vec![ops[i]]);
    let same_type_shape_op = matches!(opcode, Opcode::Cast | Opcode::Bitcast | Opcode::Broadcast | Opcode::Reshape | Opcode::Permute);
    if same_type_shape_op && f.value_type(ops[0]) == res_ty {
        // a permute to its own type may still reorder a square tensor
        let identity = opcode != Opcode::Permute
            || od.attrs.get("order").and_then(Attr::as_int_array).is_some_and(|o| o.iter().enumerate().all(|(i, &d)| d == i as i64));
        if identity {
            return same(0);
        }
    }
    if opcode == Opcode::Select && ops[1] == ops[2] {
        return same(1);
    }
    if opcode == Opcode::Addptr && int(types, f, ops[1]) == Some(0) {
        return same(0);
    }
    if matches!(opcode, Opcode::Not | Opcode::Neg) {
        // neg and not are involutions, floats included (neg flips the sign bit)
        if let Some(inner) = f.defining_op(ops[0]).filter(|&d| f.ops[d].opcode == od.opcode) {
            return Rewrite::with(vec![f.ops[inner].operands[0]]);
        }
        return Rewrite::Keep;
    }
    let Some(k) = types.scalar_kind(res_ty).filter(|k| k.is_int()) else { return Rewrite::Keep };
    if ops.len() != 2 || opcode == Opcode::Cmp && types.scalar_kind(f.value_type(ops[0])).is_none_or(|k| !k.is_int()) {
        return Rewrite::Keep;
    }
    let ones = mask(k.bits(), u64::MAX);
    let (a, b) = (int(types, f, ops[0]), int(types, f, ops[1]));
    let loc = od.loc;
    let zero_or = |f: &mut Function, c: u64| {
        let new = constant::make(f, res_ty, k, Const::Int(c), loc);
        Rewrite::by_op(f, new)
    };
    let equal = ops[0] == ops[1];
    match opcode {
        Opcode::Add | Opcode::Or | Opcode::Xor if b == Some(0) => same(0),
        Opcode::Add | Opcode::Or | Opcode::Xor if a == Some(0) => same(1),
        Opcode::Sub | Opcode::Shl | Opcode::Shr if b == Some(0) => same(0),
        Opcode::Mul if b == Some(1) => same(0),
        Opcode::Mul if a == Some(1) => same(1),
        Opcode::Mul if a == Some(0) || b == Some(0) => zero_or(f, 0),
        Opcode::Div if b == Some(1) => same(0),
        Opcode::And if b == Some(ones) => same(0),
        Opcode::And if a == Some(ones) => same(1),
        Opcode::And if a == Some(0) || b == Some(0) => zero_or(f, 0),
        Opcode::Or if a == Some(ones) || b == Some(ones) => zero_or(f, ones),
        Opcode::And | Opcode::Or | Opcode::Min | Opcode::Max if equal => same(0),
        Opcode::Sub | Opcode::Xor if equal => zero_or(f, 0),
        Opcode::Cmp if equal => {
            let holds = match od.attrs.get("pred").and_then(Attr::as_str) {
                Some("eq" | "le" | "ge") => 1,
                Some("ne" | "lt" | "gt") => 0,
                _ => return Rewrite::Keep,
            };
            zero_or(f, holds)
        }
        _ => Rewrite::Keep,
    }
}
