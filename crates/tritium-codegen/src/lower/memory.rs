//! Global `load` and `store`: a thread's registers are grouped into vectors
//! as wide as contiguity, alignment, mask constancy (tritium-analysis'
//! AxisInfo, along the last dim) and the target allow, and
//! each group is one predicated access of machine words (`Target::load_global`,
//! or a buffer access where `buffer.rs` allows one).
//! `i1` memory is one byte per element, as in Triton.
use std::collections::HashMap;

use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use inkwell::IntPredicate;
use tritium_ir::{Attr, Function, Module, Op, Opcode, ScalarKind, Value};

use super::Lowering;
use tritium_analysis::axis_info::pow2_floor;
use tritium_analysis::{DimFacts, FuncAxisInfo};
use crate::error::Result;
use crate::layout::elem_bytes;
use crate::target::{Access, MemHints};

/// Elements per thread in one global access through a pointer with facts
/// `ptr` (last dim), under a mask with facts `mask`: a power of two no
/// larger than the contiguous run, the pointer's alignment, the mask's
/// constant run, `max_access_bytes` or the `owned` consecutive elements the
/// thread holds; the one rule for both lowering and layout sizing, so
/// layouts are never sized for accesses codegen would not emit.
pub(crate) fn elems_per_access(ptr: DimFacts, mask: Option<DimFacts>, elem_bytes: u32, max_access_bytes: u32, owned: u64) -> u64 {
    let eb = elem_bytes as u64;
    let mut vec = owned
        .min(ptr.contiguity)
        .min((max_access_bytes as u64 / eb).max(1))
        .min((ptr.divisibility / eb).max(1));
    if let Some(m) = mask {
        vec = vec.min(m.constancy);
    }
    pow2_floor(vec)
}

impl<'a, 'c> Lowering<'a, 'c> {
    pub(super) fn hints(&self, op: Op) -> MemHints {
        let attrs = &self.op(op).attrs;
        let s = |k: &str| attrs.get(k).and_then(Attr::as_str).unwrap_or("").to_string();
        MemHints {
            cache: s("cache"),
            eviction: s("eviction"),
            volatile: attrs.get("volatile").and_then(Attr::as_bool).unwrap_or(false),
        }
    }

    /// Elements per access for pointer value `ptr`, optionally masked by `mask`.
    pub(crate) fn vector_width(&self, ptr: Value, mask: Option<Value>, eb: u32) -> u32 {
        let Some(layout) = self.tl(ptr) else { return 1 };
        let rank = layout.lin.rank();
        if rank == 0 {
            let mask = mask.map(|m| self.facts.get(m));
            return elems_per_access(self.facts.get(ptr), mask, eb, self.target.max_access_bytes(), 1) as u32;
        }
        // the dim a thread's first registers walk (the last one on ties):
        // a transposed access runs along another
        let d = (0..rank).max_by_key(|&d| layout.lin.contiguous_regs(d)).unwrap_or(rank - 1);
        let along = |v: Value| match self.facts.dims(v) {
            Some(f) if f.rank() == rank => f.dim(d),
            _ => self.facts.get(v),
        };
        let owned = layout.lin.contiguous_regs(d) as u64;
        elems_per_access(along(ptr), mask.map(along), eb, self.target.max_access_bytes(), owned) as u32
    }

    fn access_for(vec: u32, kind: ScalarKind) -> Access {
        let eb = elem_bytes(kind);
        let bytes = vec * eb;
        let float = kind.is_float() && eb >= 4;
        if eb == 8 {
            Access { word_bits: 64, words: vec, float }
        } else if bytes >= 4 {
            Access { word_bits: 32, words: bytes / 4, float }
        } else {
            Access { word_bits: bytes * 8, words: 1, float: false }
        }
    }

