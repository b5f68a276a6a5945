//! Membar on access traces written as text: `w 0..64` / `r 0..64` (a write or
//! read of bytes [0, 64)), `bar` (a barrier that stays), `cand N` (candidate
//! barrier N), `loop { .. }`, `if { .. } else { .. }`, `call F @ BASE`
//! (function F's accesses shifted by BASE), `landed 0..64` (asynchronous
//! writes into [0, 64) landed for every thread). Each test says which candidates
//! must stay and what the function's summary is.
use std::collections::{BTreeSet, HashMap};

use tritium_analysis::{analyze, Access, CandidateId, MembarError, MembarOptions, ModuleMembar, Node, Summary};
use tritium_analysis::CallGraph;
use tritium_ir::Func;

fn parse(text: &str) -> Vec<Node> {
    let spaced = text.replace('{', " { ").replace('}', " } ");
    let tokens: Vec<&str> = spaced.lines().map(|l| l.split('#').next().unwrap()).flat_map(str::split_whitespace).collect();
    let mut pos = 0;
    let nodes = parse_seq(&tokens, &mut pos);
    assert_eq!(pos, tokens.len(), "unparsed trace text at token {pos}");
    nodes
}

fn range(tok: &str) -> (u32, u32) {
    let (lo, hi) = tok.split_once("..").expect("LO..HI");
    (lo.parse().unwrap(), hi.parse().unwrap())
}

fn block(tokens: &[&str], pos: &mut usize) -> Vec<Node> {
    assert_eq!(tokens[*pos], "{");
    *pos += 1;
    let body = parse_seq(tokens, pos);
    assert_eq!(tokens[*pos], "}");
    *pos += 1;
    body
}

fn parse_seq(tokens: &[&str], pos: &mut usize) -> Vec<Node> {
    let mut out = Vec::new();
    while *pos < tokens.len() && tokens[*pos] != "}" {
        let t = tokens[*pos];
        *pos += 1;
        out.push(match t {
            "w" | "r" => {
                let (lo, hi) = range(tokens[*pos]);
                *pos += 1;
                Node::Access(if t == "w" { Access::write(lo, hi) } else { Access::read(lo, hi) })
            }
            "bar" => Node::Barrier(None),
            "landed" => {
                let (lo, hi) = range(tokens[*pos]);
                *pos += 1;
                Node::Landed { lo, hi }
            }
            "cand" => {
                *pos += 1;
                Node::Barrier(Some(CandidateId(tokens[*pos - 1].parse().unwrap())))
            }
            "loop" => Node::Loop(block(tokens, pos)),
            "if" => {
                let then = block(tokens, pos);
                assert_eq!(tokens[*pos], "else");
                *pos += 1;
                Node::If(then, block(tokens, pos))
            }
            "call" => {
                let callee = Func(tokens[*pos].parse().unwrap());
                assert_eq!(tokens[*pos + 1], "@");
                let base = tokens[*pos + 2].parse().unwrap();
                *pos += 3;
                Node::Call { callee, base }
            }
            other => panic!("unknown trace word {other:?}"),
        });
    }
    out
}

fn ids(v: &[u32]) -> BTreeSet<CandidateId> {
    v.iter().map(|&c| CandidateId(c)).collect()
}

fn needed(text: &str) -> BTreeSet<CandidateId> {
    analyze(&parse(text), &HashMap::new(), MembarOptions::default()).unwrap().needed
}

/// One scratch op as codegen traces it: a candidate, its writes, a fixed
/// barrier, its reads.
fn scratch(c: u32, lo: u32, hi: u32) -> String {
    format!("cand {c} w {lo}..{hi} bar r {lo}..{hi}\n")
}

#[test]
fn writes_that_landed_need_no_barrier_before_reads() {
    // a TMA-pipelined loop: wait (landed), the dot reads the ring, the
    // refill writes it: only the write after the reads needs its barrier
    assert_eq!(needed("loop { landed 0..96 cand 0 r 0..96 cand 1 w 0..96 }"), ids(&[1]));
    // without the wait, the read after the previous iteration's write needs one too
    assert_eq!(needed("loop { cand 0 r 0..96 cand 1 w 0..96 }"), ids(&[0, 1]));
    // only writes inside the range landed: others (and reads) stay pending
    assert_eq!(needed("cand 0 w 0..128 landed 0..96 cand 1 r 0..32"), ids(&[1]));
    assert_eq!(needed("cand 0 r 0..32 landed 0..96 cand 1 w 0..32"), ids(&[1]));
}

#[test]
fn a_single_scratch_op_needs_no_leading_barrier() {
    assert_eq!(needed(&scratch(0, 0, 64)), ids(&[]));
}

