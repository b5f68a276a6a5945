//! `expand_block_memory`: rewrites each `block_load` / `block_store` /
//! `block_atomic` (a block pointer's or tensor descriptor's access, kept as
//! one op by the frontend so a target can claim it whole, e.g. as TMA) into
//! the ordinary ops every target lowers: per dimension d, the element
//! indices `i_d = offset_d + arange(B_d)` (or the per-row offsets of a
//! gather), pointers `base + Σ i_d * stride_d` and, on the checked
//! dimensions, the mask `0 <= i_d < shape_d`; then a masked `load` (with
//! `other` for the padding), `store` or `atomic_rmw`.
//!
//! Index arithmetic is in i64 on the 1-D (expanded) index tensors, before
//! broadcasting to the block, so the per-element work is one add per
//! dimension; fold and canonicalize then remove what constants make trivial
//! (a unit stride, an unchecked dimension's nothing). Axis info sees the
//! usual `splat + arange` pattern, so accesses vectorise as hand-written
//! pointer arithmetic would.
use tritium_ir::{Attr, Attrs, Block, Function, Loc, Module, Op, Opcode, ScalarKind, Type, TypeTable, Value};

/// Expands every block memory op of `m`; returns how many it expanded.
pub fn expand_block_memory(m: &mut Module) -> usize {
    let Module { types, funcs, .. } = m;
    let mut expanded = 0;
    for id in funcs.keys().collect::<Vec<_>>() {
        let f = &mut funcs[id];
        let sites: Vec<(Block, Op)> = f
            .ops_preorder()
            .into_iter()
            .filter(|&(_, op)| matches!(f.ops[op].opcode, Opcode::BlockLoad | Opcode::BlockStore | Opcode::BlockAtomic))
            .collect();
        for (block, op) in sites {
            let loc = f.ops[op].loc;
            Expander { types, f, block, before: op, loc }.expand(op);
            expanded += 1;
        }
    }
    expanded
}

/// Inserts new ops before `before` in `block`.
struct Expander<'a> {
    types: &'a mut TypeTable,
    f: &'a mut Function,
    block: Block,
    before: Op,
    loc: Loc,
}

