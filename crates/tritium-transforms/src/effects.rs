//! Which ops a pass may remove or merge: those the op table marks pure
//! (unmarked ops, new ones included, count as having effects), `inline_asm`
//! and `extern_elementwise` when their `pure` attribute says so, and
//! non-volatile loads for DCE.
use tritium_ir::{Attr, Function, Op, Opcode};

/// An op that computes from its operands alone: may be merged with an equal
/// op (CSE) and removed when unused (DCE).
pub fn is_pure(f: &Function, op: Op) -> bool {
    let od = &f.ops[op];
    od.opcode.info().pure
        || matches!(od.opcode, Opcode::InlineAsm | Opcode::ExternElementwise)
            && od.attrs.get("pure").and_then(Attr::as_bool) == Some(true)
}

/// An op DCE may remove when its results are unused: pure ops and
/// non-volatile loads (a load's only effect is its result).
pub fn is_removable(f: &Function, op: Op) -> bool {
    let od = &f.ops[op];
    is_pure(f, op) || od.opcode == Opcode::Load && od.attrs.get("volatile").and_then(Attr::as_bool) != Some(true)
}