#[test]
fn two_reads_need_no_barrier() {
    assert_eq!(needed("w 0..64 bar r 0..64 cand 1 r 0..64 cand 2 r 16..32"), ids(&[]));
}

#[test]
fn war_across_two_scratch_ops_at_the_same_offset() {
    let t = scratch(0, 0, 64) + &scratch(1, 0, 32);
    assert_eq!(needed(&t), ids(&[1]));
}

#[test]
fn disjoint_intervals_need_no_barrier() {
    let t = scratch(0, 0, 64) + &scratch(1, 64, 128);
    assert_eq!(needed(&t), ids(&[]));
}

#[test]
fn raw_and_waw_are_conflicts() {
    assert_eq!(needed("cand 0 w 0..8 cand 1 r 4..12"), ids(&[1]));
    assert_eq!(needed("cand 0 w 0..8 cand 1 w 7..9"), ids(&[1]));
    assert_eq!(needed("cand 0 w 0..8 cand 1 w 8..9"), ids(&[]));
}

#[test]
fn the_latest_candidate_is_kept_and_clears_what_it_covers() {
    // candidate 2 alone separates the first op's reads from the third op's writes
    let t = scratch(0, 0, 64) + &scratch(1, 64, 128) + &scratch(2, 0, 128);
    assert_eq!(needed(&t), ids(&[2]));
}

#[test]
fn a_conflict_across_the_back_edge_keeps_the_loop_barrier() {
    assert_eq!(needed(&format!("loop {{ {} }}", scratch(0, 0, 64))), ids(&[0]));
}

#[test]
fn a_loop_whose_body_is_synchronised_needs_nothing_more() {
    // the body's last barrier separates every iteration from the next
    assert_eq!(needed("loop { cand 0 w 0..64 bar r 0..64 bar }"), ids(&[]));
}

#[test]
fn a_loop_that_may_not_run_still_reaches_the_code_after_it() {
    let t = format!("{} loop {{ cand 1 r 256..260 }} {}", scratch(0, 0, 64), scratch(2, 0, 64));
    assert_eq!(needed(&t), ids(&[2]));
}

#[test]
fn an_access_before_a_loop_conflicting_with_its_body() {
    let t = format!("{} loop {{ {} }}", scratch(0, 0, 16), scratch(1, 64, 128));
    // iteration n+1's writes conflict with iteration n's reads, not with op 0
    assert_eq!(needed(&t), ids(&[1]));
    let t = format!("cand 0 w 0..16 loop {{ cand 1 r 0..16 }}");
    assert_eq!(needed(&t), ids(&[1]));
}

#[test]
fn if_else_joins_pending_accesses_of_both_branches() {
    let t = format!("if {{ {} }} else {{ {} }} {}", scratch(0, 0, 64), scratch(1, 128, 192), scratch(2, 128, 160));
    // only the else branch's reads conflict with the op after the join
    assert_eq!(needed(&t), ids(&[2]));
    let t = format!("if {{ {} }} else {{ }} {}", scratch(0, 0, 64), scratch(1, 64, 96));
    assert_eq!(needed(&t), ids(&[]));
}

#[test]
fn a_conflict_inside_one_branch_keeps_that_branch_barrier() {
    let t = format!("{} if {{ {} }} else {{ {} }}", scratch(0, 0, 64), scratch(1, 0, 64), scratch(2, 64, 128));
    assert_eq!(needed(&t), ids(&[1]));
}

#[test]
fn an_unsynchronisable_conflict_is_an_error() {
    let err = analyze(&parse("w 0..8 r 0..8"), &HashMap::new(), MembarOptions::default()).unwrap_err();
    assert!(matches!(err, MembarError::Unsynchronized { .. }), "{err}");
}

#[test]
fn summaries_of_a_scratch_op() {
    let r = analyze(&parse(&scratch(0, 0, 64)), &HashMap::new(), MembarOptions::default()).unwrap();
    assert_eq!(r.summary.entry, vec![Access::write(0, 64)]);
    assert_eq!(r.summary.exit, vec![Access::read(0, 64)]);
    assert!(!r.summary.transparent);
    let r = analyze(&parse("if { bar } else { }"), &HashMap::new(), MembarOptions::default()).unwrap();
    assert!(r.summary.transparent && r.summary.entry.is_empty() && r.summary.exit.is_empty());
}

fn callee_map(f: u32, text: &str) -> HashMap<Func, Summary> {
    let r = analyze(&parse(text), &HashMap::new(), MembarOptions::default()).unwrap();
    HashMap::from([(Func(f), r.summary)])
}

