//! First-fit allocation: buffers live at the same time never overlap; buffers
//! of disjoint intervals share space; bad requests are errors, not panics.
use tritium_analysis::{Allocation, BufferKind, BufferRequest};
use tritium_ir::Op;

fn req(op: u32, bytes: u32, start: u32, end: u32) -> BufferRequest {
    BufferRequest { op: Op(op), kind: BufferKind::Scratch, bytes, align: 16, start, end }
}

#[test]
fn disjoint_intervals_share_offset_zero() {
    let a = Allocation::compute(&[req(0, 100, 0, 0), req(1, 64, 1, 1)]).unwrap();
    assert!(a.buffers.iter().all(|b| b.offset == 0));
    assert_eq!(a.total, 100);
}

#[test]
fn overlapping_intervals_are_placed_apart_and_aligned() {
    let a = Allocation::compute(&[req(0, 100, 0, 2), req(1, 64, 1, 1), req(2, 8, 3, 3)]).unwrap();
    assert_eq!(a.offset_of(Op(0), BufferKind::Scratch), Some(0));
    assert_eq!(a.offset_of(Op(1), BufferKind::Scratch), Some(112));
    assert_eq!(a.offset_of(Op(2), BufferKind::Scratch), Some(0));
    assert_eq!(a.total, 176);
}

#[test]
fn bad_alignment_is_an_error() {
    let mut r = req(0, 4, 0, 0);
    r.align = 3;
    assert!(Allocation::compute(&[r]).is_err());
}

// --- module allocation: virtual buffers of call sites ------------------------

use std::collections::HashMap;

use tritium_analysis::allocation::{op_positions, ModuleAllocation};
use tritium_analysis::CallGraph;
use tritium_ir::{Func, Module};

/// Explicit buffers per function, keyed by the op (by its result name in
/// the text) that allocates them, live until the op `until` (inclusive).
struct Explicit<'s> {
    func: &'s str,
    op: usize,
    until: usize,
    bytes: u32,
}

/// Allocates `text`'s module: `explicit` buffers (op indices in each function's
/// pre-order op numbering) plus one scratch buffer of `scratch[name]` bytes at
/// each function's first op.
fn allocate(text: &str, explicit: &[Explicit], scratch: &[(&str, u32)]) -> (Module, CallGraph, ModuleAllocation) {
    let module = tritium_ir::parse(text).unwrap();
    tritium_ir::verify(&module).unwrap();
    let graph = CallGraph::build(&module).unwrap();
    let positions: HashMap<Func, HashMap<Op, u32>> =
        module.funcs.iter().map(|(id, f)| (id, op_positions(f))).collect();
    let op_at = |f: Func, pos: usize| -> Op {
        *positions[&f].iter().find(|(_, &p)| p as usize == pos).map(|(op, _)| op).unwrap()
    };
    let alloc = ModuleAllocation::compute(
        &module,
        &graph,
        |f| {
            let name = module.funcs[f].name.as_str();
            let mut reqs = Vec::new();
            for e in explicit.iter().filter(|e| e.func == name) {
                let op = op_at(f, e.op);
                reqs.push(BufferRequest { op, kind: BufferKind::Explicit, bytes: e.bytes, align: 16, start: e.op as u32, end: e.until as u32 });
            }
            for &(_, bytes) in scratch.iter().filter(|(n, _)| *n == name) {
                reqs.push(BufferRequest { op: op_at(f, 0), kind: BufferKind::Scratch, bytes, align: 16, start: 0, end: 0 });
            }
            reqs
        },
        |f, op| positions[&f][&op],
    )
    .unwrap();
    (module, graph, alloc)
}

const TWO_SITES: &str = r#"
func @k(%p: ptr<f32>) attributes {kernel} {
  %a = "const"() {value = 1.0} : () -> f32
  %r1 = "call"(%a) {callee = "f"} : (f32) -> f32
  %b = "add"(%r1, %a) : (f32, f32) -> f32
  %r2 = "call"(%b) {callee = "f"} : (f32) -> f32
  "store"(%p, %r2) {cache = "", eviction = ""} : (ptr<f32>, f32) -> ()
  "return"() : () -> ()
}
func @f(%x: f32) -> f32 attributes {noinline} {
  %y = "mul"(%x, %x) : (f32, f32) -> f32
  "return"(%y) : (f32) -> ()
}
"#;

