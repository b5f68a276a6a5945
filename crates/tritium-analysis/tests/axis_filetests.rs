//! Runs `tests/filetests/axis_*.tir`: each file is one module (cases split by
//! `// -----`). Lines `// CHECK: %N key=value ...` state facts of value %N
//! (numbered as the printer numbers them: definition order of a pre-order
//! walk) of the function whose `func @name` header precedes the line; only
//! the keys written are compared (`div`, `contig`, `const`, `value`, each a
//! comma-separated list, one entry per dim, as `AxisFacts::render` prints).
use std::fs;
use std::path::Path;

use tritium_analysis::{CallGraph, ModuleAxisInfo};
use tritium_ir::codec::number_values;
use tritium_ir::{parse, verify};

fn run_case(case: &str) -> Result<usize, String> {
    let module = parse(case).map_err(|e| format!("parse: {e}"))?;
    verify(&module).map_err(|e| format!("verify: {e}"))?;
    let graph = CallGraph::build(&module)?;
    let info = ModuleAxisInfo::compute(&module, &graph);
    let mut current: Option<String> = None;
    let mut checked = 0;
    for (ln, line) in case.lines().enumerate() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("func @") {
            current = Some(rest.split(|c: char| c == '(' || c.is_whitespace()).next().unwrap_or("").trim_matches('"').to_string());
            continue;
        }
        let Some(check) = t.strip_prefix("// CHECK:") else { continue };
        let fname = current.as_deref().ok_or_else(|| format!("line {}: CHECK before any function", ln + 1))?;
        let fid = module.func_by_name(fname).ok_or_else(|| format!("no function @{fname}"))?;
        let func = &module.funcs[fid];
        let mut words = check.split_whitespace();
        let name = words.next().and_then(|w| w.strip_prefix('%')).ok_or_else(|| format!("line {}: CHECK needs %N", ln + 1))?;
        let n: usize = name.parse().map_err(|_| format!("line {}: bad value %{name}", ln + 1))?;
        let v = number_values(func)
            .into_iter()
            .find_map(|(v, k)| (k == n as u64).then_some(v))
            .ok_or_else(|| format!("line {}: @{fname} has no %{n}", ln + 1))?;
        let got = info.func(fid).and_then(|f| f.dims(v)).map(|f| f.render()).unwrap_or_else(|| "<no facts>".into());
        for want in words {
            let key = want.split('=').next().unwrap_or("");
            let have = got.split_whitespace().find(|w| w.split('=').next() == Some(key)).unwrap_or("<missing>");
            if have != want {
                return Err(format!("line {}: @{fname} %{n}: expected {want}, got {got}", ln + 1));
            }
        }
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn axis_filetests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut files: Vec<_> = fs::read_dir(&dir).expect("filetests dir").filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.retain(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("axis_") && n.ends_with(".tir")));
    files.sort();
    assert!(!files.is_empty(), "no axis_*.tir files in {}", dir.display());
    let mut failures = Vec::new();
    let mut total = 0;
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        for (i, case) in text.split("// -----").enumerate() {
            match run_case(case) {
                Ok(0) => failures.push(format!("{} case {i}: no CHECK lines", path.display())),
                Ok(n) => total += n,
                Err(e) => failures.push(format!("{} case {i}: {e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total > 0);
}
