//! Inputs the fuzzers (fuzz/) found or that fuzzing-driven review turned up,
//! replayed under the same properties the fuzz targets check, so a fixed crash
//! stays fixed without running cargo-fuzz. Minimized inputs live in
//! `tests/fuzz_inputs/<target>/` (dropping a file there adds a case); bugs
//! whose error message matters also get a named test below.
use std::fs;
use std::path::Path;

use tritium_ir::{decode, encode, parse, print, verify};

/// The `decode_verify` target's property: no panic; a module that decodes
/// re-encodes to bytes that decode and re-encode identically.
fn decode_verify(data: &[u8]) -> Result<(), String> {
    let Ok(m) = decode(data) else { return Ok(()) };
    let _ = verify(&m);
    let _ = print(&m);
    let bytes = encode(&m);
    let again = decode(&bytes).map_err(|e| format!("re-encoded module does not decode: {e}"))?;
    if encode(&again) != bytes {
        return Err("decode → encode is not a fixed point".into());
    }
    Ok(())
}

/// The `text_parse` target's property: no panic; a valid module prints to
/// text that parses back to the same module and the same text.
fn text_parse(data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else { return Ok(()) };
    let Ok(m) = parse(text) else { return Ok(()) };
    if verify(&m).is_err() {
        return Ok(());
    }
    let printed = print(&m);
    let again = parse(&printed).map_err(|e| format!("printed module does not parse: {e}\n{printed}"))?;
    if encode(&again) != encode(&m) {
        return Err(format!("print → parse changes the module:\n{printed}"));
    }
    if print(&again) != printed {
        return Err(format!("print → parse → print changes the text:\n{printed}"));
    }
    Ok(())
}

/// Runs every file of `fuzz_inputs/<target>/` through `check`, catching panics
/// so one report lists every failing input.
fn replay(target: &str, check: fn(&[u8]) -> Result<(), String>) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_inputs").join(target);
    let mut paths: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut failures = Vec::new();
    for path in &paths {
        let data = fs::read(path).unwrap();
        match std::panic::catch_unwind(|| check(&data)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("{}: {e}", path.display())),
            Err(_) => failures.push(format!("{}: panicked", path.display())),
        }
    }
    assert!(failures.is_empty(), "{} failing inputs:\n{}", failures.len(), failures.join("\n"));
    paths.len()
}

#[test]
fn decode_verify_inputs() {
    assert!(replay("decode_verify", decode_verify) > 0, "no decode_verify inputs found");
}

#[test]
fn text_parse_inputs() {
    assert!(replay("text_parse", text_parse) > 0, "no text_parse inputs found");
}

/// The `while` rule read the `condition` terminator's first operand before the
/// terminator's own arity check ran: a `condition` with no operands indexed an
/// empty list.
#[test]
fn while_condition_without_operands_is_an_error() {
    let text = r#"func @f() {
  "while"() ({
    "condition"() : () -> ()
  }, {
    "yield"() : () -> ()
  }) : () -> ()
  "return"() : () -> ()
}"#;
    let m = parse(text).unwrap();
    let err = verify(&m).unwrap_err().to_string();
    assert!(err.contains("'condition' must start with an i1 scalar, got no operands"), "{err}");
}
