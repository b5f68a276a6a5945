//! Raw bytes → decode → verify must never panic; a module that decodes must
//! re-encode to bytes that decode to an equal module.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(m) = tritium_ir::decode(data) else { return };
    let _ = tritium_ir::verify(&m);
    let _ = tritium_ir::print(&m);
    let bytes = tritium_ir::encode(&m);
    let again = tritium_ir::decode(&bytes).expect("re-encoded module must decode");
    assert_eq!(tritium_ir::encode(&again), bytes);
});
