//! Scans (in-thread, warp shuffles, scratch across warps, reverse, several
//! operands, any axis) and the 2-D contiguity facts that give 16-byte
//! vectors along the last dim of `base + rows[:, None] * stride + cols[None, :]`.
mod common;

use common::compile;
use tritium_codegen::{compile_ptx_text, Options};

/// out[i] = scan(x)[i] over a 1-D block of `n` elements of `ty`.
fn scan_1d(n: u32, ty: &str, combine: &str, reverse: bool) -> String {
    format!(
        r#"
func @k(%x: ptr<{ty}> {{divisibility = 16}}, %y: ptr<{ty}> {{divisibility = 16}}) attributes {{kernel}} {{
  %r = "arange"() {{end = {n}, start = 0}} : () -> tensor<{n}xi32>
  %xs = "splat"(%x) : (ptr<{ty}>) -> tensor<{n}xptr<{ty}>>
  %xp = "addptr"(%xs, %r) : (tensor<{n}xptr<{ty}>>, tensor<{n}xi32>) -> tensor<{n}xptr<{ty}>>
  %v = "load"(%xp) {{cache = "", eviction = "", volatile = false}} : (tensor<{n}xptr<{ty}>>) -> tensor<{n}x{ty}>
  %s = "scan"(%v) ({{
  ^bb(%a: {ty}, %b: {ty}):
    %c = "{combine}"(%a, %b) : ({ty}, {ty}) -> {ty}
    "yield"(%c) : ({ty}) -> ()
  }}) {{axis = 0, reverse = {reverse}}} : (tensor<{n}x{ty}>) -> tensor<{n}x{ty}>
  %ys = "splat"(%y) : (ptr<{ty}>) -> tensor<{n}xptr<{ty}>>
  %yp = "addptr"(%ys, %r) : (tensor<{n}xptr<{ty}>>, tensor<{n}xi32>) -> tensor<{n}xptr<{ty}>>
  "store"(%yp, %s) {{cache = "", eviction = ""}} : (tensor<{n}xptr<{ty}>>, tensor<{n}x{ty}>) -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn cumsum_shuffles_within_warps_and_exchanges_warp_totals() {
    let out = compile(&scan_1d(1024, "f32", "add", false), "sm_90a", 4);
    // 4 f32 per thread, 32 lanes: 5 Hillis-Steele steps + exclusive + total shuffles per rep
    assert!(out.ptx.contains("shfl.sync.idx.b32"), "{}", out.ptx);
    assert!(out.ptx.contains("bar.sync"), "{}", out.ptx);
    // rows(1) × reps(2) × warps(4) f32 totals
    assert_eq!(out.shared, 32);
    assert!(out.ptx.contains("st.shared."), "{}", out.ptx);
}

#[test]
fn single_warp_scan_needs_no_shared_memory() {
    let out = compile(&scan_1d(128, "i32", "add", false), "sm_90a", 1);
    assert_eq!(out.shared, 0);
    assert!(!out.ptx.contains("bar.sync"), "{}", out.ptx);
    assert!(out.ptx.contains("shfl.sync.idx.b32"), "{}", out.ptx);
}

#[test]
fn reverse_scan_shuffles_from_higher_lanes() {
    let fwd = compile(&scan_1d(256, "f32", "mul", false), "sm_90a", 2);
    let rev = compile(&scan_1d(256, "f32", "mul", true), "sm_90a", 2);
    // a warp's total sits in its last lane in scan order: 31 forward, 0 in reverse
    assert!(fwd.ptx.contains(", 31, 31, -1;"), "{}", fwd.ptx);
    assert!(rev.ptx.contains(", 0, 31, -1;"), "{}", rev.ptx);
    assert!(!rev.ptx.contains(", 31, 31, -1;"), "{}", rev.ptx);
    assert_eq!(fwd.shared, rev.shared);
}

#[test]
fn big_blocks_and_many_warps() {
    for (n, w) in [(8192, 8), (8192, 1), (4096, 4), (32, 8), (2, 4)] {
        let out = compile(&scan_1d(n, "f32", "add", false), "sm_90a", w);
        assert!(out.ptx.contains(".entry k("), "{n} {w}");
    }
    let out = compile(&scan_1d(1024, "f64", "max", true), "sm_90a", 4);
    assert!(out.ptx.contains("shfl.sync.idx.b32"), "{}", out.ptx);
    let out = compile(&scan_1d(512, "f16", "add", false), "sm_90a", 4);
    assert!(out.ptx.contains(".entry k("));
}

#[test]
fn value_index_pair_scan() {
    let text = r#"
func @k(%x: ptr<f32> {divisibility = 16}, %y: ptr<i32> {divisibility = 16}) attributes {kernel} {
  %r = "arange"() {end = 512, start = 0} : () -> tensor<512xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<512xptr<f32>>
  %xp = "addptr"(%xs, %r) : (tensor<512xptr<f32>>, tensor<512xi32>) -> tensor<512xptr<f32>>
  %v = "load"(%xp) {cache = "", eviction = "", volatile = false} : (tensor<512xptr<f32>>) -> tensor<512xf32>
  %m, %i = "scan"(%v, %r) ({
  ^bb(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %gt = "cmp"(%b, %a) {pred = "gt"} : (f32, f32) -> i1
    %c = "select"(%gt, %b, %a) : (i1, f32, f32) -> f32
    %ci = "select"(%gt, %bi, %ai) : (i1, i32, i32) -> i32
    "yield"(%c, %ci) : (f32, i32) -> ()
  }) {axis = 0, reverse = false} : (tensor<512xf32>, tensor<512xi32>) -> (tensor<512xf32>, tensor<512xi32>)
  %ys = "splat"(%y) : (ptr<i32>) -> tensor<512xptr<i32>>
  %yp = "addptr"(%ys, %r) : (tensor<512xptr<i32>>, tensor<512xi32>) -> tensor<512xptr<i32>>
  "store"(%yp, %i) {cache = "", eviction = ""} : (tensor<512xptr<i32>>, tensor<512xi32>) -> ()
  "return"() : () -> ()
}
"#;
    let out = compile(text, "sm_90a", 4);
    // two operands of 4 bytes: rows(1) × reps(1) × warps(4) each, 16-byte aligned
    assert_eq!(out.shared, 32);
}

fn scan_2d(m: u32, n: u32, axis: u32, reverse: bool) -> String {
    format!(
        r#"
func @k(%x: ptr<f32> {{divisibility = 16}}, %y: ptr<f32> {{divisibility = 16}}) attributes {{kernel}} {{
  %rm = "arange"() {{end = {m}, start = 0}} : () -> tensor<{m}xi32>
  %rn = "arange"() {{end = {n}, start = 0}} : () -> tensor<{n}xi32>
  %em = "expand_dims"(%rm) {{axis = 1}} : (tensor<{m}xi32>) -> tensor<{m}x1xi32>
  %k = "const"() {{value = {n}}} : () -> tensor<{m}x1xi32>
  %sm = "mul"(%em, %k) : (tensor<{m}x1xi32>, tensor<{m}x1xi32>) -> tensor<{m}x1xi32>
  %en = "expand_dims"(%rn) {{axis = 0}} : (tensor<{n}xi32>) -> tensor<1x{n}xi32>
  %bm = "broadcast"(%sm) : (tensor<{m}x1xi32>) -> tensor<{m}x{n}xi32>
  %bn = "broadcast"(%en) : (tensor<1x{n}xi32>) -> tensor<{m}x{n}xi32>
  %o = "add"(%bm, %bn) : (tensor<{m}x{n}xi32>, tensor<{m}x{n}xi32>) -> tensor<{m}x{n}xi32>
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<{m}x{n}xptr<f32>>
  %xp = "addptr"(%xs, %o) : (tensor<{m}x{n}xptr<f32>>, tensor<{m}x{n}xi32>) -> tensor<{m}x{n}xptr<f32>>
  %v = "load"(%xp) {{cache = "", eviction = "", volatile = false}} : (tensor<{m}x{n}xptr<f32>>) -> tensor<{m}x{n}xf32>
  %s = "scan"(%v) ({{
  ^bb(%a: f32, %b: f32):
    %c = "add"(%a, %b) : (f32, f32) -> f32
    "yield"(%c) : (f32) -> ()
  }}) {{axis = {axis}, reverse = {reverse}}} : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %ys = "splat"(%y) : (ptr<f32>) -> tensor<{m}x{n}xptr<f32>>
  %yp = "addptr"(%ys, %o) : (tensor<{m}x{n}xptr<f32>>, tensor<{m}x{n}xi32>) -> tensor<{m}x{n}xptr<f32>>
  "store"(%yp, %s) {{cache = "", eviction = ""}} : (tensor<{m}x{n}xptr<f32>>, tensor<{m}x{n}xf32>) -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn two_d_scans_along_either_axis() {
    for (m, n, axis, rev, w) in [(16, 64, 1, false, 4), (16, 64, 0, true, 4), (64, 32, 0, false, 8), (4, 256, 1, true, 2)] {
        let out = compile(&scan_2d(m, n, axis, rev), "sm_90a", w);
        assert!(out.ptx.contains(".entry k("), "{m}x{n} axis {axis}");
        // the row stride is the constant n: 16-byte vectors along the last dim
        assert!(out.ptx.contains("ld.global.v4.f32"), "{m}x{n}: {}", out.ptx);
    }
    // 16x64 f32 on 4 warps: spt [1, 4], lanes [2, 16], warps [4, 1]: along
    // axis 0 (2 reps of 8 rows) the warps split the axis, so 64 columns ×
    // 2 reps × 4 warps of f32 totals go through scratch; along axis 1 the scan stays inside each warp (any
    // scratch left is the expand_dims conversions', at most 64 × 4 bytes)
    let down = compile(&scan_2d(16, 64, 0, false), "sm_90a", 4);
    assert_eq!(down.shared, 2048);
    let across = compile(&scan_2d(16, 64, 1, false), "sm_90a", 4);
    assert!(across.shared <= 256, "{}", across.shared);
}

#[test]
fn scan_axis_out_of_range_is_an_error() {
    let text = scan_1d(64, "f32", "add", false).replace("axis = 0", "axis = 3");
    let err = compile_ptx_text(&text, &Options::new("sm_90a", 4).unwrap()).unwrap_err();
    assert!(err.contains("axis"), "{err}");
}

/// `x + rows[:, None] * stride + cols[None, :]` with a 16-divisible argument stride.
fn copy_2d(stride_div: u32, mask: bool) -> String {
    let (mask_ops, mask_arg, mask_ty) = if mask {
        (
            r#"
  %mr = "splat"(%M) : (i32) -> tensor<32x1xi32>
  %cr = "cmp"(%em, %mr) {pred = "lt"} : (tensor<32x1xi32>, tensor<32x1xi32>) -> tensor<32x1xi1>
  %mc = "splat"(%N) : (i32) -> tensor<1x64xi32>
  %cc = "cmp"(%en, %mc) {pred = "lt"} : (tensor<1x64xi32>, tensor<1x64xi32>) -> tensor<1x64xi1>
  %br = "broadcast"(%cr) : (tensor<32x1xi1>) -> tensor<32x64xi1>
  %bc = "broadcast"(%cc) : (tensor<1x64xi1>) -> tensor<32x64xi1>
  %mk = "and"(%br, %bc) : (tensor<32x64xi1>, tensor<32x64xi1>) -> tensor<32x64xi1>"#,
            ", %mk",
            ", tensor<32x64xi1>",
        )
    } else {
        ("", "", "")
    };
    format!(
        r#"
func @k(%x: ptr<f32> {{divisibility = 16}}, %y: ptr<f32> {{divisibility = 16}}, %M: i32 {{divisibility = 16}}, %N: i32 {{divisibility = 16}}, %st: i32 {{divisibility = {stride_div}}}) attributes {{kernel}} {{
  %p0 = "program_id"() {{axis = 0}} : () -> i32
  %c32 = "const"() {{value = 32}} : () -> i32
  %b0 = "mul"(%p0, %c32) : (i32, i32) -> i32
  %ar = "arange"() {{end = 32, start = 0}} : () -> tensor<32xi32>
  %sb = "splat"(%b0) : (i32) -> tensor<32xi32>
  %rows = "add"(%sb, %ar) : (tensor<32xi32>, tensor<32xi32>) -> tensor<32xi32>
  %p1 = "program_id"() {{axis = 1}} : () -> i32
  %c64 = "const"() {{value = 64}} : () -> i32
  %b1 = "mul"(%p1, %c64) : (i32, i32) -> i32
  %ac = "arange"() {{end = 64, start = 0}} : () -> tensor<64xi32>
  %sc = "splat"(%b1) : (i32) -> tensor<64xi32>
  %cols = "add"(%sc, %ac) : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %em = "expand_dims"(%rows) {{axis = 1}} : (tensor<32xi32>) -> tensor<32x1xi32>
  %ss = "splat"(%st) : (i32) -> tensor<32x1xi32>
  %rs = "mul"(%em, %ss) : (tensor<32x1xi32>, tensor<32x1xi32>) -> tensor<32x1xi32>
  %en = "expand_dims"(%cols) {{axis = 0}} : (tensor<64xi32>) -> tensor<1x64xi32>
  %b2 = "broadcast"(%rs) : (tensor<32x1xi32>) -> tensor<32x64xi32>
  %b3 = "broadcast"(%en) : (tensor<1x64xi32>) -> tensor<32x64xi32>
  %o = "add"(%b2, %b3) : (tensor<32x64xi32>, tensor<32x64xi32>) -> tensor<32x64xi32>{mask_ops}
  %xs = "splat"(%x) : (ptr<f32>) -> tensor<32x64xptr<f32>>
  %xp = "addptr"(%xs, %o) : (tensor<32x64xptr<f32>>, tensor<32x64xi32>) -> tensor<32x64xptr<f32>>
  %v = "load"(%xp{mask_arg}) {{cache = "", eviction = "", volatile = false}} : (tensor<32x64xptr<f32>>{mask_ty}) -> tensor<32x64xf32>
  %ys = "splat"(%y) : (ptr<f32>) -> tensor<32x64xptr<f32>>
  %yp = "addptr"(%ys, %o) : (tensor<32x64xptr<f32>>, tensor<32x64xi32>) -> tensor<32x64xptr<f32>>
  "store"(%yp, %v{mask_arg}) {{cache = "", eviction = ""}} : (tensor<32x64xptr<f32>>, tensor<32x64xf32>{mask_ty}) -> ()
  "return"() : () -> ()
}}
"#
    )
}

#[test]
fn two_d_access_with_aligned_stride_is_16_bytes_wide() {
    for mask in [false, true] {
        let out = compile(&copy_2d(16, mask), "sm_90a", 4);
        assert!(out.ptx.contains("ld.global.v4.f32"), "mask {mask}: {}", out.ptx);
        assert!(out.ptx.contains("st.global.v4.f32"), "mask {mask}: {}", out.ptx);
    }
}

#[test]
fn two_d_access_narrows_with_the_stride_divisibility() {
    // a stride of 2 elements: rows start 8-byte aligned
    let out = compile(&copy_2d(2, false), "sm_90a", 4);
    assert!(!out.ptx.contains("ld.global.v4"), "{}", out.ptx);
    assert!(out.ptx.contains("ld.global.v2.f32"), "{}", out.ptx);
    // unknown stride: scalar accesses
    let out = compile(&copy_2d(1, false), "sm_90a", 4);
    assert!(!out.ptx.contains("ld.global.v"), "{}", out.ptx);
    assert!(out.ptx.contains("ld.global.f32"), "{}", out.ptx);
}

#[test]
fn facts_per_dim_of_a_2d_offset() {
    let module = tritium_ir::parse(&copy_2d(16, true)).unwrap();
    let (_, func) = module.funcs.iter().next().unwrap();
    let facts = tritium_analysis::FuncAxisInfo::compute(&module, func, &tritium_analysis::arg_facts_from_attrs(&module, func));
    let ops = &func.region_block(func.body).ops;
    let load = ops.iter().map(|&op| &func.ops[op]).find(|d| d.opcode.name() == "load").unwrap();
    let (ptr, mask) = (load.operands[0], load.operands[1]);
    let offs = ops.iter().map(|&op| &func.ops[op]).find(|d| d.opcode.name() == "addptr").unwrap().operands[1];
    // offsets: rows step by the stride (no runs, 16 | each), columns run 64 long from pid*64
    let f = facts.dims(offs).unwrap();
    assert_eq!(f.contiguity, vec![1, 64]);
    assert_eq!(f.divisibility, vec![1, 16]);
    assert_eq!(f.constancy, vec![1, 1]);
    // pointers: bytes
    let p = facts.dims(ptr).unwrap();
    assert_eq!(p.contiguity, vec![1, 64]);
    assert_eq!(p.divisibility[1], 16);
    // mask: rows < M and cols < N both constant in aligned blocks of 16 (M's and N's divisibility)
    let m = facts.dims(mask).unwrap();
    assert_eq!(m.constancy, vec![16, 16]);
    assert_eq!(facts.get(ptr).contiguity, 64);
}
