//! AxisInfo transfer rules: the facts of an op's results from its operands'
//! facts (see `axis_info.rs` for what the facts mean). Each rule is sound
//! for every input, including negative integers and wrapping; where a rule
//! would only hold for non-negative values (truncating `div`/`rem` on
//! signed types) it is applied to unsigned types only.
use tritium_ir::{Attr, Op, Opcode, ScalarKind, TypeData};

use crate::axis_info::{pow2_divisor, pow2_floor, AxisFacts, Walk, MAX_DIV};

/// Divisibility at the starts of runs of length `new` of a value whose runs
/// of length `old` start at multiples of `div` and step by `step`.
fn restart(div: u64, old: u64, new: u64, step: u64) -> u64 {
    if new < old {
        div.min((new * step).min(MAX_DIV))
    } else {
        div
    }
}

impl<'m> Walk<'m> {
    fn kind_of(&self, v: tritium_ir::Value) -> Option<ScalarKind> {
        self.module.types.scalar_kind(self.func.value_type(v))
    }

    /// Bytes of the pointee of pointer (tensor) value `v`; 1 for non-pointers.
    fn pointee_bytes(&self, v: tritium_ir::Value) -> u64 {
        let types = &self.module.types;
        types.pointee_bytes(self.func.value_type(v)).unwrap_or(1) as u64
    }