    /// The LLVM type of one word of `access` as the lowering sees it.
    fn word_type(&self, access: Access) -> BasicTypeEnum<'c> {
        let cx = self.llvm.context;
        match (access.float, access.word_bits) {
            (true, 32) => cx.f32_type().into(),
            (true, _) => cx.f64_type().into(),
            (false, bits) => cx.custom_width_int_type(bits).into(),
        }
    }

    /// Packs `elems` (storage type `st`) into the words of `access`.
    fn pack(&self, elems: &[BasicValueEnum<'c>], access: Access) -> Result<Vec<BasicValueEnum<'c>>> {
        let b = &self.llvm.builder;
        let word = self.word_type(access);
        if elems.len() == 1 {
            return Ok(vec![b.build_bit_cast(elems[0], word, "")?]);
        }
        let vty = vector_of(elems[0].get_type(), elems.len() as u32);
        let mut v = vty.get_undef();
        for (i, &e) in elems.iter().enumerate() {
            v = b.build_insert_element(v, e, self.i32_const(i as u64), "")?;
        }
        if access.words == 1 {
            return Ok(vec![b.build_bit_cast(v, word, "")?]);
        }
        let words = b.build_bit_cast(v, vector_of(word, access.words), "")?.into_vector_value();
        (0..access.words).map(|i| Ok(b.build_extract_element(words, self.i32_const(i as u64), "")?)).collect()
    }

    /// Unpacks words into `n` elements of storage type `st`.
    fn unpack(&self, words: &[BasicValueEnum<'c>], st: BasicTypeEnum<'c>, n: u32) -> Result<Vec<BasicValueEnum<'c>>> {
        let b = &self.llvm.builder;
        if n == 1 {
            return Ok(vec![b.build_bit_cast(words[0], st, "")?]);
        }
        let whole: BasicValueEnum = if words.len() == 1 {
            words[0]
        } else {
            let wty = vector_of(words[0].get_type(), words.len() as u32);
            let mut v = wty.get_undef();
            for (i, &w) in words.iter().enumerate() {
                v = b.build_insert_element(v, w, self.i32_const(i as u64), "")?;
            }
            v.into()
        };
        let v = b.build_bit_cast(whole, vector_of(st, n), "")?.into_vector_value();
        (0..n).map(|i| Ok(b.build_extract_element(v, self.i32_const(i as u64), "")?)).collect()
    }

    /// Storage type and byte size of elements of pointer value `ptr`.
    pub(super) fn storage(&self, op: Op, ptr: Value) -> Result<(ScalarKind, BasicTypeEnum<'c>, u32)> {
        let kind = self
            .module
            .types
            .pointee(self.ty(ptr))
            .and_then(|p| self.module.types.scalar_kind(p))
            .ok_or_else(|| self.unsupported(op, "memory access through a non-pointer"))?;
        let st: BasicTypeEnum = if kind == ScalarKind::I1 {
            self.llvm.context.i8_type().into()
        } else {
            self.elem_type(op, self.ty(ptr))?;
            super::llvm_scalar_type(self.llvm, self.module, self.module.types.pointee(self.ty(ptr)).expect("checked"))
                .map_err(|r| self.unsupported(op, r))?
        };
        Ok((kind, st, elem_bytes(kind)))
    }

    pub(super) fn lower_load(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let ptr = data.operands[0];
        let mask = data.operands.get(1).copied();
        let other = data.operands.get(2).copied();
        let out = self.load_regs(op, ptr, mask, other)?;
        self.set(op, out);
        Ok(())
    }

    /// The registers a load of `ptr` (under `mask`, `other` elsewhere) gives
    /// this thread, in `ptr`'s layout; `op` supplies the cache hints.
    pub(super) fn load_regs(&self, op: Op, ptr: Value, mask: Option<Value>, other: Option<Value>) -> Result<Vec<BasicValueEnum<'c>>> {
        let (kind, st, eb) = self.storage(op, ptr)?;
        let vec = self.vector_width(ptr, mask, eb);
        let access = Self::access_for(vec, kind);
        let hints = self.hints(op);
        let ptrs = self.regs(ptr)?.clone();
        let masks = mask.map(|m| self.regs(m).cloned()).transpose()?;
        let others = other.map(|o| self.regs(o).cloned()).transpose()?;
        let b = &self.llvm.builder;
        let mut out = Vec::with_capacity(ptrs.len());
        for g in (0..ptrs.len()).step_by(vec as usize) {
            let pred = masks.as_ref().map(|m| m[g].into_int_value());
            let other_words = match &others {
                Some(o) => {
                    let elems: Vec<BasicValueEnum> = o[g..g + vec as usize]
                        .iter()
                        .map(|&e| to_storage(self, e, kind))
                        .collect::<Result<_>>()?;
                    Some(self.pack(&elems, access)?)
                }
                None => None,
            };
            let words = self.load_access(ptr, ptrs[g].into_pointer_value(), access, pred, other_words.as_deref(), &hints)?;
            for e in self.unpack(&words, st, vec)? {
                out.push(if kind == ScalarKind::I1 {
                    let e = e.into_int_value();
                    b.build_int_compare(IntPredicate::NE, e, e.get_type().const_zero(), "")?.into()
                } else {
                    e
                });
            }
        }
        Ok(out)
    }

    pub(super) fn lower_store(&mut self, op: Op) -> Result<()> {
        let data = self.op(op);
        let (ptr, value) = (data.operands[0], data.operands[1]);
        let mask = data.operands.get(2).copied();
        let (kind, _, eb) = self.storage(op, ptr)?;
        let vec = self.vector_width(ptr, mask, eb);
        let access = Self::access_for(vec, kind);
        let hints = self.hints(op);
        let b = &self.llvm.builder;
        // threads holding copies of the same elements (or of a scalar) must not all write
        let owner = match self.tl(ptr) {
            None => Some(b.build_int_compare(IntPredicate::EQ, self.tid, self.i32_const(0), "")?),
            Some(l) if l.replicated() => {
                Some(b.build_int_compare(IntPredicate::ULT, self.tid, self.i32_const(l.owner_threads() as u64), "")?)
            }
            // copies in other bits (a slice along the lanes, as a row
            // reduction's result has): the copy whose copy bits are 0 stores
            Some(l) if l.copy_bits() != 0 => {
                let bits = b.build_and(self.tid, self.i32_const(l.copy_bits() as u64), "")?;
                Some(b.build_int_compare(IntPredicate::EQ, bits, self.i32_const(0), "")?)
            }
            Some(_) => None,
        };
        let ptrs = self.regs(ptr)?.clone();
        let values = self.regs(value)?.clone();
        let masks = mask.map(|m| self.regs(m).cloned()).transpose()?;
        for g in (0..ptrs.len()).step_by(vec as usize) {
            let pred = match (masks.as_ref().map(|m| m[g].into_int_value()), owner) {
                (Some(m), Some(o)) => Some(b.build_and(m, o, "")?),
                (m, o) => m.or(o),
            };
            let elems: Vec<BasicValueEnum> =
                values[g..g + vec as usize].iter().map(|&e| to_storage(self, e, kind)).collect::<Result<_>>()?;
            let words = self.pack(&elems, access)?;
            self.store_access(ptr, ptrs[g].into_pointer_value(), access, &words, pred, &hints)?;
        }
        Ok(())
    }
}

