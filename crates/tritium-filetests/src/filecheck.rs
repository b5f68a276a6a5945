//! Matching a stage's output against a case's check lines. Two modes:
//! *filecheck* (LLVM FileCheck's CHECK / CHECK-NEXT / CHECK-NOT over lines,
//! for outputs tests sample: LLVM IR, PTX, analysis facts) and *exact* (the
//! checks spell the whole output, so a bless run can rewrite them: IR text).
use crate::case::{Check, CheckKind};

/// Whether `pattern` occurs in `line` at word edges: a pattern that starts
/// (ends) with a word character must not continue a word there, so `%1`
/// does not match `%10` and `value=1` does not match `value=12`.
fn occurs(line: &str, pattern: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return true;
    }
    let (first, last) = (pattern.chars().next().map_or(false, word), pattern.chars().last().map_or(false, word));
    line.match_indices(pattern).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + pattern.len()..].chars().next();
        !(first && before.is_some_and(word)) && !(last && after.is_some_and(word))
    })
}

/// FileCheck over `output`'s lines; `Err` names the first check that fails.
pub fn filecheck(output: &str, checks: &[Check]) -> Result<(), String> {
    let lines: Vec<&str> = output.lines().collect();
    // the next line a positive check may match, and the CHECK-NOTs waiting for their range
    let mut pos = 0;
    let mut pending_not: Vec<&Check> = Vec::new();
    for c in checks {
        let found = match c.kind {
            CheckKind::Not => {
                pending_not.push(c);
                continue;
            }
            CheckKind::Check => (pos..lines.len()).find(|&i| occurs(lines[i], &c.pattern)),
            CheckKind::Next => {
                if pos == 0 {
                    return Err(format!("line {}: CHECK-NEXT without a match before it", c.line));
                }
                (pos < lines.len() && occurs(lines[pos], &c.pattern)).then_some(pos)
            }
        };
        let Some(at) = found else {
            let near = lines.get(pos).copied().unwrap_or("<end of output>");
            return Err(format!("line {}: {} {:?} not found (searching from output line {}: {near:?})", c.line, c.kind.directive(), c.pattern, pos + 1));
        };
        check_nots(&lines[pos..at], &pending_not, pos)?;
        pending_not.clear();
        pos = at + 1;
    }
    check_nots(&lines[pos.min(lines.len())..], &pending_not, pos)
}

fn check_nots(range: &[&str], nots: &[&Check], offset: usize) -> Result<(), String> {
    for c in nots {
        if let Some(i) = range.iter().position(|l| occurs(l, &c.pattern)) {
            return Err(format!("line {}: CHECK-NOT {:?} occurs at output line {}: {:?}", c.line, c.pattern, offset + i + 1, range[i]));
        }
    }
    Ok(())
}

/// The output lines an exact expectation compares (blank lines dropped).
fn significant(output: &str) -> Vec<&str> {
    output.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect()
}

/// The checks must be one CHECK then CHECK-NEXTs equal to the output's lines
/// (leading and trailing blanks aside).
pub fn exact(output: &str, checks: &[Check]) -> Result<(), String> {
    if let Some(c) = checks.iter().enumerate().find(|(i, c)| (*i == 0) != (c.kind == CheckKind::Check) || c.kind == CheckKind::Not) {
        return Err(format!(
            "line {}: this stage's output is checked whole: one CHECK, then a CHECK-NEXT per line (TRITIUM_TEST_BLESS=1 writes them)",
            c.1.line
        ));
    }
    let got = significant(output);
    for (i, c) in checks.iter().enumerate() {
        match got.get(i) {
            Some(l) if l.trim() == c.pattern.trim() => {}
            other => {
                return Err(format!("line {}: expected {:?}, got {:?}\n--- output\n{output}", c.line, c.pattern, other.unwrap_or(&"<end of output>")));
            }
        }
    }
    if got.len() > checks.len() {
        return Err(format!("output continues past the checks with {:?}\n--- output\n{output}", got[checks.len()]));
    }
    Ok(())
}

/// The check lines an exact expectation of `output` consists of (for bless).
pub fn exact_checks(output: &str) -> Vec<String> {
    significant(output)
        .iter()
        .enumerate()
        .map(|(i, l)| format!("// {} {l}", if i == 0 { "CHECK:" } else { "CHECK-NEXT:" }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(spec: &[(CheckKind, &str)]) -> Vec<Check> {
        spec.iter().enumerate().map(|(i, &(kind, p))| Check { kind, pattern: p.to_string(), line: i + 1 }).collect()
    }

    #[test]
    fn filecheck_semantics() {
        use CheckKind::*;
        let out = "a %1 b\nc %10 d\ne f\n";
        assert!(filecheck(out, &checks(&[(Check, "%1"), (Next, "%10"), (Next, "e")])).is_ok());
        assert!(filecheck(out, &checks(&[(Check, "%10"), (Check, "%1")])).is_err(), "order matters");
        assert!(filecheck(out, &checks(&[(Check, "a"), (Next, "e")])).is_err(), "NEXT is the next line");
        assert!(filecheck(out, &checks(&[(Check, "a"), (Not, "d"), (Check, "f")])).is_err());
        assert!(filecheck(out, &checks(&[(Check, "c"), (Not, "a")])).is_ok(), "NOT looks after the previous match");
        assert!(filecheck(out, &checks(&[(Not, "zzz")])).is_ok());
        assert!(filecheck(out, &checks(&[(Check, "value=1")])).is_err());
        assert!(!occurs("value=12", "value=1") && occurs("x value=1", "value=1") && !occurs("fadd float", "add float"));
    }

    #[test]
    fn exact_semantics_and_bless_round_trip() {
        let out = "func @k() {\n  \"return\"() : () -> ()\n}\n";
        let lines = exact_checks(out);
        assert_eq!(lines[1], "// CHECK-NEXT:   \"return\"() : () -> ()");
        let parsed = crate::case::parse_file("t".into(), &format!("// RUN: verify\n{}", lines.join("\n"))).unwrap();
        assert!(exact(out, &parsed[0].checks).is_ok());
        assert!(exact("func @k() {\n}\n", &parsed[0].checks).is_err());
        assert!(exact(&format!("{out}extra\n"), &parsed[0].checks).is_err());
        assert!(exact(out, &parsed[0].checks[..1]).is_err());
    }
}
