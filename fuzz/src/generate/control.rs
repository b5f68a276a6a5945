//! Generators of the ops that own regions or call: `if`, `for`, `while`
//! (regions filled by `ops_into` one level deeper) and `call` (of a function
//! generated earlier, so the call graph stays acyclic).
use arbitrary::Result;
use tritium_ir::{Attr, Block, Opcode, ScalarKind, Type};

use super::types;
use super::Gen;

impl Gen<'_, '_, '_> {
    /// Fills a region's block: its arguments join the pool for its ops, then
    /// `terminator` yields values of `yields`; the pool is restored after.
    pub(super) fn region(&mut self, block: Block, depth: usize, terminator: Opcode, yields: &[Type]) -> Result<()> {
        let mark = self.pool.len();
        let args = self.b.block_args(block);
        self.pool.extend(args);
        self.ops_into(block, depth + 1)?;
        let vs = self.values_of(block, yields)?;
        self.b.op(block, terminator, &vs, &[], &[]);
        self.pool.truncate(mark);
        Ok(())
    }

    fn result_types(&mut self, max: usize) -> Result<Vec<Type>> {
        let n = self.u.int_in_range(0..=max)?;
        (0..n).map(|_| self.any_type()).collect()
    }

    pub(super) fn if_op(&mut self, block: Block, depth: usize) -> Result<()> {
        let i1 = types::scalar(self.b.module, ScalarKind::I1);
        let cond = self.value_of(block, i1)?;
        let results = self.result_types(2)?;
        let (rs, blocks) = self.b.op_with_regions(block, Opcode::If, &[cond], &results, &[], &[&[], &[]]);
        self.region(blocks[0], depth, Opcode::Yield, &results)?;
        self.region(blocks[1], depth, Opcode::Yield, &results)?;
        self.pool.extend(rs);
        Ok(())
    }

    pub(super) fn for_op(&mut self, block: Block, depth: usize) -> Result<()> {
        let ints: Vec<ScalarKind> =
            ScalarKind::ALL.into_iter().filter(|k| k.is_int() && *k != ScalarKind::I1).collect();
        let k = *self.u.choose(&ints)?;
        let iv = types::scalar(self.b.module, k);
        let mut operands = vec![self.value_of(block, iv)?, self.value_of(block, iv)?, self.value_of(block, iv)?];
        let inits = self.result_types(2)?;
        for &t in &inits {
            operands.push(self.value_of(block, t)?);
        }
        let mut args = vec![iv];
        args.extend_from_slice(&inits);
        let (rs, blocks) = self.b.op_with_regions(block, Opcode::For, &operands, &inits, &[], &[&args]);
        self.region(blocks[0], depth, Opcode::Yield, &inits)?;
        self.pool.extend(rs);
        Ok(())
    }

    pub(super) fn while_op(&mut self, block: Block, depth: usize) -> Result<()> {
        let inits = self.result_types(2)?;
        let forwarded = self.result_types(2)?;
        let operands = inits.iter().map(|&t| self.value_of(block, t)).collect::<Result<Vec<_>>>()?;
        let (rs, blocks) = self.b.op_with_regions(block, Opcode::While, &operands, &forwarded, &[], &[&inits, &forwarded]);
        // before: ends in condition(i1, forwarded...)
        let i1 = types::scalar(self.b.module, ScalarKind::I1);
        let mut cond_types = vec![i1];
        cond_types.extend_from_slice(&forwarded);
        self.region(blocks[0], depth, Opcode::Condition, &cond_types)?;
        self.region(blocks[1], depth, Opcode::Yield, &inits)?;
        self.pool.extend(rs);
        Ok(())
    }

    pub(super) fn call(&mut self, block: Block) -> Result<()> {
        if self.callees.is_empty() {
            return Ok(());
        }
        let callee = self.u.choose(self.callees)?.clone();
        let args = self.values_of(block, &callee.params)?;
        self.op(block, Opcode::Call, &args, &callee.results, &[("callee", Attr::Str(callee.name))])?;
        Ok(())
    }
}
