//! Structure-aware: fuzzer bytes drive a generator of *valid* modules, which
//! then go through every compiler stage in `tritium_fuzz::stages::STAGES`. A
//! stage rejecting a valid module, or any panic, is a bug. The bytes left
//! over then edit the module (`mutate`): the verifier must answer the edited
//! module without panicking, and if it still verifies it must pass every stage.
//! The tile-level passes run on each valid module too, verifying after each
//! pass, and the optimized module must pass every stage as well.
#![no_main]
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tritium_fuzz::{generate, mutate, stages};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(m) = generate::module(&mut u) else { return };
    if let Err(e) = stages::run_all(m.clone()) {
        panic!("{e}\n--- generated module:\n{}", tritium_ir::print(&m));
    }
    passes(&m);
    let mut edited = m;
    let Ok(n) = u.int_in_range(1..=3) else { return };
    for _ in 0..n {
        if mutate::apply(&mut u, &mut edited).is_err() {
            return;
        }
    }
    if tritium_ir::verify(&edited).is_ok() {
        if let Err(e) = stages::run_all(edited.clone()) {
            panic!("edited module verifies but fails: {e}\n--- module:\n{}", tritium_ir::print(&edited));
        }
        passes(&edited);
    }
});

/// fold, canonicalize, CSE and DCE keep a valid module valid, and what they
/// produce must compile like any valid module.
fn passes(m: &tritium_ir::Module) {
    let mut opt = m.clone();
    let opts = tritium_codegen::PassOptions { verify_each: true, ..Default::default() };
    if let Err(e) = tritium_codegen::run_passes(&mut opt, &opts, None) {
        panic!("passes broke a valid module: {e}\n--- module:\n{}", tritium_ir::print(m));
    }
    if let Err(e) = stages::run_all(opt.clone()) {
        panic!("optimized module fails: {e}\n--- optimized:\n{}\n--- original:\n{}", tritium_ir::print(&opt), tritium_ir::print(m));
    }
}
