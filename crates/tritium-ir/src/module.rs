//! The module and function data structures. A function owns arenas of values,
//! ops, blocks and regions (the data-flow graph); the order of ops lives in the
//! blocks' op lists, so passes can insert or drop ops without renumbering.
use std::collections::HashMap;

use crate::attrs::Attrs;
use crate::entities::{Arena, Block, Func, Loc, Op, Region, Type, Value};
use crate::ops::Opcode;
use crate::types::TypeTable;

/// A source location; `("", 0, 0)` means unknown.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct LocData {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for LocData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.file.is_empty() && self.line == 0 && self.col == 0 {
            f.write_str("<unknown>")
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.col)
        }
    }
}

/// The module's location interner.
#[derive(Clone, Debug, Default)]
pub struct LocTable {
    locs: Arena<Loc, LocData>,
    index: HashMap<LocData, Loc>,
}

impl PartialEq for LocTable {
    fn eq(&self, other: &Self) -> bool {
        self.locs == other.locs
    }
}

impl LocTable {
    pub fn intern(&mut self, data: LocData) -> Loc {
        if let Some(&l) = self.index.get(&data) {
            return l;
        }
        let l = self.locs.push(data.clone());
        self.index.insert(data, l);
        l
    }
    pub fn get(&self, l: Loc) -> Option<&LocData> {
        self.locs.get(l)
    }
    pub fn len(&self) -> usize {
        self.locs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Loc, &LocData)> {
        self.locs.iter()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub types: TypeTable,
    pub locs: LocTable,
    pub funcs: Arena<Func, Function>,
}

impl Default for Module {
    fn default() -> Self {
        Self::new()
    }
}

impl Module {
    pub fn new() -> Self {
        Module { types: TypeTable::new(), locs: LocTable::default(), funcs: Arena::new() }
    }
    pub fn func_by_name(&self, name: &str) -> Option<Func> {
        self.funcs.iter().find(|(_, f)| f.name == name).map(|(k, _)| k)
    }
    /// The location of `op` in `func`, `<unknown>` when missing.
    pub fn loc_of(&self, func: Func, op: Op) -> LocData {
        let f = &self.funcs[func];
        f.ops.get(op).and_then(|o| self.locs.get(o.loc)).cloned().unwrap_or_default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// The n-th argument of a block.
    BlockArg(Block, u32),
    /// The n-th result of an op.
    OpResult(Op, u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OpData {
    pub opcode: Opcode,
    pub operands: Vec<Value>,
    pub results: Vec<Value>,
    pub attrs: Attrs,
    pub regions: Vec<Region>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct BlockData {
    pub args: Vec<Value>,
    pub ops: Vec<Op>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RegionData {
    pub block: Block,
}

/// A function: its arguments are the body block's arguments, each with an
/// attribute dictionary of specialization facts.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kernel: bool,
    pub noinline: bool,
    pub arg_attrs: Vec<Attrs>,
    pub results: Vec<Type>,
    pub body: Region,
    pub values: Arena<Value, ValueData>,
    pub ops: Arena<Op, OpData>,
    pub blocks: Arena<Block, BlockData>,
    pub regions: Arena<Region, RegionData>,
}

impl Function {
    pub fn entry_block(&self) -> Block {
        self.regions[self.body].block
    }
    pub fn args(&self) -> &[Value] {
        &self.blocks[self.entry_block()].args
    }
    pub fn arg_types(&self) -> Vec<Type> {
        self.args().iter().map(|&v| self.values[v].ty).collect()
    }
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }
    pub fn region_block(&self, r: Region) -> &BlockData {
        &self.blocks[self.regions[r].block]
    }
}
