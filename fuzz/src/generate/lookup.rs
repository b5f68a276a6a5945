//! Generators of `gather`, `histogram`, `assume` and `extern_elementwise`
//! (docs/ir.md). Library calls use libdevice functions the NVPTX target
//! lowers itself, so generated modules compile without libdevice.10.bc.
use arbitrary::Result;
use tritium_ir::{Attr, Block, Opcode, ScalarKind};

use super::types;
use super::Gen;

/// (symbol, operand kinds, result kind) of one-instruction libdevice functions.
const LIBRARY: [(&str, &[ScalarKind], ScalarKind); 5] = [
    ("__nv_floorf", &[ScalarKind::F32], ScalarKind::F32),
    ("__nv_fadd_rz", &[ScalarKind::F32, ScalarKind::F32], ScalarKind::F32),
    ("__nv_popc", &[ScalarKind::I32], ScalarKind::I32),
    ("__nv_dmul_ru", &[ScalarKind::F64, ScalarKind::F64], ScalarKind::F64),
    ("__nv_isnanf", &[ScalarKind::F32], ScalarKind::I32),
];

impl Gen<'_, '_, '_> {
    pub(super) fn lookup(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        match opcode {
            Opcode::Gather => {
                let dims = types::shape(self.u, 1)?;
                let axis = self.u.choose_index(dims.len())?;
                let mut idx_dims = dims.clone();
                idx_dims[axis] = *self.u.choose(&[1u32, 2, 4, 8])?;
                let k = types::scalar_kind(self.u)?;
                let elem = types::scalar(self.b.module, k);
                let src_t = types::shaped(self.b.module, &dims, elem);
                let ik = *self.u.choose(&[ScalarKind::I32, ScalarKind::I64, ScalarKind::U8])?;
                let idx_t = self.shaped_index(&idx_dims, ik);
                let res_t = types::shaped(self.b.module, &idx_dims, elem);
                let (src, idx) = (self.value_of(block, src_t)?, self.value_of(block, idx_t)?);
                self.op(block, opcode, &[src, idx], &[res_t], &[("axis", Attr::Int(axis as i64))])?;
            }
            Opcode::Histogram => {
                let n = *self.u.choose(&[1u32, 4, 16, 64])?;
                let bins = *self.u.choose(&[1i64, 2, 8, 32])?;
                let k = types::int_kind(self.u)?;
                let k = if k == ScalarKind::I1 { ScalarKind::I32 } else { k };
                let input_t = self.shaped_index(&[n], k);
                let mut operands = vec![self.value_of(block, input_t)?];
                if self.u.arbitrary()? {
                    let mask_t = self.shaped_index(&[n], ScalarKind::I1);
                    operands.push(self.value_of(block, mask_t)?);
                }
                let res_t = self.shaped_index(&[bins as u32], ScalarKind::I32);
                self.op(block, opcode, &operands, &[res_t], &[("num_bins", Attr::Int(bins))])?;
            }
            Opcode::Assume => {
                let dims = types::shape(self.u, 0)?;
                let t = self.shaped_index(&dims, ScalarKind::I1);
                let c = self.value_of(block, t)?;
                self.op(block, opcode, &[c], &[], &[])?;
            }
            _ => {
                let (symbol, args, ret) = *self.u.choose(&LIBRARY)?;
                let dims = types::shape(self.u, 0)?;
                let mut operands = Vec::with_capacity(args.len());
                for &k in args {
                    let t = self.shaped_index(&dims, k);
                    operands.push(self.value_of(block, t)?);
                }
                let res_t = self.shaped_index(&dims, ret);
                let attrs = [("symbol", Attr::Str(symbol.into())), ("lib", Attr::Str("libdevice".into())),
                             ("pure", Attr::Bool(self.u.arbitrary()?))];
                self.op(block, Opcode::ExternElementwise, &operands, &[res_t], &attrs)?;
            }
        }
        Ok(())
    }

    /// A type of shape `dims` (scalar when empty) with elements of kind `k`.
    fn shaped_index(&mut self, dims: &[u32], k: ScalarKind) -> tritium_ir::Type {
        let s = types::scalar(self.b.module, k);
        types::shaped(self.b.module, dims, s)
    }
}
