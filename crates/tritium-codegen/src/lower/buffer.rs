//! Buffer loads and stores (AMD): when a kernel's pointer argument carries the
//! `pointer_range = 32` fact (its storage from the pointer on fits a signed
//! 32-bit byte offset, `backends/amd.py`) and every offset added to it is
//! provably non-negative, an access is a 32-bit byte offset into a buffer
//! resource made from the argument. Masked-off lanes get an offset past the
//! resource's range, so the hardware returns zeros and drops stores: no
//! branch around the access. Otherwise the target's global access runs.
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use tritium_ir::{Opcode, ScalarKind, Value, ValueDef};

use super::Lowering;
use crate::error::Result;
use crate::target::{Access, MemHints};

/// How deep `non_negative` follows operands before it gives up (offsets are
/// short expressions; a long chain is not worth proving).
const MAX_DEPTH: u32 = 24;

impl<'a, 'c> Lowering<'a, 'c> {
    /// The kernel argument `ptr` is derived from by `addptr`s (through shape
    /// ops), when it has `pointer_range = 32` and all the offsets are
    /// non-negative; None otherwise.
    pub(super) fn buffer_base(&self, ptr: Value) -> Option<Value> {
        if !self.func.kernel {
            return None; // a device function's arguments hold no launch facts
        }
        let mut v = ptr;
        for _ in 0..MAX_DEPTH {
            match self.func.values[v].def {
                ValueDef::BlockArg(block, i) if block == self.func.entry_block() => {
                    let attrs = self.func.arg_attrs.get(i as usize)?;
                    return (attrs.get("pointer_range").and_then(|a| a.as_int()) == Some(32)).then_some(v);
                }
                ValueDef::OpResult(op, _) => {
                    let d = self.op(op);
                    match d.opcode {
                        Opcode::Addptr if self.non_negative(d.operands[1], 0) => v = d.operands[0],
                        Opcode::Splat | Opcode::Broadcast | Opcode::ExpandDims | Opcode::Reshape | Opcode::MultipleOf
                        | Opcode::MaxContiguous | Opcode::MaxConstancy => v = d.operands[0],
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        None
    }

    /// Whether integer `v` is never negative (as a signed value), for every
    /// lane, by the rules of the ops that make it. Overflow of the user's own
    /// offset arithmetic is not considered: it would make the global address
    /// wrong too.
    fn non_negative(&self, v: Value, depth: u32) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        if matches!(self.kind(v), Some(ScalarKind::U8 | ScalarKind::U16 | ScalarKind::U32 | ScalarKind::U64 | ScalarKind::I1)) {
            return true;
        }
        let nn = |x: Value| self.non_negative(x, depth + 1);
        match self.func.values[v].def {
            ValueDef::BlockArg(block, i) if block == self.func.entry_block() => {
                let attrs = &self.func.arg_attrs[i as usize];
                attrs.get("equal_to_1").is_some()
            }
            ValueDef::BlockArg(block, 0) => {
                // a `for`'s induction variable: lb + k * step, k >= 0
                self.func.ops.iter().any(|(_, d)| {
                    d.opcode == Opcode::For
                        && d.regions.first().is_some_and(|&r| self.func.regions[r].block == block)
                        && nn(d.operands[0])
                        && nn(d.operands[2])
                })
            }
            ValueDef::BlockArg(..) => false,
            ValueDef::OpResult(op, _) => {
                let d = self.op(op);
                let ops = &d.operands;
                match d.opcode {
                    Opcode::Const => d.attrs.get("value").and_then(|a| a.as_int()).is_some_and(|x| x >= 0),
                    Opcode::ProgramId | Opcode::NumPrograms => true,
                    Opcode::Arange => d.attrs.get("start").and_then(|a| a.as_int()).is_some_and(|x| x >= 0),
                    Opcode::Add | Opcode::Mul | Opcode::Div | Opcode::Rem | Opcode::Min | Opcode::Or => ops.iter().all(|&x| nn(x)),
                    Opcode::Max | Opcode::And => ops.iter().any(|&x| nn(x)),
                    Opcode::Shr => nn(ops[0]),
                    Opcode::Select => nn(ops[1]) && nn(ops[2]),
                    Opcode::Splat | Opcode::Broadcast | Opcode::ExpandDims | Opcode::Reshape | Opcode::Permute
                    | Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy => nn(ops[0]),
                    // widening keeps the sign; an unsigned source is caught above
                    Opcode::Cast => self.elem_bits(ops[0]).zip(self.elem_bits(v)).is_some_and(|(from, to)| from <= to) && nn(ops[0]),
                    _ => false,
                }
            }
        }
    }

    fn elem_bits(&self, v: Value) -> Option<u32> {
        match self.kind(v)? {
            ScalarKind::I8 | ScalarKind::U8 => Some(8),
            ScalarKind::I16 | ScalarKind::U16 => Some(16),
            ScalarKind::I32 | ScalarKind::U32 => Some(32),
            ScalarKind::I64 | ScalarKind::U64 => Some(64),
            _ => None,
        }
    }

    /// `addr`'s byte offset from kernel argument `base` (LLVM folds the
    /// difference of a pointer and its own base to the added offset).
    fn byte_offset(&self, base: Value, addr: PointerValue<'c>) -> Result<(PointerValue<'c>, IntValue<'c>)> {
        let b = &self.llvm.builder;
        let base_ptr = self.regs(base)?[0].into_pointer_value();
        let i64t = self.llvm.context.i64_type();
        let diff = b.build_int_sub(b.build_ptr_to_int(addr, i64t, "")?, b.build_ptr_to_int(base_ptr, i64t, "")?, "")?;
        Ok((base_ptr, b.build_int_truncate(diff, self.llvm.context.i32_type(), "")?))
    }

    /// One load of `access` at `addr` (register of IR pointer `ptr`): a buffer
    /// load where allowed, else the target's global load.
    pub(super) fn load_access(
        &self,
        ptr: Value,
        addr: PointerValue<'c>,
        access: Access,
        pred: Option<IntValue<'c>>,
        other: Option<&[BasicValueEnum<'c>]>,
        hints: &MemHints,
    ) -> Result<Vec<BasicValueEnum<'c>>> {
        if self.target.has_buffer_ops() {
            if let Some(base) = self.buffer_base(ptr) {
                let (base_ptr, offset) = self.byte_offset(base, addr)?;
                if let Some(words) = self.target.load_buffer(self.llvm, base_ptr, offset, access, pred, other, hints)? {
                    return Ok(words);
                }
            }
        }
        self.target.load_global(self.llvm, addr, access, pred, other, hints)
    }

    /// One store of `words` at `addr`: a buffer store where allowed, else global.
    pub(super) fn store_access(
        &self,
        ptr: Value,
        addr: PointerValue<'c>,
        access: Access,
        words: &[BasicValueEnum<'c>],
        pred: Option<IntValue<'c>>,
        hints: &MemHints,
    ) -> Result<()> {
        if self.target.has_buffer_ops() {
            if let Some(base) = self.buffer_base(ptr) {
                let (base_ptr, offset) = self.byte_offset(base, addr)?;
                if self.target.store_buffer(self.llvm, base_ptr, offset, access, words, pred, hints)? {
                    return Ok(());
                }
            }
        }
        self.target.store_global(self.llvm, addr, access, words, pred, hints)
    }
}
