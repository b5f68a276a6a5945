//! Control flow: `for`/`if`/`while` with carried scalars and tensors lower to
//! phi nodes; loop comparisons follow the bounds' signedness.
mod common;

use common::compile;

fn for_kernel(int: &str) -> String {
    format!(
        r#"
func @k(%x: ptr<f32> {{divisibility = 16}}, %lb: {int}, %ub: {int}, %st: {int}) attributes {{kernel}} {{
  %r = "arange"() {{end = 1024, start = 0}} : () -> tensor<1024xi32>
  %s = "splat"(%x) : (ptr<f32>) -> tensor<1024xptr<f32>>
  %p = "addptr"(%s, %r) : (tensor<1024xptr<f32>>, tensor<1024xi32>) -> tensor<1024xptr<f32>>
  %z = "const"() {{value = 0.0}} : () -> tensor<1024xf32>
  %zs = "const"() {{value = 0}} : () -> {int}
  %acc, %cnt = "for"(%lb, %ub, %st, %z, %zs) ({{
  ^bb(%i: {int}, %a: tensor<1024xf32>, %c: {int}):
    %v = "load"(%p) {{cache = "", eviction = "", volatile = false}} : (tensor<1024xptr<f32>>) -> tensor<1024xf32>
    %n = "add"(%a, %v) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    %c2 = "add"(%c, %i) : ({int}, {int}) -> {int}
    "yield"(%n, %c2) : (tensor<1024xf32>, {int}) -> ()
  }}) : ({int}, {int}, {int}, tensor<1024xf32>, {int}) -> (tensor<1024xf32>, {int})
  "store"(%p, %acc) {{cache = "", eviction = ""}} : (tensor<1024xptr<f32>>, tensor<1024xf32>) -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn for_carries_tensors_as_per_register_phis() {
    let out = compile(&for_kernel("i32"), "sm_90a", 4);
    // 8 f32 registers per thread carried + the counter + the induction variable
    assert!(out.llir.contains("icmp slt i32"), "{}", out.llir);
    assert!(out.llir.matches("phi float").count() >= 8, "{}", out.llir);
    assert!(out.ptx.contains("setp.lt.s32") || out.ptx.contains("setp.ge.s32"), "{}", out.ptx);
}

#[test]
fn unsigned_and_64_bit_bounds() {
    let out = compile(&for_kernel("u32"), "sm_90a", 4);
    assert!(out.llir.contains("icmp ult i32"), "{}", out.llir);
    let out = compile(&for_kernel("i64"), "sm_90a", 4);
    assert!(out.llir.contains("icmp slt i64"), "{}", out.llir);
}

#[test]
fn if_with_results_and_nested_while() {
    let text = r#"
func @k(%x: ptr<i32>, %n: i32) attributes {kernel} {
  %z = "const"() {value = 0} : () -> i32
  %one = "const"() {value = 1} : () -> i32
  %c = "cmp"(%n, %z) {pred = "gt"} : (i32, i32) -> i1
  %r = "if"(%c) ({
    %w = "while"(%n) ({
    ^bb(%a: i32):
      %k = "cmp"(%a, %one) {pred = "gt"} : (i32, i32) -> i1
      "condition"(%k, %a) : (i1, i32) -> ()
    }, {
    ^bb(%b: i32):
      %h = "shr"(%b, %one) : (i32, i32) -> i32
      "yield"(%h) : (i32) -> ()
    }) : (i32) -> i32
    "yield"(%w) : (i32) -> ()
  }, {
    %m = "sub"(%z, %n) : (i32, i32) -> i32
    "yield"(%m) : (i32) -> ()
  }) : (i1) -> i32
  "store"(%x, %r) {cache = "", eviction = ""} : (ptr<i32>, i32) -> ()
  "return"() : () -> ()
}
"#;
    let out = compile(text, "sm_90a", 4);
    assert!(out.ptx.contains(".entry k("), "{}", out.ptx);
    // LLVM folds the halving loop to its closed form: 1 for n > 0, else -n
    assert!(out.llir.contains("sub i32 0,") && out.llir.contains("select"), "{}", out.llir);
}
