//! Atomics: the `atom.<sem>.<scope>.global.<op>.<type>` each atomic_rmw /
//! atomic_cas must become, predication by mask and by element ownership, the
//! shared-memory broadcast of old values, and ptxas acceptance when ptxas is
//! available (TRITIUM_PTXAS or the repo's venv wheel).

mod common;

use common::{check_ptxas, compile};
use tritium_codegen::{compile_ptx_text, Options};

/// A 256-element tensor atomic of `kind` on `elem`, masked by `offs < n`,
/// with the old values stored to `o`.
fn tensor_rmw(kind: &str, elem: &str, sem: &str, scope: &str) -> String {
    // bf16 values come from bits: an i32 → bf16 cast is not lowered
    let value_def = if elem == "bf16" {
        "%h = \"cast\"(%r) : (tensor<256xi32>) -> tensor<256xi16>\n  %v = \"bitcast\"(%h) : (tensor<256xi16>) -> tensor<256xbf16>".to_string()
    } else {
        format!("%v = \"cast\"(%r) : (tensor<256xi32>) -> tensor<256x{elem}>")
    };
    format!(
        r#"
func @k(%x: ptr<{elem}> {{divisibility = 16}}, %o: ptr<{elem}> {{divisibility = 16}}, %n: i32) attributes {{kernel}} {{
  %r = "arange"() {{end = 256, start = 0}} : () -> tensor<256xi32>
  %ns = "splat"(%n) : (i32) -> tensor<256xi32>
  %m = "cmp"(%r, %ns) {{pred = "lt"}} : (tensor<256xi32>, tensor<256xi32>) -> tensor<256xi1>
  %xs = "splat"(%x) : (ptr<{elem}>) -> tensor<256xptr<{elem}>>
  %xp = "addptr"(%xs, %r) : (tensor<256xptr<{elem}>>, tensor<256xi32>) -> tensor<256xptr<{elem}>>
  {value_def}
  %old = "atomic_rmw"(%xp, %v, %m) {{kind = "{kind}", scope = "{scope}", sem = "{sem}"}} : (tensor<256xptr<{elem}>>, tensor<256x{elem}>, tensor<256xi1>) -> tensor<256x{elem}>
  %os = "splat"(%o) : (ptr<{elem}>) -> tensor<256xptr<{elem}>>
  %op = "addptr"(%os, %r) : (tensor<256xptr<{elem}>>, tensor<256xi32>) -> tensor<256xptr<{elem}>>
  "store"(%op, %old) {{cache = "", eviction = ""}} : (tensor<256xptr<{elem}>>, tensor<256x{elem}>) -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn every_rmw_kind_and_type_becomes_one_atom_per_element() {
    let cases = [
        ("add", "i32", "add.u32"),
        ("add", "u64", "add.u64"),
        ("add", "f32", "add.f32"),
        ("add", "f64", "add.f64"),
        ("add", "f16", "add.noftz.f16"),
        ("max", "i32", "max.s32"),
        ("max", "u32", "max.u32"),
        ("min", "i64", "min.s64"),
        ("min", "u64", "min.u64"),
        ("and", "i32", "and.b32"),
        ("or", "u64", "or.b64"),
        ("xor", "i32", "xor.b32"),
        ("xchg", "f32", "exch.b32"),
        ("xchg", "i64", "exch.b64"),
    ];
    for (kind, elem, instr) in cases {
        for arch in ["sm_80", "sm_90a"] {
            let out = compile(&tensor_rmw(kind, elem, "acq_rel", "gpu"), arch, 4);
            // 256 elements over 128 threads: 2 per thread, each its own predicated atomic
            let needle = format!("atom.acq_rel.gpu.global.{instr}");
            assert_eq!(out.ptx.matches(&needle).count(), 2, "{kind} {elem} {arch}: {}", out.ptx);
            assert!(out.ptx.contains(&format!("@%p")), "{}", out.ptx);
            check_ptxas(&out.ptx, arch, &format!("{kind}_{elem}"));
        }
    }
}

#[test]
fn every_sem_and_scope_is_spelled_out() {
    for sem in ["relaxed", "acquire", "release", "acq_rel"] {
        for scope in ["cta", "gpu", "sys"] {
            let out = compile(&tensor_rmw("add", "i32", sem, scope), "sm_90a", 4);
            assert!(out.ptx.contains(&format!("atom.{sem}.{scope}.global.add.u32")), "{}", out.ptx);
            check_ptxas(&out.ptx, "sm_90a", &format!("{sem}_{scope}"));
            let out = compile(&tensor_rmw("max", "i32", sem, scope), "sm_80", 4);
            check_ptxas(&out.ptx, "sm_80", &format!("max_{sem}_{scope}"));
        }
    }
}

#[test]
fn bf16_add_needs_sm90() {
    let text = tensor_rmw("add", "bf16", "acq_rel", "gpu");
    let out = compile(&text, "sm_90a", 4);
    assert!(out.ptx.contains("atom.acq_rel.gpu.global.add.noftz.bf16"), "{}", out.ptx);
    check_ptxas(&out.ptx, "sm_90a", "bf16");
    let err = compile_ptx_text(&text, &Options::new("sm_80", 4).unwrap()).unwrap_err();
    assert!(err.contains("atomic_rmw") && err.contains("sm_90"), "{err}");
}

#[test]
fn float_max_is_an_error_not_a_panic() {
    let err = compile_ptx_text(&tensor_rmw("max", "f32", "acq_rel", "gpu"), &Options::new("sm_90a", 4).unwrap()).unwrap_err();
    assert!(err.contains("atomic_rmw") && err.contains("Max"), "{err}");
}

const SCALAR_CAS: &str = r#"
func @lock(%l: ptr<i32>, %c: ptr<i32>) attributes {kernel} {
  %zero = "const"() {value = 0} : () -> i32
  %one = "const"() {value = 1} : () -> i32
  %w = "while"(%one) ({
  ^bb(%prev: i32):
    %old = "atomic_cas"(%l, %zero, %one) {scope = "gpu", sem = "acquire"} : (ptr<i32>, i32, i32) -> i32
    %busy = "cmp"(%old, %one) {pred = "eq"} : (i32, i32) -> i1
    "condition"(%busy, %old) : (i1, i32) -> ()
  }, {
  ^bb(%x: i32):
    "yield"(%x) : (i32) -> ()
  }) : (i32) -> i32
  %t = "atomic_rmw"(%c, %one) {kind = "add", scope = "gpu", sem = "relaxed"} : (ptr<i32>, i32) -> i32
  %u = "atomic_rmw"(%l, %zero) {kind = "xchg", scope = "gpu", sem = "release"} : (ptr<i32>, i32) -> i32
  "return"() : () -> ()
}
"#;

#[test]
fn scalar_atomics_issue_once_and_broadcast_the_old_value() {
    for arch in ["sm_80", "sm_90a"] {
        let out = compile(SCALAR_CAS, arch, 4);
        assert!(out.ptx.contains("atom.acquire.gpu.global.cas.b32"), "{}", out.ptx);
        assert!(out.ptx.contains("atom.relaxed.gpu.global.add.u32"), "{}", out.ptx);
        assert!(out.ptx.contains("atom.release.gpu.global.exch.b32"), "{}", out.ptx);
        // the CAS result decides the loop for every thread: it goes through shared memory
        assert!(out.llir.contains("addrspace(3) global"), "{}", out.llir);
        assert!(out.ptx.contains("st.shared"), "{}", out.ptx);
        assert!(out.ptx.contains("bar.sync"), "{}", out.ptx);
        // the unused add and xchg results need no broadcast: exactly one shared buffer
        assert_eq!(out.llir.matches("tritium_atomic_bcast").count(), 3, "{}", out.llir);
        check_ptxas(&out.ptx, arch, "lock");
    }
}

const SMALL_REPLICATED: &str = r#"
func @k(%x: ptr<i32> {divisibility = 16}, %o: ptr<i32> {divisibility = 16}) attributes {kernel} {
  %r = "arange"() {end = 16, start = 0} : () -> tensor<16xi32>
  %xs = "splat"(%x) : (ptr<i32>) -> tensor<16xptr<i32>>
  %xp = "addptr"(%xs, %r) : (tensor<16xptr<i32>>, tensor<16xi32>) -> tensor<16xptr<i32>>
  %c = "const"() {value = 7} : () -> tensor<16xi32>
  %old = "atomic_cas"(%xp, %r, %c) {scope = "cta", sem = "acq_rel"} : (tensor<16xptr<i32>>, tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
  %os = "splat"(%o) : (ptr<i32>) -> tensor<16xptr<i32>>
  %op = "addptr"(%os, %r) : (tensor<16xptr<i32>>, tensor<16xi32>) -> tensor<16xptr<i32>>
  "store"(%op, %old) {cache = "", eviction = ""} : (tensor<16xptr<i32>>, tensor<16xi32>) -> ()
  "return"() : () -> ()
}
"#;

#[test]
fn replicated_elements_have_one_owner() {
    let out = compile(SMALL_REPLICATED, "sm_90a", 4);
    // 16 elements over 128 threads: the atomic is guarded by the thread's copy bits
    assert!(out.ptx.contains("atom.acq_rel.cta.global.cas.b32"), "{}", out.ptx);
    assert!(out.llir.contains("icmp ult i32 %2, 16"), "{}", out.llir);
    assert!(out.ptx.contains("ld.shared"), "{}", out.ptx);
    check_ptxas(&out.ptx, "sm_90a", "replicated");
    check_ptxas(&compile(SMALL_REPLICATED, "sm_80", 4).ptx, "sm_80", "replicated");
}
