//! `print` and `assert`: vprintf with Triton's line format and promoted
//! arguments, once per element owner; `__assertfail` with the op's location
//! then a trap; ptxas acceptance when ptxas is available.

mod common;

use common::{check_ptxas, compile};
use tritium_codegen::{compile_ptx_text, Options};

fn print_kernel(elem: &str, hex: bool) -> String {
    format!(
        r#"
func @p(%x: ptr<{elem}> {{divisibility = 16}}, %s: {elem}) attributes {{kernel}} {{
  %r = "arange"() {{end = 8, start = 0}} : () -> tensor<8xi32>
  %xs = "splat"(%x) : (ptr<{elem}>) -> tensor<8xptr<{elem}>>
  %xp = "addptr"(%xs, %r) : (tensor<8xptr<{elem}>>, tensor<8xi32>) -> tensor<8xptr<{elem}>>
  %v = "load"(%xp) {{cache = "", eviction = "", volatile = false}} : (tensor<8xptr<{elem}>>) -> tensor<8x{elem}>
  "print"(%v) {{hex = {hex}, prefix = " v: "}} : (tensor<8x{elem}>) -> ()
  "print"(%s, %v) {{hex = {hex}, prefix = " 100% two: "}} : ({elem}, tensor<8x{elem}>) -> ()
  "print"() {{hex = false, prefix = " hello"}} : () -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn print_every_scalar_type() {
    let cases = [
        ("i8", "%d"),
        ("i16", "%d"),
        ("i32", "%d"),
        ("u32", "%u"),
        ("i64", "%lld"),
        ("u64", "%llu"),
        ("f16", "%f"),
        ("bf16", "%f"),
        ("f32", "%f"),
        ("f64", "%f"),
    ];
    for (elem, spec) in cases {
        for arch in ["sm_80", "sm_90a"] {
            let out = compile(&print_kernel(elem, false), arch, 4);
            let line = format!("pid (%u, %u, %u) idx (%u) v: {spec}\\0A");
            assert!(out.llir.contains(&line), "{elem}: want {line} in\n{}", out.llir);
            assert!(out.llir.contains(&format!("pid (%u, %u, %u) 100%% two: (operand 0) {spec}")), "{}", out.llir);
            assert!(out.llir.contains(&format!("pid (%u, %u, %u) idx (%u) 100%% two: (operand 1) {spec}")), "{}", out.llir);
            assert!(out.llir.contains("pid (%u, %u, %u) hello\\0A"), "{}", out.llir);
            assert!(out.ptx.contains("call.uni") || out.ptx.contains("vprintf"), "{}", out.ptx);
            if spec == "%f" {
                // varargs promotion: every float reaches vprintf as a double
                assert!(out.llir.contains("double"), "{}", out.llir);
            }
            check_ptxas(&out.ptx, arch, &format!("print_{elem}"));
        }
    }
}

#[test]
fn print_hex_shows_bits() {
    for (elem, spec) in [("f32", "0x%x"), ("f64", "0x%llx"), ("i16", "0x%x"), ("bf16", "0x%x")] {
        let out = compile(&print_kernel(elem, true), "sm_90a", 4);
        assert!(out.llir.contains(&format!("idx (%u) v: {spec}\\0A")), "{elem}: {}", out.llir);
        assert!(!out.llir.contains("fpext"), "{elem}: hex must not convert: {}", out.llir);
        check_ptxas(&out.ptx, "sm_90a", &format!("hex_{elem}"));
    }
}

#[test]
fn print_2d_has_two_indices_and_one_owner_per_element() {
    let text = r#"
func @p(%n: i32) attributes {kernel} {
  %r = "arange"() {end = 4, start = 0} : () -> tensor<4xi32>
  %a = "expand_dims"(%r) {axis = 1} : (tensor<4xi32>) -> tensor<4x1xi32>
  %b = "broadcast"(%a) : (tensor<4x1xi32>) -> tensor<4x4xi32>
  "print"(%b) {hex = false, prefix = " b: "} : (tensor<4x4xi32>) -> ()
  "return"() : () -> ()
}
"#;
    let out = compile(text, "sm_80", 4);
    assert!(out.llir.contains("idx (%u, %u) b: %d"), "{}", out.llir);
    // 16 elements on 128 threads: the print is guarded by the copy bits of the thread id
    assert!(out.llir.contains("icmp ult i32") || out.llir.contains("and i32"), "{}", out.llir);
    check_ptxas(&out.ptx, "sm_80", "print2d");
}

const ASSERT: &str = r#"
func @a(%x: ptr<i32> {divisibility = 16}, %n: i32) attributes {kernel} {
  %r = "arange"() {end = 256, start = 0} : () -> tensor<256xi32>
  %xs = "splat"(%x) : (ptr<i32>) -> tensor<256xptr<i32>>
  %xp = "addptr"(%xs, %r) : (tensor<256xptr<i32>>, tensor<256xi32>) -> tensor<256xptr<i32>>
  %v = "load"(%xp) {cache = "", eviction = "", volatile = false} : (tensor<256xptr<i32>>) -> tensor<256xi32>
  %ns = "splat"(%n) : (i32) -> tensor<256xi32>
  %ok = "cmp"(%v, %ns) {pred = "lt"} : (tensor<256xi32>, tensor<256xi32>) -> tensor<256xi1>
  "assert"(%ok) {msg = "x < n"} : (tensor<256xi1>) -> () loc("kern.py":12:4)
  %z = "const"() {value = 0} : () -> i32
  %pos = "cmp"(%n, %z) {pred = "gt"} : (i32, i32) -> i1
  "assert"(%pos) {msg = "n > 0"} : (i1) -> () loc("kern.py":13:4)
  "store"(%xp, %v) {cache = "", eviction = ""} : (tensor<256xptr<i32>>, tensor<256xi32>) -> ()
  "return"() : () -> ()
}
"#;

#[test]
fn assert_calls_assertfail_with_location_then_traps() {
    for arch in ["sm_80", "sm_90a"] {
        let out = compile(ASSERT, arch, 4);
        assert!(out.llir.contains("declare void @__assertfail(ptr, ptr, i32, ptr, i64)"), "{}", out.llir);
        assert!(out.llir.contains("c\"x < n\\00\"") && out.llir.contains("c\"n > 0\\00\""), "{}", out.llir);
        assert!(out.llir.contains("c\"kern.py\\00\"") && out.llir.contains("c\"a\\00\""), "{}", out.llir);
        assert!(out.llir.contains("i32 12, ptr") && out.llir.contains("i32 13, ptr"), "{}", out.llir);
        assert!(out.llir.contains("llvm.trap"), "{}", out.llir);
        assert!(out.ptx.contains("__assertfail") && out.ptx.contains("trap;"), "{}", out.ptx);
        check_ptxas(&out.ptx, arch, "assert");
    }
}

#[test]
fn assert_on_non_bool_is_an_error() {
    let text = ASSERT.replace(r#""assert"(%pos) {msg = "n > 0"} : (i1) -> ()"#, r#""assert"(%n) {msg = "n > 0"} : (i32) -> ()"#);
    match compile_ptx_text(&text, &Options::new("sm_90a", 4).unwrap()) {
        Err(e) => assert!(e.contains("assert"), "{e}"),
        Ok(_) => panic!("an i32 assert condition compiled"),
    }
}
