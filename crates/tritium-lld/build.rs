//! Compiles the C++ shim over `lld::lldMain` and links LLVM's static lld
//! libraries (liblldELF.a, liblldCommon.a from Debian's liblld-19-dev).
fn main() {
    let prefix = std::env::var("LLVM_SYS_191_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-19".into());
    let include = format!("{prefix}/include");
    let lib = format!("{prefix}/lib");
    if !std::path::Path::new(&format!("{lib}/liblldELF.a")).exists() {
        panic!("{lib}/liblldELF.a not found: install liblld-19-dev (scripts/setup.sh does)");
    }
    cc::Build::new()
        .cpp(true)
        .file("src/shim.cpp")
        .include(&include)
        .flag("-std=c++17")
        .flag("-fno-rtti")
        .flag("-fno-exceptions")
        .flag_if_supported("-Wno-unused-parameter")
        .compile("tritium_lld_shim");
    println!("cargo:rustc-link-search=native={lib}");
    println!("cargo:rustc-link-lib=static=lldELF");
    println!("cargo:rustc-link-lib=static=lldCommon");
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
}