fn vector_of<'c>(t: BasicTypeEnum<'c>, n: u32) -> inkwell::types::VectorType<'c> {
    match t {
        BasicTypeEnum::IntType(t) => t.vec_type(n),
        BasicTypeEnum::FloatType(t) => t.vec_type(n),
        BasicTypeEnum::PointerType(t) => t.vec_type(n),
        other => unreachable!("memory elements are scalars, got {other}"),
    }
}

/// `i1` values are stored as bytes.
fn to_storage<'c>(lw: &Lowering<'_, 'c>, v: BasicValueEnum<'c>, kind: ScalarKind) -> Result<BasicValueEnum<'c>> {
    if kind == ScalarKind::I1 {
        Ok(lw.llvm.builder.build_int_z_extend(v.into_int_value(), lw.llvm.context.i8_type(), "")?.into())
    } else {
        Ok(v)
    }
}

/// The widest access (bytes per thread per instruction, capped at
/// `max_bytes`) each tensor `load` and `store` of `func` can use, judged from
/// contiguity, alignment and mask constancy alone: layouts are not chosen
/// yet, so no per-thread element count caps it. Layout assignment sizes
/// `size_per_thread` from the widest of them: when no access can be
/// vectorised, owning several consecutive elements per thread only makes
/// each scalar access of a warp stride over 4x the cache lines (4x the L1
/// wavefronts, 4x the partial-sector writes to L2), where one element per
/// lane makes it a single coalesced 128-byte line: that judges the last
/// dim. The pipeliner judges the best dim (a transposed access runs along
/// another) and leaves loops alone whose loads are all narrower than a
/// `cp.async` (4 bytes).
pub(crate) fn access_bytes(module: &Module, func: &Function, facts: &FuncAxisInfo, max_bytes: u32, best_dim: bool) -> HashMap<Op, u32> {
    let types = &module.types;
    let mut out = HashMap::new();
    for (_, op) in func.ops_preorder() {
        let data = &func.ops[op];
        let mask = match data.opcode {
            Opcode::Load => data.operands.get(1).copied(),
            Opcode::Store => data.operands.get(2).copied(),
            _ => continue,
        };
        let Some(&ptr) = data.operands.first() else { continue };
        let ty = func.value_type(ptr);
        if !types.is_tensor(ty) {
            continue;
        }
        let Some(kind) = types.pointee(ty).and_then(|p| types.scalar_kind(p)) else { continue };
        let eb = elem_bytes(kind);
        let rank = types.dims(ty).len();
        let along = |v: Value, d: usize| match facts.dims(v) {
            Some(f) if best_dim && f.rank() == rank => f.dim(d),
            _ => facts.get(v),
        };
        let dims = if best_dim { 0..rank } else { rank - 1..rank };
        let vec = dims.map(|d| elems_per_access(along(ptr, d), mask.map(|m| along(m, d)), eb, max_bytes, u64::MAX)).max().unwrap_or(1);
        out.insert(op, (vec * eb as u64).min(max_bytes as u64) as u32);
    }
    out
}

