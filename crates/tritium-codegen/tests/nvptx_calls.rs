//! noinline functions as real calls: `.func` with `call.uni`, scalar and
//! tensor arguments and results (each thread passes its own registers),
//! calls in loops, nested calls, callees with scratch shared memory (a base
//! per call path, the kernel's size the max over paths), layouts converted at
//! call sites, and ptxas accepting it all for sm_80 and sm_90a.
mod common;

use common::compile_both;
use tritium_codegen::{compile_ptx_text, Options};

const SCALAR: &str = r#"
func @k(%p: ptr<f32>, %a: f32, %n: i32) attributes {kernel} {
  %r = "call"(%a, %n) {callee = "axpy"} : (f32, i32) -> f32
  "store"(%p, %r) {cache = "", eviction = ""} : (ptr<f32>, f32) -> ()
  "return"() : () -> ()
}
func @axpy(%x: f32, %n: i32) -> f32 attributes {noinline} {
  %f = "cast"(%n) : (i32) -> f32
  %y = "fma"(%x, %f, %x) : (f32, f32, f32) -> f32
  "return"(%y) : (f32) -> ()
}
"#;

#[test]
fn scalar_call_is_a_func_reached_with_call_uni() {
    let out = compile_both(SCALAR, 4, "scalar");
    assert!(out.ptx.contains(".func"), "{}", out.ptx);
    assert!(out.ptx.contains("call.uni"), "{}", out.ptx);
    assert!(out.ptx.contains(".entry k"), "{}", out.ptx);
    assert_eq!(out.kernels, vec!["k".to_string()]);
    assert_eq!(out.shared, 0);
    assert!(out.llir.contains("noinline"), "{}", out.llir);
    assert!(out.llir.contains("define internal"), "{}", out.llir);
}

/// A 1024-element tensor argument and result: 8 f32 per thread with 4 warps
/// and 16-byte chunks (as in benches/kernels/noinline_call.tir).
fn tensor_kernel(callee_body: &str, n: u32, ret: &str) -> String {
    format!(
        r#"
func @k(%x: ptr<f32> {{divisibility = 16}}, %y: ptr<f32> {{divisibility = 16}}, %s: f32) attributes {{kernel}} {{
  %r = "arange"() {{end = {n}, start = 0}} : () -> tensor<{n}xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<{n}xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<{n}xptr<f32>>, tensor<{n}xi32>) -> tensor<{n}xptr<f32>>
  %v = "load"(%xp) {{cache = "", eviction = "", volatile = false}} : (tensor<{n}xptr<f32>>) -> tensor<{n}xf32>
  %w = "call"(%v, %s) {{callee = "f"}} : (tensor<{n}xf32>, f32) -> {ret}
  %ys = "splat"(%y) : (ptr<f32>) -> tensor<{n}xptr<f32>>
  %yp = "addptr"(%ys, %r) : (tensor<{n}xptr<f32>>, tensor<{n}xi32>) -> tensor<{n}xptr<f32>>
  "store"(%yp, %w) {{cache = "", eviction = ""}} : (tensor<{n}xptr<f32>>, {ret}) -> ()
  "return"() : () -> ()
}}
func @f(%a: tensor<{n}xf32>, %s: f32) -> {ret} attributes {{noinline}} {{
{callee_body}
}}
"#
    )
}

#[test]
fn tensor_arguments_and_results_pass_each_threads_registers() {
    let body = r#"
  %ss = "splat"(%s) : (f32) -> tensor<1024xf32>
  %m = "mul"(%a, %ss) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  "return"(%m) : (tensor<1024xf32>) -> ()"#;
    let out = compile_both(&tensor_kernel(body, 1024, "tensor<1024xf32>"), 4, "tensor");
    // 8 registers of the tensor + the scalar + the shared-memory base
    let func = out.llir.split("define internal").nth(1).expect("a device function");
    let header = func.lines().next().unwrap();
    // the struct of 8 result registers, then 8 + 1 float parameters (LLVM drops
    // the unused shared-memory base of a function that needs none)
    assert!(header.contains("{ float, float, float, float, float, float, float, float } @f("), "{header}");
    assert!(header.contains("float %8)"), "{header}");
    assert!(out.ptx.contains("call.uni"), "{}", out.ptx);
    assert!(out.ptx.contains("ld.global.v4.f32") && out.ptx.contains("st.global.v4.f32"), "{}", out.ptx);
}

