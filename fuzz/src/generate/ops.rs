//! One generator per op family of docs/ir.md. Each picks types that satisfy
//! the op's rule, takes operands from the pool (or new constants), and
//! appends the op; region ops recurse into `ops_into`.
use arbitrary::Result;
use tritium_ir::{Attr, Block, Opcode, ScalarKind, Type};

use super::types::{self, MAX_RANK};
use super::{Gen, MAX_DEPTH};

const CACHE: [&str; 4] = ["", ".ca", ".cg", ".cv"];
const EVICTION: [&str; 3] = ["", "evict_first", "evict_last"];
const SEM: [&str; 4] = ["relaxed", "acquire", "release", "acq_rel"];
const SCOPE: [&str; 3] = ["gpu", "cta", "sys"];

impl Gen<'_, '_, '_> {
    /// Appends one op of a random opcode. The match is exhaustive, so an op
    /// added to the table needs a generator here (or a stated reason not to).
    pub(super) fn random_op(&mut self, block: Block, depth: usize) -> Result<()> {
        let opcode = *self.u.choose(Opcode::ALL)?;
        let nest = depth < MAX_DEPTH;
        match opcode {
            Opcode::Const => self.constant(block),
            Opcode::Splat | Opcode::Arange | Opcode::ProgramId | Opcode::NumPrograms => self.ids(block, opcode),
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Div
            | Opcode::Rem
            | Opcode::Min
            | Opcode::Max
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::Umulhi
            | Opcode::DivRn => self.binary(block, opcode),
            Opcode::Neg
            | Opcode::Abs
            | Opcode::Not
            | Opcode::Exp
            | Opcode::Exp2
            | Opcode::Log
            | Opcode::Log2
            | Opcode::Sqrt
            | Opcode::SqrtRn
            | Opcode::Rsqrt
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Floor
            | Opcode::Ceil
            | Opcode::Erf
            | Opcode::Fma
            | Opcode::Clamp => self.unary(block, opcode),
            Opcode::Cmp | Opcode::Select => self.compare_select(block, opcode),
            Opcode::Cast | Opcode::Bitcast => self.casts(block, opcode),
            Opcode::PtrToInt | Opcode::IntToPtr | Opcode::Addptr => self.pointers(block, opcode),
            Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas => self.memory(block, opcode),
            Opcode::Broadcast | Opcode::ExpandDims => self.broadcast_expand(block, opcode),
            Opcode::Reshape | Opcode::Permute => self.reshape_permute(block, opcode),
            Opcode::Join | Opcode::Split | Opcode::Cat => self.join_split_cat(block, opcode),
            Opcode::Reduce | Opcode::Scan if nest => self.reduce_scan(block, depth, opcode),
            Opcode::Dot => self.dot(block),
            Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy => self.hint(block, opcode),
            Opcode::If if nest => self.if_op(block, depth),
            Opcode::For if nest => self.for_op(block, depth),
            Opcode::While if nest => self.while_op(block, depth),
            Opcode::Call => self.call(block),
            Opcode::Assert | Opcode::Print | Opcode::Barrier => self.debug(block, opcode),
            Opcode::InlineAsm => self.inline_asm(block),
            Opcode::ConvertLayout => self.convert_layout(block),
            Opcode::BlockLoad | Opcode::BlockStore | Opcode::BlockAtomic => self.block_memory(block, opcode),
            Opcode::Gather | Opcode::Histogram | Opcode::Assume | Opcode::ExternElementwise => self.lookup(block, opcode),
            Opcode::LocalAlloc | Opcode::LocalView | Opcode::AsyncCopy | Opcode::AsyncCommit | Opcode::AsyncWait
            | Opcode::DotWait | Opcode::MbarrierInit | Opcode::MbarrierWait | Opcode::MbarrierInval => {
                self.staging(block, opcode)
            }
            // TMA ops need a tensor map: a kernel's `tensormap` argument
            // (host descriptors) or a `tensormap_create` in its global
            // scratch (device descriptors), which only claim_tma makes; they
            // are reached through the codegen targets' own runs of that pass
            Opcode::TmaLoad | Opcode::TmaStore | Opcode::TmaCopy | Opcode::TensormapCreate => self.constant(block),
            // region ops past the nesting cap; terminators end blocks, made by
            // `region` and `function`
            Opcode::Reduce
            | Opcode::Scan
            | Opcode::If
            | Opcode::For
            | Opcode::While
            | Opcode::Yield
            | Opcode::Condition
            | Opcode::Return => self.constant(block),
        }
    }

    pub(super) fn any_type(&mut self) -> Result<Type> {
        types::any(self.u, self.b.module)
    }
    /// A type of shape `dims` whose element is scalar kind `k`.
    fn shaped_kind(&mut self, dims: &[u32], k: ScalarKind) -> Type {
        let s = types::scalar(self.b.module, k);
        types::shaped(self.b.module, dims, s)
    }
    fn dims(&mut self, t: Type) -> Vec<u32> {
        self.types().dims(t).to_vec()
    }
    fn elem(&mut self, t: Type) -> Type {
        self.types().elem(t)
    }
    fn tensor_of(&mut self, lo: usize) -> Result<Type> {
        let dims = types::shape(self.u, lo.max(1))?;
        let elem = if self.u.ratio(1, 4)? { types::ptr(self.u, self.b.module)? } else {
            let k = types::scalar_kind(self.u)?;
            types::scalar(self.b.module, k)
        };
        Ok(types::shaped(self.b.module, &dims, elem))
    }

    fn constant(&mut self, block: Block) -> Result<()> {
        let t = self.any_type()?;
        let value = self.const_value(t)?;
        self.op(block, Opcode::Const, &[], &[t], &[("value", value)])?;
        Ok(())
    }

    fn ids(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let i32 = types::scalar(self.b.module, ScalarKind::I32);
        match opcode {
            Opcode::Splat => {
                // splat of any scalar or pointer
                let elem = if self.u.ratio(1, 4)? { types::ptr(self.u, self.b.module)? } else { self.any_scalar()? };
                let dims = types::shape(self.u, 1)?;
                let t = types::shaped(self.b.module, &dims, elem);
                let s = self.value_of(block, elem)?;
                self.op(block, Opcode::Splat, &[s], &[t], &[])?;
            }
            Opcode::Arange => {
                let n = *self.u.choose(&[1i64, 2, 4, 16, 64, 1024])?;
                let start = self.u.int_in_range(-1000..=1000)?;
                let t = types::shaped(self.b.module, &[n as u32], i32);
                self.op(block, Opcode::Arange, &[], &[t], &[("start", Attr::Int(start)), ("end", Attr::Int(start + n))])?;
            }
            _ => {
                let axis = self.u.int_in_range(0..=2)?;
                self.op(block, opcode, &[], &[i32], &[("axis", Attr::Int(axis))])?;
            }
        }
        Ok(())
    }

    fn any_scalar(&mut self) -> Result<Type> {
        let k = types::scalar_kind(self.u)?;
        Ok(types::scalar(self.b.module, k))
    }

    fn binary(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let kind = match opcode {
            Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Shl | Opcode::Shr | Opcode::Umulhi => {
                types::int_kind(self.u)?
            }
            Opcode::DivRn => types::float_kind(self.u)?,
            _ => types::scalar_kind(self.u)?,
        };
        let dims = types::shape(self.u, 0)?;
        let t = self.shaped_kind(&dims, kind);
        let a = self.value_of(block, t)?;
        let b = self.value_of(block, t)?;
        let mut attrs = Vec::new();
        if matches!(opcode, Opcode::Min | Opcode::Max) && self.u.arbitrary()? {
            attrs.push(("propagate_nan", Attr::Bool(self.u.arbitrary()?)));
        }
        self.op(block, opcode, &[a, b], &[t], &attrs)?;
        Ok(())
    }

    fn unary(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let (k, arity) = match opcode {
            Opcode::Neg | Opcode::Abs => (types::scalar_kind(self.u)?, 1),
            Opcode::Not => (types::int_kind(self.u)?, 1),
            Opcode::Fma | Opcode::Clamp => (types::float_kind(self.u)?, 3),
            _ => (types::float_kind(self.u)?, 1),
        };
        let t = self.shaped_kind(&dims, k);
        let xs = (0..arity).map(|_| self.value_of(block, t)).collect::<Result<Vec<_>>>()?;
        let mut attrs = Vec::new();
        if opcode == Opcode::Clamp && self.u.arbitrary()? {
            attrs.push(("propagate_nan", Attr::Bool(self.u.arbitrary()?)));
        }
        self.op(block, opcode, &xs, &[t], &attrs)?;
        Ok(())
    }

    fn compare_select(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let t = self.any_type()?;
        let dims = self.dims(t);
        let cond_t = self.shaped_kind(&dims, ScalarKind::I1);
        if opcode == Opcode::Cmp {
            let pred = *self.u.choose(&["eq", "ne", "lt", "le", "gt", "ge"])?;
            let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
            self.op(block, Opcode::Cmp, &[a, b], &[cond_t], &[("pred", Attr::Str(pred.into()))])?;
        } else {
            let c = self.value_of(block, cond_t)?;
            let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
            self.op(block, Opcode::Select, &[c, a, b], &[t], &[])?;
        }
        Ok(())
    }

    fn casts(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        if opcode == Opcode::Bitcast && self.u.ratio(1, 4)? {
            return self.pointers(block, opcode);
        }
        let dims = types::shape(self.u, 0)?;
        let from_k = types::scalar_kind(self.u)?;
        let from = self.shaped_kind(&dims, from_k);
        let x = self.value_of(block, from)?;
        if opcode == Opcode::Cast {
            let to_k = types::scalar_kind(self.u)?;
            let to = self.shaped_kind(&dims, to_k);
            let mut attrs = Vec::new();
            if self.u.arbitrary()? {
                attrs.push(("rounding", Attr::Str((*self.u.choose(&["rtne", "rtz"])?).into())));
            }
            self.op(block, Opcode::Cast, &[x], &[to], &attrs)?;
        } else {
            let same: Vec<ScalarKind> = ScalarKind::ALL.into_iter().filter(|k| k.bits() == from_k.bits()).collect();
            let to_k = *self.u.choose(&same)?;
            let to = self.shaped_kind(&dims, to_k);
            self.op(block, Opcode::Bitcast, &[x], &[to], &[])?;
        }
        Ok(())
    }

    fn pointers(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let p = types::ptr(self.u, self.b.module)?;
        let pt = types::shaped(self.b.module, &dims, p);
        let i64t = self.shaped_kind(&dims, ScalarKind::I64);
        match opcode {
            Opcode::PtrToInt => {
                let x = self.value_of(block, pt)?;
                self.op(block, Opcode::PtrToInt, &[x], &[i64t], &[])?;
            }
            Opcode::IntToPtr => {
                let x = self.value_of(block, i64t)?;
                self.op(block, Opcode::IntToPtr, &[x], &[pt], &[])?;
            }
            Opcode::Bitcast => {
                let q = types::ptr(self.u, self.b.module)?;
                let qt = types::shaped(self.b.module, &dims, q);
                let x = self.value_of(block, pt)?;
                self.op(block, Opcode::Bitcast, &[x], &[qt], &[])?;
            }
            _ => {
                let k = types::int_kind(self.u)?;
                let offt = self.shaped_kind(&dims, k);
                let (x, off) = (self.value_of(block, pt)?, self.value_of(block, offt)?);
                self.op(block, Opcode::Addptr, &[x, off], &[pt], &[])?;
            }
        }
        Ok(())
    }

    fn memory(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let k = types::scalar_kind(self.u)?;
        let s = types::scalar(self.b.module, k);
        let p = self.b.module.types.ptr(s, 1);
        let pt = types::shaped(self.b.module, &dims, p);
        let vt = types::shaped(self.b.module, &dims, s);
        let mt = self.shaped_kind(&dims, ScalarKind::I1);
        let ptr = self.value_of(block, pt)?;
        let mut operands = vec![ptr];
        let cache = |g: &mut Self| -> Result<Vec<(&'static str, Attr)>> {
            Ok(vec![
                ("cache", Attr::Str((*g.u.choose(&CACHE)?).into())),
                ("eviction", Attr::Str((*g.u.choose(&EVICTION)?).into())),
            ])
        };
        match opcode {
            Opcode::Load => {
                if self.u.arbitrary()? {
                    operands.push(self.value_of(block, mt)?);
                    if self.u.arbitrary()? {
                        operands.push(self.value_of(block, vt)?);
                    }
                }
                let mut attrs = cache(self)?;
                attrs.push(("volatile", Attr::Bool(self.u.arbitrary()?)));
                self.op(block, Opcode::Load, &operands, &[vt], &attrs)?;
            }
            Opcode::Store => {
                operands.push(self.value_of(block, vt)?);
                if self.u.arbitrary()? {
                    operands.push(self.value_of(block, mt)?);
                }
                let attrs = cache(self)?;
                self.op(block, Opcode::Store, &operands, &[], &attrs)?;
            }
            Opcode::AtomicRmw => {
                operands.push(self.value_of(block, vt)?);
                if self.u.arbitrary()? {
                    operands.push(self.value_of(block, mt)?);
                }
                let kind = *self.u.choose(&["add", "max", "min", "and", "or", "xor", "xchg"])?;
                let attrs = [
                    ("kind", Attr::Str(kind.into())),
                    ("sem", Attr::Str((*self.u.choose(&SEM)?).into())),
                    ("scope", Attr::Str((*self.u.choose(&SCOPE)?).into())),
                ];
                self.op(block, Opcode::AtomicRmw, &operands, &[vt], &attrs)?;
            }
            _ => {
                operands.push(self.value_of(block, vt)?);
                operands.push(self.value_of(block, vt)?);
                let attrs = [
                    ("sem", Attr::Str((*self.u.choose(&SEM)?).into())),
                    ("scope", Attr::Str((*self.u.choose(&SCOPE)?).into())),
                ];
                self.op(block, Opcode::AtomicCas, &operands, &[vt], &attrs)?;
            }
        }
        Ok(())
    }

    fn broadcast_expand(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let t = self.tensor_of(1)?;
        let elem = self.elem(t);
        let dims = self.dims(t);
        if opcode == Opcode::Broadcast {
            // broadcast: each dim of 1 in the operand may grow
            let mut from = dims.clone();
            for d in from.iter_mut() {
                if self.u.arbitrary()? {
                    *d = 1;
                }
            }
            let xt = types::shaped(self.b.module, &from, elem);
            let x = self.value_of(block, xt)?;
            self.op(block, Opcode::Broadcast, &[x], &[t], &[])?;
        } else if dims.len() < MAX_RANK + 1 {
            let xt = if self.u.ratio(1, 4)? { elem } else { t };
            let mut to = self.dims(xt);
            let axis = self.u.int_in_range(0..=to.len())?;
            to.insert(axis, 1);
            let rt = types::shaped(self.b.module, &to, elem);
            let x = self.value_of(block, xt)?;
            self.op(block, Opcode::ExpandDims, &[x], &[rt], &[("axis", Attr::Int(axis as i64))])?;
        }
        Ok(())
    }

    fn reshape_permute(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let t = self.tensor_of(1)?;
        let elem = self.elem(t);
        let dims = self.dims(t);
        let x = self.value_of(block, t)?;
        if opcode == Opcode::Reshape {
            // the same element count, split into a random number of dims
            let mut log = dims.iter().map(|d| d.trailing_zeros()).sum::<u32>();
            let rank = self.u.int_in_range(1..=MAX_RANK)?;
            let mut to = Vec::with_capacity(rank);
            for i in 0..rank {
                let take = if i + 1 == rank { log } else { self.u.int_in_range(0..=log)? };
                to.push(1u32 << take);
                log -= take;
            }
            let rt = types::shaped(self.b.module, &to, elem);
            let reorder = Attr::Bool(self.u.arbitrary()?);
            self.op(block, Opcode::Reshape, &[x], &[rt], &[("can_reorder", reorder)])?;
        } else {
            let mut order: Vec<usize> = (0..dims.len()).collect();
            for i in (1..order.len()).rev() {
                let j = self.u.int_in_range(0..=i)?;
                order.swap(i, j);
            }
            let to: Vec<u32> = order.iter().map(|&o| dims[o]).collect();
            let rt = types::shaped(self.b.module, &to, elem);
            let order = Attr::IntArray(order.iter().map(|&o| o as i64).collect());
            self.op(block, Opcode::Permute, &[x], &[rt], &[("order", order)])?;
        }
        Ok(())
    }

    fn join_split_cat(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        match opcode {
            Opcode::Join => {
                let t = self.any_type()?;
                if self.dims(t).len() >= MAX_RANK + 1 {
                    return Ok(());
                }
                let elem = self.elem(t);
                let mut to = self.dims(t);
                to.push(2);
                let rt = types::shaped(self.b.module, &to, elem);
                let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
                self.op(block, Opcode::Join, &[a, b], &[rt], &[])?;
            }
            Opcode::Split => {
                let t = self.tensor_of(1)?;
                let elem = self.elem(t);
                let mut dims = self.dims(t);
                *dims.last_mut().expect("rank >= 1") = 2;
                let xt = types::shaped(self.b.module, &dims, elem);
                let rt = types::shaped(self.b.module, &dims[..dims.len() - 1], elem);
                let x = self.value_of(block, xt)?;
                self.op(block, Opcode::Split, &[x], &[rt, rt], &[])?;
            }
            _ => {
                let t = self.tensor_of(1)?;
                let elem = self.elem(t);
                let mut to = self.dims(t);
                to[0] *= 2;
                let rt = types::shaped(self.b.module, &to, elem);
                let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
                let reorder = Attr::Bool(self.u.arbitrary()?);
                self.op(block, Opcode::Cat, &[a, b], &[rt], &[("can_reorder", reorder)])?;
            }
        }
        Ok(())
    }

    fn reduce_scan(&mut self, block: Block, depth: usize, opcode: Opcode) -> Result<()> {
        let dims = types::shape(self.u, 1)?;
        let n = self.u.int_in_range(1..=2)?;
        let mut elems = Vec::with_capacity(n);
        for _ in 0..n {
            elems.push(self.any_scalar()?);
        }
        let ins: Vec<Type> = elems.iter().map(|&e| types::shaped(self.b.module, &dims, e)).collect();
        let operands = ins.iter().map(|&t| self.value_of(block, t)).collect::<Result<Vec<_>>>()?;
        let axis = self.u.int_in_range(0..=dims.len() - 1)?;
        let scan = opcode == Opcode::Scan;
        let results: Vec<Type> = if scan {
            ins.clone()
        } else {
            let mut out = dims.clone();
            out.remove(axis);
            elems.iter().map(|&e| types::shaped(self.b.module, &out, e)).collect()
        };
        let mut attrs = vec![("axis", Attr::Int(axis as i64))];
        if scan {
            attrs.push(("reverse", Attr::Bool(self.u.arbitrary()?)));
        }
        let mut args = elems.clone();
        args.extend_from_slice(&elems);
        let (rs, blocks) = self.b.op_with_regions(block, opcode, &operands, &results, &attrs, &[&args]);
        self.region(blocks[0], depth, Opcode::Yield, &elems)?;
        self.pool.extend(rs);
        Ok(())
    }

    fn dot(&mut self, block: Block) -> Result<()> {
        let batch = if self.u.ratio(1, 4)? { vec![*self.u.choose(&[1u32, 2])?] } else { vec![] };
        let pick = |g: &mut Self| -> Result<u32> { Ok(*g.u.choose(&[1u32, 2, 4, 8, 16])?) };
        let (m, n, k) = (pick(self)?, pick(self)?, pick(self)?);
        let in_k = types::scalar_kind(self.u)?;
        let acc_k = types::scalar_kind(self.u)?;
        let shape = |a: u32, b: u32| [batch.as_slice(), &[a, b]].concat();
        let at = self.shaped_kind(&shape(m, k), in_k);
        let bt = self.shaped_kind(&shape(k, n), in_k);
        let ct = self.shaped_kind(&shape(m, n), acc_k);
        let xs = [self.value_of(block, at)?, self.value_of(block, bt)?, self.value_of(block, ct)?];
        let precision = *self.u.choose(&["tf32", "tf32x3", "ieee"])?;
        let mut attrs = vec![
            ("input_precision", Attr::Str(precision.into())),
            ("max_num_imprecise_acc", Attr::Int(self.u.int_in_range(0..=64)?)),
        ];
        if self.u.ratio(1, 4)? {
            attrs.push(("pending", Attr::Int(self.u.int_in_range(0..=1)?)));
        }
        self.op(block, Opcode::Dot, &xs, &[ct], &attrs)?;
        Ok(())
    }

    fn hint(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        let t = self.any_type()?;
        let n = self.dims(t).len().max(1);
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            values.push(*self.u.choose(&[1i64, 2, 4, 8, 16])?);
        }
        let x = self.value_of(block, t)?;
        self.op(block, opcode, &[x], &[t], &[("values", Attr::IntArray(values))])?;
        Ok(())
    }

    /// A tensor moved to another layout: before layout assignment, the value itself.
    fn convert_layout(&mut self, block: Block) -> Result<()> {
        let t = self.any_type()?;
        if self.dims(t).is_empty() {
            return self.constant(block);
        }
        let x = self.value_of(block, t)?;
        self.op(block, Opcode::ConvertLayout, &[x], &[t], &[])?;
        Ok(())
    }

    fn debug(&mut self, block: Block, opcode: Opcode) -> Result<()> {
        match opcode {
            Opcode::Assert => {
                let dims = types::shape(self.u, 0)?;
                let t = self.shaped_kind(&dims, ScalarKind::I1);
                let c = self.value_of(block, t)?;
                let msg = Attr::Str(self.u.arbitrary()?);
                self.op(block, Opcode::Assert, &[c], &[], &[("msg", msg)])?;
            }
            Opcode::Print => {
                let n = self.u.int_in_range(0..=3)?;
                let mut vs = Vec::with_capacity(n);
                for _ in 0..n {
                    let t = self.any_type()?;
                    vs.push(self.value_of(block, t)?);
                }
                let attrs = [("prefix", Attr::Str(self.u.arbitrary()?)), ("hex", Attr::Bool(self.u.arbitrary()?))];
                self.op(block, Opcode::Print, &vs, &[], &attrs)?;
            }
            _ => {
                self.op(block, Opcode::Barrier, &[], &[], &[])?;
            }
        }
        Ok(())
    }

    /// One `mov` per 32-bit element: valid PTX with the one-output,
    /// one-input constraint string `pack` 1 needs for 32-bit elements.
    fn inline_asm(&mut self, block: Block) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let k = *self.u.choose(&[ScalarKind::I32, ScalarKind::U32, ScalarKind::F32])?;
        let t = self.shaped_kind(&dims, k);
        let x = self.value_of(block, t)?;
        let attrs = [
            ("asm", Attr::Str("mov.b32 $0, $1;".into())),
            ("constraints", Attr::Str("=r,r".into())),
            ("pure", Attr::Bool(self.u.arbitrary()?)),
            ("pack", Attr::Int(1)),
        ];
        self.op(block, Opcode::InlineAsm, &[x], &[t], &attrs)?;
        Ok(())
    }
}
