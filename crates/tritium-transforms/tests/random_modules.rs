//! Property test: random valid modules (tritium-ir's generator) go through
//! the whole pass pipeline, verifying after every pass, and a second run of
//! the pipeline changes nothing.
#[path = "../../tritium-ir/tests/common/mod.rs"]
mod common;

use proptest::prelude::*;
use tritium_ir::{print, verify};
use tritium_transforms::{run_passes, PassOptions};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn passes_keep_random_modules_valid(seed in any::<u64>()) {
        let mut m = common::random_module(seed);
        let opts = PassOptions { verify_each: true, ..PassOptions::default() };
        let mut seen = Vec::new();
        let mut dump = |name: &str, m: &tritium_ir::Module| seen.push((name.to_string(), print(m)));
        run_passes(&mut m, &opts, Some(&mut dump)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(seen.len() >= 4);
        prop_assert_eq!(verify(&m), Ok(()));
        let once = print(&m);
        run_passes(&mut m, &opts, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(print(&m), once);
    }
}