#[test]
fn a_callee_layout_other_than_the_callers_is_converted_at_the_call() {
    // the caller's 1-D canonical layout comes from its 1024-element tensors,
    // the callee's from its own 64-element ones: the call converts through scratch
    let text = r#"
func @k(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}) attributes {kernel} {
  %r = "arange"() {end = 1024, start = 0} : () -> tensor<1024xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<1024xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<1024xptr<f32>>, tensor<1024xi32>) -> tensor<1024xptr<f32>>
  %v = "load"(%xp) {cache = "", eviction = "", volatile = false} : (tensor<1024xptr<f32>>) -> tensor<1024xf32>
  %q = "reshape"(%v) {can_reorder = false} : (tensor<1024xf32>) -> tensor<16x64xf32>
  %s = "reduce"(%q) ({
  ^bb(%a: f32, %b: f32):
    %c = "add"(%a, %b) : (f32, f32) -> f32
    "yield"(%c) : (f32) -> ()
  }) {axis = 0} : (tensor<16x64xf32>) -> tensor<64xf32>
  %w = "call"(%s) {callee = "g"} : (tensor<64xf32>) -> tensor<64xf32>
  %r2 = "arange"() {end = 64, start = 0} : () -> tensor<64xi32>
  %ys = "splat"(%y) : (ptr<f32>) -> tensor<64xptr<f32>>
  %yp = "addptr"(%ys, %r2) : (tensor<64xptr<f32>>, tensor<64xi32>) -> tensor<64xptr<f32>>
  "store"(%yp, %w) {cache = "", eviction = ""} : (tensor<64xptr<f32>>, tensor<64xf32>) -> ()
  "return"() : () -> ()
}
func @g(%a: tensor<64xf32>) -> tensor<64xf32> attributes {noinline} {
  %m = "add"(%a, %a) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  "return"(%m) : (tensor<64xf32>) -> ()
}
"#;
    let out = compile_both(text, 4, "convert");
    assert!(out.ptx.contains("call.uni") && out.ptx.contains("st.shared"), "{}", out.ptx);
    assert!(out.allocation.contains("@g total=0"), "{}", out.allocation);
}

#[test]
fn call_inside_a_loop_carries_tensor_results() {
    let text = r#"
func @k(%x: ptr<f32> {divisibility = 16}, %n: i32) attributes {kernel} {
  %r = "arange"() {end = 256, start = 0} : () -> tensor<256xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<256xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<256xptr<f32>>, tensor<256xi32>) -> tensor<256xptr<f32>>
  %v = "load"(%xp) {cache = "", eviction = "", volatile = false} : (tensor<256xptr<f32>>) -> tensor<256xf32>
  %lb = "const"() {value = 0} : () -> i32
  %st = "const"() {value = 1} : () -> i32
  %out = "for"(%lb, %n, %st, %v) ({
  ^bb(%i: i32, %acc: tensor<256xf32>):
    %fi = "cast"(%i) : (i32) -> f32
    %nx = "call"(%acc, %fi) {callee = "step"} : (tensor<256xf32>, f32) -> tensor<256xf32>
    "yield"(%nx) : (tensor<256xf32>) -> ()
  }) : (i32, i32, i32, tensor<256xf32>) -> tensor<256xf32>
  "store"(%xp, %out) {cache = "", eviction = ""} : (tensor<256xptr<f32>>, tensor<256xf32>) -> ()
  "return"() : () -> ()
}
func @step(%a: tensor<256xf32>, %t: f32) -> tensor<256xf32> attributes {noinline} {
  %ts = "splat"(%t) : (f32) -> tensor<256xf32>
  %m = "fma"(%a, %ts, %a) : (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  "return"(%m) : (tensor<256xf32>) -> ()
}
"#;
    let out = compile_both(text, 2, "loop");
    assert!(out.ptx.contains("call.uni"), "{}", out.ptx);
}