#[test]
fn caller_pending_overlapping_callee_entry_keeps_the_barrier_before_the_call() {
    let callees = callee_map(1, &scratch(0, 0, 32));
    let caller = parse(&(scratch(0, 0, 64) + "cand 1 call 1 @ 0"));
    let r = analyze(&caller, &callees, MembarOptions::default()).unwrap();
    assert_eq!(r.needed, ids(&[1]));
    assert_eq!(r.cross_call, ids(&[1]));
    // the debug switch drops exactly that barrier
    let r = analyze(&caller, &callees, MembarOptions { cross_call_barriers: false }).unwrap();
    assert_eq!(r.needed, ids(&[]));
}

#[test]
fn callee_exit_overlapping_the_callers_next_access_keeps_the_barrier_after() {
    let callees = callee_map(1, &scratch(0, 0, 32));
    let caller = parse(&(String::from("cand 0 call 1 @ 16 ") + &scratch(1, 40, 48)));
    let r = analyze(&caller, &callees, MembarOptions::default()).unwrap();
    // callee's reads of [16, 48) conflict with the caller's writes of [40, 48)
    assert_eq!(r.needed, ids(&[1]));
    assert_eq!(r.summary.entry, vec![Access::write(16, 48)], "the callee's entry is the caller's entry");
    let r = analyze(&caller, &callees, MembarOptions { cross_call_barriers: false }).unwrap();
    assert_eq!(r.needed, ids(&[]));
}

#[test]
fn disjoint_callee_buffers_need_no_barrier() {
    let callees = callee_map(1, &scratch(0, 0, 32));
    let caller = parse(&(scratch(0, 0, 64) + "cand 1 call 1 @ 64 " + &scratch(2, 0, 64)));
    let r = analyze(&caller, &callees, MembarOptions::default()).unwrap();
    // the callee's entry [64, 96) misses op 0's reads, its own barrier orders
    // them before op 2, and op 2 misses the callee's exit reads
    assert_eq!(r.needed, ids(&[]));
    let caller = parse(&(scratch(0, 0, 64) + "cand 1 call 1 @ 64 " + &scratch(2, 90, 128)));
    let r = analyze(&caller, &callees, MembarOptions::default()).unwrap();
    assert_eq!((r.needed, r.cross_call), (ids(&[2]), ids(&[2])));
}

#[test]
fn a_transparent_callee_passes_the_callers_pending_accesses_through() {
    let callees = callee_map(1, "if { bar } else { }");
    let caller = parse(&(scratch(0, 0, 64) + "cand 1 call 1 @ 0 " + &scratch(2, 0, 64)));
    let r = analyze(&caller, &callees, MembarOptions::default()).unwrap();
    assert_eq!(r.needed, ids(&[2]));
}

#[test]
fn a_call_in_a_loop_conflicts_with_itself_across_iterations() {
    let callees = callee_map(1, &scratch(0, 0, 32));
    let r = analyze(&parse("loop { cand 0 call 1 @ 0 }"), &callees, MembarOptions::default()).unwrap();
    assert_eq!(r.needed, ids(&[0]));
}

#[test]
fn module_membar_walks_callees_first_and_shifts_nested_bases() {
    // kernel 0 -> f 1 @ 32 -> g 2 @ 16: g's scratch sits at [48, 64) of the kernel
    let text = r#"
func @k() attributes {kernel} {
  "call"() {callee = "f"} : () -> ()
  "return"() : () -> ()
}
func @f() attributes {noinline} {
  "call"() {callee = "g"} : () -> ()
  "return"() : () -> ()
}
func @g() attributes {noinline} {
  "return"() : () -> ()
}
"#;
    let module = tritium_ir::parse(text).expect("valid module text");
    let graph = CallGraph::build(&module).expect("call graph of a valid module");
    let (k, f, g) = (module.func_by_name("k").unwrap(), module.func_by_name("f").unwrap(), module.func_by_name("g").unwrap());
    let traces: HashMap<Func, Vec<Node>> = HashMap::from([
        (g, parse(&scratch(0, 0, 16))),
        (f, parse(&format!("cand 0 call {} @ 16", g.0))),
        (k, parse(&format!("cand 0 w 48..56 bar r 48..56 cand 1 call {} @ 32", f.0))),
    ]);
    let m = ModuleMembar::compute(&graph, |func| traces[&func].as_slice(), MembarOptions::default()).unwrap();
    assert_eq!(m.funcs[&g].needed, ids(&[]));
    assert_eq!(m.funcs[&f].summary.entry, vec![Access::write(16, 32)]);
    assert_eq!(m.funcs[&f].summary.exit, vec![Access::read(16, 32)]);
    assert_eq!(m.funcs[&k].needed, ids(&[1]));
}

#[test]
fn a_call_to_an_unanalysed_function_is_an_error() {
    let err = analyze(&parse("call 7 @ 0"), &HashMap::new(), MembarOptions::default()).unwrap_err();
    assert_eq!(err, MembarError::UnknownCallee(Func(7)));
}
