//! Builds a *valid* module from fuzzer bytes: every choice (types, ops,
//! attributes, nesting) is drawn from an `Unstructured`, and every op is made
//! to satisfy docs/ir.md's rules by construction, so the verifier and every
//! later stage must accept it. Functions are made callees-first (a function
//! may call only earlier ones), so the call graph has no cycles.
mod blocks;
mod control;
mod lookup;
mod ops;
mod staging;
mod types;

use arbitrary::{Result, Unstructured};
use tritium_ir::{Attr, Block, Builder, Module, Opcode, ScalarKind, Type, TypeData, Value};

/// Caps that keep one input fast: ops per function and region nesting.
const MAX_OPS_PER_FUNC: usize = 48;
const MAX_DEPTH: usize = 3;
const MAX_FUNCS: usize = 3;

/// A generated module (always valid by construction).
pub fn module(u: &mut Unstructured) -> Result<Module> {
    let mut m = Module::new();
    let nfuncs = u.int_in_range(1..=MAX_FUNCS)?;
    let mut callees: Vec<Callee> = Vec::new();
    for i in 0..nfuncs {
        let callee = function(u, &mut m, i, &callees)?;
        callees.push(callee);
    }
    Ok(m)
}

/// What a later function needs to call an earlier one.
#[derive(Clone)]
struct Callee {
    name: String,
    params: Vec<Type>,
    results: Vec<Type>,
}

fn function(u: &mut Unstructured, m: &mut Module, index: usize, callees: &[Callee]) -> Result<Callee> {
    // A suffix from the input exercises quoting of non-identifier names.
    let suffix: String = if u.ratio(1, 4)? { u.arbitrary()? } else { String::new() };
    let name = format!("f{index}{suffix}");
    let nargs = u.int_in_range(0..=4)?;
    let mut params = Vec::with_capacity(nargs);
    for _ in 0..nargs {
        params.push(types::any(u, m)?);
    }
    let nres = u.int_in_range(0..=2)?;
    let mut results = Vec::with_capacity(nres);
    for _ in 0..nres {
        results.push(types::any(u, m)?);
    }
    let mut b = Builder::new(m, &name, &params, &results);
    b.func.kernel = u.arbitrary()?;
    b.func.noinline = u.arbitrary()?;
    for i in 0..nargs {
        if u.ratio(1, 2)? {
            b.set_arg_attr(i, "divisibility", Attr::Int(*u.choose(&[1, 2, 4, 8, 16])?));
        }
        if u.ratio(1, 4)? {
            b.set_arg_attr(i, "equal_to_1", Attr::Bool(true));
        }
        if u.ratio(1, 8)? {
            let key: String = u.arbitrary()?;
            b.set_arg_attr(i, &key, attr(u)?);
        }
    }
    let entry = b.entry();
    let pool = b.block_args(entry);
    let mut g = Gen { u, b, pool, budget: MAX_OPS_PER_FUNC, callees };
    g.ops_into(entry, 0)?;
    let ret = g.values_of(entry, &results)?;
    g.op(entry, Opcode::Return, &ret, &[], &[])?;
    g.b.finish();
    Ok(Callee { name, params, results })
}

/// Any attribute value (for argument attributes nobody interprets yet).
fn attr(u: &mut Unstructured) -> Result<Attr> {
    Ok(match u.int_in_range(0..=4)? {
        0 => Attr::Int(u.arbitrary()?),
        1 => Attr::Float(f64::from_bits(u.arbitrary()?)),
        2 => Attr::Str(u.arbitrary()?),
        3 => Attr::Bool(u.arbitrary()?),
        _ => Attr::IntArray(u.arbitrary()?),
    })
}

/// The state of one function being generated.
struct Gen<'a, 'u, 'm> {
    u: &'a mut Unstructured<'u>,
    b: Builder<'m>,
    /// Values visible at the insertion point (enclosing blocks' included).
    pool: Vec<Value>,
    budget: usize,
    callees: &'a [Callee],
}

impl Gen<'_, '_, '_> {
    fn types(&mut self) -> &mut tritium_ir::TypeTable {
        &mut self.b.module.types
    }
    fn ty(&self, v: Value) -> Type {
        self.b.func.value_type(v)
    }

    /// Appends ops (no terminator) to `block` while input and budget last.
    fn ops_into(&mut self, block: Block, depth: usize) -> Result<()> {
        let n = self.u.int_in_range(0..=self.budget.min(16))?;
        for _ in 0..n {
            if self.budget == 0 || self.u.is_empty() {
                break;
            }
            self.budget -= 1;
            if self.u.ratio(1, 8)? {
                let file: String = if self.u.ratio(1, 2)? { "k.py".into() } else { self.u.arbitrary()? };
                let (line, col) = (self.u.arbitrary()?, self.u.arbitrary()?);
                self.b.set_loc(&file, line, col);
            }
            self.random_op(block, depth)?;
        }
        Ok(())
    }

    /// Appends op `opcode`; its results join the pool.
    fn op(&mut self, block: Block, opcode: Opcode, operands: &[Value], results: &[Type], attrs: &[(&str, Attr)]) -> Result<Vec<Value>> {
        let rs = self.b.op(block, opcode, operands, results, attrs);
        self.pool.extend_from_slice(&rs);
        Ok(rs)
    }

    /// A visible value of type `t`, or a new constant of that type.
    fn value_of(&mut self, block: Block, t: Type) -> Result<Value> {
        let candidates: Vec<Value> = self.pool.iter().copied().filter(|&v| self.ty(v) == t).collect();
        if !candidates.is_empty() && self.u.ratio(3, 4)? {
            return Ok(*self.u.choose(&candidates)?);
        }
        let value = self.const_value(t)?;
        Ok(self.op(block, Opcode::Const, &[], &[t], &[("value", value)])?[0])
    }

    fn values_of(&mut self, block: Block, ts: &[Type]) -> Result<Vec<Value>> {
        ts.iter().map(|&t| self.value_of(block, t)).collect()
    }

    /// A `value` attribute that `const` accepts for type `t`.
    fn const_value(&mut self, t: Type) -> Result<Attr> {
        let elem = self.types().elem(t);
        Ok(match self.types().data(elem).clone() {
            TypeData::Scalar(k) if k.is_float() => match self.u.int_in_range(0..=2)? {
                0 => Attr::Float(f64::from_bits(self.u.arbitrary()?)),
                1 => Attr::Float(self.u.int_in_range(-8..=8)? as f64 * 0.5),
                _ => Attr::Int(self.u.int_in_range(-100..=100)?),
            },
            TypeData::Scalar(ScalarKind::I1) if self.u.ratio(1, 2)? => Attr::Bool(self.u.arbitrary()?),
            TypeData::Scalar(k) if k.is_int() && self.u.ratio(1, 4)? => Attr::Bool(self.u.arbitrary()?),
            _ => Attr::Int(self.u.arbitrary()?),
        })
    }
}
