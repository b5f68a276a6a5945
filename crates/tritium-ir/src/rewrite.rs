//! Generic IR surgery for passes: walk the placed blocks, find where an op
//! sits, replace uses, detach ops, drop op results and block arguments, and
//! `compact` a function so its arenas hold only what its body reaches (ops a
//! pass detached stay in the arenas until then; printing and encoding walk the
//! body, so they never see them).
use std::collections::HashMap;

use crate::attrs::Attr;
use crate::entities::{Arena, Block, Loc, Op, Region, Type, Value};
use crate::module::{BlockData, Function, OpData, RegionData, ValueData, ValueDef};
use crate::ops::Opcode;

/// One step of [`Function::preorder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Entering the block of `region`; its arguments are defined here.
    Block(Region, Block),
    /// `op`, placed in `block`; the blocks of its regions come next.
    Op(Block, Op),
}

/// The iterator behind [`Function::preorder`].
pub struct Preorder<'f> {
    f: &'f Function,
    stack: Vec<Step>,
}

enum Step {
    Enter(Region),
    Next(Block, usize),
}

impl Iterator for Preorder<'_> {
    type Item = Visit;

    fn next(&mut self) -> Option<Visit> {
        let f = self.f;
        while let Some(step) = self.stack.pop() {
            match step {
                Step::Enter(r) => {
                    // skipped rather than indexed: print and encode walk modules nobody verified
                    let Some(b) = f.regions.get(r).map(|rd| rd.block).filter(|&b| f.blocks.contains(b)) else {
                        continue;
                    };
                    self.stack.push(Step::Next(b, 0));
                    return Some(Visit::Block(r, b));
                }
                Step::Next(b, i) => {
                    let Some(&op) = f.blocks[b].ops.get(i) else { continue };
                    self.stack.push(Step::Next(b, i + 1));
                    let Some(od) = f.ops.get(op) else { continue };
                    // on top of the next sibling, first region last, so it comes next
                    self.stack.extend(od.regions.iter().rev().map(|&r| Step::Enter(r)));
                    return Some(Visit::Op(b, op));
                }
            }
        }
        None
    }
}

