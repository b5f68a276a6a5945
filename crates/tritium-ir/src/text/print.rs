//! Module → text. Values are named `%N` in definition order (the same numbers
//! as the binary format), so a dump and a decoded buffer read alike.
use std::collections::HashMap;
use std::fmt::Write;

use crate::attrs::{Attr, Attrs};
use crate::codec::number_values;
use crate::entities::{Region, Value};
use crate::module::{Function, Module};

pub fn print(m: &Module) -> String {
    let mut out = String::new();
    for (i, f) in m.funcs.values().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        print_func(&mut out, m, f);
    }
    out
}

fn print_func(out: &mut String, m: &Module, f: &Function) {
    let names = number_values(f);
    let p = Printer { m, f, names: &names };
    write!(out, "func @{}(", symbol(&f.name)).unwrap();
    for (i, &a) in f.args().iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "{}: {}", p.value(a), m.types.display(f.values[a].ty)).unwrap();
        if let Some(attrs) = f.arg_attrs.get(i).filter(|a| !a.is_empty()) {
            out.push(' ');
            print_attrs(out, attrs);
        }
    }
    out.push(')');
    if !f.results.is_empty() {
        out.push_str(" -> ");
        p.type_list(out, &f.results, true);
    }
    let flags: Vec<&str> = [("kernel", f.kernel), ("noinline", f.noinline)]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect();
    if !flags.is_empty() {
        write!(out, " attributes {{{}}}", flags.join(", ")).unwrap();
    }
    out.push_str(" {\n");
    p.block_ops(out, f.body, 1);
    out.push_str("}\n");
}

struct Printer<'a> {
    m: &'a Module,
    f: &'a Function,
    names: &'a HashMap<Value, u64>,
}

impl Printer<'_> {
    fn value(&self, v: Value) -> String {
        match self.names.get(&v) {
            Some(n) => format!("%{n}"),
            // Only an invalid module uses an unreachable value; name it apart.
            None => format!("%dangling{}", v.0),
        }
    }

    /// `(a, b)`; a single type bare when `bare_single`.
    fn type_list(&self, out: &mut String, types: &[crate::entities::Type], bare_single: bool) {
        if bare_single && types.len() == 1 {
            write!(out, "{}", self.m.types.display(types[0])).unwrap();
            return;
        }
        out.push('(');
        for (i, &t) in types.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write!(out, "{}", self.m.types.display(t)).unwrap();
        }
        out.push(')');
    }

    fn block_ops(&self, out: &mut String, r: Region, depth: usize) {
        let Some(b) = self.f.regions.get(r).and_then(|rd| self.f.blocks.get(rd.block)) else { return };
        let indent = "  ".repeat(depth);
        for &op in &b.ops {
            let od = &self.f.ops[op];
            out.push_str(&indent);
            if !od.results.is_empty() {
                let names: Vec<String> = od.results.iter().map(|&v| self.value(v)).collect();
                write!(out, "{} = ", names.join(", ")).unwrap();
            }
            write!(out, "\"{}\"(", od.opcode.name()).unwrap();
            let operands: Vec<String> = od.operands.iter().map(|&v| self.value(v)).collect();
            out.push_str(&operands.join(", "));
            out.push(')');
            if !od.regions.is_empty() {
                out.push_str(" (");
                for (i, &r) in od.regions.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.region(out, r, depth);
                }
                out.push(')');
            }
            if !od.attrs.is_empty() {
                out.push(' ');
                print_attrs(out, &od.attrs);
            }
            out.push_str(" : ");
            let types: Vec<_> = od.operands.iter().map(|&v| self.value_type(v)).collect();
            self.type_list(out, &types, false);
            out.push_str(" -> ");
            let types: Vec<_> = od.results.iter().map(|&v| self.value_type(v)).collect();
            self.type_list(out, &types, true);
            if let Some(loc) = self.m.locs.get(od.loc) {
                if !(loc.file.is_empty() && loc.line == 0 && loc.col == 0) {
                    write!(out, " loc({}:{}:{})", quote(&loc.file), loc.line, loc.col).unwrap();
                }
            }
            out.push('\n');
        }
    }

    fn value_type(&self, v: Value) -> crate::entities::Type {
        self.f.values.get(v).map(|d| d.ty).unwrap_or(crate::entities::Type(u32::MAX))
    }

    fn region(&self, out: &mut String, r: Region, depth: usize) {
        out.push_str("{\n");
        let indent = "  ".repeat(depth);
        if let Some(b) = self.f.regions.get(r).and_then(|rd| self.f.blocks.get(rd.block)) {
            if !b.args.is_empty() {
                let args: Vec<String> = b
                    .args
                    .iter()
                    .map(|&a| format!("{}: {}", self.value(a), self.m.types.display(self.value_type(a))))
                    .collect();
                writeln!(out, "{indent}^bb({}):", args.join(", ")).unwrap();
            }
        }
        self.block_ops(out, r, depth + 1);
        out.push_str(&indent);
        out.push('}');
    }
}

pub(crate) fn print_attrs(out: &mut String, attrs: &Attrs) {
    out.push('{');
    for (i, (k, a)) in attrs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "{} = ", key(k)).unwrap();
        print_attr(out, a);
    }
    out.push('}');
}

fn print_attr(out: &mut String, a: &Attr) {
    match a {
        Attr::Int(v) => write!(out, "{v}").unwrap(),
        Attr::Float(v) => out.push_str(&float(*v)),
        Attr::Str(s) => out.push_str(&quote(s)),
        Attr::Bool(b) => write!(out, "{b}").unwrap(),
        Attr::IntArray(vs) => {
            let items: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
            write!(out, "[{}]", items.join(", ")).unwrap();
        }
    }
}

/// Floats always show a `.` or exponent (so they never read back as ints);
/// NaNs other than the canonical one keep their bits.
pub(crate) fn float(v: f64) -> String {
    if v.is_nan() {
        if v.to_bits() == f64::NAN.to_bits() {
            "nan".into()
        } else {
            format!("nan(0x{:016x})", v.to_bits())
        }
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let s = format!("{v:?}");
        if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") }
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'))
}

fn key(k: &str) -> String {
    if is_ident(k) && !matches!(k, "true" | "false") { k.to_string() } else { quote(k) }
}

fn symbol(name: &str) -> String {
    if is_ident(name) { name.to_string() } else { quote(name) }
}

pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => write!(out, "\\u{{{:x}}}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
