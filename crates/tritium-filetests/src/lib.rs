//! tritium-filetests: the one file-test harness of the workspace (Cranelift's
//! filetests are the model). A `.tir` file under `filetests/` holds cases
//! separated by `// -----`; each case is tile IR with a `// RUN: <stage>`
//! line naming what to run (`subtest::lookup`: verify, parse-print,
//! roundtrip, each tile pass, axis-info, allocation, membar, llvm-ir, ptx,
//! ptxas) and `// CHECK:` / `// CHECK-NEXT:` / `// CHECK-NOT:` lines on its
//! output. `TRITIUM_TEST_BLESS=1` rewrites the checks of failing cases whose
//! stage prints IR or dumps (`Checking::Exact`) from the actual output.
pub mod case;
pub mod filecheck;
pub mod ptxas;
pub mod stages;
pub mod subtest;

use std::path::{Path, PathBuf};

use case::Case;
use subtest::{Checking, Input, Output};

/// What running some filetests found.
#[derive(Debug, Default)]
pub struct Report {
    pub cases: usize,
    pub failures: Vec<String>,
    pub skipped: Vec<String>,
    pub blessed: usize,
}

/// Whether `TRITIUM_TEST_BLESS` asks to rewrite expectations.
pub fn bless_requested() -> bool {
    std::env::var("TRITIUM_TEST_BLESS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The `.tir` files under `dir`, recursively, sorted.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "tir") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs every case of every file under `dir`, blessing when asked.
pub fn run_dir(dir: &Path) -> Report {
    let mut report = Report::default();
    for path in files(dir) {
        run_file(&path, bless_requested(), &mut report);
    }
    report
}

/// Runs the cases of `path`; with `bless`, rewrites the file with fresh
/// checks for the exact cases that failed.
pub fn run_file(path: &Path, bless: bool, report: &mut Report) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return report.failures.push(format!("{}: {e}", path.display())),
    };
    let cases = match case::parse_file(path.to_path_buf(), &text) {
        Ok(c) => c,
        Err(e) => return report.failures.push(e),
    };
    let mut rewritten = Vec::with_capacity(cases.len());
    let mut changed = false;
    for c in &cases {
        report.cases += 1;
        let mut lines = c.lines.clone();
        match run_case(c) {
            Ok(Verdict::Pass) => {}
            Ok(Verdict::Skipped(reason)) => report.skipped.push(format!("{c}: {reason}")),
            Ok(Verdict::Mismatch { message, exact_output }) => match exact_output {
                Some(out) if bless => {
                    lines = with_checks(c, &filecheck::exact_checks(&out));
                    changed = true;
                    report.blessed += 1;
                }
                _ => report.failures.push(format!("{c}: {message}")),
            },
            Err(e) => report.failures.push(format!("{c}: {e}")),
        }
        rewritten.push(lines.join("\n"));
    }
    if changed {
        let mut out = rewritten.join("\n// -----\n");
        out.push('\n');
        if let Err(e) = std::fs::write(path, out) {
            report.failures.push(format!("{}: cannot bless: {e}", path.display()));
        }
    }
}

enum Verdict {
    Pass,
    Skipped(String),
    /// The output does not satisfy the checks; `exact_output` is the output
    /// when the stage's checks spell it whole (so it can be blessed).
    Mismatch { message: String, exact_output: Option<String> },
}

fn run_case(c: &Case) -> Result<Verdict, String> {
    let (last, earlier) = c.steps.split_last().ok_or("empty RUN line")?;
    let stage = subtest::lookup(&last.name).ok_or_else(|| format!("unknown stage `{}`", last.name))?;
    let input = Input { text: c.input(), passes: earlier.iter().collect() };
    let output = match stage.run(&input, last)? {
        Output::Skipped(reason) => return Ok(Verdict::Skipped(reason)),
        Output::Text(t) => t,
    };
    let checked = match stage.checking() {
        Checking::SelfChecking if !c.checks.is_empty() => {
            return Err(format!("`{}` checks itself: the case takes no CHECK lines", last.name));
        }
        Checking::SelfChecking => return Ok(Verdict::Pass),
        _ if c.checks.is_empty() => Err("the case has no CHECK lines".to_string()),
        Checking::Exact => filecheck::exact(&output, &c.checks),
        Checking::FileCheck => filecheck::filecheck(&output, &c.checks),
    };
    Ok(match checked {
        Ok(()) => Verdict::Pass,
        Err(message) => {
            let exact_output = (stage.checking() == Checking::Exact).then(|| output.clone());
            let message = if exact_output.is_some() { message } else { format!("{message}\n--- output\n{output}") };
            Verdict::Mismatch { message, exact_output }
        }
    })
}

/// The case's lines with its check lines replaced by `checks`, placed where
/// the first old check was (or at the end of the case).
fn with_checks(c: &Case, checks: &[String]) -> Vec<String> {
    let is_check = |l: &String| Case::is_check(l);
    let first = c.lines.iter().position(is_check);
    let mut kept: Vec<String> = c.lines.iter().filter(|l| !is_check(l)).cloned().collect();
    let at = match first {
        Some(i) => i.min(kept.len()),
        None => kept.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1),
    };
    kept.splice(at..at, checks.iter().cloned());
    kept
}

/// Reports that `what` did not run because of `reason`: a line on the real
/// stderr (libtest captures `eprintln!`, not this), so a skip is never
/// silent; under CI, where nothing may be skipped, a panic instead.
pub fn skip(what: &str, reason: &str) {
    use std::io::Write;
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false") {
        panic!("{what}: {reason} (CI must run every test: fix the set-up)");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {what}: {reason}");
}

/// Fails (panicking, for `#[test]`s) if any case failed; prints skips and
/// blessings on the real stderr so `cargo test` shows them.
pub fn assert_passed(what: &str, report: &Report) {
    for s in &report.skipped {
        skip(what, s);
    }
    if report.blessed > 0 {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{what}: blessed {} case(s); review the diff", report.blessed);
    }
    assert!(report.cases > 0, "{what}: no filetest cases found");
    assert!(report.failures.is_empty(), "{what}: {} of {} cases failed:\n\n{}", report.failures.len(), report.cases, report.failures.join("\n\n"));
}