/// k → a → b → c and k → b → c; c reduces a 512-element tensor over 4 warps (scratch).
const NESTED: &str = r#"
func @k(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32>) attributes {kernel} {
  %r = "arange"() {end = 512, start = 0} : () -> tensor<512xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<512xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<512xptr<f32>>, tensor<512xi32>) -> tensor<512xptr<f32>>
  %v = "load"(%xp) {cache = "", eviction = "", volatile = false} : (tensor<512xptr<f32>>) -> tensor<512xf32>
  %s1 = "call"(%v) {callee = "a"} : (tensor<512xf32>) -> f32
  %s2 = "call"(%v) {callee = "b"} : (tensor<512xf32>) -> f32
  %s = "add"(%s1, %s2) : (f32, f32) -> f32
  "store"(%y, %s) {cache = "", eviction = ""} : (ptr<f32>, f32) -> ()
  "return"() : () -> ()
}
func @a(%v: tensor<512xf32>) -> f32 attributes {noinline} {
  %w = "add"(%v, %v) : (tensor<512xf32>, tensor<512xf32>) -> tensor<512xf32>
  %s = "call"(%w) {callee = "b"} : (tensor<512xf32>) -> f32
  "return"(%s) : (f32) -> ()
}
func @b(%v: tensor<512xf32>) -> f32 attributes {noinline} {
  %s = "call"(%v) {callee = "c"} : (tensor<512xf32>) -> f32
  %t = "mul"(%s, %s) : (f32, f32) -> f32
  "return"(%t) : (f32) -> ()
}
func @c(%v: tensor<512xf32>) -> f32 attributes {noinline} {
  %s = "reduce"(%v) ({
  ^bb(%p: f32, %q: f32):
    %o = "add"(%p, %q) : (f32, f32) -> f32
    "yield"(%o) : (f32) -> ()
  }) {axis = 0} : (tensor<512xf32>) -> f32
  "return"(%s) : (f32) -> ()
}
"#;

#[test]
fn nested_calls_through_two_paths_share_the_callee_and_its_scratch() {
    let out = compile_both(NESTED, 4, "nested");
    // one .func each for a, b, c: b and c are compiled once
    for f in ["a", "b", "c"] {
        assert_eq!(out.ptx.matches(&format!(".func  (.param .b32 func_retval0) {f}(")).count(), 1, "{f}\n{}", out.ptx);
    }
    assert_eq!(out.ptx.matches("call.uni").count(), 4, "{}", out.ptx);
    // c: 4 warp partials of f32; everything else reserves c's 16 bytes through virtual buffers
    assert!(out.allocation.contains("@c total=16"), "{}", out.allocation);
    assert!(out.allocation.contains("@b total=16"), "{}", out.allocation);
    assert!(out.allocation.contains("@a total=16"), "{}", out.allocation);
    assert!(out.allocation.contains("@k total=16"), "{}", out.allocation);
    assert_eq!(out.shared, 16);
    // c is reached through k>a>b>c and k>b>c
    assert_eq!(out.allocation.matches("@c base=0 via").count(), 2, "{}", out.allocation);
    // the reduction's own barrier, at least
    assert!(out.ptx.contains("bar.sync"), "{}", out.ptx);
}

