//! AxisInfo: per value and per dim, what codegen needs to vectorise global
//! accesses and layout assignment needs to size per-thread chunks. This file
//! owns the lattice and the walks (structured control flow to a fixed point,
//! the call graph callers first); the per-op transfer rules live in
//! `axis_info_rules.rs`.
//!
//! Facts along dim `d` (all powers of two; scalars are rank 1 of size 1):
//! - `contiguity`: the value is made of runs of that many consecutive
//!   integers along `d`, each run aligned to its length in the index space;
//! - `divisibility`: a power of two dividing the first element of every such
//!   run, whatever the other coordinates (bytes for pointers). Along a dim
//!   with contiguity 1 every element starts a run, so it divides them all;
//! - `constancy`: runs (aligned likewise) of that many equal elements.
//!
//! The join of two facts is the conservative one (min of each, which is the
//! gcd for powers of two). It is the meet of "knows more", so loop-carried
//! facts start from the loop's inputs and only shrink until stable.
use std::collections::HashMap;

use tritium_ir::{Attr, Func, Function, Module, Op, Opcode, Region, Value};

use crate::callgraph::CallGraph;

/// The largest divisibility tracked; stands for "divisible by anything" (0).
pub const MAX_DIV: u64 = 1 << 30;

/// Facts of one value along every dim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisFacts {
    pub divisibility: Vec<u64>,
    pub contiguity: Vec<u64>,
    pub constancy: Vec<u64>,
    /// The value every element is known to hold (integer constants, the
    /// `equal_to_1` arguments, splats of those), so `x * 1` keeps x's runs.
    pub value: Option<i64>,
}

/// Facts along one dim (what vectorisation reads, for the last dim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimFacts {
    pub divisibility: u64,
    pub contiguity: u64,
    pub constancy: u64,
}

/// Largest power of two dividing `v` (0 is divisible by anything).
pub fn pow2_divisor(v: i64) -> u64 {
    if v == 0 {
        MAX_DIV
    } else {
        (1u64 << v.unsigned_abs().trailing_zeros()).min(MAX_DIV)
    }
}

/// Largest power of two not above `v` (1 for 0).
pub fn pow2_floor(v: u64) -> u64 {
    if v == 0 {
        1
    } else {
        1 << (63 - v.leading_zeros())
    }
}

impl AxisFacts {
    /// Nothing known: each element alone, divisible by 1.
    pub fn unknown(rank: usize) -> AxisFacts {
        let r = rank.max(1);
        AxisFacts { divisibility: vec![1; r], contiguity: vec![1; r], constancy: vec![1; r], value: None }
    }

    /// Every element equal to `v` over a value of `shape`.
    pub fn constant(shape: &[u64], v: Option<i64>) -> AxisFacts {
        let r = shape.len().max(1);
        AxisFacts {
            divisibility: vec![v.map(pow2_divisor).unwrap_or(1); r],
            contiguity: vec![1; r],
            constancy: if shape.is_empty() { vec![1] } else { shape.to_vec() },
            value: v,
        }
    }

    pub fn rank(&self) -> usize {
        self.contiguity.len()
    }

    pub fn dim(&self, d: usize) -> DimFacts {
        DimFacts { divisibility: self.divisibility[d], contiguity: self.contiguity[d], constancy: self.constancy[d] }
    }

    /// Facts along the last dim.
    pub fn last(&self) -> DimFacts {
        self.dim(self.rank() - 1)
    }

    /// A power of two dividing every element: along any dim without runs
    /// each element starts one, so that dim's divisibility covers them all.
    pub fn all_div(&self) -> u64 {
        if let Some(v) = self.value {
            return pow2_divisor(v);
        }
        (0..self.rank()).filter(|&d| self.contiguity[d] == 1).map(|d| self.divisibility[d]).max().unwrap_or(1)
    }

