//! One generator per op family of docs/ir.md. Each picks types that satisfy
//! the op's rule, takes operands from the pool (or new constants), and
//! appends the op; region ops recurse into `ops_into`.
use arbitrary::Result;
use tritium_ir::{Attr, Block, ScalarKind, Type};

use super::types::{self, MAX_RANK};
use super::{Gen, MAX_DEPTH};

const CACHE: [&str; 4] = ["", ".ca", ".cg", ".cv"];
const EVICTION: [&str; 3] = ["", "evict_first", "evict_last"];
const SEM: [&str; 4] = ["relaxed", "acquire", "release", "acq_rel"];
const SCOPE: [&str; 3] = ["gpu", "cta", "sys"];

impl Gen<'_, '_, '_> {
    pub(super) fn random_op(&mut self, block: Block, depth: usize) -> Result<()> {
        match self.u.int_in_range(0..=21)? {
            0 => self.constant(block),
            1 => self.ids(block),
            2 | 3 => self.binary(block),
            4 => self.unary(block),
            5 => self.compare_select(block),
            6 => self.casts(block),
            7 => self.pointers(block),
            8 | 9 => self.memory(block),
            10 => self.broadcast_expand(block),
            11 => self.reshape_permute(block),
            12 => self.join_split_cat(block),
            13 if depth < MAX_DEPTH => self.reduce_scan(block, depth),
            14 => self.dot(block),
            15 => self.hint(block),
            16 if depth < MAX_DEPTH => self.if_op(block, depth),
            17 if depth < MAX_DEPTH => self.for_op(block, depth),
            18 if depth < MAX_DEPTH => self.while_op(block, depth),
            19 => self.call(block),
            20 => self.debug(block),
            _ => self.constant(block),
        }
    }

    fn any_type(&mut self) -> Result<Type> {
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
        self.op(block, "const", &[], &[t], &[("value", value)])?;
        Ok(())
    }

    fn ids(&mut self, block: Block) -> Result<()> {
        let i32 = types::scalar(self.b.module, ScalarKind::I32);
        match self.u.int_in_range(0..=2)? {
            0 => {
                // splat of any scalar or pointer
                let elem = if self.u.ratio(1, 4)? { types::ptr(self.u, self.b.module)? } else { self.any_scalar()? };
                let dims = types::shape(self.u, 1)?;
                let t = types::shaped(self.b.module, &dims, elem);
                let s = self.value_of(block, elem)?;
                self.op(block, "splat", &[s], &[t], &[])?;
            }
            1 => {
                let n = *self.u.choose(&[1i64, 2, 4, 16, 64, 1024])?;
                let start = self.u.int_in_range(-1000..=1000)?;
                let t = types::shaped(self.b.module, &[n as u32], i32);
                self.op(block, "arange", &[], &[t], &[("start", Attr::Int(start)), ("end", Attr::Int(start + n))])?;
            }
            _ => {
                let name = *self.u.choose(&["program_id", "num_programs"])?;
                let axis = self.u.int_in_range(0..=2)?;
                self.op(block, name, &[], &[i32], &[("axis", Attr::Int(axis))])?;
            }
        }
        Ok(())
    }

    fn any_scalar(&mut self) -> Result<Type> {
        let k = types::scalar_kind(self.u)?;
        Ok(types::scalar(self.b.module, k))
    }

    fn binary(&mut self, block: Block) -> Result<()> {
        let (name, kind) = match self.u.int_in_range(0..=2)? {
            0 => (*self.u.choose(&["add", "sub", "mul", "div", "rem", "min", "max"])?, types::scalar_kind(self.u)?),
            1 => (*self.u.choose(&["and", "or", "xor", "shl", "shr", "umulhi"])?, types::int_kind(self.u)?),
            _ => ("div_rn", types::float_kind(self.u)?),
        };
        let dims = types::shape(self.u, 0)?;
        let t = self.shaped_kind(&dims, kind);
        let a = self.value_of(block, t)?;
        let b = self.value_of(block, t)?;
        let mut attrs = Vec::new();
        if matches!(name, "min" | "max") && self.u.arbitrary()? {
            attrs.push(("propagate_nan", Attr::Bool(self.u.arbitrary()?)));
        }
        self.op(block, name, &[a, b], &[t], &attrs)?;
        Ok(())
    }

    fn unary(&mut self, block: Block) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let floats = ["exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "floor", "ceil", "erf"];
        match self.u.int_in_range(0..=3)? {
            0 => {
                let name = *self.u.choose(&["neg", "abs"])?;
                let k = types::scalar_kind(self.u)?;
                let t = self.shaped_kind(&dims, k);
                let x = self.value_of(block, t)?;
                self.op(block, name, &[x], &[t], &[])?;
            }
            1 => {
                let k = types::int_kind(self.u)?;
                let t = self.shaped_kind(&dims, k);
                let x = self.value_of(block, t)?;
                self.op(block, "not", &[x], &[t], &[])?;
            }
            2 => {
                let name = *self.u.choose(&floats)?;
                let k = types::float_kind(self.u)?;
                let t = self.shaped_kind(&dims, k);
                let x = self.value_of(block, t)?;
                self.op(block, name, &[x], &[t], &[])?;
            }
            _ => {
                let name = *self.u.choose(&["fma", "clamp"])?;
                let k = types::float_kind(self.u)?;
                let t = self.shaped_kind(&dims, k);
                let xs = [self.value_of(block, t)?, self.value_of(block, t)?, self.value_of(block, t)?];
                let mut attrs = Vec::new();
                if name == "clamp" && self.u.arbitrary()? {
                    attrs.push(("propagate_nan", Attr::Bool(self.u.arbitrary()?)));
                }
                self.op(block, name, &xs, &[t], &attrs)?;
            }
        }
        Ok(())
    }

    fn compare_select(&mut self, block: Block) -> Result<()> {
        let t = self.any_type()?;
        let dims = self.dims(t);
        let cond_t = self.shaped_kind(&dims, ScalarKind::I1);
        if self.u.arbitrary()? {
            let pred = *self.u.choose(&["eq", "ne", "lt", "le", "gt", "ge"])?;
            let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
            self.op(block, "cmp", &[a, b], &[cond_t], &[("pred", Attr::Str(pred.into()))])?;
        } else {
            let c = self.value_of(block, cond_t)?;
            let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
            self.op(block, "select", &[c, a, b], &[t], &[])?;
        }
        Ok(())
    }

    fn casts(&mut self, block: Block) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let from_k = types::scalar_kind(self.u)?;
        let from = self.shaped_kind(&dims, from_k);
        let x = self.value_of(block, from)?;
        if self.u.arbitrary()? {
            let to_k = types::scalar_kind(self.u)?;
            let to = self.shaped_kind(&dims, to_k);
            let mut attrs = Vec::new();
            if self.u.arbitrary()? {
                attrs.push(("rounding", Attr::Str((*self.u.choose(&["rtne", "rtz"])?).into())));
            }
            self.op(block, "cast", &[x], &[to], &attrs)?;
        } else {
            let same: Vec<ScalarKind> = ScalarKind::ALL.into_iter().filter(|k| k.bits() == from_k.bits()).collect();
            let to_k = *self.u.choose(&same)?;
            let to = self.shaped_kind(&dims, to_k);
            self.op(block, "bitcast", &[x], &[to], &[])?;
        }
        Ok(())
    }

    fn pointers(&mut self, block: Block) -> Result<()> {
        let dims = types::shape(self.u, 0)?;
        let p = types::ptr(self.u, self.b.module)?;
        let pt = types::shaped(self.b.module, &dims, p);
        let i64t = self.shaped_kind(&dims, ScalarKind::I64);
        match self.u.int_in_range(0..=3)? {
            0 => {
                let x = self.value_of(block, pt)?;
                self.op(block, "ptr_to_int", &[x], &[i64t], &[])?;
            }
            1 => {
                let x = self.value_of(block, i64t)?;
                self.op(block, "int_to_ptr", &[x], &[pt], &[])?;
            }
            2 => {
                let q = types::ptr(self.u, self.b.module)?;
                let qt = types::shaped(self.b.module, &dims, q);
                let x = self.value_of(block, pt)?;
                self.op(block, "bitcast", &[x], &[qt], &[])?;
            }
            _ => {
                let k = types::int_kind(self.u)?;
                let offt = self.shaped_kind(&dims, k);
                let (x, off) = (self.value_of(block, pt)?, self.value_of(block, offt)?);
                self.op(block, "addptr", &[x, off], &[pt], &[])?;
            }
        }
        Ok(())
    }

    fn memory(&mut self, block: Block) -> Result<()> {
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
        match self.u.int_in_range(0..=3)? {
            0 => {
                if self.u.arbitrary()? {
                    operands.push(self.value_of(block, mt)?);
                    if self.u.arbitrary()? {
                        operands.push(self.value_of(block, vt)?);
                    }
                }
                let mut attrs = cache(self)?;
                attrs.push(("volatile", Attr::Bool(self.u.arbitrary()?)));
                self.op(block, "load", &operands, &[vt], &attrs)?;
            }
            1 => {
                operands.push(self.value_of(block, vt)?);
                if self.u.arbitrary()? {
                    operands.push(self.value_of(block, mt)?);
                }
                let attrs = cache(self)?;
                self.op(block, "store", &operands, &[], &attrs)?;
            }
            2 => {
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
                self.op(block, "atomic_rmw", &operands, &[vt], &attrs)?;
            }
            _ => {
                operands.push(self.value_of(block, vt)?);
                operands.push(self.value_of(block, vt)?);
                let attrs = [
                    ("sem", Attr::Str((*self.u.choose(&SEM)?).into())),
                    ("scope", Attr::Str((*self.u.choose(&SCOPE)?).into())),
                ];
                self.op(block, "atomic_cas", &operands, &[vt], &attrs)?;
            }
        }
        Ok(())
    }

    fn broadcast_expand(&mut self, block: Block) -> Result<()> {
        let t = self.tensor_of(1)?;
        let elem = self.elem(t);
        let dims = self.dims(t);
        if self.u.arbitrary()? {
            // broadcast: each dim of 1 in the operand may grow
            let mut from = dims.clone();
            for d in from.iter_mut() {
                if self.u.arbitrary()? {
                    *d = 1;
                }
            }
            let xt = types::shaped(self.b.module, &from, elem);
            let x = self.value_of(block, xt)?;
            self.op(block, "broadcast", &[x], &[t], &[])?;
        } else if dims.len() < MAX_RANK + 1 {
            let xt = if self.u.ratio(1, 4)? { elem } else { t };
            let mut to = self.dims(xt);
            let axis = self.u.int_in_range(0..=to.len())?;
            to.insert(axis, 1);
            let rt = types::shaped(self.b.module, &to, elem);
            let x = self.value_of(block, xt)?;
            self.op(block, "expand_dims", &[x], &[rt], &[("axis", Attr::Int(axis as i64))])?;
        }
        Ok(())
    }

    fn reshape_permute(&mut self, block: Block) -> Result<()> {
        let t = self.tensor_of(1)?;
        let elem = self.elem(t);
        let dims = self.dims(t);
        let x = self.value_of(block, t)?;
        if self.u.arbitrary()? {
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
            self.op(block, "reshape", &[x], &[rt], &[("can_reorder", reorder)])?;
        } else {
            let mut order: Vec<usize> = (0..dims.len()).collect();
            for i in (1..order.len()).rev() {
                let j = self.u.int_in_range(0..=i)?;
                order.swap(i, j);
            }
            let to: Vec<u32> = order.iter().map(|&o| dims[o]).collect();
            let rt = types::shaped(self.b.module, &to, elem);
            let order = Attr::IntArray(order.iter().map(|&o| o as i64).collect());
            self.op(block, "permute", &[x], &[rt], &[("order", order)])?;
        }
        Ok(())
    }

    fn join_split_cat(&mut self, block: Block) -> Result<()> {
        match self.u.int_in_range(0..=2)? {
            0 => {
                let t = self.any_type()?;
                if self.dims(t).len() >= MAX_RANK + 1 {
                    return Ok(());
                }
                let elem = self.elem(t);
                let mut to = self.dims(t);
                to.push(2);
                let rt = types::shaped(self.b.module, &to, elem);
                let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
                self.op(block, "join", &[a, b], &[rt], &[])?;
            }
            1 => {
                let t = self.tensor_of(1)?;
                let elem = self.elem(t);
                let mut dims = self.dims(t);
                *dims.last_mut().expect("rank >= 1") = 2;
                let xt = types::shaped(self.b.module, &dims, elem);
                let rt = types::shaped(self.b.module, &dims[..dims.len() - 1], elem);
                let x = self.value_of(block, xt)?;
                self.op(block, "split", &[x], &[rt, rt], &[])?;
            }
            _ => {
                let t = self.tensor_of(1)?;
                let elem = self.elem(t);
                let mut to = self.dims(t);
                to[0] *= 2;
                let rt = types::shaped(self.b.module, &to, elem);
                let (a, b) = (self.value_of(block, t)?, self.value_of(block, t)?);
                let reorder = Attr::Bool(self.u.arbitrary()?);
                self.op(block, "cat", &[a, b], &[rt], &[("can_reorder", reorder)])?;
            }
        }
        Ok(())
    }

    fn reduce_scan(&mut self, block: Block, depth: usize) -> Result<()> {
        let dims = types::shape(self.u, 1)?;
        let n = self.u.int_in_range(1..=2)?;
        let mut elems = Vec::with_capacity(n);
        for _ in 0..n {
            elems.push(self.any_scalar()?);
        }
        let ins: Vec<Type> = elems.iter().map(|&e| types::shaped(self.b.module, &dims, e)).collect();
        let operands = ins.iter().map(|&t| self.value_of(block, t)).collect::<Result<Vec<_>>>()?;
        let axis = self.u.int_in_range(0..=dims.len() - 1)?;
        let scan = self.u.arbitrary()?;
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
        let name = if scan { "scan" } else { "reduce" };
        let (rs, blocks) = self.b.op_with_regions(block, name, &operands, &results, &attrs, &[&args]);
        self.region(blocks[0], depth, "yield", &elems)?;
        self.pool.extend(rs);
        Ok(())
    }

    /// Fills a region's block: its arguments join the pool for its ops, then
    /// `terminator` yields values of `yields`; the pool is restored after.
    fn region(&mut self, block: Block, depth: usize, terminator: &str, yields: &[Type]) -> Result<()> {
        let mark = self.pool.len();
        let args = self.b.block_args(block);
        self.pool.extend(args);
        self.ops_into(block, depth + 1)?;
        let vs = self.values_of(block, yields)?;
        self.b.op(block, terminator, &vs, &[], &[]);
        self.pool.truncate(mark);
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
        let attrs = [
            ("input_precision", Attr::Str(precision.into())),
            ("max_num_imprecise_acc", Attr::Int(self.u.int_in_range(0..=64)?)),
        ];
        self.op(block, "dot", &xs, &[ct], &attrs)?;
        Ok(())
    }

    fn hint(&mut self, block: Block) -> Result<()> {
        let name = *self.u.choose(&["multiple_of", "max_contiguous", "max_constancy"])?;
        let t = self.any_type()?;
        let n = self.dims(t).len().max(1);
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            values.push(*self.u.choose(&[1i64, 2, 4, 8, 16])?);
        }
        let x = self.value_of(block, t)?;
        self.op(block, name, &[x], &[t], &[("values", Attr::IntArray(values))])?;
        Ok(())
    }

    fn result_types(&mut self, max: usize) -> Result<Vec<Type>> {
        let n = self.u.int_in_range(0..=max)?;
        (0..n).map(|_| self.any_type()).collect()
    }

    fn if_op(&mut self, block: Block, depth: usize) -> Result<()> {
        let i1 = types::scalar(self.b.module, ScalarKind::I1);
        let cond = self.value_of(block, i1)?;
        let results = self.result_types(2)?;
        let (rs, blocks) = self.b.op_with_regions(block, "if", &[cond], &results, &[], &[&[], &[]]);
        self.region(blocks[0], depth, "yield", &results)?;
        self.region(blocks[1], depth, "yield", &results)?;
        self.pool.extend(rs);
        Ok(())
    }

    fn for_op(&mut self, block: Block, depth: usize) -> Result<()> {
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
        let (rs, blocks) = self.b.op_with_regions(block, "for", &operands, &inits, &[], &[&args]);
        self.region(blocks[0], depth, "yield", &inits)?;
        self.pool.extend(rs);
        Ok(())
    }

    fn while_op(&mut self, block: Block, depth: usize) -> Result<()> {
        let inits = self.result_types(2)?;
        let forwarded = self.result_types(2)?;
        let operands = inits.iter().map(|&t| self.value_of(block, t)).collect::<Result<Vec<_>>>()?;
        let (rs, blocks) = self.b.op_with_regions(block, "while", &operands, &forwarded, &[], &[&inits, &forwarded]);
        // before: ends in condition(i1, forwarded...)
        let i1 = types::scalar(self.b.module, ScalarKind::I1);
        let mut cond_types = vec![i1];
        cond_types.extend_from_slice(&forwarded);
        self.region(blocks[0], depth, "condition", &cond_types)?;
        self.region(blocks[1], depth, "yield", &inits)?;
        self.pool.extend(rs);
        Ok(())
    }

    fn call(&mut self, block: Block) -> Result<()> {
        if self.callees.is_empty() {
            return Ok(());
        }
        let callee = self.u.choose(self.callees)?.clone();
        let args = self.values_of(block, &callee.params)?;
        self.op(block, "call", &args, &callee.results, &[("callee", Attr::Str(callee.name))])?;
        Ok(())
    }

    fn debug(&mut self, block: Block) -> Result<()> {
        match self.u.int_in_range(0..=2)? {
            0 => {
                let dims = types::shape(self.u, 0)?;
                let t = self.shaped_kind(&dims, ScalarKind::I1);
                let c = self.value_of(block, t)?;
                let msg = Attr::Str(self.u.arbitrary()?);
                self.op(block, "assert", &[c], &[], &[("msg", msg)])?;
            }
            1 => {
                let n = self.u.int_in_range(0..=3)?;
                let mut vs = Vec::with_capacity(n);
                for _ in 0..n {
                    let t = self.any_type()?;
                    vs.push(self.value_of(block, t)?);
                }
                let attrs = [("prefix", Attr::Str(self.u.arbitrary()?)), ("hex", Attr::Bool(self.u.arbitrary()?))];
                self.op(block, "print", &vs, &[], &attrs)?;
            }
            _ => {
                self.op(block, "barrier", &[], &[], &[])?;
            }
        }
        Ok(())
    }
}