#[test]
fn an_unreached_helper_calling_a_lowered_function_is_ignored() {
    // @h is a helper the frontend kept after inlining: nothing reaches it, and
    // its call to @c (which needs scratch) must not take part in any analysis
    let text = format!("{NESTED}{}", r#"
func @h(%v: tensor<512xf32>) -> f32 attributes {noinline} {
  %s = "call"(%v) {callee = "c"} : (tensor<512xf32>) -> f32
  "return"(%s) : (f32) -> ()
}
"#);
    let out = compile_both(&text, 4, "unreached");
    assert!(!out.ptx.contains(") h("), "{}", out.ptx);
    assert!(!out.allocation.contains("@h"), "{}", out.allocation);
    assert_eq!(out.shared, 16);
}

#[test]
fn callee_with_reduction_called_twice_keeps_one_function() {
    let body = r#"
  %s0 = "reduce"(%a) ({
  ^bb(%p: f32, %q: f32):
    %o = "max"(%p, %q) : (f32, f32) -> f32
    "yield"(%o) : (f32) -> ()
  }) {axis = 0} : (tensor<1024xf32>) -> f32
  %s1 = "add"(%s0, %s) : (f32, f32) -> f32
  %ss = "splat"(%s1) : (f32) -> tensor<1024xf32>
  %m = "sub"(%a, %ss) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  "return"(%m) : (tensor<1024xf32>) -> ()"#;
    let text = tensor_kernel(body, 1024, "tensor<1024xf32>");
    // a second call site on the first call's result
    let text = text.replace(
        r#"  %ys = "splat"(%y)"#,
        "  %w2 = \"call\"(%w, %s) {callee = \"f\"} : (tensor<1024xf32>, f32) -> tensor<1024xf32>\n  %ys = \"splat\"(%y)",
    );
    let text = text.replace(r#""store"(%yp, %w)"#, r#""store"(%yp, %w2)"#);
    let out = compile_both(&text, 4, "twice");
    assert_eq!(out.ptx.matches("call.uni").count(), 2, "{}", out.ptx);
    assert_eq!(out.shared, 16);
    assert_eq!(out.allocation.matches("virtual").count(), 2, "{}", out.allocation);
}

#[test]
fn bool_tensors_and_pointer_tensors_cross_calls() {
    let text = r#"
func @k(%x: ptr<f32> {divisibility = 16}, %n: i32) attributes {kernel} {
  %r = "arange"() {end = 128, start = 0} : () -> tensor<128xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<128xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<128xptr<f32>>, tensor<128xi32>) -> tensor<128xptr<f32>>
  %ns = "splat"(%n) : (i32) -> tensor<128xi32>
  %m = "cmp"(%r, %ns) {pred = "lt"} : (tensor<128xi32>, tensor<128xi32>) -> tensor<128xi1>
  %mm, %pp = "call"(%m, %xp) {callee = "f"} : (tensor<128xi1>, tensor<128xptr<f32>>) -> (tensor<128xi1>, tensor<128xptr<f32>>)
  %z = "const"() {value = 1.0} : () -> f32
  %zs = "splat"(%z) : (f32) -> tensor<128xf32>
  "store"(%pp, %zs, %mm) {cache = "", eviction = ""} : (tensor<128xptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> ()
  "return"() : () -> ()
}
func @f(%m: tensor<128xi1>, %p: tensor<128xptr<f32>>) -> (tensor<128xi1>, tensor<128xptr<f32>>) attributes {noinline} {
  %t = "const"() {value = true} : () -> i1
  %ts = "splat"(%t) : (i1) -> tensor<128xi1>
  %nm = "xor"(%m, %ts) : (tensor<128xi1>, tensor<128xi1>) -> tensor<128xi1>
  "return"(%nm, %p) : (tensor<128xi1>, tensor<128xptr<f32>>) -> ()
}
"#;
    compile_both(text, 4, "bool_ptr");
}

#[test]
fn calling_a_kernel_or_an_unknown_function_is_an_error() {
    let text = r#"
func @k() attributes {kernel} {
  "call"() {callee = "k2"} : () -> ()
  "return"() : () -> ()
}
func @k2() attributes {kernel} {
  "return"() : () -> ()
}
"#;
    let err = compile_ptx_text(text, &Options::new("sm_90a", 4).unwrap()).unwrap_err();
    assert!(err.contains("kernel"), "{err}");
    let text = r#"
func @k() attributes {kernel} {
  "call"() {callee = "f"} : () -> ()
  "return"() : () -> ()
}
func @f() attributes {noinline} {
  "call"() {callee = "k"} : () -> ()
  "return"() : () -> ()
}
"#;
    let err = compile_ptx_text(text, &Options::new("sm_90a", 4).unwrap()).unwrap_err();
    assert!(err.contains("recursive"), "{err}");
}

#[test]
fn without_cross_call_barriers_the_callee_entry_has_none() {
    let mut opts = Options::new("sm_90a", 4).unwrap();
    let with = compile_ptx_text(NESTED, &opts).unwrap();
    opts.cross_call_barriers = false;
    let without = compile_ptx_text(NESTED, &opts).unwrap();
    assert!(without.ptx.matches("bar.sync").count() < with.ptx.matches("bar.sync").count());
}