    /// The conservative join (facts true of both); ranks must agree.
    pub fn join(&self, other: &AxisFacts) -> AxisFacts {
        if self.rank() != other.rank() {
            return AxisFacts::unknown(self.rank());
        }
        let min = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(&x, &y)| x.min(y)).collect::<Vec<u64>>();
        AxisFacts {
            divisibility: min(&self.divisibility, &other.divisibility),
            contiguity: min(&self.contiguity, &other.contiguity),
            constancy: min(&self.constancy, &other.constancy),
            value: if self.value == other.value { self.value } else { None },
        }
    }

    /// One line per value for dumps and file tests: `div=16,1 contig=4,1 const=1,1`.
    pub fn render(&self) -> String {
        let j = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let mut s = format!("div={} contig={} const={}", j(&self.divisibility), j(&self.contiguity), j(&self.constancy));
        if let Some(v) = self.value {
            s.push_str(&format!(" value={v}"));
        }
        s
    }
}

/// Facts of every value of one function.
#[derive(Clone, Debug, Default)]
pub struct FuncAxisInfo {
    pub facts: HashMap<Value, AxisFacts>,
    /// Per call site of this function: the facts of the arguments it passes.
    pub call_args: HashMap<Op, Vec<AxisFacts>>,
}

impl FuncAxisInfo {
    /// Facts of `v` along its last dim (unknown for values never reached).
    pub fn get(&self, v: Value) -> DimFacts {
        self.facts.get(&v).map(AxisFacts::last).unwrap_or(DimFacts { divisibility: 1, contiguity: 1, constancy: 1 })
    }

    /// Facts of `v` along every dim.
    pub fn dims(&self, v: Value) -> Option<&AxisFacts> {
        self.facts.get(&v)
    }

    /// Analyses `func` with its arguments' facts given (kernels: from their
    /// attributes, `arg_facts_from_attrs`; callees: the join over call sites).
    pub fn compute(module: &Module, func: &Function, args: &[AxisFacts]) -> FuncAxisInfo {
        let mut w = Walk { module, func, info: FuncAxisInfo::default() };
        for (i, &a) in func.args().iter().enumerate() {
            let f = args.get(i).cloned().unwrap_or_else(|| AxisFacts::unknown(w.shape(a).len()));
            w.info.facts.insert(a, f);
        }
        w.region(func.body);
        w.info
    }
}

/// Argument facts of a function with no caller, from its attributes:
/// `divisibility` (else the pointee's size for pointers), `equal_to_1`.
pub fn arg_facts_from_attrs(module: &Module, func: &Function) -> Vec<AxisFacts> {
    let types = &module.types;
    func.args()
        .iter()
        .zip(&func.arg_attrs)
        .map(|(&arg, attrs)| {
            let ty = func.value_type(arg);
            let rank = types.dims(ty).len();
            if attrs.get("equal_to_1").and_then(Attr::as_bool) == Some(true) && rank == 0 {
                return AxisFacts::constant(&[], Some(1));
            }
            let mut f = AxisFacts::unknown(rank);
            let natural = types.pointee_bytes(ty).unwrap_or(1) as u64;
            let given = attrs.get("divisibility").and_then(Attr::as_int).filter(|&d| d > 0).map(pow2_divisor).unwrap_or(1);
            f.divisibility = vec![given.max(natural); f.rank()];
            f
        })
        .collect()
}

/// Facts of every function of a module.
#[derive(Clone, Debug, Default)]
pub struct ModuleAxisInfo {
    pub funcs: HashMap<Func, FuncAxisInfo>,
}

impl ModuleAxisInfo {
    /// Callers first: a function with callers gets, per argument, the join of
    /// what every call site passes (it is compiled once for all of them); one
    /// without callers (a kernel) starts from its argument attributes.
    pub fn compute(module: &Module, graph: &CallGraph) -> ModuleAxisInfo {
        let mut out = ModuleAxisInfo::default();
        let mut incoming: HashMap<Func, Vec<AxisFacts>> = HashMap::new();
        for f in graph.pre_order() {
            let func = &module.funcs[f];
            let args = incoming.remove(&f).unwrap_or_else(|| arg_facts_from_attrs(module, func));
            let info = FuncAxisInfo::compute(module, func, &args);
            for &(site, callee) in graph.calls.get(&f).map(Vec::as_slice).unwrap_or(&[]) {
                let Some(passed) = info.call_args.get(&site) else { continue };
                let merged = match incoming.remove(&callee) {
                    Some(prev) if prev.len() == passed.len() => join_all(&prev, passed),
                    _ => passed.clone(),
                };
                incoming.insert(callee, merged);
            }
            out.funcs.insert(f, info);
        }
        out
    }

