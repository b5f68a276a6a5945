//! Bytes → Module. Every count is checked against the bytes left (each item
//! takes at least one byte), every index against its table, and region nesting
//! is capped, so any input yields Ok or a DecodeError without panicking.
use crate::attrs::{Attr, Attrs};
use crate::entities::{EntityRef, Loc, Type, Value};
use crate::error::DecodeError;
use crate::module::{Function, LocData, Module};
use crate::ops::{Opcode, FORMAT_VERSION};
use crate::types::{ScalarKind, TypeData};

use super::MAGIC;

/// Deeper nesting is rejected rather than risking the decoder's stack.
pub const MAX_REGION_DEPTH: usize = 256;

pub fn decode(data: &[u8]) -> Result<Module, DecodeError> {
    let mut r = Reader { data, pos: 0 };
    if data.len() < 4 || &data[..4] != MAGIC {
        return Err(r.err("missing magic \"TRIR\""));
    }
    r.pos = 4;
    let version = r.uleb()?;
    if version != FORMAT_VERSION as u64 {
        r.pos = 4;
        return Err(r.err(format!("unsupported format version {version} (expected {FORMAT_VERSION})")));
    }
    let mut d = Decoder { r, strings: Vec::new(), types: Vec::new(), locs: Vec::new(), m: Module::new() };
    d.strings()?;
    d.types()?;
    d.locs()?;
    d.funcs()?;
    if d.r.pos != d.r.data.len() {
        return Err(d.r.err(format!("{} trailing bytes", d.r.data.len() - d.r.pos)));
    }
    Ok(d.m)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn err(&self, msg: impl Into<String>) -> DecodeError {
        DecodeError { offset: self.pos, msg: msg.into() }
    }
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        let b = *self.data.get(self.pos).ok_or_else(|| self.err("unexpected end of input"))?;
        self.pos += 1;
        Ok(b)
    }
    fn uleb(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            let bits = (b & 0x7f) as u64;
            if shift == 63 && bits > 1 {
                break;
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError { offset: start, msg: "LEB128 integer overflows 64 bits".into() })
    }
    fn sleb(&mut self) -> Result<i64, DecodeError> {
        let start = self.pos;
        let mut v: i64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.u8()?;
            if shift == 63 && !(b == 0 || b == 0x7f) {
                return Err(DecodeError { offset: start, msg: "LEB128 integer overflows 64 bits".into() });
            }
            v |= ((b & 0x7f) as i64) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1i64 << shift;
                }
                return Ok(v);
            }
        }
    }
    fn u32(&mut self, what: &str) -> Result<u32, DecodeError> {
        let start = self.pos;
        let v = self.uleb()?;
        u32::try_from(v).map_err(|_| DecodeError { offset: start, msg: format!("{what} {v} exceeds u32") })
    }
    /// A count of items that take at least `min_bytes` each.
    fn count(&mut self, what: &str, min_bytes: usize) -> Result<usize, DecodeError> {
        let start = self.pos;
        let n = self.uleb()?;
        if n > (self.remaining() / min_bytes) as u64 {
            return Err(DecodeError {
                offset: start,
                msg: format!("{what} count {n} exceeds the {} bytes left", self.remaining()),
            });
        }
        Ok(n as usize)
    }
    /// An index into a table of `len` entries.
    fn index(&mut self, what: &str, len: usize) -> Result<usize, DecodeError> {
        let start = self.pos;
        let i = self.uleb()?;
        if i >= len as u64 {
            return Err(DecodeError { offset: start, msg: format!("{what} index {i} out of range (table has {len})") });
        }
        Ok(i as usize)
    }
}

struct Decoder<'a> {
    r: Reader<'a>,
    strings: Vec<String>,
    /// File type index → interned type (duplicates in the file collapse).
    types: Vec<Type>,
    locs: Vec<Loc>,
    m: Module,
}

