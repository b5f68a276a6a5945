//! Runs `tests/filetests/*.tir`. A file holds cases separated by `// -----`;
//! each case is IR text with one directive in a comment:
//! `// RUN: roundtrip` (parses, verifies, prints back to its own text, and the
//! binary form round-trips) or `// ERROR: <substring>` (parsing or verifying
//! fails with a message containing the substring).
use std::fs;
use std::path::Path;

use tritium_ir::{decode, encode, parse, print, verify};

fn normalize(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn run_case(case: &str) -> Result<(), String> {
    let directive = case
        .lines()
        .filter_map(|l| l.trim().strip_prefix("//").map(str::trim))
        .find(|l| l.starts_with("RUN:") || l.starts_with("ERROR:"))
        .ok_or("case has no RUN or ERROR directive")?;
    if let Some(expected) = directive.strip_prefix("ERROR:") {
        let expected = expected.trim();
        let msg = match parse(case) {
            Err(e) => e.to_string(),
            Ok(m) => match verify(&m) {
                Err(e) => e.to_string(),
                Ok(()) => return Err(format!("expected error containing {expected:?}, but the case is valid")),
            },
        };
        if !msg.contains(expected) {
            return Err(format!("expected error containing {expected:?}, got {msg:?}"));
        }
        return Ok(());
    }
    if directive.trim_start_matches("RUN:").trim() != "roundtrip" {
        return Err(format!("unknown directive {directive:?}"));
    }
    let m = parse(case).map_err(|e| format!("parse: {e}"))?;
    verify(&m).map_err(|e| format!("verify: {e}"))?;
    let printed = print(&m);
    if normalize(&printed) != normalize(case) {
        return Err(format!("printed text differs:\n--- printed\n{printed}\n--- expected\n{}", normalize(case)));
    }
    let bytes = encode(&m);
    let decoded = decode(&bytes).map_err(|e| format!("decode: {e}"))?;
    verify(&decoded).map_err(|e| format!("verify decoded: {e}"))?;
    if print(&decoded) != printed {
        return Err("decoded module prints differently".into());
    }
    if encode(&decoded) != bytes {
        return Err("re-encoding the decoded module changes the bytes".into());
    }
    let reparsed = parse(&printed).map_err(|e| format!("reparse: {e}"))?;
    if encode(&reparsed) != bytes {
        return Err("print → parse → encode differs from encode".into());
    }
    Ok(())
}

#[test]
fn filetests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut paths: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let (mut failures, mut cases, mut errors) = (Vec::new(), 0, 0);
    for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "tir")) {
        let text = fs::read_to_string(path).unwrap();
        for (i, case) in text.split("// -----").enumerate() {
            cases += 1;
            errors += case.contains("// ERROR:") as usize;
            if let Err(e) = run_case(case) {
                failures.push(format!("{} case {}: {e}", path.display(), i + 1));
            }
        }
    }
    println!("{cases} file-test cases ({errors} error cases)");
    assert!(cases > 0, "no file tests found");
    assert!(failures.is_empty(), "{} failing cases:\n{}", failures.len(), failures.join("\n\n"));
}
