//! Accumulating dots: `acc + dot(a, b, 0)` becomes `dot(a, b, acc)`.
//!
//! `acc += tl.dot(a, b)` is how most kernels accumulate, and the frontend
//! builds it literally: a dot into a fresh zero tile, then an add. Left so,
//! a loop keeps two accumulators live (the running sum and the dot's
//! result, 2 x 128 registers a thread for a 128x128 f32 tile over four
//! warps: ptxas spills) and pays a full-tile add per iteration, where the
//! tensor cores could accumulate in place. Fusing lets them.
//!
//! For floats this is a contraction, like an FMA: the products are summed
//! onto `acc` instead of onto zero and then added, so the last bits may
//! differ. Triton fuses the same way, and kernels are tuned and tested
//! expecting it. Integer dots are exact either way. fp8 dots are left
//! alone: Hopper accumulates their products in less than f32 precision
//! (what `max_num_imprecise_acc` bounds), so the running sum stays in the
//! exact f32 add, promoted once a block.
//!
//! The dot must have no other use and sit in the add's block; it moves to
//! the add's place, where `acc` is defined (its own operands were defined
//! before its old place, so they still are).
use tritium_ir::{Block, Function, Module, Op, Opcode, TypeTable, Value};

use crate::constant::is_zero;

/// Fuses every accumulating dot of `m`; returns how many.
pub fn fuse_dot_accumulate(m: &mut Module) -> usize {
    let Module { types, funcs, .. } = m;
    let ids: Vec<_> = funcs.keys().collect();
    ids.into_iter().map(|id| fuse_in(types, &mut funcs[id])).sum()
}

fn fuse_in(types: &TypeTable, f: &mut Function) -> usize {
    let uses = f.use_counts();
    let mut fused = 0;
    for (block, add) in f.ops_preorder() {
        let od = &f.ops[add];
        if od.opcode != Opcode::Add {
            continue;
        }
        let &[x, y] = od.operands.as_slice() else { continue };
        let only_use = |v: Value| uses.get(&v) == Some(&1);
        let found = [(x, y), (y, x)].into_iter().find_map(|(d, acc)| {
            let dot = zero_acc_dot(types, f, block, d)?;
            (only_use(d) && acc != d && f.value_type(acc) == f.value_type(d)).then_some((dot, acc))
        });
        let Some((dot, acc)) = found else { continue };
        let sum = f.ops[add].results[0];
        f.ops[dot].operands[2] = acc;
        f.erase_op(block, dot);
        f.insert_op_before(block, add, dot);
        f.erase_op(block, add);
        let result = f.ops[dot].results[0];
        f.replace_all_uses(sum, result);
        fused += 1;
    }
    fused
}

/// The dot in `block` defining `v`, if it accumulates onto zero (and is not fp8).
fn zero_acc_dot(types: &TypeTable, f: &Function, block: Block, v: Value) -> Option<Op> {
    let op = f.defining_op(v)?;
    let d = &f.ops[op];
    if d.opcode != Opcode::Dot || !f.blocks[block].ops.contains(&op) {
        return None;
    }
    let fp8 = types.scalar_kind(f.value_type(d.operands[0])).is_some_and(|k| k.is_float() && k.bits() == 8);
    (!fp8 && is_zero(f, d.operands[2])).then_some(op)
}
