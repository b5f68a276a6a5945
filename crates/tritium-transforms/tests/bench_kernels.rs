//! The pipeline on the benchmark kernels (benches/kernels/*.tir): each still
//! verifies, never grows, and a second run changes nothing. Prints op counts
//! before and after (`cargo test --test bench_kernels -- --nocapture`).
use std::fs;
use std::path::Path;

use tritium_ir::{parse, print, verify, Module};
use tritium_transforms::{run_passes, PassOptions};

fn op_count(m: &Module) -> usize {
    m.funcs.values().map(|f| f.ops_preorder().len()).sum()
}

#[test]
fn bench_kernels_shrink_and_stay_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/kernels");
    let mut paths: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "tir")).collect();
    paths.sort();
    assert!(!paths.is_empty(), "no bench kernels in {}", dir.display());
    let opts = PassOptions { verify_each: true, ..PassOptions::default() };
    for p in paths {
        let mut m = parse(&fs::read_to_string(&p).unwrap()).unwrap();
        verify(&m).unwrap();
        let before = op_count(&m);
        let stats = run_passes(&mut m, &opts, None).unwrap();
        let after = op_count(&m);
        println!("{}: {before} ops -> {after} ops ({stats:?})", p.file_name().unwrap().to_string_lossy());
        assert!(after <= before);
        let once = print(&m);
        run_passes(&mut m, &opts, None).unwrap();
        assert_eq!(print(&m), once, "{}: a second run changed the module", p.display());
    }
}
