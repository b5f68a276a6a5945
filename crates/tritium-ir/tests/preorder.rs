//! `Function::preorder` is the one walk behind value numbering (print,
//! encode), `compact` and the passes' block/op lists; these tests pin its
//! order and its tolerance of dangling ids, which print and encode rely on.
use tritium_ir::codec::number_values;
use tritium_ir::rewrite::Visit;
use tritium_ir::{parse, print, Func, Function, Op, Value};

/// An `if` whose then-block holds a `for`, so the walk must finish a nested
/// region before the sibling region and before the next op of the outer block.
const NESTED: &str = r#"func @k(%0: i32, %1: i32) attributes {kernel} {
  %2 = "cmp"(%0, %1) {pred = "lt"} : (i32, i32) -> i1
  %3 = "if"(%2) ({
    %4 = "for"(%0, %1, %1, %0) ({
    ^bb(%5: i32, %6: i32):
      %7 = "add"(%6, %5) : (i32, i32) -> i32
      "yield"(%7) : (i32) -> ()
    }) : (i32, i32, i32, i32) -> i32
    "yield"(%4) : (i32) -> ()
  }, {
    "yield"(%1) : (i32) -> ()
  }) : (i1) -> i32
  %8 = "mul"(%3, %3) : (i32, i32) -> i32
  "return"() : () -> ()
}
"#;

/// The walk as text: `{` for entering a block, an op's name for an op.
fn steps(f: &Function) -> Vec<&'static str> {
    f.preorder()
        .map(|visit| match visit {
            Visit::Block(..) => "{",
            Visit::Op(_, op) => f.ops[op].opcode.info().name,
        })
        .collect()
}

/// Block arguments and op results in the order the walk defines them.
fn defined_in_walk_order(f: &Function) -> Vec<Value> {
    f.preorder()
        .flat_map(|visit| match visit {
            Visit::Block(_, b) => f.blocks[b].args.clone(),
            Visit::Op(_, op) => f.ops[op].results.clone(),
        })
        .collect()
}

#[test]
fn walk_enters_each_region_fully_before_the_next() {
    let m = parse(NESTED).unwrap();
    let f = &m.funcs[Func(0)];
    assert_eq!(
        steps(f),
        ["{", "cmp", "if", "{", "for", "{", "add", "yield", "yield", "{", "yield", "mul", "return"]
    );
}

#[test]
fn block_and_op_lists_are_the_walk_filtered() {
    let m = parse(NESTED).unwrap();
    let f = &m.funcs[Func(0)];
    let blocks: Vec<_> = f.preorder().filter_map(|v| if let Visit::Block(_, b) = v { Some(b) } else { None }).collect();
    let ops: Vec<_> = f.preorder().filter_map(|v| if let Visit::Op(b, op) = v { Some((b, op)) } else { None }).collect();
    assert_eq!(f.blocks_preorder(), blocks);
    assert_eq!(f.ops_preorder(), ops);
    // each block is entered through the region that holds it
    for visit in f.preorder() {
        if let Visit::Block(r, b) = visit {
            assert_eq!(f.regions[r].block, b);
        }
    }
}

#[test]
fn printed_numbers_follow_the_walk() {
    let m = parse(NESTED).unwrap();
    let f = &m.funcs[Func(0)];
    let numbers = number_values(f);
    let defined = defined_in_walk_order(f);
    assert_eq!(defined.len(), 9);
    for (i, v) in defined.iter().enumerate() {
        assert_eq!(numbers[v], i as u64);
    }
    assert_eq!(print(&m), NESTED);
}

#[test]
fn dangling_op_is_skipped_and_its_siblings_still_walked() {
    let mut m = parse(NESTED).unwrap();
    let f = &mut m.funcs[Func(0)];
    let entry = f.entry_block();
    let before = number_values(f);
    let missing = Op(f.ops.len() as u32 + 10);
    f.blocks[entry].ops.insert(1, missing);
    assert!(f.ops_preorder().iter().all(|&(_, op)| op != missing));
    assert_eq!(steps(f).len(), 13);
    assert_eq!(number_values(f), before);
}