    pub fn func(&self, f: Func) -> Option<&FuncAxisInfo> {
        self.funcs.get(&f)
    }
}

/// Loop analyses give up (all facts unknown) after this many rounds; the
/// lattice is finite so they converge long before, this only bounds the cost.
const MAX_ROUNDS: usize = 32;

/// The element-wise join of two fact lists.
fn join_all(a: &[AxisFacts], b: &[AxisFacts]) -> Vec<AxisFacts> {
    a.iter().zip(b).map(|(x, y)| x.join(y)).collect()
}

/// One loop round: the carried facts for the next round (`carried` joined
/// with `yielded`, all unknown once `rounds` reaches `MAX_ROUNDS`), or None
/// when they are stable.
fn next_round(carried: &[AxisFacts], yielded: &[AxisFacts], rounds: usize) -> Option<Vec<AxisFacts>> {
    let next = join_all(carried, yielded);
    if next == carried {
        None
    } else if rounds >= MAX_ROUNDS {
        Some(next.iter().map(|f| AxisFacts::unknown(f.rank())).collect())
    } else {
        Some(next)
    }
}

pub(crate) struct Walk<'m> {
    pub module: &'m Module,
    pub func: &'m Function,
    pub info: FuncAxisInfo,
}

impl<'m> Walk<'m> {
    /// Dims of `v` as u64 (empty for scalars).
    pub fn shape(&self, v: Value) -> Vec<u64> {
        self.module.types.dims(self.func.value_type(v)).iter().map(|&d| d as u64).collect()
    }

    pub fn get(&self, v: Value) -> AxisFacts {
        self.info.facts.get(&v).cloned().unwrap_or_else(|| AxisFacts::unknown(self.shape(v).len()))
    }

    fn set_all(&mut self, vals: &[Value], facts: &[AxisFacts]) {
        for (&v, f) in vals.iter().zip(facts) {
            self.info.facts.insert(v, f.clone());
        }
    }

    /// The facts of `region`'s terminator operands.
    fn terminator_facts(&self, region: Region) -> Vec<AxisFacts> {
        let block = self.func.region_block(region);
        block.ops.last().map(|&t| self.func.ops[t].operands.iter().map(|&v| self.get(v)).collect()).unwrap_or_default()
    }

    pub fn region(&mut self, region: Region) {
        let ops = self.func.region_block(region).ops.clone();
        for op in ops {
            self.op(op);
        }
    }

    fn op(&mut self, op: Op) {
        let data = &self.func.ops[op];
        match data.opcode {
            Opcode::For => self.for_op(op),
            Opcode::If => self.if_op(op),
            Opcode::While => self.while_op(op),
            Opcode::Call => {
                let passed = data.operands.iter().map(|&v| self.get(v)).collect();
                self.info.call_args.insert(op, passed);
                for &r in &data.results {
                    let f = AxisFacts::unknown(self.shape(r).len());
                    self.info.facts.insert(r, f);
                }
            }
            _ => {
                // reduce/scan combiner regions: their block arguments are unknown scalars
                for &r in &data.regions {
                    for &a in &self.func.region_block(r).args {
                        let f = AxisFacts::unknown(self.shape(a).len());
                        self.info.facts.insert(a, f);
                    }
                    self.region(r);
                }
                let facts = self.rule(op);
                for (&r, f) in data.results.iter().zip(facts) {
                    self.info.facts.insert(r, f);
                }
            }
        }
    }

