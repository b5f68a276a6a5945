//! Module → bytes. Strings are collected in first-use order and values are
//! numbered in definition order, so equal modules encode to equal bytes.
use std::collections::HashMap;

use crate::attrs::{Attr, Attrs};
use crate::entities::{Loc, Region, Type, Value};
use crate::module::{Function, Module};
use crate::ops::FORMAT_VERSION;
use crate::rewrite::Visit;
use crate::types::TypeData;

use super::MAGIC;

pub fn encode(m: &Module) -> Vec<u8> {
    // Types and locs are written in first-use order, and only the used ones,
    // so the bytes depend only on the functions (print → parse → encode is
    // byte-identical to encode).
    let mut ctx = Ctx { m, strings: Strings::default(), types: HashMap::new(), type_list: Vec::new(),
        locs: HashMap::new(), loc_list: Vec::new() };
    let mut funcs = Vec::new();
    uleb(&mut funcs, m.funcs.len() as u64);
    for f in m.funcs.values() {
        encode_func(&mut funcs, &mut ctx, f);
    }
    let mut locs = Vec::new();
    uleb(&mut locs, ctx.loc_list.len() as u64);
    for &l in &ctx.loc_list.clone() {
        let data = m.locs.get(l).cloned().unwrap_or_default();
        uleb(&mut locs, ctx.strings.id(&data.file));
        uleb(&mut locs, data.line as u64);
        uleb(&mut locs, data.col as u64);
    }

    let mut out = MAGIC.to_vec();
    uleb(&mut out, FORMAT_VERSION as u64);
    uleb(&mut out, ctx.strings.list.len() as u64);
    for s in &ctx.strings.list {
        uleb(&mut out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
    }
    uleb(&mut out, ctx.type_list.len() as u64);
    for &t in &ctx.type_list {
        match m.types.data(t) {
            TypeData::Scalar(k) => {
                out.push(0);
                out.push(k.code());
            }
            TypeData::Ptr { elem, addrspace } => {
                out.push(1);
                uleb(&mut out, ctx.types[elem]);
                uleb(&mut out, *addrspace as u64);
            }
            TypeData::Tensor { dims, elem } => {
                out.push(2);
                uleb(&mut out, dims.len() as u64);
                for &d in dims {
                    uleb(&mut out, d as u64);
                }
                uleb(&mut out, ctx.types[elem]);
            }
        }
    }
    out.extend_from_slice(&locs);
    out.extend_from_slice(&funcs);
    out
}

struct Ctx<'m> {
    m: &'m Module,
    strings: Strings,
    types: HashMap<Type, u64>,
    type_list: Vec<Type>,
    locs: HashMap<Loc, u64>,
    loc_list: Vec<Loc>,
}

impl Ctx<'_> {
    fn ty(&mut self, t: Type) -> u64 {
        if let Some(&i) = self.types.get(&t) {
            return i;
        }
        if !self.m.types.contains(t) {
            // A dangling type reference; encode it out of range so decoding fails.
            return u32::MAX as u64;
        }
        match self.m.types.data(t) {
            TypeData::Scalar(_) => {}
            TypeData::Ptr { elem, .. } | TypeData::Tensor { elem, .. } => {
                self.ty(*elem);
            }
        }
        let i = self.type_list.len() as u64;
        self.type_list.push(t);
        self.types.insert(t, i);
        i
    }
    fn loc(&mut self, l: Loc) -> u64 {
        if let Some(&i) = self.locs.get(&l) {
            return i;
        }
        let i = self.loc_list.len() as u64;
        self.loc_list.push(l);
        self.locs.insert(l, i);
        i
    }
}

#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: HashMap<String, u64>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u64;
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

pub(crate) fn uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

pub(crate) fn sleb(out: &mut Vec<u8>, mut v: i64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0);
        if done {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn encode_attrs(out: &mut Vec<u8>, strings: &mut Strings, attrs: &Attrs) {
    uleb(out, attrs.len() as u64);
    for (k, a) in attrs {
        uleb(out, strings.id(k));
        match a {
            Attr::Int(v) => {
                out.push(0);
                sleb(out, *v);
            }
            Attr::Float(v) => {
                out.push(1);
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            Attr::Str(s) => {
                out.push(2);
                uleb(out, strings.id(s));
            }
            Attr::Bool(b) => {
                out.push(3);
                out.push(*b as u8);
            }
            Attr::IntArray(vs) => {
                out.push(4);
                uleb(out, vs.len() as u64);
                for &v in vs {
                    sleb(out, v);
                }
            }
        }
    }
}

/// Definition-order numbers of the values reachable from the body. Values
/// not reachable (dropped by a pass) get no number; a use of one encodes as an
/// out-of-range number, which the decoder rejects.
pub fn number_values(f: &Function) -> HashMap<Value, u64> {
    let mut numbers = HashMap::new();
    for visit in f.preorder() {
        let defined = match visit {
            Visit::Block(_, b) => &f.blocks[b].args,
            Visit::Op(_, op) => &f.ops[op].results,
        };
        for &v in defined {
            let n = numbers.len() as u64;
            numbers.entry(v).or_insert(n);
        }
    }
    numbers
}

fn encode_func(out: &mut Vec<u8>, ctx: &mut Ctx, f: &Function) {
    let numbers = number_values(f);
    let unknown = numbers.len() as u64;
    uleb(out, ctx.strings.id(&f.name));
    uleb(out, (f.kernel as u64) | ((f.noinline as u64) << 1));
    let args = f.args();
    uleb(out, args.len() as u64);
    for (i, &a) in args.iter().enumerate() {
        uleb(out, ctx.ty(f.values[a].ty));
        match f.arg_attrs.get(i) {
            Some(attrs) => encode_attrs(out, &mut ctx.strings, attrs),
            None => uleb(out, 0),
        }
    }
    uleb(out, f.results.len() as u64);
    for &t in &f.results {
        uleb(out, ctx.ty(t));
    }
    let mut enc = FuncEncoder { out, ctx, f, numbers: &numbers, unknown };
    enc.region(f.body);
}

struct FuncEncoder<'a, 'm> {
    out: &'a mut Vec<u8>,
    ctx: &'a mut Ctx<'m>,
    f: &'a Function,
    numbers: &'a HashMap<Value, u64>,
    unknown: u64,
}

impl FuncEncoder<'_, '_> {
    fn region(&mut self, r: Region) {
        let b = self.f.region_block(r);
        uleb(self.out, b.args.len() as u64);
        for &a in &b.args {
            uleb(self.out, self.ctx.ty(self.f.values[a].ty));
        }
        uleb(self.out, b.ops.len() as u64);
        for &op in &b.ops {
            let od = &self.f.ops[op];
            uleb(self.out, od.opcode.index() as u64);
            uleb(self.out, self.ctx.loc(od.loc));
            uleb(self.out, od.operands.len() as u64);
            for v in &od.operands {
                uleb(self.out, self.numbers.get(v).copied().unwrap_or(self.unknown));
            }
            uleb(self.out, od.results.len() as u64);
            for &v in &od.results {
                uleb(self.out, self.ctx.ty(self.f.values[v].ty));
            }
            encode_attrs(self.out, &mut self.ctx.strings, &od.attrs);
            uleb(self.out, od.regions.len() as u64);
            for &r in &od.regions {
                self.region(r);
            }
        }
    }
}
