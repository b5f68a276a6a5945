//! Generators of the software pipeliner's ops (docs/ir.md): a multi-stage
//! buffer, then views of a stage and asynchronous copies into one (their
//! buffer must be a `local_alloc`, so each comes with its own), commit and
//! wait; `dot_wait` over a few values (what it waits for is the
//! asynchronous dots of a pipelined loop, but any values verify); and the
//! mbarrier ring ops, each on a ring of its own (`stages x 1` i64).
use arbitrary::Result;
use tritium_ir::{Attr, Block, Opcode, ScalarKind};

use super::types;
use super::Gen;

impl Gen<'_, '_, '_> {
    pub(super) fn staging(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        match opcode {
            Opcode::AsyncCommit => return self.op(block, opcode, &[], &[], &[]).map(|_| ()),
            Opcode::AsyncWait => {
                let pending = Attr::Int(self.u.int_in_range(0..=3)?);
                return self.op(block, opcode, &[], &[], &[("pending", pending)]).map(|_| ());
            }
            Opcode::DotWait => {
                let n = self.u.int_in_range(1..=2)?;
                let mut vs = Vec::new();
                for _ in 0..n {
                    let t = self.any_type()?;
                    vs.push(self.value_of(block, t)?);
                }
                let tys: Vec<_> = vs.iter().map(|&v| self.ty(v)).collect();
                let pending = Attr::Int(self.u.int_in_range(0..=1)?);
                return self.op(block, opcode, &vs, &tys, &[("pending", pending)]).map(|_| ());
            }
            Opcode::MbarrierInit | Opcode::MbarrierWait | Opcode::MbarrierInval => {
                let stages = self.u.int_in_range(1..=4)?;
                let i64t = types::scalar(self.b.module, ScalarKind::I64);
                let ring_t = types::shaped(self.b.module, &[stages, 1], i64t);
                let ring = self.b.op(block, Opcode::LocalAlloc, &[], &[ring_t], &[])[0];
                let i32t = types::scalar(self.b.module, ScalarKind::I32);
                return match opcode {
                    Opcode::MbarrierInit => {
                        let count = Attr::Int(self.u.int_in_range(1..=2)?);
                        self.op(block, opcode, &[ring], &[], &[("count", count)]).map(|_| ())
                    }
                    Opcode::MbarrierWait => {
                        let (stage, phase) = (self.value_of(block, i32t)?, self.value_of(block, i32t)?);
                        self.op(block, opcode, &[ring, stage, phase], &[], &[]).map(|_| ())
                    }
                    _ => self.op(block, opcode, &[ring], &[], &[]).map(|_| ()),
                };
            }
            _ => {}
        }
        let tile = types::shape(self.u, 1)?;
        let stages = self.u.int_in_range(1..=4)?;
        let k = types::scalar_kind(self.u)?;
        let elem = types::scalar(self.b.module, k);
        let mut dims = vec![stages];
        dims.extend_from_slice(&tile);
        let buf_t = types::shaped(self.b.module, &dims, elem);
        // kept out of the pool: nothing but a view or a copy may take a buffer
        let buf = self.b.op(block, Opcode::LocalAlloc, &[], &[buf_t], &[])[0];
        let i32t = types::scalar(self.b.module, ScalarKind::I32);
        match opcode {
            Opcode::LocalView => {
                let stage = self.value_of(block, i32t)?;
                let tile_t = types::shaped(self.b.module, &tile, elem);
                self.op(block, opcode, &[buf, stage], &[tile_t], &[])?;
            }
            Opcode::AsyncCopy => {
                let stage = self.value_of(block, i32t)?;
                let ptr = self.b.module.types.ptr(elem, 1);
                let ptrs_t = types::shaped(self.b.module, &tile, ptr);
                let mut operands = vec![buf, stage, self.value_of(block, ptrs_t)?];
                if self.u.arbitrary()? {
                    let i1 = types::scalar(self.b.module, ScalarKind::I1);
                    let mask_t = types::shaped(self.b.module, &tile, i1);
                    operands.push(self.value_of(block, mask_t)?);
                    if self.u.arbitrary()? {
                        let tile_t = types::shaped(self.b.module, &tile, elem);
                        operands.push(self.value_of(block, tile_t)?);
                    }
                }
                self.op(block, opcode, &operands, &[], &[])?;
            }
            _ => {}
        }
        Ok(())
    }
}
