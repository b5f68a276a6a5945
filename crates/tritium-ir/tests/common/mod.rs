//! Random valid modules for property and robustness tests, built with the
//! Builder from a seed (xorshift), so proptest shrinks over the seed.
#![allow(dead_code)]
use tritium_ir::{Attr, Block, Builder, Module, Opcode, ScalarKind, Type, Value};

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const STRINGS: &[&str] = &["", "x", "k.py", "ünïcødé \"quoted\"\n\\", "a\u{1}b", "caché"];

pub fn random_module(seed: u64) -> Module {
    let mut rng = Rng(seed | 1);
    let mut m = Module::new();
    let nfuncs = 1 + rng.below(3);
    for fi in 0..nfuncs {
        let kinds = ScalarKind::ALL;
        let mut arg_types = Vec::new();
        for _ in 0..rng.below(4) {
            arg_types.push(random_type(&mut m, &mut rng, &kinds));
        }
        let name = format!("f{fi}{}", rng.pick(&["", ".x", " odd"]));
        let mut b = Builder::new(&mut m, &name, &arg_types, &[]);
        b.func.kernel = rng.below(2) == 0;
        b.func.noinline = rng.below(2) == 0;
        for i in 0..arg_types.len() {
            if rng.below(2) == 0 {
                b.set_arg_attr(i, "divisibility", Attr::Int(16));
            }
        }
        let mut values: Vec<Value> = (0..arg_types.len()).map(|i| b.arg(i)).collect();
        let entry = b.entry();
        body(&mut b, &mut rng, entry, &mut values, 0);
        b.op(entry, Opcode::Return, &[], &[], &[]);
        b.finish();
    }
    m
}

fn random_type(m: &mut Module, rng: &mut Rng, kinds: &[ScalarKind]) -> Type {
    let s = m.types.scalar(*rng.pick(kinds));
    match rng.below(3) {
        0 => s,
        1 => m.types.ptr(s, *rng.pick(&[1, 3])),
        _ => {
            let d = 1u32 << rng.below(8);
            let elem = if rng.below(4) == 0 { m.types.ptr(s, 1) } else { s };
            m.types.tensor(&[d], elem)
        }
    }
}

fn random_attr(rng: &mut Rng) -> Attr {
    match rng.below(5) {
        0 => Attr::Int(rng.next() as i64),
        1 => Attr::Float(f64::from_bits(rng.next())),
        2 => Attr::Str(rng.pick(STRINGS).to_string()),
        3 => Attr::Bool(rng.below(2) == 0),
        _ => Attr::IntArray((0..rng.below(4)).map(|_| rng.next() as i64 >> rng.below(64)).collect()),
    }
}

/// Appends random valid ops to `block`; `values` are the ones in scope.
fn body(b: &mut Builder, rng: &mut Rng, block: Block, values: &mut Vec<Value>, depth: u32) {
    for _ in 0..rng.below(8) {
        let file = *rng.pick(STRINGS);
        b.set_loc(file, rng.below(100) as u32, rng.below(80) as u32);
        match rng.below(7) {
            0 => {
                let k = *rng.pick(&ScalarKind::ALL);
                let t = b.module.types.scalar(k);
                let value = if k.is_float() { Attr::Float(f64::from_bits(rng.next())) } else { Attr::Int(rng.next() as i64) };
                values.extend(b.op(block, Opcode::Const, &[], &[t], &[("value", value)]));
            }
            1 if !values.is_empty() => {
                // An add of a value with itself, when its type is numeric.
                let v = values[rng.below(values.len() as u64) as usize];
                let t = b.func.value_type(v);
                if b.module.types.scalar_kind(t).is_some() {
                    values.extend(b.op(block, Opcode::Add, &[v, v], &[t], &[]));
                }
            }
            2 => {
                let i32t = b.module.types.scalar(ScalarKind::I32);
                values.extend(b.op(block, Opcode::ProgramId, &[], &[i32t], &[("axis", Attr::Int(rng.below(3) as i64))]));
            }
            3 => {
                let n = 1i64 << rng.below(10);
                let start = rng.below(1000) as i64 - 500;
                let i32t = b.module.types.scalar(ScalarKind::I32);
                let t = b.module.types.tensor(&[n as u32], i32t);
                values.extend(b.op(block, Opcode::Arange, &[], &[t], &[("start", Attr::Int(start)), ("end", Attr::Int(start + n))]));
            }
            4 => {
                let args: Vec<Value> = (0..rng.below(3)).filter_map(|_| values.get(rng.below(values.len() as u64) as usize).copied()).collect();
                let prefix = Attr::Str(rng.pick(STRINGS).to_string());
                b.op(block, Opcode::Print, &args, &[], &[("prefix", prefix), ("hex", Attr::Bool(rng.below(2) == 0))]);
            }
            5 if depth < 4 => {
                let i64t = b.module.types.scalar(ScalarKind::I64);
                let bound = b.op(block, Opcode::Const, &[], &[i64t], &[("value", Attr::Int(rng.below(10) as i64))])[0];
                values.push(bound);
                let carried = values[rng.below(values.len() as u64) as usize];
                let ct = b.func.value_type(carried);
                let (res, blocks) =
                    b.op_with_regions(block, Opcode::For, &[bound, bound, bound, carried], &[ct], &[], &[&[i64t, ct]]);
                let inner = blocks[0];
                let mut inner_values = values.clone();
                inner_values.extend(b.block_args(inner));
                body(b, rng, inner, &mut inner_values, depth + 1);
                let iter = b.block_args(inner)[1];
                b.op(inner, Opcode::Yield, &[iter], &[], &[]);
                values.extend(res);
            }
            _ => {
                // `print` with a random extra attribute: unknown keys are allowed.
                let key = format!("k{}", rng.below(4));
                let attrs = [("prefix", Attr::Str(String::new())), ("hex", Attr::Bool(false)), (key.as_str(), random_attr(rng))];
                b.op(block, Opcode::Print, &[], &[], &attrs);
            }
        }
    }
}
