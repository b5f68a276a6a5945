//! Generators of the block memory ops (docs/ir.md): a block of random shape
//! over a base pointer, i32/i64 shapes, i64 strides and i32 offsets (a
//! scalar start, or one row index per row along a dimension: a gather),
//! random boundary checks, and for loads an optional padding value.
use arbitrary::Result;
use tritium_ir::{Attr, Block, Opcode, ScalarKind};

use super::types;
use super::Gen;

impl Gen<'_, '_, '_> {
    pub(super) fn block_memory(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let dims = types::shape(self.u, 1)?;
        let r = dims.len();
        let k = types::scalar_kind(self.u)?;
        let elem = types::scalar(self.b.module, k);
        let ptr = self.b.module.types.ptr(elem, 1);
        let (i32t, i64t) = (types::scalar(self.b.module, ScalarKind::I32), types::scalar(self.b.module, ScalarKind::I64));
        let mut operands = vec![self.value_of(block, ptr)?];
        for _ in 0..r {
            let t = if self.u.arbitrary()? { i64t } else { i32t };
            operands.push(self.value_of(block, t)?);
        }
        for _ in 0..r {
            operands.push(self.value_of(block, i64t)?);
        }
        for &d in &dims {
            let t = if self.u.ratio(1, 4)? { types::shaped(self.b.module, &[d], i32t) } else { i32t };
            operands.push(self.value_of(block, t)?);
        }
        let mut checked = Vec::new();
        for d in 0..r as i64 {
            if self.u.arbitrary()? {
                checked.push(d);
            }
        }
        let order: Vec<i64> = (0..r as i64).rev().collect();
        let mut attrs = vec![
            ("boundary_check", Attr::IntArray(checked)),
            ("order", Attr::IntArray(order)),
            ("descriptor", Attr::Bool(self.u.arbitrary()?)),
        ];
        let bt = types::shaped(self.b.module, &dims, elem);
        match opcode {
            Opcode::BlockLoad => {
                if self.u.arbitrary()? {
                    operands.push(self.value_of(block, elem)?);
                }
                attrs.push(("cache", Attr::Str("".into())));
                attrs.push(("eviction", Attr::Str("".into())));
                attrs.push(("volatile", Attr::Bool(self.u.arbitrary()?)));
                self.op(block, opcode, &operands, &[bt], &attrs)?;
            }
            Opcode::BlockStore => {
                operands.push(self.value_of(block, bt)?);
                attrs.push(("cache", Attr::Str("".into())));
                attrs.push(("eviction", Attr::Str("".into())));
                self.op(block, opcode, &operands, &[], &attrs)?;
            }
            _ => {
                operands.push(self.value_of(block, bt)?);
                let kind = *self.u.choose(&["add", "max", "min", "and", "or", "xor"])?;
                attrs.push(("kind", Attr::Str(kind.into())));
                attrs.push(("sem", Attr::Str("release".into())));
                attrs.push(("scope", Attr::Str("gpu".into())));
                self.op(block, opcode, &operands, &[], &attrs)?;
            }
        }
        Ok(())
    }
}