#[test]
fn call_sites_with_different_live_buffers_get_different_virtual_offsets() {
    // a 1000-byte explicit buffer of @k lives over ops 0..=2: across the first call only
    let (module, graph, alloc) =
        allocate(TWO_SITES, &[Explicit { func: "k", op: 0, until: 2, bytes: 1000 }], &[("f", 256)]);
    let k = module.func_by_name("k").unwrap();
    let f = module.func_by_name("f").unwrap();
    assert_eq!(alloc.funcs[&f].total, 256);
    let sites: Vec<Op> = graph.calls[&k].iter().map(|&(op, _)| op).collect();
    assert_eq!(alloc.funcs[&k].offset_of(sites[0], BufferKind::Virtual), Some(1008)); // after 1000, aligned to 16
    assert_eq!(alloc.funcs[&k].offset_of(sites[1], BufferKind::Virtual), Some(0));
    assert_eq!(alloc.funcs[&k].total, 1008 + 256);
    let dump = alloc.dump(&module, &graph);
    assert!(dump.contains("@f total=256"), "{dump}");
    assert!(dump.contains("virtual op1 offset=1008 bytes=256 live=[1, 1] -> @f"), "{dump}");
    assert!(dump.contains("virtual op3 offset=0 bytes=256 live=[3, 3] -> @f"), "{dump}");
    assert!(dump.contains("@f base=1008 via @k:op1") && dump.contains("@f base=0 via @k:op3"), "{dump}");
}

#[test]
fn a_callee_without_shared_memory_reserves_nothing() {
    let (module, graph, alloc) = allocate(TWO_SITES, &[Explicit { func: "k", op: 0, until: 2, bytes: 64 }], &[]);
    let k = module.func_by_name("k").unwrap();
    assert!(alloc.funcs[&k].buffers.iter().all(|b| b.request.kind != BufferKind::Virtual));
    assert_eq!(alloc.funcs[&k].total, 64);
    assert_eq!(alloc.call_paths(&graph, k).len(), 3);
}

/// k calls a (with 512 explicit bytes live) and b (nothing live); a calls b
/// (with 128 bytes of its own live); b calls c.
const DIAMOND: &str = r#"
func @k(%p: ptr<f32>) attributes {kernel} {
  %x = "const"() {value = 2.0} : () -> f32
  %r1 = "call"(%x) {callee = "a"} : (f32) -> f32
  %r2 = "call"(%r1) {callee = "b"} : (f32) -> f32
  "store"(%p, %r2) {cache = "", eviction = ""} : (ptr<f32>, f32) -> ()
  "return"() : () -> ()
}
func @a(%x: f32) -> f32 attributes {noinline} {
  %y = "add"(%x, %x) : (f32, f32) -> f32
  %z = "call"(%y) {callee = "b"} : (f32) -> f32
  "return"(%z) : (f32) -> ()
}
func @b(%x: f32) -> f32 attributes {noinline} {
  %y = "call"(%x) {callee = "c"} : (f32) -> f32
  "return"(%y) : (f32) -> ()
}
func @c(%x: f32) -> f32 attributes {noinline} {
  %y = "mul"(%x, %x) : (f32, f32) -> f32
  "return"(%y) : (f32) -> ()
}
"#;

#[test]
fn a_function_reached_through_two_paths_has_a_base_per_path() {
    let explicit = [Explicit { func: "k", op: 0, until: 1, bytes: 512 }, Explicit { func: "a", op: 0, until: 1, bytes: 128 }];
    let (module, graph, alloc) = allocate(DIAMOND, &explicit, &[("c", 96), ("b", 48)]);
    let id = |n: &str| module.func_by_name(n).unwrap();
    // b: its own 48-byte scratch at op 0 overlaps the call of c at op 0 in time
    assert_eq!(alloc.funcs[&id("c")].total, 96);
    assert_eq!(alloc.funcs[&id("b")].total, 96 + 48);
    // a: 128 explicit bytes live across its call of b
    assert_eq!(alloc.funcs[&id("a")].total, 128 + 144);
    let paths = alloc.call_paths(&graph, id("k"));
    let bases_of = |f: Func| -> Vec<u32> { paths.iter().filter(|p| p.func == f).map(|p| p.base).collect() };
    // k → a at 512; k → a → b at 512 + 128; k → b at 0 (nothing live at k's second call)
    assert_eq!(bases_of(id("a")), vec![512]);
    assert_eq!(bases_of(id("b")), vec![0, 640]);
    // c sits inside b's share wherever b is: first fit puts it before or after b's scratch
    let c_in_b = alloc.funcs[&id("b")].offset_of(graph.calls[&id("b")][0].0, BufferKind::Virtual).unwrap();
    assert_eq!(bases_of(id("c")), vec![c_in_b, 640 + c_in_b]);
    // the kernel's total is the deepest path's end: 512 + 128 + b's 144
    let deepest = paths.iter().map(|p| p.base + alloc.funcs[&p.func].total).max().unwrap();
    assert_eq!(alloc.funcs[&id("k")].total, deepest);
    assert_eq!(deepest, 784);
}

#[test]
fn recursion_is_refused_before_allocation() {
    let text = r#"
func @k() attributes {kernel} {
  "call"() {callee = "f"} : () -> ()
  "return"() : () -> ()
}
func @f() attributes {noinline} {
  "call"() {callee = "f"} : () -> ()
  "return"() : () -> ()
}
"#;
    let module = tritium_ir::parse(text).unwrap();
    let err = CallGraph::build(&module).unwrap_err();
    assert!(err.contains("recursive") && err.contains("@f"), "{err}");
}