impl Function {
    /// The one walk of the body, in definition order: a block is entered
    /// before its ops, an op comes before the blocks of its regions, and those
    /// are walked to the end before the op's next sibling. Value numbers
    /// (print, encode) and `compact`'s renumbering follow this order.
    pub fn preorder(&self) -> Preorder<'_> {
        Preorder { f: self, stack: vec![Step::Enter(self.body)] }
    }

    /// The blocks reachable from the body, in pre-order.
    pub fn blocks_preorder(&self) -> Vec<Block> {
        self.preorder()
            .filter_map(|visit| match visit {
                Visit::Block(_, b) => Some(b),
                Visit::Op(..) => None,
            })
            .collect()
    }

    /// Every op placed in the body, with the block that holds it, in pre-order.
    pub fn ops_preorder(&self) -> Vec<(Block, Op)> {
        self.preorder()
            .filter_map(|visit| match visit {
                Visit::Op(b, op) => Some((b, op)),
                Visit::Block(..) => None,
            })
            .collect()
    }

    /// The op defining `v`, if `v` is an op result.
    pub fn defining_op(&self, v: Value) -> Option<Op> {
        match self.values[v].def {
            ValueDef::OpResult(op, _) => Some(op),
            ValueDef::BlockArg(..) => None,
        }
    }

    /// How many placed operands name each value.
    pub fn use_counts(&self) -> HashMap<Value, u32> {
        let mut counts = HashMap::new();
        for (_, op) in self.ops_preorder() {
            for &v in &self.ops[op].operands {
                *counts.entry(v).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Every placed op using each value (an op once, however many operands name it).
    pub fn users(&self) -> HashMap<Value, Vec<Op>> {
        let mut out: HashMap<Value, Vec<Op>> = HashMap::new();
        for (_, op) in self.ops_preorder() {
            let operands = &self.ops[op].operands;
            for (i, &v) in operands.iter().enumerate() {
                if !operands[..i].contains(&v) {
                    out.entry(v).or_default().push(op);
                }
            }
        }
        out
    }

    /// Makes every placed use of `from` a use of `to` (same type expected).
    pub fn replace_all_uses(&mut self, from: Value, to: Value) {
        for (_, op) in self.ops_preorder() {
            for v in &mut self.ops[op].operands {
                if *v == from {
                    *v = to;
                }
            }
        }
    }

    /// Places `op` right before `before` in `block`; false if `before` is not there.
    pub fn insert_op_before(&mut self, block: Block, before: Op, op: Op) -> bool {
        match self.blocks[block].ops.iter().position(|&o| o == before) {
            Some(i) => {
                self.blocks[block].ops.insert(i, op);
                true
            }
            None => false,
        }
    }

    /// Detaches `op` from `block` (its results must be unused); false if absent.
    pub fn erase_op(&mut self, block: Block, op: Op) -> bool {
        let ops = &mut self.blocks[block].ops;
        match ops.iter().position(|&o| o == op) {
            Some(i) => {
                ops.remove(i);
                true
            }
            None => false,
        }
    }

    /// Creates an unplaced `const` op of type `ty` holding `value`.
    pub fn create_const(&mut self, ty: Type, value: Attr, loc: Loc) -> Op {
        let attrs = [("value".to_string(), value)].into_iter().collect();
        self.create_op(Opcode::Const, &[], &[ty], attrs, Vec::new(), loc)
    }

    /// Removes result `index` of `op` (it must be unused), renumbering the rest.
    pub fn remove_op_result(&mut self, op: Op, index: usize) {
        self.ops[op].results.remove(index);
        for (i, &v) in self.ops[op].results.clone().iter().enumerate().skip(index) {
            self.values[v].def = ValueDef::OpResult(op, i as u32);
        }
    }

    /// Appends an argument of type `ty` to `block` (a loop body gaining a carried slot).
    pub fn add_block_arg(&mut self, block: Block, ty: Type) -> Value {
        let index = self.blocks[block].args.len() as u32;
        let v = self.values.push(ValueData { ty, def: ValueDef::BlockArg(block, index) });
        self.blocks[block].args.push(v);
        v
    }

    /// Appends a result of type `ty` to `op`.
    pub fn add_op_result(&mut self, op: Op, ty: Type) -> Value {
        let index = self.ops[op].results.len() as u32;
        let v = self.values.push(ValueData { ty, def: ValueDef::OpResult(op, index) });
        self.ops[op].results.push(v);
        v
    }

    /// Removes argument `index` of `block` (it must be unused), renumbering the rest.
    pub fn remove_block_arg(&mut self, block: Block, index: usize) {
        self.blocks[block].args.remove(index);
        for (i, &v) in self.blocks[block].args.clone().iter().enumerate().skip(index) {
            self.values[v].def = ValueDef::BlockArg(block, i as u32);
        }
    }

    /// Rebuilds the arenas with only the entities the body reaches, numbered
    /// in definition order. Requires every operand to be defined in the body
    /// (a verified function); a pass breaking that is an internal bug.
    pub fn compact(&mut self) {
        let mut values: Arena<Value, ValueData> = Arena::new();
        let mut ops: Arena<Op, OpData> = Arena::new();
        let mut blocks: Arena<Block, BlockData> = Arena::new();
        let mut regions: Arena<Region, RegionData> = Arena::new();
        let mut value_map: HashMap<Value, Value> = HashMap::new();
        let mut op_map: HashMap<Op, Op> = HashMap::new();
        let mut block_map: HashMap<Block, Block> = HashMap::new();
        let mut region_map: HashMap<Region, Region> = HashMap::new();
        // blocks and regions first, since a copied op names its regions before the walk enters them
        for visit in self.preorder() {
            if let Visit::Block(r, b) = visit {
                let nb = blocks.push(BlockData::default());
                block_map.insert(b, nb);
                region_map.insert(r, regions.push(RegionData { block: nb }));
            }
        }
        // values and ops in definition order (the numbering walk)
        for visit in self.preorder() {
            match visit {
                Visit::Block(_, b) => {
                    let nb = block_map[&b];
                    for (i, &a) in self.blocks[b].args.iter().enumerate() {
                        let nv = values.push(ValueData { ty: self.values[a].ty, def: ValueDef::BlockArg(nb, i as u32) });
                        value_map.insert(a, nv);
                        blocks[nb].args.push(nv);
                    }
                }
                Visit::Op(b, op) => {
                    let od = &self.ops[op];
                    let nop = ops.push(OpData {
                        opcode: od.opcode,
                        operands: Vec::new(),
                        results: Vec::new(),
                        attrs: od.attrs.clone(),
                        regions: od.regions.iter().map(|r| region_map[r]).collect(),
                        loc: od.loc,
                    });
                    op_map.insert(op, nop);
                    for (i, &v) in od.results.iter().enumerate() {
                        let nv = values.push(ValueData { ty: self.values[v].ty, def: ValueDef::OpResult(nop, i as u32) });
                        value_map.insert(v, nv);
                        ops[nop].results.push(nv);
                    }
                    blocks[block_map[&b]].ops.push(nop);
                }
            }
        }
        for (&old, &new) in &op_map {
            ops[new].operands = self.ops[old]
                .operands
                .iter()
                .map(|v| match value_map.get(v) {
                    Some(&n) => n,
                    None => panic!("compact: operand {v:?} of {old:?} is not defined in the body (internal bug)"),
                })
                .collect();
        }
        self.body = region_map[&self.body];
        self.values = values;
        self.ops = ops;
        self.blocks = blocks;
        self.regions = regions;
    }
}

#[cfg(test)]
mod tests {
    use crate::{encode, parse, print, verify, Attr};

    const TEXT: &str = r#"func @k(%0: i32, %1: ptr<f32>) attributes {kernel} {
  %2 = "const"() {value = 0} : () -> i32
  %3 = "add"(%0, %2) : (i32, i32) -> i32
  %4 = "for"(%2, %0, %3, %3) ({
  ^bb(%5: i32, %6: i32):
    %7 = "mul"(%6, %5) : (i32, i32) -> i32
    "yield"(%7) : (i32) -> ()
  }) : (i32, i32, i32, i32) -> i32
  %8 = "cast"(%4) : (i32) -> f32
  "store"(%1, %8) {cache = "", eviction = ""} : (ptr<f32>, f32) -> ()
  "return"() : () -> ()
}
"#;

    #[test]
    fn replace_and_erase_then_compact_renumbers() {
        let mut m = parse(TEXT).unwrap();
        let f = &mut m.funcs[crate::Func(0)];
        let entry = f.entry_block();
        let add = f.blocks[entry].ops[1];
        let (x, sum) = (f.args()[0], f.ops[add].results[0]);
        f.replace_all_uses(sum, x);
        assert_eq!(f.use_counts().get(&sum), None);
        assert!(f.erase_op(entry, add));
        assert!(!f.erase_op(entry, add));
        let before = print(&m);
        verify(&m).unwrap();
        let f = &mut m.funcs[crate::Func(0)];
        let stale_ops = f.ops.len();
        f.compact();
        assert_eq!(f.ops.len(), stale_ops - 1);
        verify(&m).unwrap();
        // compaction changes no printed number and no byte
        assert_eq!(print(&m), before);
        assert_eq!(encode(&m), encode(&parse(&before).unwrap()));
        assert!(before.contains(r#""for"(%2, %0, %0, %0)"#), "{before}");
    }

    #[test]
    fn insert_const_and_drop_loop_slot() {
        let mut m = parse(TEXT).unwrap();
        let i32t = m.types.scalar(crate::ScalarKind::I32);
        let f = &mut m.funcs[crate::Func(0)];
        let entry = f.entry_block();
        let store = f.blocks[entry].ops[4];
        let c = f.create_const(i32t, Attr::Int(7), f.ops[store].loc);
        assert!(f.insert_op_before(entry, store, c));
        assert_eq!(f.blocks[entry].ops[4], c);
        assert!(f.blocks_preorder().len() == 2 && f.ops_preorder().len() == 9);
        verify(&m).unwrap();
        // drop the for's only carried value: its result is replaced first
        let f = &mut m.funcs[crate::Func(0)];
        let for_op = f.blocks[entry].ops[2];
        let c7 = f.ops[c].results[0];
        let res = f.ops[for_op].results[0];
        // the cast must use a value defined before it: move the const up front
        f.erase_op(entry, c);
        f.blocks[entry].ops.insert(0, c);
        f.replace_all_uses(res, c7);
        let body = f.regions[f.ops[for_op].regions[0]].block;
        let yld = *f.blocks[body].ops.last().unwrap();
        let mul = f.blocks[body].ops[0];
        f.ops[yld].operands.clear();
        f.erase_op(body, mul);
        f.remove_block_arg(body, 1);
        f.remove_op_result(for_op, 0);
        f.ops[for_op].operands.truncate(3);
        f.compact();
        verify(&m).unwrap();
        let text = print(&m);
        assert!(text.contains(r#""for"(%3, %0, %4) ({"#), "{text}");
        assert_eq!(print(&parse(&text).unwrap()), text);
    }
}
