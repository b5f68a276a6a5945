//! Building functions from Rust (tests, passes): create a function, append ops
//! to blocks, create ops with regions and fill their blocks. The builder only
//! assembles IR; `verify` decides whether it is valid.
use crate::attrs::{Attr, Attrs};
use crate::entities::{Arena, Block, Func, Loc, Op, Region, Type, Value};
use crate::module::{BlockData, Function, LocData, Module, OpData, RegionData, ValueData, ValueDef};
use crate::ops::Opcode;

impl Function {
    /// An empty function whose body block has arguments of `arg_types`.
    pub fn new(name: &str, arg_types: &[Type], results: &[Type]) -> Function {
        let mut f = Function {
            name: name.to_string(),
            kernel: false,
            noinline: false,
            arg_attrs: vec![Attrs::new(); arg_types.len()],
            results: results.to_vec(),
            body: Region(0),
            values: Arena::new(),
            ops: Arena::new(),
            blocks: Arena::new(),
            regions: Arena::new(),
        };
        let (body, _) = f.create_region(arg_types);
        f.body = body;
        f
    }

    /// A new region with one block whose arguments have `arg_types`.
    pub fn create_region(&mut self, arg_types: &[Type]) -> (Region, Block) {
        let block = self.blocks.push(BlockData::default());
        for (i, &ty) in arg_types.iter().enumerate() {
            let v = self.values.push(ValueData { ty, def: ValueDef::BlockArg(block, i as u32) });
            self.blocks[block].args.push(v);
        }
        (self.regions.push(RegionData { block }), block)
    }

    /// Creates an op (not yet placed in any block) and its result values.
    pub fn create_op(
        &mut self,
        opcode: Opcode,
        operands: &[Value],
        result_types: &[Type],
        attrs: Attrs,
        regions: Vec<Region>,
        loc: Loc,
    ) -> Op {
        let op = self.ops.push(OpData {
            opcode,
            operands: operands.to_vec(),
            results: Vec::new(),
            attrs,
            regions,
            loc,
        });
        for (i, &ty) in result_types.iter().enumerate() {
            let v = self.values.push(ValueData { ty, def: ValueDef::OpResult(op, i as u32) });
            self.ops[op].results.push(v);
        }
        op
    }

    /// Places `op` at the end of `block`.
    pub fn append_op(&mut self, block: Block, op: Op) {
        self.blocks[block].ops.push(op);
    }

    /// Places `op` at position `index` of `block` (passes inserting before an op).
    pub fn insert_op(&mut self, block: Block, index: usize, op: Op) {
        self.blocks[block].ops.insert(index, op);
    }
}

/// Appends ops at a current location; owns the function until `finish`.
pub struct Builder<'m> {
    pub module: &'m mut Module,
    pub func: Function,
    loc: Loc,
}

impl<'m> Builder<'m> {
    pub fn new(module: &'m mut Module, name: &str, arg_types: &[Type], results: &[Type]) -> Self {
        let loc = module.locs.intern(LocData::default());
        Builder { module, func: Function::new(name, arg_types, results), loc }
    }
    pub fn entry(&self) -> Block {
        self.func.entry_block()
    }
    pub fn arg(&self, i: usize) -> Value {
        self.func.args()[i]
    }
    pub fn set_loc(&mut self, file: &str, line: u32, col: u32) {
        self.loc = self.module.locs.intern(LocData { file: file.to_string(), line, col });
    }
    pub fn set_arg_attr(&mut self, i: usize, key: &str, value: Attr) {
        self.func.arg_attrs[i].insert(key.to_string(), value);
    }

    /// Appends op `opcode` to `block`; returns its results.
    pub fn op(
        &mut self,
        block: Block,
        opcode: Opcode,
        operands: &[Value],
        result_types: &[Type],
        attrs: &[(&str, Attr)],
    ) -> Vec<Value> {
        let (results, _) = self.op_with_regions(block, opcode, operands, result_types, attrs, &[]);
        results
    }

    /// Appends an op with regions whose blocks have arguments `region_args`;
    /// returns the results and the regions' blocks (to be filled by the caller).
    pub fn op_with_regions(
        &mut self,
        block: Block,
        opcode: Opcode,
        operands: &[Value],
        result_types: &[Type],
        attrs: &[(&str, Attr)],
        region_args: &[&[Type]],
    ) -> (Vec<Value>, Vec<Block>) {
        let attrs: Attrs = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let op = self.func.create_op(opcode, operands, result_types, attrs, Vec::new(), self.loc);
        let mut blocks = Vec::new();
        for args in region_args {
            let (r, b) = self.func.create_region(args);
            self.func.ops[op].regions.push(r);
            blocks.push(b);
        }
        self.func.append_op(block, op);
        (self.func.ops[op].results.clone(), blocks)
    }

    pub fn block_args(&self, block: Block) -> Vec<Value> {
        self.func.blocks[block].args.clone()
    }

    /// Adds the function to the module.
    pub fn finish(self) -> Func {
        self.module.funcs.push(self.func)
    }
}
