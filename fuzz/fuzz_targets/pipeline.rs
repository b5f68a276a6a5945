//! Structure-aware: fuzzer bytes drive a generator of *valid* modules, which
//! then go through every compiler stage in `tritium_fuzz::stages::STAGES`. A
//! stage rejecting a valid module, or any panic, is a bug. The bytes left
//! over then edit the module (`mutate`): the verifier must answer the edited
//! module without panicking, and if it still verifies it must pass every stage.
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
    }
});
