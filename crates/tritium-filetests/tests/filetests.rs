//! Runs `filetests/<dir>/*.tir`, one test per directory (the crate whose
//! stages it exercises). `TRITIUM_TEST_BLESS=1 cargo test -p tritium-filetests`
//! rewrites the expectations of failing exact cases; review the diff.
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests").join(name)
}

fn run(name: &str) {
    let report = tritium_filetests::run_dir(&dir(name));
    tritium_filetests::assert_passed(&format!("filetests/{name}"), &report);
}

#[test]
fn ir() {
    run("ir");
}

#[test]
fn transforms() {
    run("transforms");
}

#[test]
fn analysis() {
    run("analysis");
}

#[test]
fn codegen() {
    run("codegen");
}

/// Every directory of filetests has its test above.
#[test]
fn every_directory_runs() {
    let mut dirs: Vec<String> = std::fs::read_dir(dir(""))
        .unwrap()
        .filter_map(|e| e.ok().filter(|e| e.path().is_dir()).and_then(|e| e.file_name().into_string().ok()))
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["analysis", "codegen", "ir", "transforms"]);
}