/// Global accesses of `func` whose pointers run contiguous along a dim
/// other than the last (and not along the last): that dim, by op, for
/// layout assignment (`LayoutOptions::fast_dims`).
pub(crate) fn transposed_accesses(module: &Module, func: &Function, facts: &FuncAxisInfo) -> std::collections::HashMap<tritium_ir::Op, usize> {
    let mut out = std::collections::HashMap::new();
    for (_, op) in func.ops_preorder() {
        let data = &func.ops[op];
        if !matches!(data.opcode, Opcode::Load | Opcode::Store) {
            continue;
        }
        let Some(&ptr) = data.operands.first() else { continue };
        let Some(f) = facts.dims(ptr) else { continue };
        let rank = module.types.dims(func.value_type(ptr)).len();
        if rank < 2 || f.contiguity.len() != rank || f.contiguity[rank - 1] > 1 {
            continue;
        }
        let (d, &run) = f.contiguity.iter().enumerate().max_by_key(|&(_, c)| *c).expect("rank >= 2");
        if run > 1 {
            out.insert(op, d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(divisibility: u64, contiguity: u64, constancy: u64) -> DimFacts {
        DimFacts { divisibility, contiguity, constancy }
    }

    #[test]
    fn each_limit_caps_the_access() {
        let aligned = facts(16, 1024, 1);
        assert_eq!(elems_per_access(aligned, None, 4, 16, u64::MAX), 4, "16 bytes of f32");
        assert_eq!(elems_per_access(aligned, None, 2, 16, u64::MAX), 8, "16 bytes of f16");
        assert_eq!(elems_per_access(aligned, None, 4, 16, 2), 2, "elements the thread owns");
        assert_eq!(elems_per_access(facts(8, 1024, 1), None, 4, 16, u64::MAX), 2, "8-byte alignment");
        assert_eq!(elems_per_access(facts(16, 2, 1), None, 4, 16, u64::MAX), 2, "contiguous run");
        assert_eq!(elems_per_access(aligned, Some(facts(1, 1, 2)), 4, 16, u64::MAX), 2, "mask run");
    }

    #[test]
    fn width_is_a_power_of_two_and_at_least_one() {
        assert_eq!(elems_per_access(facts(16, 3, 1), None, 1, 16, u64::MAX), 2);
        assert_eq!(elems_per_access(facts(16, 1024, 1), None, 4, 16, 3), 2);
        // unaligned pointer, or elements wider than the widest access: still one element
        assert_eq!(elems_per_access(facts(1, 1024, 1), None, 4, 16, u64::MAX), 1);
        assert_eq!(elems_per_access(facts(16, 1024, 1), None, 8, 4, u64::MAX), 1);
    }
}