impl Decoder<'_> {
    fn strings(&mut self) -> Result<(), DecodeError> {
        let n = self.r.count("string", 1)?;
        for _ in 0..n {
            let len = self.r.count("string byte", 1)?;
            let start = self.r.pos;
            let bytes = &self.r.data[start..start + len];
            let s = std::str::from_utf8(bytes).map_err(|e| DecodeError {
                offset: start + e.valid_up_to(),
                msg: "string is not valid UTF-8".into(),
            })?;
            self.strings.push(s.to_string());
            self.r.pos += len;
        }
        Ok(())
    }

    fn string(&mut self, what: &str) -> Result<String, DecodeError> {
        let i = self.r.index(what, self.strings.len())?;
        Ok(self.strings[i].clone())
    }

    fn type_ref(&mut self) -> Result<Type, DecodeError> {
        let i = self.r.index("type", self.types.len())?;
        Ok(self.types[i])
    }

    fn types(&mut self) -> Result<(), DecodeError> {
        let n = self.r.count("type", 2)?;
        for _ in 0..n {
            let start = self.r.pos;
            let data = match self.r.u8()? {
                0 => {
                    let code = self.r.u8()?;
                    let k = ScalarKind::from_code(code)
                        .ok_or_else(|| DecodeError { offset: start + 1, msg: format!("unknown scalar kind {code}") })?;
                    TypeData::Scalar(k)
                }
                1 => {
                    let elem = self.type_ref()?;
                    let addrspace = self.r.u32("address space")?;
                    TypeData::Ptr { elem, addrspace }
                }
                2 => {
                    let rank = self.r.count("tensor dim", 1)?;
                    let mut dims = Vec::with_capacity(rank);
                    for _ in 0..rank {
                        dims.push(self.r.u32("tensor dim")?);
                    }
                    let elem = self.type_ref()?;
                    TypeData::Tensor { dims, elem }
                }
                tag => return Err(DecodeError { offset: start, msg: format!("unknown type tag {tag}") }),
            };
            let t = self.m.types.try_intern(data).map_err(|e| DecodeError { offset: start, msg: e.to_string() })?;
            self.types.push(t);
        }
        Ok(())
    }

    fn locs(&mut self) -> Result<(), DecodeError> {
        let n = self.r.count("loc", 3)?;
        for _ in 0..n {
            let file = self.string("loc file string")?;
            let line = self.r.u32("line")?;
            let col = self.r.u32("column")?;
            self.locs.push(self.m.locs.intern(LocData { file, line, col }));
        }
        Ok(())
    }

    fn attrs(&mut self) -> Result<Attrs, DecodeError> {
        let n = self.r.count("attribute", 2)?;
        let mut attrs = Attrs::new();
        for _ in 0..n {
            let start = self.r.pos;
            let key = self.string("attribute key string")?;
            let tag_pos = self.r.pos;
            let value = match self.r.u8()? {
                0 => Attr::Int(self.r.sleb()?),
                1 => {
                    if self.r.remaining() < 8 {
                        return Err(self.r.err("unexpected end of input in float attribute"));
                    }
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&self.r.data[self.r.pos..self.r.pos + 8]);
                    self.r.pos += 8;
                    Attr::Float(f64::from_bits(u64::from_le_bytes(b)))
                }
                2 => Attr::Str(self.string("string attribute")?),
                3 => match self.r.u8()? {
                    0 => Attr::Bool(false),
                    1 => Attr::Bool(true),
                    b => return Err(DecodeError { offset: self.r.pos - 1, msg: format!("bool attribute byte {b}") }),
                },
                4 => {
                    let n = self.r.count("int array element", 1)?;
                    let mut vs = Vec::with_capacity(n);
                    for _ in 0..n {
                        vs.push(self.r.sleb()?);
                    }
                    Attr::IntArray(vs)
                }
                tag => return Err(DecodeError { offset: tag_pos, msg: format!("unknown attribute tag {tag}") }),
            };
            if attrs.insert(key.clone(), value).is_some() {
                return Err(DecodeError { offset: start, msg: format!("duplicate attribute key {key:?}") });
            }
        }
        Ok(attrs)
    }

    fn funcs(&mut self) -> Result<(), DecodeError> {
        let n = self.r.count("function", 5)?;
        for _ in 0..n {
            let f = self.func()?;
            self.m.funcs.push(f);
        }
        Ok(())
    }

    fn func(&mut self) -> Result<Function, DecodeError> {
        let name = self.string("function name string")?;
        let flags_pos = self.r.pos;
        let flags = self.r.uleb()?;
        if flags & !3 != 0 {
            return Err(DecodeError { offset: flags_pos, msg: format!("unknown function flags {flags:#x}") });
        }
        let nargs = self.r.count("argument", 2)?;
        let mut arg_types = Vec::with_capacity(nargs);
        let mut arg_attrs = Vec::with_capacity(nargs);
        for _ in 0..nargs {
            arg_types.push(self.type_ref()?);
            arg_attrs.push(self.attrs()?);
        }
        let nres = self.r.count("result", 1)?;
        let mut results = Vec::with_capacity(nres);
        for _ in 0..nres {
            results.push(self.type_ref()?);
        }
        let body_pos = self.r.pos;
        let mut f = Function::new(&name, &[], &results);
        f.kernel = flags & 1 != 0;
        f.noinline = flags & 2 != 0;
        // The body's block arguments repeat the function's argument types.
        let entry = f.entry_block();
        let mut uses = Vec::new();
        self.region_into(&mut f, entry, 0, &mut uses)?;
        if f.arg_types() != arg_types {
            return Err(DecodeError {
                offset: body_pos,
                msg: "function body's block arguments differ from the function's argument types".into(),
            });
        }
        f.arg_attrs = arg_attrs;
        // Operands may name any value of the function; check them at the end.
        let nvalues = f.values.len();
        for (op, slot, number, offset) in uses {
            if number >= nvalues as u64 {
                return Err(DecodeError {
                    offset,
                    msg: format!("value %{number} out of range (function @{name} defines {nvalues})"),
                });
            }
            f.ops[op].operands[slot] = Value::new(number as usize);
        }
        Ok(f)
    }

    /// Reads a region's block arguments and ops into `block`.
    fn region_into(
        &mut self,
        f: &mut Function,
        block: crate::entities::Block,
        depth: usize,
        uses: &mut Vec<(crate::entities::Op, usize, u64, usize)>,
    ) -> Result<(), DecodeError> {
        if depth > MAX_REGION_DEPTH {
            return Err(self.r.err(format!("regions nested deeper than {MAX_REGION_DEPTH}")));
        }
        let nargs = self.r.count("block argument", 1)?;
        for i in 0..nargs {
            let ty = self.type_ref()?;
            let v = f.values.push(crate::module::ValueData {
                ty,
                def: crate::module::ValueDef::BlockArg(block, i as u32),
            });
            f.blocks[block].args.push(v);
        }
        let nops = self.r.count("op", 6)?;
        for _ in 0..nops {
            let op_pos = self.r.pos;
            let code = self.r.uleb()?;
            let opcode = Opcode::from_index(code)
                .ok_or_else(|| DecodeError { offset: op_pos, msg: format!("unknown opcode {code}") })?;
            let loc = self.r.index("loc", self.locs.len())?;
            let loc = self.locs[loc];
            let noperands = self.r.count("operand", 1)?;
            let mut raw = Vec::with_capacity(noperands);
            for _ in 0..noperands {
                let at = self.r.pos;
                raw.push((self.r.uleb()?, at));
            }
            let nresults = self.r.count("result", 1)?;
            let mut result_types = Vec::with_capacity(nresults);
            for _ in 0..nresults {
                result_types.push(self.type_ref()?);
            }
            let attrs = self.attrs()?;
            let placeholder = vec![Value(0); noperands];
            let op = f.create_op(opcode, &placeholder, &result_types, attrs, Vec::new(), loc);
            for (slot, (number, at)) in raw.into_iter().enumerate() {
                uses.push((op, slot, number, at));
            }
            f.append_op(block, op);
            let nregions = self.r.count("region", 2)?;
            for _ in 0..nregions {
                let (r, b) = f.create_region(&[]);
                f.ops[op].regions.push(r);
                self.region_into(f, b, depth + 1, uses)?;
            }
        }
        Ok(())
    }
}
