//! Which ops a pass may remove or merge. An allow-list: an op not named here
//! (including ops added to the table later) counts as having effects, so a
//! new op is never deleted by mistake.
use tritium_ir::{Attr, Function, Op};

/// Ops whose results depend only on their operands (and attributes).
fn pure_opcode(name: &str) -> bool {
    matches!(
        name,
        "const" | "splat" | "arange" | "program_id" | "num_programs"
            | "add" | "sub" | "mul" | "div" | "div_rn" | "rem" | "and" | "or" | "xor" | "shl" | "shr"
            | "min" | "max" | "umulhi" | "cmp" | "neg" | "not" | "abs"
            | "exp" | "exp2" | "log" | "log2" | "sqrt" | "sqrt_rn" | "rsqrt" | "sin" | "cos" | "floor" | "ceil" | "erf"
            | "fma" | "select" | "clamp"
            | "cast" | "bitcast" | "ptr_to_int" | "int_to_ptr" | "addptr"
            | "broadcast" | "expand_dims" | "reshape" | "permute" | "join" | "split" | "cat"
            | "reduce" | "scan" | "dot"
            | "multiple_of" | "max_contiguous" | "max_constancy"
    )
}

/// An op that computes from its operands alone: may be merged with an equal
/// op (CSE) and removed when unused (DCE).
pub fn is_pure(f: &Function, op: Op) -> bool {
    let od = &f.ops[op];
    let name = od.opcode.name();
    pure_opcode(name) || name == "inline_asm" && od.attrs.get("pure").and_then(Attr::as_bool) == Some(true)
}

/// An op DCE may remove when its results are unused: pure ops and
/// non-volatile loads (a load's only effect is its result).
pub fn is_removable(f: &Function, op: Op) -> bool {
    let od = &f.ops[op];
    is_pure(f, op) || od.opcode.name() == "load" && od.attrs.get("volatile").and_then(Attr::as_bool) != Some(true)
}
