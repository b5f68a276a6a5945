//! Layout assignment for `dot`: the accumulator, A and B layouts
//! `dot_layouts` picks for the target, with A kept in registers where wgmma
//! can read it there.
use tritium_ir::{Attr, Block, Op, Value};

use super::{dot_layouts, Assigner};
use crate::layout::{DotOperand, Layout, Operand};

impl Assigner<'_> {
    pub(super) fn dot(&mut self, b: Block, op: Op) {
        let d = self.f.ops[op].clone();
        let (a, bv, res) = (d.operands[0], d.operands[1], d.results[0]);
        let precision = d.attrs.get("input_precision").and_then(Attr::as_str).unwrap_or("tf32").to_string();
        // B loaded contiguous along K (a transposed access) is staged K-major
        let k_dim = self.rank(bv).saturating_sub(2);
        let b_k_major = matches!(self.layout(bv), Some(Layout::Blocked(b)) if b.order.first() == Some(&k_dim));
        let choice = dot_layouts(self.types, self.f, a, bv, res, &precision, b_k_major, self.opts);
        match choice {
            Some((acc, la, lb)) => {
                let la = self.register_operand_a(a, &acc).unwrap_or(la);
                self.want(b, op, 0, Some(la));
                self.want(b, op, 1, Some(lb));
                self.want(b, op, 2, Some(acc.clone()));
                self.set(res, Some(acc));
            }
            None => self.all_canonical(b, op),
        }
    }

    /// wgmma reads A from registers too (B always from shared memory). Where
    /// A is already in registers in the wgmma operand's arrangement up to a
    /// renaming of each thread's registers (flash attention's P: the previous
    /// dot's accumulator, cast to 16 bits, when its warps tile only M), A
    /// stays there: no shared-memory round trip, no barrier between the two
    /// dots. The conversion left in the IR is that renaming.
    fn register_operand_a(&self, a: Value, acc: &Layout) -> Option<Layout> {
        let Layout::Mma(mma) = acc else { return None };
        let kind = self.types.scalar_kind(self.f.value_type(a))?;
        if mma.version != 3 || kind.bits() != 16 {
            return None;
        }
        let shape = self.types.dims(self.f.value_type(a)).to_vec();
        let here = self.layout(a)?;
        if !matches!(here, Layout::Mma(_) | Layout::DotOperand(_)) {
            return None;
        }
        let want = Layout::DotOperand(DotOperand { parent: mma.clone(), operand: Operand::A, k_width: 2 });
        here.linear(&shape)?.register_permutation_to(&want.linear(&shape)?)?;
        Some(want)
    }
}
