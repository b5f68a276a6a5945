//! Barriers membar keeps in emitted PTX: a scratch op's write→read barrier
//! always; the one before its writes only when an earlier shared access may
//! conflict (two reductions at the same scratch offset, a reduction repeated
//! by a loop, a reduction after a branch that did one), never a leading
//! barrier for a kernel's first scratch op nor a trailing one after its last.
mod common;

use common::compile_both;
use tritium_codegen::CompiledPtx;

fn bars(out: &CompiledPtx) -> usize {
    out.ptx.matches("bar.sync").count()
}

/// `%dst = sum(%src)` over a 1-D f32 tensor of `n`: with several warps one
/// partial per warp goes through scratch.
fn sum(dst: &str, src: &str, n: u32, indent: &str) -> String {
    format!(
        r#"{indent}%{dst} = "reduce"(%{src}) ({{
{indent}^bb(%{dst}_a: f32, %{dst}_b: f32):
{indent}  %{dst}_c = "add"(%{dst}_a, %{dst}_b) : (f32, f32) -> f32
{indent}  "yield"(%{dst}_c) : (f32) -> ()
{indent}}}) {{axis = 0}} : (tensor<{n}xf32>) -> f32
"#
    )
}

/// A kernel loading `x[0..n]` as %v, running `body`, storing scalar `%out` to `*y`.
fn kernel(n: u32, body: &str) -> String {
    format!(
        r#"
func @k(%x: ptr<f32> {{divisibility = 16}}, %y: ptr<f32>, %t: i32) attributes {{kernel}} {{
  %r = "arange"() {{end = {n}, start = 0}} : () -> tensor<{n}xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<{n}xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<{n}xptr<f32>>, tensor<{n}xi32>) -> tensor<{n}xptr<f32>>
  %v = "load"(%xp) {{cache = "", eviction = "", volatile = false}} : (tensor<{n}xptr<f32>>) -> tensor<{n}xf32>
{body}  "store"(%y, %out) {{cache = "", eviction = ""}} : (ptr<f32>, f32) -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn a_single_reduction_has_only_its_write_to_read_barrier() {
    let body = sum("out", "v", 1024, "  ");
    let out = compile_both(&kernel(1024, &body), 4, "single");
    assert_eq!(bars(&out), 1, "{}", out.ptx);
    assert_eq!(out.shared, 16);
}

#[test]
fn one_warp_needs_no_scratch_and_no_barrier() {
    let body = sum("out", "v", 1024, "  ");
    let out = compile_both(&kernel(1024, &body), 1, "one_warp");
    assert_eq!(bars(&out), 0, "{}", out.ptx);
}

#[test]
fn back_to_back_reductions_at_the_same_offset_are_separated() {
    // the second reduction's partials overwrite the first one's while slow
    // warps may still read them (WAR): a barrier before its writes
    let body = sum("s1", "v", 1024, "  ")
        + "  %s1s = \"splat\"(%s1) : (f32) -> tensor<1024xf32>\n  %w = \"mul\"(%v, %s1s) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>\n"
        + &sum("out", "w", 1024, "  ");
    let out = compile_both(&kernel(1024, &body), 4, "back_to_back");
    assert_eq!(bars(&out), 3, "{}", out.ptx);
    let out8 = compile_both(&kernel(1024, &body), 8, "back_to_back8");
    assert_eq!(bars(&out8), 3, "{}", out8.ptx);
}

#[test]
fn a_reduction_in_a_loop_is_separated_from_its_next_iteration() {
    let body = format!(
        r#"  %z = "const"() {{value = 0.0}} : () -> f32
  %lb = "const"() {{value = 0}} : () -> i32
  %st = "const"() {{value = 1}} : () -> i32
  %out = "for"(%lb, %t, %st, %z) ({{
  ^bb(%i: i32, %acc: f32):
    %is = "cast"(%i) : (i32) -> f32
    %iss = "splat"(%is) : (f32) -> tensor<1024xf32>
    %w = "add"(%v, %iss) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
{}    %n = "add"(%acc, %s) : (f32, f32) -> f32
    "yield"(%n) : (f32) -> ()
  }}) : (i32, i32, i32, f32) -> f32
"#,
        sum("s", "w", 1024, "    ")
    );
    let out = compile_both(&kernel(1024, &body), 4, "loop");
    // iteration i+1 writes the partials iteration i's slow warps may still read
    assert_eq!(bars(&out), 2, "{}", out.ptx);
}

#[test]
fn a_loop_body_ending_in_a_fixed_barrier_needs_no_leading_one() {
    let body = format!(
        r#"  %lb = "const"() {{value = 0}} : () -> i32
  %st = "const"() {{value = 1}} : () -> i32
  %z = "const"() {{value = 0.0}} : () -> f32
  %out = "for"(%lb, %t, %st, %z) ({{
  ^bb(%i: i32, %acc: f32):
{}    %n = "add"(%acc, %s) : (f32, f32) -> f32
    "barrier"() : () -> ()
    "yield"(%n) : (f32) -> ()
  }}) : (i32, i32, i32, f32) -> f32
"#,
        sum("s", "v", 1024, "    ")
    );
    let out = compile_both(&kernel(1024, &body), 4, "loop_fixed");
    // the reduction's write→read barrier and the user's debug_barrier
    assert_eq!(bars(&out), 2, "{}", out.ptx);
}

/// `%{dst} = sum(%v)` when `%t > 0`, else 0.0: a reduction only in the then-branch.
fn sum_if_positive(dst: &str) -> String {
    format!(
        r#"  %zero = "const"() {{value = 0}} : () -> i32
  %c = "cmp"(%t, %zero) {{pred = "gt"}} : (i32, i32) -> i1
  %{dst} = "if"(%c) ({{
{}    "yield"(%sb) : (f32) -> ()
  }}, {{
    %zf = "const"() {{value = 0.0}} : () -> f32
    "yield"(%zf) : (f32) -> ()
  }}) : (i1) -> f32
"#,
        sum("sb", "v", 1024, "    ")
    )
}

#[test]
fn a_reduction_after_a_branch_that_reduced_is_separated() {
    let body = sum_if_positive("b") + &sum("s2", "v", 1024, "  ") + "  %out = \"add\"(%b, %s2) : (f32, f32) -> f32\n";
    let out = compile_both(&kernel(1024, &body), 4, "if_then_reduce");
    // then-branch: write→read; after the join: a candidate (the then path's
    // reads may be pending) and write→read
    assert_eq!(bars(&out), 3, "{}", out.ptx);
}

#[test]
fn a_reduction_only_inside_a_branch_gets_no_leading_barrier() {
    let out = compile_both(&kernel(1024, &sum_if_positive("out")), 4, "if_only");
    assert_eq!(bars(&out), 1, "{}", out.ptx);
}

#[test]
fn a_reduction_in_a_while_loop_is_separated_across_iterations() {
    let body = format!(
        r#"  %z = "const"() {{value = 0}} : () -> i32
  %zf = "const"() {{value = 0.0}} : () -> f32
  %i2, %out = "while"(%z, %zf) ({{
  ^bb(%i: i32, %acc: f32):
    %go = "cmp"(%i, %t) {{pred = "lt"}} : (i32, i32) -> i1
    "condition"(%go, %i, %acc) : (i1, i32, f32) -> ()
  }}, {{
  ^bb(%j: i32, %a2: f32):
{}    %one = "const"() {{value = 1}} : () -> i32
    %j2 = "add"(%j, %one) : (i32, i32) -> i32
    %a3 = "add"(%a2, %s) : (f32, f32) -> f32
    "yield"(%j2, %a3) : (i32, f32) -> ()
  }}) : (i32, f32) -> (i32, f32)
"#,
        sum("s", "v", 1024, "    ")
    );
    let out = compile_both(&kernel(1024, &body), 4, "while");
    assert_eq!(bars(&out), 2, "{}", out.ptx);
}
