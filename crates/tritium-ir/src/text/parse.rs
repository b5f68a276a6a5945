//! Text → Module: a recursive-descent parser over characters. Value names may
//! be any `%name`; uses are resolved at the end of each function, so a use
//! before its definition parses and is left for the verifier's dominance check.
use std::collections::HashMap;

use crate::attrs::{Attr, Attrs};
use crate::entities::{Block, Op, Type, Value};
use crate::error::ParseError;
use crate::module::{Function, LocData, Module};
use crate::ops::Opcode;
use crate::types::{ScalarKind, TypeData};

/// Nesting beyond this is rejected (matches the decoder's limit).
const MAX_DEPTH: usize = crate::codec::MAX_REGION_DEPTH;

pub fn parse(text: &str) -> Result<Module, ParseError> {
    let mut p = Parser { chars: text.chars().collect(), pos: 0, line: 1, col: 1, m: Module::new() };
    loop {
        p.skip_ws();
        if p.at_end() {
            return Ok(p.m);
        }
        p.func()?;
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
    m: Module,
}

/// A use of `%name` in operand `slot` of `op`, resolved at function end.
struct Use {
    op: Op,
    slot: usize,
    name: String,
    line: u32,
    col: u32,
}

struct FuncState {
    f: Function,
    names: HashMap<String, Value>,
    uses: Vec<Use>,
    /// Operand types written in op signatures, checked after resolution.
    sigs: Vec<(Op, Vec<Type>, u32, u32)>,
}

impl Parser {
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError { line: self.line, col: self.col, msg: msg.into() })
    }
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else if c == '/' && self.chars.get(self.pos + 1) == Some(&'/') {
                while !matches!(self.peek(), None | Some('\n')) {
                    self.bump();
                }
            } else {
                break;
            }
        }
    }
    fn looking_at(&mut self, s: &str) -> bool {
        self.skip_ws();
        let n = s.chars().count();
        self.pos + n <= self.chars.len() && self.chars[self.pos..self.pos + n].iter().copied().eq(s.chars())
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.looking_at(s) {
            for _ in s.chars() {
                self.bump();
            }
            true
        } else {
            false
        }
    }
    fn expect(&mut self, s: &str) -> Result<(), ParseError> {
        if self.eat(s) {
            Ok(())
        } else {
            let found = self.peek().map(|c| format!("'{c}'")).unwrap_or_else(|| "end of input".into());
            self.err(format!("expected '{s}', found {found}"))
        }
    }
    fn word(&mut self) -> String {
        self.skip_ws();
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$') {
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        s
    }
    fn ident(&mut self, what: &str) -> Result<String, ParseError> {
        let (line, col) = (self.line, self.col);
        let w = self.word();
        if w.is_empty() || w.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(ParseError { line, col, msg: format!("expected {what}") });
        }
        Ok(w)
    }
    fn string(&mut self) -> Result<String, ParseError> {
        self.expect("\"")?;
        let mut s = String::new();
        loop {
            let Some(c) = self.bump() else { return self.err("unterminated string") };
            match c {
                '"' => return Ok(s),
                '\\' => match self.bump() {
                    Some('"') => s.push('"'),
                    Some('\\') => s.push('\\'),
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('u') => {
                        self.expect("{")?;
                        let mut hex = String::new();
                        while let Some(c) = self.peek().filter(|c| c.is_ascii_hexdigit()) {
                            hex.push(c);
                            self.bump();
                        }
                        self.expect("}")?;
                        let ch = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                        match ch {
                            Some(ch) => s.push(ch),
                            None => return self.err(format!("bad unicode escape \\u{{{hex}}}")),
                        }
                    }
                    _ => return self.err("unknown escape in string"),
                },
                c => s.push(c),
            }
        }
    }
    /// `name` or `"name"`.
    fn name_or_string(&mut self, what: &str) -> Result<String, ParseError> {
        if self.looking_at("\"") { self.string() } else { self.ident(what) }
    }
    fn int(&mut self) -> Result<i64, ParseError> {
        self.skip_ws();
        let (line, col) = (self.line, self.col);
        let neg = self.eat("-");
        let w = self.word();
        let parsed = w.parse::<u64>().ok().and_then(|u| {
            if neg { 0i64.checked_sub_unsigned(u) } else { i64::try_from(u).ok() }
        });
        parsed.ok_or(ParseError { line, col, msg: format!("expected an integer, found '{}{w}'", if neg { "-" } else { "" }) })
    }
    fn u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let (line, col) = (self.line, self.col);
        let v = self.int()?;
        u32::try_from(v).map_err(|_| ParseError { line, col, msg: format!("{what} {v} out of range") })
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        self.ty_at(0)
    }
    fn ty_at(&mut self, depth: usize) -> Result<Type, ParseError> {
        self.skip_ws();
        let (line, col) = (self.line, self.col);
        if depth > 4 {
            return self.err("type nested too deeply");
        }
        let name = self.ident("a type")?;
        let data = match name.as_str() {
            "ptr" => {
                self.expect("<")?;
                let elem = self.ty_at(depth + 1)?;
                let addrspace = if self.eat(",") { self.u32("address space")? } else { 1 };
                self.expect(">")?;
                TypeData::Ptr { elem, addrspace }
            }
            "tensor" => {
                self.expect("<")?;
                let mut dims = Vec::new();
                loop {
                    self.skip_ws();
                    if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        break;
                    }
                    let mut digits = String::new();
                    while let Some(c) = self.peek().filter(|c| c.is_ascii_digit()) {
                        digits.push(c);
                        self.bump();
                    }
                    match digits.parse::<u32>() {
                        Ok(d) => dims.push(d),
                        Err(_) => return self.err(format!("tensor dim {digits} out of range")),
                    }
                    if self.peek() != Some('x') {
                        return self.err("expected 'x' after a tensor dim");
                    }
                    self.bump();
                }
                let elem = self.ty_at(depth + 1)?;
                self.expect(">")?;
                TypeData::Tensor { dims, elem }
            }
            s => match ScalarKind::from_name(s) {
                Some(k) => TypeData::Scalar(k),
                None => return Err(ParseError { line, col, msg: format!("unknown type '{s}'") }),
            },
        };
        self.m.types.try_intern(data).map_err(|e| ParseError { line, col, msg: e.to_string() })
    }
    fn type_list(&mut self) -> Result<Vec<Type>, ParseError> {
        self.expect("(")?;
        let mut types = Vec::new();
        if !self.eat(")") {
            loop {
                types.push(self.ty()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(types)
    }
    /// `-> T` or `-> (T, ...)`.
    fn results(&mut self) -> Result<Vec<Type>, ParseError> {
        self.expect("->")?;
        if self.looking_at("(") { self.type_list() } else { Ok(vec![self.ty()?]) }
    }

    fn attr(&mut self) -> Result<Attr, ParseError> {
        self.skip_ws();
        let (line, col) = (self.line, self.col);
        if self.looking_at("\"") {
            return Ok(Attr::Str(self.string()?));
        }
        if self.eat("[") {
            let mut vs = Vec::new();
            if !self.eat("]") {
                loop {
                    vs.push(self.int()?);
                    if self.eat("]") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(Attr::IntArray(vs));
        }
        let neg = self.eat("-");
        self.skip_ws();
        let mut w = self.word();
        // An exponent's sign splits the word: `1e-7`.
        if w.ends_with(['e', 'E']) && w.starts_with(|c: char| c.is_ascii_digit()) && matches!(self.peek(), Some('-' | '+')) {
            w.push(self.bump().unwrap_or('+'));
            w.push_str(&self.word());
        }
        let sign = if neg { -1.0 } else { 1.0 };
        let bad = || ParseError { line, col, msg: format!("expected an attribute value, found '{w}'") };
        match w.as_str() {
            "true" if !neg => Ok(Attr::Bool(true)),
            "false" if !neg => Ok(Attr::Bool(false)),
            "inf" => Ok(Attr::Float(sign * f64::INFINITY)),
            "nan" if !neg => {
                if self.eat("(") {
                    let hex = self.word();
                    self.expect(")")?;
                    let bits = hex
                        .strip_prefix("0x")
                        .and_then(|h| u64::from_str_radix(h, 16).ok())
                        .ok_or_else(|| ParseError { line, col, msg: format!("bad NaN bits '{hex}'") })?;
                    Ok(Attr::Float(f64::from_bits(bits)))
                } else {
                    Ok(Attr::Float(f64::NAN))
                }
            }
            _ if w.starts_with(|c: char| c.is_ascii_digit()) => {
                let text = if neg { format!("-{w}") } else { w.clone() };
                if w.contains(['.', 'e', 'E']) {
                    text.parse::<f64>().map(Attr::Float).map_err(|_| bad())
                } else {
                    text.parse::<i64>().map(Attr::Int).map_err(|_| bad())
                }
            }
            _ => Err(bad()),
        }
    }
    /// `{key = value, ...}`; `bare_flags` also allows `{kernel}` (true).
    fn attr_dict(&mut self, bare_flags: bool) -> Result<Attrs, ParseError> {
        self.expect("{")?;
        let mut attrs = Attrs::new();
        if self.eat("}") {
            return Ok(attrs);
        }
        loop {
            self.skip_ws();
            let (line, col) = (self.line, self.col);
            let key = self.name_or_string("an attribute name")?;
            let value = if bare_flags && !self.looking_at("=") {
                Attr::Bool(true)
            } else {
                self.expect("=")?;
                self.attr()?
            };
            if attrs.insert(key.clone(), value).is_some() {
                return Err(ParseError { line, col, msg: format!("duplicate attribute '{key}'") });
            }
            if self.eat("}") {
                return Ok(attrs);
            }
            self.expect(",")?;
        }
    }

    fn value_name(&mut self) -> Result<(String, u32, u32), ParseError> {
        self.skip_ws();
        let (line, col) = (self.line, self.col);
        self.expect("%")?;
        let mut name = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')) {
            name.push(c);
            self.bump();
        }
        if name.is_empty() {
            return Err(ParseError { line, col, msg: "expected a value name after '%'".into() });
        }
        Ok((name, line, col))
    }
    fn define(&self, st: &mut FuncState, name: (String, u32, u32), v: Value) -> Result<(), ParseError> {
        if st.names.insert(name.0.clone(), v).is_some() {
            return Err(ParseError { line: name.1, col: name.2, msg: format!("value %{} defined twice", name.0) });
        }
        Ok(())
    }

    fn func(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        let kw = self.word();
        if kw != "func" {
            return self.err(format!("expected 'func', found '{kw}'"));
        }
        self.expect("@")?;
        let name = self.name_or_string("a function name")?;
        self.expect("(")?;
        let mut args = Vec::new();
        let mut arg_attrs = Vec::new();
        if !self.eat(")") {
            loop {
                let n = self.value_name()?;
                self.expect(":")?;
                let t = self.ty()?;
                let attrs = if self.looking_at("{") { self.attr_dict(false)? } else { Attrs::new() };
                args.push((n, t));
                arg_attrs.push(attrs);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let results = if self.looking_at("->") { self.results()? } else { Vec::new() };
        let arg_types: Vec<Type> = args.iter().map(|a| a.1).collect();
        let mut f = Function::new(&name, &arg_types, &results);
        f.arg_attrs = arg_attrs;
        if self.eat("attributes") {
            let (line, col) = (self.line, self.col);
            for (k, v) in self.attr_dict(true)? {
                match (k.as_str(), v) {
                    ("kernel", Attr::Bool(b)) => f.kernel = b,
                    ("noinline", Attr::Bool(b)) => f.noinline = b,
                    (k, _) => return Err(ParseError { line, col, msg: format!("unknown function attribute '{k}'") }),
                }
            }
        }
        let mut st = FuncState { f, names: HashMap::new(), uses: Vec::new(), sigs: Vec::new() };
        let entry_args = st.f.args().to_vec();
        for ((n, _), v) in args.into_iter().zip(entry_args) {
            self.define(&mut st, n, v)?;
        }
        self.expect("{")?;
        let entry = st.f.entry_block();
        self.ops(&mut st, entry, 0)?;
        self.expect("}")?;
        self.finish(st)
    }

    fn finish(&mut self, mut st: FuncState) -> Result<(), ParseError> {
        for u in &st.uses {
            match st.names.get(&u.name) {
                Some(&v) => st.f.ops[u.op].operands[u.slot] = v,
                None => return Err(ParseError { line: u.line, col: u.col, msg: format!("undefined value %{}", u.name) }),
            }
        }
        for (op, types, line, col) in &st.sigs {
            let actual: Vec<Type> = st.f.ops[*op].operands.iter().map(|&v| st.f.values[v].ty).collect();
            if &actual != types {
                let show = |ts: &[Type]| ts.iter().map(|&t| self.m.types.display(t).to_string()).collect::<Vec<_>>().join(", ");
                return Err(ParseError {
                    line: *line,
                    col: *col,
                    msg: format!("operand types ({}) do not match the values' types ({})", show(types), show(&actual)),
                });
            }
        }
        self.m.funcs.push(st.f);
        Ok(())
    }

    /// Ops until the closing `}` of the block (not consumed).
    fn ops(&mut self, st: &mut FuncState, block: Block, depth: usize) -> Result<(), ParseError> {
        while !self.looking_at("}") {
            if self.at_end() {
                return self.err("expected '}' before end of input");
            }
            self.op(st, block, depth)?;
        }
        Ok(())
    }

    fn op(&mut self, st: &mut FuncState, block: Block, depth: usize) -> Result<(), ParseError> {
        let mut result_names = Vec::new();
        if self.looking_at("%") {
            loop {
                result_names.push(self.value_name()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        self.skip_ws();
        let (line, col) = (self.line, self.col);
        let name = self.string()?;
        let opcode = Opcode::from_name(&name).ok_or(ParseError { line, col, msg: format!("unknown op '{name}'") })?;
        self.expect("(")?;
        let mut operands = Vec::new();
        if !self.eat(")") {
            loop {
                operands.push(self.value_name()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let placeholder = vec![Value(0); operands.len()];
        let op = st.f.create_op(opcode, &placeholder, &[], Attrs::new(), Vec::new(), crate::entities::Loc(0));
        st.f.append_op(block, op);
        for (slot, (name, line, col)) in operands.into_iter().enumerate() {
            st.uses.push(Use { op, slot, name, line, col });
        }
        // Result values are created after the regions are parsed (their types
        // come last in the syntax); numbering follows the walk, not the arena.
        let mut regions = Vec::new();
        if self.looking_at("(") && {
            let save = (self.pos, self.line, self.col);
            self.bump();
            let is_region = self.looking_at("{");
            (self.pos, self.line, self.col) = save;
            is_region
        } {
            if depth >= MAX_DEPTH {
                return self.err(format!("regions nested deeper than {MAX_DEPTH}"));
            }
            self.expect("(")?;
            loop {
                regions.push(self.region(st, depth + 1)?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        st.f.ops[op].regions = regions;
        if self.looking_at("{") {
            st.f.ops[op].attrs = self.attr_dict(false)?;
        }
        self.expect(":")?;
        let (sl, sc) = (self.line, self.col);
        let operand_types = self.type_list()?;
        st.sigs.push((op, operand_types, sl, sc));
        let result_types = self.results()?;
        if result_types.len() != result_names.len() {
            return Err(ParseError {
                line,
                col,
                msg: format!("{} result names but {} result types", result_names.len(), result_types.len()),
            });
        }
        for (i, (n, &ty)) in result_names.into_iter().zip(&result_types).enumerate() {
            let v = st.f.values.push(crate::module::ValueData { ty, def: crate::module::ValueDef::OpResult(op, i as u32) });
            st.f.ops[op].results.push(v);
            self.define(st, n, v)?;
        }
        let loc = if self.eat("loc") {
            self.expect("(")?;
            let file = self.string()?;
            self.expect(":")?;
            let l = self.u32("line")?;
            self.expect(":")?;
            let c = self.u32("column")?;
            self.expect(")")?;
            LocData { file, line: l, col: c }
        } else {
            LocData::default()
        };
        st.f.ops[op].loc = self.m.locs.intern(loc);
        Ok(())
    }

    fn region(&mut self, st: &mut FuncState, depth: usize) -> Result<crate::entities::Region, ParseError> {
        self.expect("{")?;
        let mut names = Vec::new();
        let mut types = Vec::new();
        if self.eat("^") {
            self.ident("a block label")?;
            if self.eat("(") && !self.eat(")") {
                loop {
                    names.push(self.value_name()?);
                    self.expect(":")?;
                    types.push(self.ty()?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            self.expect(":")?;
        }
        let (r, b) = st.f.create_region(&types);
        let args = st.f.blocks[b].args.clone();
        for (n, v) in names.into_iter().zip(args) {
            self.define(st, n, v)?;
        }
        self.ops(st, b, depth)?;
        self.expect("}")?;
        Ok(r)
    }
}
