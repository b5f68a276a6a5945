//! A small stand-in for tritium-analysis' AxisInfo, enough to vectorise global
//! accesses: per value and per dim, `contiguity` (runs of consecutive values
//! along that dim), `divisibility` (power of two dividing every element that
//! starts such a run, whatever its other coordinates; bytes for pointers) and
//! `constancy` (runs of equal values along that dim). Runs are assumed aligned
//! to their length along the dim: true for values built from `arange` with
//! `splat`, `expand_dims`, `broadcast`, `add`/`sub`/`mul` and casts (the only
//! sources of contiguity here besides the user's `max_contiguous` hints,
//! which are taken at their word). Scalars are rank 1 with one element. All
//! facts are powers of two. Only ops of the kernel body are analysed; values
//! inside loops and branches get no facts (accesses there are unvectorised).
use std::collections::{HashMap, HashSet};

use tritium_ir::{Attr, Function, Module, TypeData, Value};

use crate::layout::elem_bytes;

/// The largest divisibility we track (stands for "0", divisible by anything).
const MAX_DIV: u64 = 1 << 30;

/// Facts along one dim (what vectorisation reads, for the last dim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    pub contiguity: u64,
    pub divisibility: u64,
    pub constancy: u64,
}

/// Facts along every dim of one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimFacts {
    pub contiguity: Vec<u64>,
    pub divisibility: Vec<u64>,
    pub constancy: Vec<u64>,
}

impl DimFacts {
    fn unknown(rank: usize) -> DimFacts {
        let r = rank.max(1);
        DimFacts { contiguity: vec![1; r], divisibility: vec![1; r], constancy: vec![1; r] }
    }
    fn rank(&self) -> usize {
        self.contiguity.len()
    }
    /// Divisibility of every element: any dim without contiguity runs
    /// has each element start a run, so its divisibility covers them all.
    fn all_div(&self) -> u64 {
        (0..self.rank()).filter(|&d| self.contiguity[d] == 1).map(|d| self.divisibility[d]).max().unwrap_or(1)
    }
    fn dim(&self, d: usize) -> Facts {
        Facts { contiguity: self.contiguity[d], divisibility: self.divisibility[d], constancy: self.constancy[d] }
    }
}

fn pow2_divisor(v: i64) -> u64 {
    if v == 0 {
        MAX_DIV
    } else {
        (1u64 << v.unsigned_abs().trailing_zeros()).min(MAX_DIV)
    }
}

fn pow2_floor(v: u64) -> u64 {
    if v == 0 {
        1
    } else {
        1 << (63 - v.leading_zeros())
    }
}

/// Divisibility at the starts of runs of length `new_contig` of a value whose
/// runs of length `old_contig` start at multiples of `div` and step by `step`.
fn restart(div: u64, old_contig: u64, new_contig: u64, step: u64) -> u64 {
    if new_contig < old_contig {
        div.min((new_contig * step).min(MAX_DIV))
    } else {
        div
    }
}

/// Facts of every value of `func` that the walk reached.
pub struct Contiguity {
    facts: HashMap<Value, DimFacts>,
}

impl Contiguity {
    /// Facts of `v` along its last dim (unknown for values never analysed).
    pub fn get(&self, v: Value) -> Facts {
        self.facts.get(&v).map(|f| f.dim(f.rank() - 1)).unwrap_or(Facts { contiguity: 1, divisibility: 1, constancy: 1 })
    }

    /// Facts of `v` along every dim.
    pub fn get_dims(&self, v: Value) -> Option<&DimFacts> {
        self.facts.get(&v)
    }

