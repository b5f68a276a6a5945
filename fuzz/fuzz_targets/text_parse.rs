//! UTF-8 text → parse → verify → print → parse must never panic, and a valid
//! module must print to text that parses back to the same module.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(m) = tritium_ir::parse(text) else { return };
    if tritium_ir::verify(&m).is_err() {
        return;
    }
    let printed = tritium_ir::print(&m);
    let again = tritium_ir::parse(&printed).expect("printed module must parse");
    assert_eq!(tritium_ir::encode(&again), tritium_ir::encode(&m));
    assert_eq!(tritium_ir::print(&again), printed);
});
