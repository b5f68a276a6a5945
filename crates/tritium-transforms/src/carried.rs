//! Loop-carried slots a loop never changes. A `for` slot whose body yields
//! its own block argument, or a `while` slot that `condition` forwards and
//! the after-region yields back unchanged, holds its init on every
//! iteration: its block arguments and result are the init, and the slot
//! goes. The frontend carries every field of an aggregate a loop may touch
//! and relies on this to keep only the ones that change.
use tritium_ir::{Function, Op, Opcode, Value};

/// Drops the invariant slots of `op` (a `for` or `while`) in place; returns
/// each dropped block argument and result with the init that replaces it.
pub(crate) fn drop_invariant_slots(f: &mut Function, op: Op) -> Vec<(Value, Value)> {
    let od = &f.ops[op];
    let regions: Vec<_> = od.regions.iter().map(|&r| f.regions[r].block).collect();
    let terminator = |b| f.blocks[b].ops.last().copied();
    // (first carried operand, first carried body argument) and the loop's blocks
    let (first_operand, first_arg, before, body) = match od.opcode {
        Opcode::For => (3, 1, None, regions[0]),
        Opcode::While => (0, 0, Some(regions[0]), regions[1]),
        _ => return Vec::new(),
    };
    let Some(yield_op) = terminator(body) else { return Vec::new() };
    let cond_op = before.and_then(terminator);
    let slots = od.results.len().min(od.operands.len() - first_operand);
    let invariant = |i: usize| {
        let passes_through = f.ops[yield_op].operands.get(i) == f.blocks[body].args.get(first_arg + i);
        let forwarded = match (before, cond_op) {
            (Some(b), Some(c)) => f.ops[c].operands.get(1 + i) == f.blocks[b].args.get(i),
            _ => true,
        };
        passes_through && forwarded
    };
    let dropped: Vec<usize> = (0..slots).filter(|&i| invariant(i)).collect();
    let mut subst = Vec::new();
    for &i in dropped.iter().rev() {
        let init = f.ops[op].operands[first_operand + i];
        subst.push((f.blocks[body].args[first_arg + i], init));
        subst.push((f.ops[op].results[i], init));
        f.ops[op].operands.remove(first_operand + i);
        f.remove_op_result(op, i);
        f.remove_block_arg(body, first_arg + i);
        f.ops[yield_op].operands.remove(i);
        if let (Some(b), Some(c)) = (before, cond_op) {
            subst.push((f.blocks[b].args[i], init));
            f.remove_block_arg(b, i);
            f.ops[c].operands.remove(1 + i);
        }
    }
    subst
}
