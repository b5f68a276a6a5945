//! A small stand-in for tritium-analysis' AxisInfo, enough to vectorise global
//! accesses: per value (flattened to 1-D), `contiguity` (runs of consecutive
//! values), `divisibility` (of each run's first value; bytes for pointers) and
//! `constancy` (runs of equal values). Runs are assumed aligned to their
//! length in index space, which holds for values derived from `arange`
//! (the only source of contiguity here). All facts are powers of two.
use std::collections::HashMap;

use tritium_ir::{Attr, Function, Module, TypeData, Value};

use crate::layout::elem_bytes;

/// The largest divisibility we track (stands for "0", divisible by anything).
const MAX_DIV: u64 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    pub contiguity: u64,
    pub divisibility: u64,
    pub constancy: u64,
}

impl Facts {
    const UNKNOWN: Facts = Facts { contiguity: 1, divisibility: 1, constancy: 1 };
    /// Divisibility of every element, not just of each run's first one.
    fn elem_divisibility(&self) -> u64 {
        if self.contiguity > 1 {
            1
        } else {
            self.divisibility
        }
    }
}

fn pow2_divisor(v: i64) -> u64 {
    if v == 0 {
        MAX_DIV
    } else {
        (1u64 << v.unsigned_abs().trailing_zeros()).min(MAX_DIV)
    }
}

/// Facts of every value of `func` that the walk reached.
pub struct Contiguity {
    facts: HashMap<Value, Facts>,
}

impl Contiguity {
    pub fn get(&self, v: Value) -> Facts {
        self.facts.get(&v).copied().unwrap_or(Facts::UNKNOWN)
    }

    pub fn compute(module: &Module, func: &Function) -> Contiguity {
        let types = &module.types;
        let mut facts = HashMap::new();
        let numel = |v: Value| -> u64 { types.dims(func.value_type(v)).iter().map(|&d| d as u64).product() };
        for (&arg, attrs) in func.args().iter().zip(&func.arg_attrs) {
            let ty = func.value_type(arg);
            let given = attrs.get("divisibility").and_then(Attr::as_int).filter(|&d| d > 0).map(pow2_divisor);
            let natural = types.pointee(ty).and_then(|p| types.scalar_kind(p)).map(|k| elem_bytes(k) as u64).unwrap_or(1);
            facts.insert(arg, Facts { contiguity: 1, divisibility: given.unwrap_or(natural).max(natural), constancy: 1 });
        }
        for &op in &func.region_block(func.body).ops {
            let o = &func.ops[op];
            let Some(&res) = o.results.first() else { continue };
            let get = |v: Value| facts.get(&v).copied().unwrap_or(Facts::UNKNOWN);
            let operands: Vec<Facts> = o.operands.iter().map(|&v| get(v)).collect();
            let min_const = operands.iter().map(|f| f.constancy).min().unwrap_or(numel(res).max(1));
            let attr_int = |k: &str| o.attrs.get(k).and_then(Attr::as_int);
            let hint = || o.attrs.get("values").and_then(Attr::as_int_array).and_then(|a| a.last().copied()).map(|v| v.max(1) as u64);
            let f = match o.opcode.name() {
                "const" => Facts {
                    contiguity: 1,
                    divisibility: attr_int("value").map(pow2_divisor).unwrap_or(1),
                    constancy: numel(res).max(1),
                },
                "arange" => Facts { contiguity: numel(res), divisibility: pow2_divisor(attr_int("start").unwrap_or(1)), constancy: 1 },
                "splat" => Facts { contiguity: 1, divisibility: operands[0].elem_divisibility(), constancy: numel(res) },
                "add" | "addptr" => {
                    let (a, b) = (operands[0], operands[1]);
                    // addptr scales the offset's divisibility to bytes
                    let scale = if o.opcode.name() == "addptr" {
                        types.pointee(func.value_type(res)).and_then(|p| types.scalar_kind(p)).map(|k| elem_bytes(k) as u64).unwrap_or(1)
                    } else {
                        1
                    };
                    Facts {
                        contiguity: a.contiguity.min(b.constancy).max(b.contiguity.min(a.constancy)),
                        divisibility: a.divisibility.min((b.divisibility * scale).min(MAX_DIV)),
                        constancy: min_const,
                    }
                }
                "sub" => {
                    let (a, b) = (operands[0], operands[1]);
                    Facts { contiguity: a.contiguity.min(b.constancy), divisibility: a.divisibility.min(b.divisibility), constancy: min_const }
                }
                "mul" => {
                    let (a, b) = (operands[0], operands[1]);
                    let d = (a.elem_divisibility() * b.elem_divisibility()).min(MAX_DIV);
                    Facts { contiguity: 1, divisibility: d, constancy: min_const }
                }
                "cmp" => {
                    let (a, b) = (operands[0], operands[1]);
                    // x+j < n is equal over an aligned block of size k when x and n are
                    // multiples of k; likewise ge, and gt/le with the sides swapped.
                    let run = |c: Facts, k: Facts| c.contiguity.min(k.constancy).min(c.divisibility).min(k.divisibility);
                    let blocks = match o.attrs.get("pred").and_then(Attr::as_str) {
                        Some("lt") | Some("ge") => run(a, b),
                        Some("gt") | Some("le") => run(b, a),
                        _ => 1,
                    };
                    Facts { contiguity: 1, divisibility: 1, constancy: min_const.max(blocks) }
                }
                "cast" if types.scalar_kind(func.value_type(res)).is_some_and(|k| k.is_int())
                    && types.scalar_kind(func.value_type(o.operands[0])).is_some_and(|k| k.is_int() && k.bits() > 1) =>
                {
                    operands[0]
                }
                "multiple_of" => Facts { divisibility: hint().unwrap_or(1).min(MAX_DIV), ..operands[0] },
                "max_contiguous" => Facts { contiguity: hint().unwrap_or(1), ..operands[0] },
                "max_constancy" => Facts { constancy: hint().unwrap_or(1), ..operands[0] },
                "load" | "program_id" | "num_programs" => Facts::UNKNOWN,
                // any other elementwise op maps equal inputs to equal outputs
                _ if matches!(types.data(func.value_type(res)), TypeData::Tensor { .. }) => {
                    Facts { constancy: min_const, ..Facts::UNKNOWN }
                }
                _ => Facts::UNKNOWN,
            };
            facts.insert(res, f);
        }
        Contiguity { facts }
    }
}
