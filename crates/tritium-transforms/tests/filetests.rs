//! Runs `tests/filetests/*.tir`: cases separated by `// -----`, each
//! `// RUN: <pass>[,<pass>...]` (fold, canonicalize, cse, dce, or `all` for
//! the whole pipeline), the input IR, a line `// =>`, then the IR expected
//! after the passes. Every pass must leave a module that verifies, and
//! running the same passes again must change nothing. With
//! `TRITIUM_BLESS=1` a differing case's expected text is rewritten from the
//! output (review the diff before keeping it).
use std::fs;
use std::path::Path;

use tritium_ir::{parse, print, verify, Module};
use tritium_transforms::{canonicalize, eliminate_common_subexpressions, eliminate_dead_code, fold_constants, run_passes, PassOptions};

fn normalize(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim_start().starts_with("//") && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn apply(m: &mut Module, passes: &[&str]) -> Result<(), String> {
    for &p in passes {
        match p {
            "fold" => drop(fold_constants(m)),
            "canonicalize" => drop(canonicalize(m)),
            "cse" => drop(eliminate_common_subexpressions(m)),
            "dce" => drop(eliminate_dead_code(m)),
            "all" => {
                let opts = PassOptions { verify_each: true, ..PassOptions::default() };
                run_passes(m, &opts, None).map_err(|e| format!("pipeline: {e}"))?;
            }
            other => return Err(format!("unknown pass {other:?}")),
        }
        verify(m).map_err(|e| format!("after {p}: {e}\n{}", print(m)))?;
    }
    Ok(())
}

/// Runs a case; `Ok(Some(text))` is the output when it differs and blessing is on.
fn run_case(case: &str) -> Result<Option<String>, String> {
    let passes: Vec<&str> = case
        .lines()
        .find_map(|l| l.trim().strip_prefix("// RUN:"))
        .ok_or("case has no RUN directive")?
        .split(',')
        .map(str::trim)
        .collect();
    let (input, expected) = case.split_once("// =>").ok_or("case has no `// =>` line")?;
    let mut m = parse(input).map_err(|e| format!("parse input: {e}"))?;
    verify(&m).map_err(|e| format!("input does not verify: {e}"))?;
    apply(&mut m, &passes)?;
    let got = print(&m);
    if normalize(&got) != normalize(expected) {
        if std::env::var_os("TRITIUM_BLESS").is_some() {
            return Ok(Some(got));
        }
        return Err(format!("output differs:\n--- got\n{got}--- expected\n{}", normalize(expected)));
    }
    apply(&mut m, &passes)?;
    if print(&m) != got {
        return Err(format!("passes are not idempotent: a second run gives\n{}", print(&m)));
    }
    Ok(None)
}

#[test]
fn filetests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut paths: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let (mut failures, mut cases) = (Vec::new(), 0);
    for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "tir")) {
        let text = fs::read_to_string(path).unwrap();
        let mut blessed = Vec::new();
        for (i, case) in text.split("// -----").enumerate() {
            cases += 1;
            match run_case(case) {
                Err(e) => failures.push(format!("{} case {}: {e}", path.display(), i + 1)),
                Ok(Some(got)) => blessed.push(format!("{}// =>\n{got}", case.split("// =>").next().unwrap_or(case))),
                Ok(None) => blessed.push(case.to_string()),
            }
        }
        if blessed.concat() != text.replace("// -----", "") {
            fs::write(path, blessed.join("// -----")).unwrap();
        }
    }
    println!("{cases} pass file-test cases");
    assert!(cases > 0, "no file tests found");
    assert!(failures.is_empty(), "{} failing cases:\n{}", failures.len(), failures.join("\n\n"));
}