impl Expander<'_> {
    fn emit(&mut self, opcode: Opcode, operands: &[Value], results: &[Type], attrs: &[(&str, Attr)]) -> Vec<Value> {
        let attrs: Attrs = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let op = self.f.create_op(opcode, operands, results, attrs, Vec::new(), self.loc);
        self.f.insert_op_before(self.block, self.before, op);
        self.f.ops[op].results.clone()
    }

    fn one(&mut self, opcode: Opcode, operands: &[Value], result: Type, attrs: &[(&str, Attr)]) -> Value {
        self.emit(opcode, operands, &[result], attrs)[0]
    }

    fn ty(&self, v: Value) -> Type {
        self.f.value_type(v)
    }

    /// `v` (a scalar or a tensor of the right shape) as i64.
    fn to_i64(&mut self, v: Value) -> Value {
        let t = self.ty(v);
        if self.types.scalar_kind(t) == Some(ScalarKind::I64) {
            return v;
        }
        let dims = self.types.dims(t).to_vec();
        let i64t = self.types.scalar(ScalarKind::I64);
        let to = self.types.with_shape(&dims, i64t);
        self.one(Opcode::Cast, &[v], to, &[])
    }

    fn splat(&mut self, v: Value, dims: &[u32]) -> Value {
        let elem = self.ty(v);
        let t = self.types.tensor(dims, elem);
        self.one(Opcode::Splat, &[v], t, &[])
    }

    /// `x` of shape [n] (or already shaped `e`) reshaped to `e` = [1,..,n,..,1].
    fn expand_to(&mut self, mut x: Value, d: usize, rank: usize) -> Value {
        let elem = self.types.elem(self.ty(x));
        let n = self.types.dims(self.ty(x))[0];
        let mut dims = vec![n];
        for axis in (0..rank).filter(|&a| a != d) {
            // inserting the size-1 axes in increasing order puts n at d
            dims.insert(axis, 1);
            let t = self.types.tensor(&dims, elem);
            x = self.one(Opcode::ExpandDims, &[x], t, &[("axis", Attr::Int(axis as i64))]);
        }
        x
    }

    fn broadcast(&mut self, x: Value, dims: &[u32]) -> Value {
        let elem = self.types.elem(self.ty(x));
        if self.types.dims(self.ty(x)) == dims {
            return x;
        }
        let t = self.types.tensor(dims, elem);
        self.one(Opcode::Broadcast, &[x], t, &[])
    }

    fn binary(&mut self, opcode: Opcode, a: Value, b: Value, attrs: &[(&str, Attr)]) -> Value {
        let t = if opcode == Opcode::Cmp {
            let dims = self.types.dims(self.ty(a)).to_vec();
            let i1 = self.types.scalar(ScalarKind::I1);
            self.types.with_shape(&dims, i1)
        } else {
            self.ty(a)
        };
        self.one(opcode, &[a, b], t, attrs)
    }

    fn expand(mut self, op: Op) {
        let od = self.f.ops[op].clone();
        let load = od.opcode == Opcode::BlockLoad;
        let block_ty = if load { self.ty(od.results[0]) } else { self.ty(*od.operands.last().expect("verified arity")) };
        let dims = self.types.dims(block_ty).to_vec();
        let rank = dims.len();
        let checked: Vec<i64> = od.attrs.get("boundary_check").and_then(Attr::as_int_array).unwrap_or(&[]).to_vec();
        let base = od.operands[0];
        let i64t = self.types.scalar(ScalarKind::I64);
        let zero_op = self.f.create_const(i64t, Attr::Int(0), self.loc);
        self.f.insert_op_before(self.block, self.before, zero_op);
        let zero = self.f.ops[zero_op].results[0];

        let mut sum: Option<Value> = None;
        let mut mask: Option<Value> = None;
        for d in 0..rank {
            let (shape, stride, offset) = (od.operands[1 + d], od.operands[1 + rank + d], od.operands[1 + 2 * rank + d]);
            // the element indices along d, as i64
            let index = if self.types.is_tensor(self.ty(offset)) {
                self.to_i64(offset)
            } else {
                let i32t = self.types.scalar(ScalarKind::I32);
                let range_t = self.types.tensor(&[dims[d]], i32t);
                let range = self.one(Opcode::Arange, &[], range_t, &[("start", Attr::Int(0)), ("end", Attr::Int(dims[d] as i64))]);
                let range = self.to_i64(range);
                let start = self.to_i64(offset);
                let start = self.splat(start, &[dims[d]]);
                self.binary(Opcode::Add, start, range, &[])
            };
            let index = self.expand_to(index, d, rank);
            let edims = self.types.dims(self.ty(index)).to_vec();
            let stride = self.to_i64(stride);
            let stride = self.splat(stride, &edims);
            let term = self.binary(Opcode::Mul, index, stride, &[]);
            let term = self.broadcast(term, &dims);
            sum = Some(match sum {
                None => term,
                Some(s) => self.binary(Opcode::Add, s, term, &[]),
            });
            if checked.contains(&(d as i64)) {
                let lo = self.splat(zero, &edims);
                let lo = self.binary(Opcode::Cmp, index, lo, &[("pred", Attr::Str("ge".into()))]);
                let hi = self.to_i64(shape);
                let hi = self.splat(hi, &edims);
                let hi = self.binary(Opcode::Cmp, index, hi, &[("pred", Attr::Str("lt".into()))]);
                let inside = self.binary(Opcode::And, lo, hi, &[]);
                let inside = self.broadcast(inside, &dims);
                mask = Some(match mask {
                    None => inside,
                    Some(m) => self.binary(Opcode::And, m, inside, &[]),
                });
            }
        }
        let bases = self.splat(base, &dims);
        let ptrs = self.binary(Opcode::Addptr, bases, sum.expect("rank >= 1"), &[]);
        let attr = |k: &'static str| (k, od.attrs.get(k).cloned().expect("verified attribute"));
        match od.opcode {
            Opcode::BlockLoad => {
                let mut operands = vec![ptrs];
                if let Some(m) = mask {
                    operands.push(m);
                    // `other` only matters where the mask is off
                    if let Some(&other) = od.operands.get(1 + 3 * rank) {
                        operands.push(self.splat(other, &dims));
                    }
                }
                let loaded = self.one(Opcode::Load, &operands, block_ty, &[attr("cache"), attr("eviction"), attr("volatile")]);
                self.f.replace_all_uses(od.results[0], loaded);
            }
            Opcode::BlockStore => {
                let value = od.operands[1 + 3 * rank];
                let operands: Vec<Value> = [ptrs, value].into_iter().chain(mask).collect();
                self.emit(Opcode::Store, &operands, &[], &[attr("cache"), attr("eviction")]);
            }
            _ => {
                let value = od.operands[1 + 3 * rank];
                let operands: Vec<Value> = [ptrs, value].into_iter().chain(mask).collect();
                self.emit(Opcode::AtomicRmw, &operands, &[block_ty], &[attr("kind"), attr("sem"), attr("scope")]);
            }
        }
        self.f.erase_op(self.block, op);
    }
}
