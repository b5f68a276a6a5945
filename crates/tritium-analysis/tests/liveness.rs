//! Liveness over structured regions: positions in program order, a value used
//! inside a loop it was defined outside of lives until the loop's end, loop
//! block arguments span the loop, and explicit buffer requests take their
//! intervals from here (so values never live at once share bytes).
use tritium_analysis::{Allocation, BufferKind, Interval, Liveness};
use tritium_ir::{Function, Op, Value};

const KERNEL: &str = r#"
func @k(%0: i32, %1: f32) attributes {kernel} {
  %2 = "const"() {value = 0} : () -> i32
  %3 = "add"(%1, %1) : (f32, f32) -> f32
  %4 = "mul"(%1, %1) : (f32, f32) -> f32
  %5 = "for"(%2, %0, %0, %1) ({
  ^bb(%6: i32, %7: f32):
    %8 = "add"(%7, %3) : (f32, f32) -> f32
    %9 = "mul"(%8, %8) : (f32, f32) -> f32
    "yield"(%9) : (f32) -> ()
  }) : (i32, i32, i32, f32) -> f32
  %10 = "add"(%5, %4) : (f32, f32) -> f32
  %11 = "cmp"(%0, %2) {pred = "gt"} : (i32, i32) -> i1
  %12 = "if"(%11) ({
    %13 = "add"(%10, %10) : (f32, f32) -> f32
    "yield"(%13) : (f32) -> ()
  }, {
    "yield"(%10) : (f32) -> ()
  }) : (i1) -> f32
  "print"(%12) {hex = false, prefix = ""} : (f32) -> ()
  "return"() : () -> ()
}
"#;

/// Ops of `func` in program order (the numbering liveness uses).
fn ops_in_order(live: &Liveness) -> Vec<Op> {
    let mut ops: Vec<(u32, Op)> = live.ops.iter().map(|(&op, iv)| (iv.start, op)).collect();
    ops.sort();
    ops.into_iter().map(|(_, op)| op).collect()
}

fn result(func: &Function, ops: &[Op], pos: usize) -> Value {
    func.ops[ops[pos]].results[0]
}

fn setup() -> (tritium_ir::Module, Liveness) {
    let module = tritium_ir::parse(KERNEL).expect("valid IR");
    let f = module.func_by_name("k").unwrap();
    let live = Liveness::compute(&module.funcs[f]);
    (module, live)
}

#[test]
fn ops_are_numbered_in_program_order_with_regions_inside_their_op() {
    let (module, live) = setup();
    let func = &module.funcs[module.func_by_name("k").unwrap()];
    let ops = ops_in_order(&live);
    let names: Vec<&str> = ops.iter().map(|&o| func.ops[o].opcode.name()).collect();
    assert_eq!(
        names,
        ["const", "add", "mul", "for", "add", "mul", "yield", "add", "cmp", "if", "add", "yield", "yield", "print", "return"]
    );
    assert_eq!(live.ops[&ops[3]], Interval { start: 3, end: 6 }, "the for op spans its body");
    assert_eq!(live.ops[&ops[9]], Interval { start: 9, end: 12 });
}

#[test]
fn a_value_used_inside_a_loop_lives_until_the_loop_ends() {
    let (module, live) = setup();
    let func = &module.funcs[module.func_by_name("k").unwrap()];
    let ops = ops_in_order(&live);
    // %3 is defined before the loop and read at position 4 of every iteration
    assert_eq!(live.interval(result(func, &ops, 1)), Some(Interval { start: 1, end: 6 }));
    // %4 is not used in the loop: it lives from 2 to its use after the loop
    assert_eq!(live.interval(result(func, &ops, 2)), Some(Interval { start: 2, end: 7 }));
    // the loop bound %0 (a function argument) is read by the for op itself
    assert_eq!(live.interval(func.args()[0]), Some(Interval { start: 0, end: 8 }));
}

#[test]
fn loop_carried_values_span_the_loop_and_inner_values_stay_inside() {
    let (module, live) = setup();
    let func = &module.funcs[module.func_by_name("k").unwrap()];
    let ops = ops_in_order(&live);
    let body = func.region_block(func.ops[ops[3]].regions[0]);
    for &arg in &body.args {
        assert_eq!(live.interval(arg), Some(Interval { start: 3, end: 6 }));
    }
    assert_eq!(live.interval(result(func, &ops, 4)), Some(Interval { start: 4, end: 5 }));
    assert_eq!(live.interval(result(func, &ops, 5)), Some(Interval { start: 5, end: 6 }));
    // the loop's result exists once the loop is done
    assert_eq!(live.interval(result(func, &ops, 3)), Some(Interval { start: 6, end: 7 }));
}

#[test]
fn values_used_in_a_branch_are_not_extended_past_their_use() {
    let (module, live) = setup();
    let func = &module.funcs[module.func_by_name("k").unwrap()];
    let ops = ops_in_order(&live);
    assert_eq!(live.interval(result(func, &ops, 7)), Some(Interval { start: 7, end: 12 }));
    assert_eq!(live.interval(result(func, &ops, 9)), Some(Interval { start: 12, end: 13 }));
}

#[test]
fn explicit_buffers_share_bytes_only_when_their_values_never_live_at_once() {
    let (module, live) = setup();
    let func = &module.funcs[module.func_by_name("k").unwrap()];
    let ops = ops_in_order(&live);
    let (a, b, c) = (result(func, &ops, 1), result(func, &ops, 2), result(func, &ops, 10));
    assert!(live.interfere(a, b));
    assert!(!live.interfere(a, c));
    let reqs = live.buffer_requests(func, &[(a, 256, 16), (b, 128, 16), (c, 64, 16)]).unwrap();
    assert!(reqs.iter().all(|r| r.kind == BufferKind::Explicit));
    let alloc = Allocation::compute(&reqs).unwrap();
    assert_eq!(alloc.offset_of(ops[1], BufferKind::Explicit), Some(0));
    assert_eq!(alloc.offset_of(ops[2], BufferKind::Explicit), Some(256));
    assert_eq!(alloc.offset_of(ops[10], BufferKind::Explicit), Some(0));
    assert_eq!(alloc.total, 384);
    // a function argument is not a buffer this function owns
    assert!(live.buffer_requests(func, &[(func.args()[1], 4, 4)]).is_err());
}