    /// Facts of each result of `op` (ops without regions of their own, or
    /// whose regions were walked already).
    pub(crate) fn rule(&self, op: Op) -> Vec<AxisFacts> {
        let data = &self.func.ops[op];
        let Some(&res) = data.results.first() else { return Vec::new() };
        let rs = self.shape(res);
        let rank = rs.len().max(1);
        let full: Vec<u64> = if rs.is_empty() { vec![1] } else { rs.clone() };
        let ops: Vec<AxisFacts> = data.operands.iter().map(|&v| self.get(v)).collect();
        let same_rank = ops.iter().all(|f| f.rank() == rank);
        // elementwise ops map runs of equal inputs to runs of equal outputs
        let min_const: Vec<u64> = (0..rank).map(|d| if same_rank { ops.iter().map(|f| f.constancy[d]).min().unwrap_or(full[d]) } else { 1 }).collect();
        let int_attr = |k: &str| data.attrs.get(k).and_then(Attr::as_int);
        let unsigned = self.kind_of(res).is_some_and(ScalarKind::is_unsigned);
        let mut f = AxisFacts::unknown(rs.len());
        let opcode = data.opcode;
        match opcode {
            Opcode::Const => {
                let v = match data.attrs.get("value") {
                    Some(Attr::Int(i)) => Some(*i),
                    Some(Attr::Bool(b)) => Some(*b as i64),
                    _ => None,
                };
                let is_int = self.kind_of(res).is_some_and(|k| k.is_int());
                f = AxisFacts::constant(&rs, if is_int { v } else { None });
            }
            Opcode::Arange => {
                f.contiguity[0] = full[0];
                f.divisibility[0] = pow2_divisor(int_attr("start").unwrap_or(1));
            }
            Opcode::Splat => {
                f = AxisFacts::constant(&rs, ops[0].value);
                f.divisibility = vec![ops[0].all_div(); rank];
            }
            Opcode::ExpandDims => {
                let src = &ops[0];
                let src_rank = self.shape(data.operands[0]).len();
                match int_attr("axis").and_then(|a| usize::try_from(a).ok()).filter(|&a| a < rank) {
                    Some(axis) if src_rank > 0 && src_rank + 1 == rs.len() => {
                        // the new size-1 dim: each element starts a run of one
                        let all = src.all_div();
                        f = src.clone();
                        f.contiguity.insert(axis, 1);
                        f.divisibility.insert(axis, all);
                        f.constancy.insert(axis, 1);
                    }
                    Some(_) if src_rank == 0 => {
                        f = AxisFacts::constant(&rs, src.value);
                        f.divisibility = vec![src.all_div(); rank];
                    }
                    _ => {}
                }
            }
            Opcode::Reshape => f = self.reshape(&ops[0], &self.shape(data.operands[0]), &rs),
            // the rules below combine operands dim by dim
            _ if !same_rank => {}
            Opcode::Broadcast => {
                let ss = self.shape(data.operands[0]);
                f = ops[0].clone();
                for d in 0..rank.min(ss.len()) {
                    if ss[d] == 1 && full[d] > 1 {
                        // a size-1 dim has contiguity 1, so its divisibility covers every element
                        f.contiguity[d] = 1;
                        f.constancy[d] = full[d];
                    }
                }
            }
            Opcode::Permute => {
                let order = data.attrs.get("order").and_then(Attr::as_int_array).unwrap_or(&[]);
                if order.len() == rank && order.iter().all(|&i| (i as usize) < rank) {
                    let src = &ops[0];
                    for (i, &s) in order.iter().enumerate() {
                        let s = s as usize;
                        f.contiguity[i] = src.contiguity[s];
                        f.divisibility[i] = src.divisibility[s];
                        f.constancy[i] = src.constancy[s];
                    }
                    f.value = src.value;
                }
            }
            Opcode::Add | Opcode::Sub | Opcode::Addptr => {
                let (a, b) = (&ops[0], &ops[1]);
                // addptr counts the offset in elements; pointer facts are in bytes
                let step = if opcode == Opcode::Addptr { self.pointee_bytes(res) } else { 1 };
                for d in 0..rank {
                    let from_a = a.contiguity[d].min(b.constancy[d]);
                    let from_b = if opcode == Opcode::Sub { 1 } else { b.contiguity[d].min(a.constancy[d]) };
                    let c = from_a.max(from_b);
                    let da = restart(a.divisibility[d], a.contiguity[d], c, step);
                    let db = restart((b.divisibility[d] * step).min(MAX_DIV), b.contiguity[d], c, step);
                    f.contiguity[d] = c;
                    f.divisibility[d] = da.min(db);
                }
                f.constancy = min_const.clone();
                if opcode != Opcode::Addptr {
                    f.value = match (a.value, b.value) {
                        (Some(x), Some(y)) if opcode == Opcode::Add => x.checked_add(y),
                        (Some(x), Some(y)) => x.checked_sub(y),
                        _ => None,
                    };
                }
            }
            Opcode::Mul => {
                let (a, b) = (&ops[0], &ops[1]);
                if b.value == Some(1) {
                    f = a.clone();
                } else if a.value == Some(1) {
                    f = b.clone();
                } else {
                    f.divisibility = vec![(a.all_div().saturating_mul(b.all_div())).min(MAX_DIV); rank];
                    f.constancy = min_const.clone();
                    f.value = a.value.zip(b.value).and_then(|(x, y)| x.checked_mul(y));
                }
            }
            Opcode::Div | Opcode::Shr => {
                let (a, b) = (&ops[0], &ops[1]);
                let is_int = self.kind_of(res).is_some_and(|k| k.is_int());
                // dividing by 2^k (or shifting right by k): aligned runs of
                // 2^k consecutive integers give one quotient each. `shr` floors,
                // so it holds for negative values; truncating `div` only for unsigned.
                let c = match (opcode, b.value) {
                    (Opcode::Div, Some(v)) if v > 0 && (v as u64).is_power_of_two() => Some(v as u64),
                    (Opcode::Shr, Some(k)) if (0..31).contains(&k) => Some(1u64 << k),
                    _ => None,
                };
                f.constancy = min_const.clone();
                if let (true, Some(c)) = (is_int, c) {
                    for d in 0..rank {
                        if opcode == Opcode::Shr || unsigned {
                            let block = a.contiguity[d].min(a.divisibility[d]).min(c);
                            f.constancy[d] = f.constancy[d].max(block);
                        }
                        // an exact quotient keeps the rest of the divisor's powers of two
                        f.divisibility[d] = (a.all_div() / c).max(1);
                    }
                }
                // non-negative operands only: an unsigned 64-bit constant may be
                // held as a negative i64, where signed and unsigned results differ
                f.value = match (opcode, a.value, b.value) {
                    (Opcode::Div, Some(x), Some(y)) if x >= 0 && y > 0 => Some(x / y),
                    (Opcode::Shr, Some(x), Some(y)) if x >= 0 && (0..63).contains(&y) => Some(x >> y),
                    _ => None,
                };
            }
            Opcode::Shl => {
                let (a, b) = (&ops[0], &ops[1]);
                f.constancy = min_const.clone();
                match b.value {
                    Some(0) => f = a.clone(),
                    Some(k) if (1..31).contains(&k) => {
                        f.divisibility = vec![(a.all_div() << k).min(MAX_DIV); rank];
                        f.value = a.value.and_then(|x| x.checked_shl(k as u32));
                    }
                    _ => {}
                }
            }
            Opcode::Rem | Opcode::And => {
                let (a, b) = (&ops[0], &ops[1]);
                f.constancy = min_const.clone();
                // x mod 2^m (`rem` on unsigned, `and` with 2^m - 1 on any type):
                // an aligned run no longer than 2^m stays consecutive. So does
                // `x % N` for a uniform N known only as a multiple of 2^m (the
                // tutorial matmul's `(pid * B + arange(0, B)) % N`): an aligned
                // run of length <= 2^m never crosses a multiple of N. For a
                // negative dividend, a run starting exactly at a multiple of N
                // would break; like Triton, index arithmetic is assumed not to
                // go negative there (such offsets address before the tensor).
                let uniform = b.constancy.iter().zip(&full).all(|(c, n)| c >= n);
                let modulus = match (opcode, b.value) {
                    (Opcode::Rem, Some(v)) if unsigned && v > 0 && (v as u64).is_power_of_two() => Some(v as u64),
                    (Opcode::And, Some(v)) if v >= 0 && ((v as u64) + 1).is_power_of_two() => Some(v as u64 + 1),
                    (Opcode::Rem, None) if uniform && b.all_div() > 1 => Some(b.all_div().min(MAX_DIV)),
                    _ => None,
                };
                for d in 0..rank {
                    if let Some(m) = modulus {
                        let run = a.contiguity[d].min(a.divisibility[d]).min(m);
                        f.contiguity[d] = run;
                        f.divisibility[d] = restart(a.divisibility[d], a.contiguity[d], run, 1).min(m);
                    } else {
                        // x - q*b (rem) or x & b keeps the powers of two both have
                        f.divisibility[d] = a.all_div().min(b.all_div());
                    }
                }
            }
            Opcode::Cmp => {
                let (a, b) = (&ops[0], &ops[1]);
                // x+j < n is equal over an aligned block of size k when x and n are
                // multiples of k; likewise ge, and gt/le with the sides swapped
                let run = |c: &AxisFacts, k: &AxisFacts, d: usize| c.contiguity[d].min(k.constancy[d]).min(c.divisibility[d]).min(k.divisibility[d]);
                let pred = data.attrs.get("pred").and_then(Attr::as_str);
                for (d, &mc) in min_const.iter().enumerate() {
                    let blocks = match pred {
                        Some("lt") | Some("ge") => run(a, b, d),
                        Some("gt") | Some("le") => run(b, a, d),
                        _ => 1,
                    };
                    f.constancy[d] = mc.max(blocks);
                }
            }
            Opcode::Select => {
                let (c, a, b) = (&ops[0], &ops[1], &ops[2]);
                f.constancy = min_const.clone();
                for d in 0..rank {
                    // within a block where the condition is constant, one side is taken whole
                    let cont = c.constancy[d].min(a.contiguity[d]).min(b.contiguity[d]);
                    f.contiguity[d] = cont;
                    f.divisibility[d] = restart(a.divisibility[d], a.contiguity[d], cont, 1).min(restart(b.divisibility[d], b.contiguity[d], cont, 1));
                }
                if a.value == b.value {
                    f.value = a.value;
                }
            }
            Opcode::Cast | Opcode::Bitcast | Opcode::PtrToInt | Opcode::IntToPtr => {
                let src = &ops[0];
                let types = &self.module.types;
                let elem = |v| types.elem(self.func.value_type(v));
                let (se, de) = (elem(data.operands[0]), elem(res));
                let is_ptr = |t| matches!(types.data(t), TypeData::Ptr { .. });
                let bits = |t| types.scalar_kind(t).map(|k| k.bits()).unwrap_or(64);
                let int_like = |t| is_ptr(t) || types.scalar_kind(t).is_some_and(|k| k.is_int() && k.bits() > 1);
                if int_like(se) && int_like(de) && (opcode != Opcode::Bitcast || bits(se) == bits(de)) {
                    f = src.clone();
                    if bits(de) < bits(se) {
                        // wrapping keeps aligned runs no longer than 2^bits consecutive
                        let cap = 1u64 << bits(de).min(30);
                        for d in 0..rank {
                            f.contiguity[d] = f.contiguity[d].min(cap);
                            f.divisibility[d] = f.divisibility[d].min(cap);
                        }
                        f.value = None;
                    }
                } else {
                    f.constancy = min_const.clone();
                }
            }
            // the same values, held elsewhere
            Opcode::ConvertLayout => f = ops[0].clone(),
            Opcode::MultipleOf | Opcode::MaxContiguous | Opcode::MaxConstancy => {
                f = ops[0].clone();
                let values = data.attrs.get("values").and_then(Attr::as_int_array).unwrap_or(&[]);
                for d in 0..rank {
                    let h = values.get(d).copied().unwrap_or(1).max(1);
                    match opcode {
                        Opcode::MultipleOf => f.divisibility[d] = pow2_divisor(h),
                        Opcode::MaxContiguous => f.contiguity[d] = pow2_floor(h as u64),
                        _ => f.constancy[d] = pow2_floor(h as u64),
                    }
                }
            }
            // equal pointers (under equal masks) load equal values; a volatile
            // load may see another thread's store between two lanes' reads
            Opcode::Load => {
                if data.attrs.get("volatile").and_then(Attr::as_bool) != Some(true) {
                    f.constancy = min_const.clone()
                }
            }
            // elementwise: equal inputs give equal outputs (user asm only if pure)
            Opcode::DivRn | Opcode::Or | Opcode::Xor | Opcode::Min | Opcode::Max | Opcode::Umulhi | Opcode::Neg
            | Opcode::Not | Opcode::Abs | Opcode::Exp | Opcode::Exp2 | Opcode::Log | Opcode::Log2 | Opcode::Sqrt
            | Opcode::SqrtRn | Opcode::Rsqrt | Opcode::Sin | Opcode::Cos | Opcode::Floor | Opcode::Ceil
            | Opcode::Erf | Opcode::Fma | Opcode::Clamp => f.constancy = min_const.clone(),
            Opcode::InlineAsm | Opcode::ExternElementwise => {
                if data.attrs.get("pure").and_then(Attr::as_bool) == Some(true) && data.results.len() == 1 {
                    f.constancy = min_const.clone()
                }
            }
            Opcode::ProgramId | Opcode::NumPrograms | Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::Reduce
            | Opcode::Scan | Opcode::Dot | Opcode::Join | Opcode::Split | Opcode::Cat | Opcode::BlockLoad
            | Opcode::Gather | Opcode::Histogram | Opcode::LocalAlloc | Opcode::LocalView | Opcode::DotWait | Opcode::TmaLoad
            | Opcode::TensormapCreate => {}
            // `Walk::op` gives the results of these (or they have none)
            Opcode::For | Opcode::If | Opcode::While | Opcode::Call | Opcode::Store | Opcode::Yield
            | Opcode::Condition | Opcode::Return | Opcode::Assert | Opcode::Print | Opcode::Barrier
            | Opcode::BlockStore | Opcode::BlockAtomic | Opcode::Assume | Opcode::AsyncCopy | Opcode::AsyncCommit
            | Opcode::AsyncWait | Opcode::TmaStore | Opcode::MbarrierInit | Opcode::MbarrierWait | Opcode::MbarrierInval
            | Opcode::TmaCopy => {}
        }
        // constancy and contiguity never exceed the dim (broadcasts of scalars, clamps above)
        for (d, &n) in full.iter().enumerate().take(f.rank()) {
            f.constancy[d] = f.constancy[d].min(n).max(1);
            f.contiguity[d] = f.contiguity[d].min(n).max(1);
        }
        let mut out = vec![f];
        for &r in &data.results[1..] {
            out.push(AxisFacts::unknown(self.shape(r).len()));
        }
        out
    }

