//! Casts into fp8: the hardware `cvt.rn.satfinite` is used exactly where the
//! target says it has one (`Target::has_fp8_convert`: sm_90 and sm_90a at
//! the PTX ISA versions we emit) and only for round-to-nearest; elsewhere the
//! integer algorithm runs, so no `cvt` to fp8 appears.
use tritium_codegen::{compile_ptx_text, Options};

mod common;

fn cast_kernel(src: &str, dst: &str, rounding: &str) -> String {
    format!(
        r#"
func @k(%x: ptr<{src}> {{divisibility = 16}}, %y: ptr<{dst}> {{divisibility = 16}}) attributes {{kernel}} {{
  %r = "arange"() {{end = 256, start = 0}} : () -> tensor<256xi32>
  %xs = "splat"(%x) : (ptr<{src}>) -> tensor<256xptr<{src}>>
  %xp = "addptr"(%xs, %r) : (tensor<256xptr<{src}>>, tensor<256xi32>) -> tensor<256xptr<{src}>>
  %v = "load"(%xp) {{cache = "", eviction = "", volatile = false}} : (tensor<256xptr<{src}>>) -> tensor<256x{src}>
  %c = "cast"(%v) {{rounding = "{rounding}"}} : (tensor<256x{src}>) -> tensor<256x{dst}>
  %ys = "splat"(%y) : (ptr<{dst}>) -> tensor<256xptr<{dst}>>
  %yp = "addptr"(%ys, %r) : (tensor<256xptr<{dst}>>, tensor<256xi32>) -> tensor<256xptr<{dst}>>
  "store"(%yp, %c) {{cache = "", eviction = ""}} : (tensor<256xptr<{dst}>>, tensor<256x{dst}>) -> ()
  "return"() : () -> ()
}}
"#
    )
}

fn ptx(src: &str, dst: &str, rounding: &str, arch: &str) -> String {
    let out = compile_ptx_text(&cast_kernel(src, dst, rounding), &Options::new(arch, 4).unwrap())
        .unwrap_or_else(|e| panic!("{src} -> {dst} ({rounding}) on {arch}: {e}"));
    common::check_ptxas(&out.ptx, arch, &format!("fp8_{src}_{dst}_{rounding}"));
    out.ptx
}

#[test]
fn hardware_convert_from_sm_89() {
    for arch in ["sm_80", "sm_89", "sm_90", "sm_90a"] {
        let hardware = matches!(arch, "sm_89" | "sm_90" | "sm_90a");
        for (src, cvt_src) in [("f32", "f32"), ("f16", "f16x2")] {
            for (dst, fmt) in [("f8e4m3", "e4m3"), ("f8e5m2", "e5m2")] {
                let p = ptx(src, dst, "rtne", arch);
                let cvt = format!("cvt.rn.satfinite.{fmt}x2.{cvt_src}");
                assert_eq!(p.contains(&cvt), hardware, "{src} -> {dst} on {arch}:\n{p}");
            }
        }
    }
}

#[test]
fn round_toward_zero_never_uses_the_hardware_convert() {
    for arch in ["sm_90", "sm_90a"] {
        for src in ["f32", "f16"] {
            let p = ptx(src, "f8e4m3", "rtz", arch);
            assert!(!p.contains("cvt.rn.satfinite"), "{src} rtz on {arch}:\n{p}");
        }
    }
}
