//! Math ops: fast f32 ones become single approximate PTX instructions as in
//! Triton; accurate ones call one internal helper per (function, width).
use tritium_codegen::{compile_ptx_text, Options};

fn kernel(op: &str, ty: &str) -> String {
    format!(
        r#"
func @k(%x: ptr<{ty}> {{divisibility = 16}}) attributes {{kernel}} {{
  %r = "arange"() {{end = 256, start = 0}} : () -> tensor<256xi32>
  %s = "splat"(%x) : (ptr<{ty}>) -> tensor<256xptr<{ty}>>
  %p = "addptr"(%s, %r) : (tensor<256xptr<{ty}>>, tensor<256xi32>) -> tensor<256xptr<{ty}>>
  %v = "load"(%p) {{cache = "", eviction = "", volatile = false}} : (tensor<256xptr<{ty}>>) -> tensor<256x{ty}>
  %e = "{op}"(%v) : (tensor<256x{ty}>) -> tensor<256x{ty}>
  "store"(%p, %e) {{cache = "", eviction = ""}} : (tensor<256xptr<{ty}>>, tensor<256x{ty}>) -> ()
  "return"() : () -> ()
}}
"#
    )
}

fn ptx(op: &str, ty: &str) -> String {
    compile_ptx_text(&kernel(op, ty), &Options::new("sm_90a", 4).unwrap()).unwrap_or_else(|e| panic!("{op} {ty}: {e}")).ptx
}

#[test]
fn fast_f32_ops_are_single_approx_instructions() {
    let exp = ptx("exp", "f32");
    assert!(exp.contains("ex2.approx.f32") && exp.contains("0f3FB8AA3B"), "{exp}");
    // exp2 flushes subnormals as Triton's does (`ex2.approx.ftz`); exp keeps them
    assert!(ptx("exp2", "f32").contains("ex2.approx.ftz.f32"));
    assert!(!exp.contains(".ftz"), "{exp}");
    assert!(ptx("sqrt", "f32").contains("sqrt.approx.f32"));
    assert!(ptx("rsqrt", "f32").contains("rsqrt.approx.f32"));
    assert!(ptx("sqrt", "f64").contains("sqrt.rn.f64"));
}

#[test]
fn accurate_ops_compile_for_every_float_width() {
    for op in ["exp", "exp2", "log", "log2", "sin", "cos", "erf", "sqrt", "rsqrt"] {
        for ty in ["f16", "bf16", "f32", "f64"] {
            let p = ptx(op, ty);
            assert!(p.contains(".entry k("), "{op} {ty}");
        }
    }
    // accurate f32 log uses an IEEE division, not an approximation
    let log = ptx("log", "f32");
    assert!(!log.contains("approx"), "{log}");
    // sin of f32 reduces in f64 (three-part pi/2), polynomial in f32
    let sin = ptx("sin", "f32");
    assert!(sin.contains("fma.rn.f64") && sin.contains("fma.rn.f32"), "{sin}");
}

#[test]
fn math_on_integers_is_an_error() {
    let err = compile_ptx_text(&kernel("sin", "i32"), &Options::new("sm_90a", 4).unwrap());
    assert!(err.is_err());
}