    /// Exact only when the reshape inserts or removes size-1 dims: the
    /// non-unit dims keep their facts, unit dims take every element's divisibility.
    fn reshape(&self, src: &AxisFacts, ss: &[u64], rs: &[u64]) -> AxisFacts {
        let src_dims: Vec<usize> = (0..ss.len()).filter(|&d| ss[d] != 1).collect();
        let res_dims: Vec<usize> = (0..rs.len()).filter(|&d| rs[d] != 1).collect();
        let same = src_dims.len() == res_dims.len() && src_dims.iter().zip(&res_dims).all(|(&a, &b)| ss[a] == rs[b]);
        if !same || src.rank() != ss.len().max(1) {
            return AxisFacts::unknown(rs.len());
        }
        let mut f = AxisFacts::unknown(rs.len());
        f.divisibility = vec![src.all_div(); f.rank()];
        for (&a, &b) in src_dims.iter().zip(&res_dims) {
            f.contiguity[b] = src.contiguity[a];
            f.divisibility[b] = src.divisibility[a];
            f.constancy[b] = src.constancy[a];
        }
        f.value = src.value;
        f
    }
}

#[cfg(test)]
mod tests {
    use super::restart;

    #[test]
    fn restart_lowers_divisibility_only_when_runs_shrink() {
        assert_eq!(restart(1024, 1024, 1024, 1), 1024);
        assert_eq!(restart(1024, 1024, 4, 1), 4);
        assert_eq!(restart(64, 16, 4, 4), 16);
        assert_eq!(restart(64, 1, 4, 4), 64);
    }
}