    pub fn compute(module: &Module, func: &Function) -> Contiguity {
        let types = &module.types;
        let mut facts: HashMap<Value, DimFacts> = HashMap::new();
        let shape = |v: Value| -> Vec<u64> {
            let d: Vec<u64> = types.dims(func.value_type(v)).iter().map(|&d| d as u64).collect();
            if d.is_empty() {
                vec![1]
            } else {
                d
            }
        };
        let elem_step = |v: Value| -> u64 {
            types.pointee(types.elem(func.value_type(v))).and_then(|p| types.scalar_kind(p)).map(|k| elem_bytes(k) as u64).unwrap_or(1)
        };
        // Values known to equal 1 everywhere (the constant 1, `equal_to_1`
        // arguments, and splats/broadcasts of those): `x * one` keeps x's facts,
        // so `offs * stride` with a stride specialized to 1 stays contiguous.
        let mut ones: HashSet<Value> = HashSet::new();
        for (&arg, attrs) in func.args().iter().zip(&func.arg_attrs) {
            if attrs.get("equal_to_1").and_then(Attr::as_bool) == Some(true) {
                ones.insert(arg);
            }
            let ty = func.value_type(arg);
            let given = attrs.get("divisibility").and_then(Attr::as_int).filter(|&d| d > 0).map(pow2_divisor);
            let natural = types.pointee(ty).and_then(|p| types.scalar_kind(p)).map(|k| elem_bytes(k) as u64).unwrap_or(1);
            let mut f = DimFacts::unknown(0);
            f.divisibility[0] = given.unwrap_or(natural).max(natural);
            facts.insert(arg, f);
        }
        for &op in &func.region_block(func.body).ops {
            let o = &func.ops[op];
            let Some(&res) = o.results.first() else { continue };
            let rs = shape(res);
            let rank = rs.len();
            let get = |v: Value| facts.get(&v).cloned().unwrap_or_else(|| DimFacts::unknown(shape(v).len()));
            let operands: Vec<DimFacts> = o.operands.iter().map(|&v| get(v)).collect();
            // elementwise ops map runs of equal inputs to runs of equal outputs
            let same_rank = operands.iter().all(|f| f.rank() == rank);
            let min_const: Vec<u64> = (0..rank)
                .map(|d| if same_rank { operands.iter().map(|f| f.constancy[d]).min().unwrap_or(rs[d]) } else { 1 })
                .collect();
            let attr_int = |k: &str| o.attrs.get(k).and_then(Attr::as_int);
            // hint values, one per dim
            let hint = |d: usize| -> Option<i64> { o.attrs.get("values").and_then(Attr::as_int_array).and_then(|a| a.get(d).copied()) };
            let name = o.opcode.name();
            let is_one = match name {
                "const" => attr_int("value") == Some(1),
                "splat" | "broadcast" | "expand_dims" => ones.contains(&o.operands[0]),
                _ => false,
            };
            if is_one {
                ones.insert(res);
            }
            if name == "mul" && same_rank {
                let one_side = if ones.contains(&o.operands[1]) { Some(0) } else if ones.contains(&o.operands[0]) { Some(1) } else { None };
                if let Some(i) = one_side {
                    facts.insert(res, operands[i].clone());
                    continue;
                }
            }
            let mut f = DimFacts::unknown(rank);
            match name {
                "const" => {
                    f.divisibility = vec![attr_int("value").map(pow2_divisor).unwrap_or(1); rank];
                    f.constancy = rs.clone();
                }
                "arange" => {
                    f.contiguity[0] = rs[0];
                    f.divisibility[0] = pow2_divisor(attr_int("start").unwrap_or(1));
                }
                "splat" => {
                    f.divisibility = vec![operands[0].all_div(); rank];
                    f.constancy = rs.clone();
                }
                "expand_dims" => {
                    let src = &operands[0];
                    let src_rank = types.dims(func.value_type(o.operands[0])).len();
                    let axis = attr_int("axis").and_then(|a| usize::try_from(a).ok()).filter(|&a| a < rank);
                    match axis {
                        Some(axis) if src_rank + 1 == rank && src.rank() == src_rank => {
                            // the new size-1 dim: each element starts a run of one
                            let all = src.all_div();
                            f = src.clone();
                            f.contiguity.insert(axis, 1);
                            f.divisibility.insert(axis, all);
                            f.constancy.insert(axis, 1);
                        }
                        Some(_) if src_rank == 0 => {
                            f.divisibility = vec![src.all_div(); rank];
                            f.constancy = rs.clone();
                        }
                        _ => {}
                    }
                }
                "broadcast" if operands[0].rank() == rank => {
                    let src = &operands[0];
                    let ss = shape(o.operands[0]);
                    f = src.clone();
                    for d in 0..rank {
                        if ss[d] == 1 && rs[d] > 1 {
                            // a size-1 dim has contiguity 1, so its divisibility covers every element
                            f.contiguity[d] = 1;
                            f.constancy[d] = rs[d];
                        }
                    }
                }
                "permute" if operands[0].rank() == rank => {
                    let order = o.attrs.get("order").and_then(Attr::as_int_array).unwrap_or(&[]);
                    if order.len() == rank && order.iter().all(|&i| (i as usize) < rank) {
                        let src = &operands[0];
                        for (i, &s) in order.iter().enumerate() {
                            let s = s as usize;
                            f.contiguity[i] = src.contiguity[s];
                            f.divisibility[i] = src.divisibility[s];
                            f.constancy[i] = src.constancy[s];
                        }
                    }
                }
                "add" | "addptr" | "sub" if same_rank => {
                    let (a, b) = (&operands[0], &operands[1]);
                    // addptr scales the offset's divisibility to bytes
                    let (a_step, b_scale) = if o.opcode.name() == "addptr" { (elem_step(res), elem_step(res)) } else { (1, 1) };
                    for d in 0..rank {
                        let from_a = a.contiguity[d].min(b.constancy[d]);
                        let from_b = if o.opcode.name() == "sub" { 1 } else { b.contiguity[d].min(a.constancy[d]) };
                        let c = from_a.max(from_b);
                        let da = restart(a.divisibility[d], a.contiguity[d], c, a_step);
                        let db = restart((b.divisibility[d] * b_scale).min(MAX_DIV), b.contiguity[d], c, b_scale);
                        f.contiguity[d] = c;
                        f.divisibility[d] = da.min(db);
                    }
                    f.constancy = min_const.clone();
                }
                "mul" if same_rank => {
                    let (a, b) = (&operands[0], &operands[1]);
                    f.divisibility = vec![(a.all_div() * b.all_div()).min(MAX_DIV); rank];
                    f.constancy = min_const.clone();
                }
                "cmp" if same_rank => {
                    let (a, b) = (&operands[0], &operands[1]);
                    // x+j < n is equal over an aligned block of size k when x and n are
                    // multiples of k; likewise ge, and gt/le with the sides swapped.
                    let run = |c: &DimFacts, k: &DimFacts, d: usize| {
                        c.contiguity[d].min(k.constancy[d]).min(c.divisibility[d]).min(k.divisibility[d])
                    };
                    let pred = o.attrs.get("pred").and_then(Attr::as_str);
                    for (d, &mc) in min_const.iter().enumerate() {
                        let blocks = match pred {
                            Some("lt") | Some("ge") => run(a, b, d),
                            Some("gt") | Some("le") => run(b, a, d),
                            _ => 1,
                        };
                        f.constancy[d] = mc.max(blocks);
                    }
                }
                "cast"
                    if types.scalar_kind(func.value_type(res)).is_some_and(|k| k.is_int())
                        && types.scalar_kind(func.value_type(o.operands[0])).is_some_and(|k| k.is_int() && k.bits() > 1) =>
                {
                    f = operands[0].clone();
                }
                "multiple_of" | "max_contiguous" | "max_constancy" if operands[0].rank() == rank => {
                    f = operands[0].clone();
                    let name = o.opcode.name();
                    for d in 0..rank {
                        let h = hint(d).unwrap_or(1).max(1);
                        match name {
                            "multiple_of" => f.divisibility[d] = pow2_divisor(h),
                            "max_contiguous" => f.contiguity[d] = pow2_floor(h as u64),
                            _ => f.constancy[d] = pow2_floor(h as u64),
                        }
                    }
                }
                "load" | "program_id" | "num_programs" => {}
                _ if matches!(types.data(func.value_type(res)), TypeData::Tensor { .. }) => {
                    f.constancy = min_const.clone();
                }
                _ => {}
            }
            facts.insert(res, f);
        }
        Contiguity { facts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_lowers_divisibility_only_when_runs_shrink() {
        assert_eq!(restart(1024, 1024, 1024, 1), 1024);
        assert_eq!(restart(1024, 1024, 4, 1), 4);
        assert_eq!(restart(64, 16, 4, 4), 16);
        assert_eq!(restart(64, 1, 4, 4), 64);
    }

    #[test]
    fn all_div_needs_a_dim_without_runs() {
        let f = DimFacts { contiguity: vec![32, 1], divisibility: vec![32, 16], constancy: vec![1, 1] };
        assert_eq!(f.all_div(), 16);
        let g = DimFacts { contiguity: vec![32], divisibility: vec![32], constancy: vec![1] };
        assert_eq!(g.all_div(), 1);
    }
}
