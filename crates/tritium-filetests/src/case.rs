//! A filetest file split into cases: `// -----` lines separate them; in each,
//! `// RUN:` names the stage(s) and `// CHECK...` lines the expectations;
//! every other `//` line is a comment and the rest is the input IR.
use std::fmt;
use std::path::PathBuf;

const SEPARATOR: &str = "// -----";

/// How a check line constrains the output (FileCheck's meaning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    /// `CHECK:` the pattern occurs on a line after the previous match.
    Check,
    /// `CHECK-NEXT:` the pattern occurs on the line right after the previous match.
    Next,
    /// `CHECK-NOT:` the pattern occurs nowhere between the neighbouring matches.
    Not,
}

impl CheckKind {
    pub fn directive(self) -> &'static str {
        match self {
            CheckKind::Check => "CHECK:",
            CheckKind::Next => "CHECK-NEXT:",
            CheckKind::Not => "CHECK-NOT:",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Check {
    pub kind: CheckKind,
    pub pattern: String,
    /// 1-based line in the file.
    pub line: usize,
}

/// One step of a `RUN:` line: a stage name and its `key=value` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    pub options: Vec<(String, String)>,
}

impl Step {
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Debug)]
pub struct Case {
    pub file: PathBuf,
    /// 1-based line of the case's first line in the file.
    pub line: usize,
    /// The case's lines as written (without the separators).
    pub lines: Vec<String>,
    pub steps: Vec<Step>,
    pub checks: Vec<Check>,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

impl Case {
    /// The input IR: the case's lines without its directives (plain
    /// comments stay), so a parse error's `line:col` does not move when a
    /// bless rewrites the checks.
    pub fn input(&self) -> String {
        let mut out = String::new();
        for l in self.lines.iter().filter(|l| !is_directive(l)) {
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    /// Whether line `l` is a check directive.
    pub fn is_check(l: &str) -> bool {
        let body = l.trim_start().strip_prefix("//").map(str::trim_start).unwrap_or("");
        [CheckKind::Check, CheckKind::Next, CheckKind::Not].iter().any(|k| body.starts_with(k.directive()))
    }
}

fn is_directive(l: &str) -> bool {
    Case::is_check(l) || l.trim_start().strip_prefix("//").is_some_and(|b| b.trim_start().starts_with("RUN:"))
}

/// Splits `text` (the contents of `file`) into cases.
pub fn parse_file(file: PathBuf, text: &str) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    let mut start = 1;
    let mut lines: Vec<String> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim() == SEPARATOR {
            cases.push(parse_case(file.clone(), start, std::mem::take(&mut lines))?);
            start = i + 2;
        } else {
            lines.push(l.to_string());
        }
    }
    cases.push(parse_case(file, start, lines)?);
    Ok(cases)
}

fn parse_case(file: PathBuf, line: usize, lines: Vec<String>) -> Result<Case, String> {
    let mut steps = None;
    let mut checks = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(comment) = l.trim_start().strip_prefix("//") else { continue };
        let comment = comment.trim_start();
        let at = line + i;
        if let Some(run) = comment.strip_prefix("RUN:") {
            if steps.is_some() {
                return Err(format!("{}:{at}: a case has one RUN line", file.display()));
            }
            steps = Some(parse_run(run).map_err(|e| format!("{}:{at}: {e}", file.display()))?);
            continue;
        }
        for kind in [CheckKind::Next, CheckKind::Not, CheckKind::Check] {
            if let Some(p) = comment.strip_prefix(kind.directive()) {
                // one space after the colon separates; the rest (indentation included) is the pattern
                let pattern = p.strip_prefix(' ').unwrap_or(p).trim_end().to_string();
                checks.push(Check { kind, pattern, line: at });
                break;
            }
        }
    }
    let steps = steps.ok_or_else(|| format!("{}:{line}: case has no `// RUN:` line", file.display()))?;
    Ok(Case { file, line, lines, steps, checks })
}

/// `stage [key=value ...][, stage ...]`
fn parse_run(run: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in run.split(',') {
        let mut words = part.split_whitespace();
        let name = words.next().ok_or("empty stage in RUN")?.to_string();
        let mut options = Vec::new();
        for w in words {
            let (k, v) = w.split_once('=').ok_or_else(|| format!("option {w:?} of stage {name} is not key=value"))?;
            options.push((k.to_string(), v.to_string()));
        }
        steps.push(Step { name, options });
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cases_and_reads_directives() {
        let text = "// RUN: fold, dce\nfunc @k() {\n// CHECK: a\n}\n// -----\n// RUN: ptx arch=sm_80\n// CHECK-NEXT:   b\n// CHECK-NOT: c\n";
        let cases = parse_file(PathBuf::from("t.tir"), text).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["fold", "dce"]);
        assert_eq!(cases[0].input(), "func @k() {\n}\n");
        assert_eq!(cases[1].input(), "");
        assert_eq!((cases[0].checks[0].kind, cases[0].checks[0].line), (CheckKind::Check, 3));
        assert_eq!(cases[1].line, 6);
        assert_eq!(cases[1].steps[0].option("arch"), Some("sm_80"));
        assert_eq!(cases[1].checks[0].pattern, "  b");
        assert_eq!(cases[1].checks[1].kind, CheckKind::Not);
        assert!(parse_file(PathBuf::from("t.tir"), "func @k() {\n}\n").is_err());
    }
}