    /// `for`: the induction variable steps from lb by step, so it is
    /// divisible by gcd(lb, step); carried values join init and yields.
    fn for_op(&mut self, op: Op) {
        let data = &self.func.ops[op];
        let body = data.regions[0];
        let args = self.func.region_block(body).args.clone();
        let (lb, step) = (self.get(data.operands[0]), self.get(data.operands[2]));
        let mut iv = AxisFacts::unknown(0);
        iv.divisibility[0] = lb.all_div().min(step.all_div());
        let mut carried: Vec<AxisFacts> = data.operands[3..].iter().map(|&v| self.get(v)).collect();
        let mut rounds = 0;
        loop {
            self.info.facts.insert(args[0], iv.clone());
            self.set_all(&args[1..], &carried);
            self.region(body);
            rounds += 1;
            match next_round(&carried, &self.terminator_facts(body), rounds) {
                Some(next) => carried = next,
                None => break,
            }
        }
        let results = data.results.clone();
        self.set_all(&results, &carried);
    }

    fn if_op(&mut self, op: Op) {
        let data = &self.func.ops[op];
        let mut joined: Option<Vec<AxisFacts>> = None;
        for &r in &data.regions {
            self.region(r);
            let y = self.terminator_facts(r);
            joined = Some(match joined {
                Some(j) => join_all(&j, &y),
                None => y,
            });
        }
        let results = data.results.clone();
        if let Some(j) = joined {
            self.set_all(&results, &j);
        }
    }

    /// `while`: the before region's arguments join inits and the after
    /// region's yields; the after region's arguments and the results are
    /// what `condition` forwards.
    fn while_op(&mut self, op: Op) {
        let data = &self.func.ops[op];
        let (before, after) = (data.regions[0], data.regions[1]);
        let bargs = self.func.region_block(before).args.clone();
        let aargs = self.func.region_block(after).args.clone();
        let mut carried: Vec<AxisFacts> = data.operands.iter().map(|&v| self.get(v)).collect();
        let mut rounds = 0;
        let forwarded = loop {
            self.set_all(&bargs, &carried);
            self.region(before);
            // `condition`'s operands: the exit flag, then the forwarded values
            let forwarded: Vec<AxisFacts> = self.terminator_facts(before).into_iter().skip(1).collect();
            self.set_all(&aargs, &forwarded);
            self.region(after);
            rounds += 1;
            match next_round(&carried, &self.terminator_facts(after), rounds) {
                Some(next) => carried = next,
                None => break forwarded,
            }
        };
        let results = data.results.clone();
        self.set_all(&results, &forwarded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(div: &[u64], contig: &[u64], cst: &[u64]) -> AxisFacts {
        AxisFacts { divisibility: div.to_vec(), contiguity: contig.to_vec(), constancy: cst.to_vec(), value: None }
    }

    #[test]
    fn join_is_the_min_of_each_fact() {
        let a = facts(&[16, 4], &[1, 8], &[4, 1]);
        let b = facts(&[8, 16], &[1, 4], &[8, 1]);
        assert_eq!(a.join(&b), facts(&[8, 4], &[1, 4], &[4, 1]));
        // commutative, idempotent
        assert_eq!(a.join(&b), b.join(&a));
        assert_eq!(a.join(&a), a);
    }

    #[test]
    fn join_keeps_a_value_only_when_both_agree() {
        let one = AxisFacts::constant(&[], Some(1));
        let two = AxisFacts::constant(&[], Some(2));
        assert_eq!(one.join(&one).value, Some(1));
        assert_eq!(one.join(&two).value, None);
        assert_eq!(one.join(&two).divisibility, vec![1]);
    }

    #[test]
    fn join_of_different_ranks_is_unknown() {
        let a = facts(&[16], &[4], &[1]);
        let b = facts(&[16, 16], &[4, 1], &[1, 1]);
        assert_eq!(a.join(&b), AxisFacts::unknown(1));
    }

    #[test]
    fn all_div_needs_a_dim_without_runs() {
        assert_eq!(facts(&[32, 16], &[32, 1], &[1, 1]).all_div(), 16);
        assert_eq!(facts(&[32], &[32], &[1]).all_div(), 1);
        assert_eq!(AxisFacts::constant(&[4], Some(48)).all_div(), 16);
    }

    #[test]
    fn powers_of_two() {
        assert_eq!(pow2_divisor(0), MAX_DIV);
        assert_eq!(pow2_divisor(-24), 8);
        assert_eq!(pow2_divisor(7), 1);
        assert_eq!(pow2_floor(0), 1);
        assert_eq!(pow2_floor(100), 64);
    }
}
