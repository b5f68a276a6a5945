//! A deterministic corpus of mutated tile IR, run through every stage in
//! process: each input must end in a typed error or a compiled kernel, never
//! a panic (and never an abort, which would end this run without its table).
//!
//! Inputs come in three families, all from a seeded generator so a failure
//! is reproduced by its index alone:
//! - `structured`: a generated valid module with 1-3 structural edits
//!   (`mutate::apply`), then verify and, if it verifies, every stage;
//! - `binary`: a valid module (generated, or one of the checked-in `.tir`
//!   files) encoded, then bytes flipped, inserted, deleted, truncated or
//!   overwritten with huge LEB128 numbers, then decode → verify → stages;
//! - `text`: the same modules printed, then token edits (numbers replaced by
//!   0, 3, -1, 2^31, 2^64; type and op names swapped; lines dropped or
//!   repeated), then parse → verify → stages.
//!
//! Usage: cargo run --release --example ir_corpus -- [COUNT] [FIRST_INDEX]
//! (from fuzz/; COUNT defaults to 25000). Prints one table of outcomes.
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use arbitrary::Unstructured;
use tritium_fuzz::{generate, mutate, stages};
use tritium_ir::Module;

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The checked-in `.tir` modules that verify: realistic starting points the
/// generator does not produce (kernels from the frontend, control flow, calls).
fn seed_modules(root: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut dirs = vec![root.join("benches/kernels")];
    for stage_dir in ["ir", "transforms", "analysis", "codegen"] {
        dirs.push(root.join("crates/tritium-filetests/filetests").join(stage_dir));
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "tir")).collect();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            // filetests hold several modules separated by `// -----`
            for chunk in text.split("// -----") {
                if let Ok(m) = tritium_ir::parse(chunk) {
                    if tritium_ir::verify(&m).is_ok() {
                        out.push(m);
                    }
                }
            }
        }
    }
    out
}

fn generated(rng: &mut Rng) -> Option<Module> {
    for _ in 0..8 {
        let len = 256 + rng.below(4096);
        let data = rng.bytes(len);
        if let Ok(m) = generate::module(&mut Unstructured::new(&data)) {
            return Some(m);
        }
    }
    None
}

fn start_module(rng: &mut Rng, seeds: &[Module]) -> Option<Module> {
    if !seeds.is_empty() && rng.below(2) == 0 {
        return Some(seeds[rng.below(seeds.len())].clone());
    }
    generated(rng)
}

const HUGE_LEB: &[&[u8]] = &[
    &[0xff, 0xff, 0xff, 0xff, 0x0f],
    &[0x80, 0x80, 0x80, 0x80, 0x08],
    &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
    &[0x80, 0x80, 0x40],
    &[0x00],
];

fn mutate_bytes(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            bytes.push(rng.next() as u8);
            continue;
        }
        let at = rng.below(bytes.len());
        match rng.below(6) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes[at] = rng.next() as u8,
            2 => bytes.insert(at, rng.next() as u8),
            3 => {
                bytes.remove(at);
            }
            4 => bytes.truncate(at),
            _ => {
                let huge = HUGE_LEB[rng.below(HUGE_LEB.len())];
                let end = (at + huge.len()).min(bytes.len());
                bytes.splice(at..end, huge.iter().copied());
            }
        }
    }
}

const NUMBERS: &[&str] = &["0", "1", "3", "-1", "2147483648", "4294967296", "18446744073709551616", "1048576", "2097152", "65536"];
const TYPES: &[&str] = &["i1", "i8", "i32", "i64", "u32", "f16", "bf16", "f32", "f64", "f8e4m3", "ptr<f32>", "tensor<2147483648xi32>", "tensor<1024x1024xf32>"];

fn mutate_text(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(3) {
        if lines.is_empty() {
            break;
        }
        let at = rng.below(lines.len());
        match rng.below(6) {
            0 => {
                lines.remove(at);
            }
            1 => {
                let l = lines[at].clone();
                lines.insert(at, l);
            }
            2 => lines[at] = replace_token(rng, &lines[at], |c| c.is_ascii_digit(), NUMBERS),
            3 => lines[at] = replace_type(rng, &lines[at]),
            4 => lines[at] = replace_op_name(rng, &lines[at]),
            _ => {
                let l = &lines[at];
                let cut = rng.below(l.len() + 1);
                lines[at] = l.get(..cut).unwrap_or(l).to_string();
            }
        }
    }
    lines.join("\n")
}

/// Replaces one run of characters matching `in_token` with a choice from `with`.
fn replace_token(rng: &mut Rng, line: &str, in_token: impl Fn(char) -> bool, with: &[&str]) -> String {
    let starts: Vec<usize> = line
        .char_indices()
        .filter(|&(i, c)| in_token(c) && !line[..i].chars().next_back().is_some_and(&in_token))
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return line.to_string();
    }
    let s = starts[rng.below(starts.len())];
    let e = line[s..].find(|c: char| !in_token(c)).map_or(line.len(), |n| s + n);
    format!("{}{}{}", &line[..s], with[rng.below(with.len())], &line[e..])
}

fn replace_type(rng: &mut Rng, line: &str) -> String {
    let mut out = line.to_string();
    for t in TYPES {
        if let Some(at) = out.find(t) {
            if rng.below(2) == 0 {
                let with = TYPES[rng.below(TYPES.len())];
                out.replace_range(at..at + t.len(), with);
                return out;
            }
        }
    }
    out
}

fn replace_op_name(rng: &mut Rng, line: &str) -> String {
    let (Some(s), Some(name)) = (line.find("= \""), tritium_ir::OPS.get(rng.below(tritium_ir::OPS.len()))) else { return line.to_string() };
    let s = s + 3;
    match line[s..].find('"') {
        Some(n) => format!("{}{}{}", &line[..s], name.name, &line[s + n..]),
        None => line.to_string(),
    }
}

/// What one input ended in; `Err` is a bug (a panic, or a valid module a stage rejected).
fn outcome(family: usize, rng: &mut Rng, seeds: &[Module]) -> Result<&'static str, String> {
    let module = match family {
        0 => {
            let Some(mut m) = generated(rng) else { return Ok("generator gave up") };
            let data = rng.bytes(64);
            let mut u = Unstructured::new(&data);
            for _ in 0..1 + rng.below(3) {
                let _ = mutate::apply(&mut u, &mut m);
            }
            m
        }
        1 => {
            let Some(m) = start_module(rng, seeds) else { return Ok("generator gave up") };
            let mut bytes = tritium_ir::encode(&m);
            mutate_bytes(rng, &mut bytes);
            match tritium_ir::decode(&bytes) {
                Ok(m) => m,
                Err(_) => return Ok("decode error"),
            }
        }
        _ => {
            let Some(m) = start_module(rng, seeds) else { return Ok("generator gave up") };
            let text = mutate_text(rng, &tritium_ir::print(&m));
            match tritium_ir::parse(&text) {
                Ok(m) => m,
                Err(_) => return Ok("parse error"),
            }
        }
    };
    if tritium_ir::verify(&module).is_err() {
        let _ = tritium_ir::print(&module);
        return Ok("verify error");
    }
    // IR_CORPUS_PRINT=1 shows each module that reaches the stages (to reproduce a failure)
    if std::env::var_os("IR_CORPUS_PRINT").is_some() {
        eprintln!("{}", tritium_ir::print(&module));
    }
    stages::run_all(module).map(|_| "compiled (or a typed codegen refusal)")
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("COUNT and FIRST_INDEX are integers")).collect();
    let count = args.first().copied().unwrap_or(25_000);
    let first = args.get(1).copied().unwrap_or(0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let seeds = seed_modules(&root);
    std::panic::set_hook(Box::new(|_| {})); // panics are reported below with their input index
    let families = ["structured", "binary", "text"];
    let mut table: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut failures = Vec::new();
    let start = std::time::Instant::now();
    for index in first..first + count {
        let family = (index % 3) as usize;
        let mut rng = Rng::new(index);
        let result = catch_unwind(AssertUnwindSafe(|| outcome(family, &mut rng, &seeds)));
        let label = match result {
            Ok(Ok(label)) => label,
            Ok(Err(e)) => {
                failures.push(format!("input {index} ({}): a stage rejected a valid module: {e}", families[family]));
                "BUG: stage rejected a valid module"
            }
            Err(payload) => {
                let msg = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned());
                failures.push(format!("input {index} ({}): panic: {}", families[family], msg.unwrap_or_default()));
                "BUG: panic"
            }
        };
        *table.entry((families[family], label)).or_default() += 1;
    }
    println!("ir_corpus: {count} inputs from index {first} ({} seed modules), {:.1}s", seeds.len(), start.elapsed().as_secs_f64());
    println!("{:<12} {:<42} {:>8}", "family", "outcome", "inputs");
    for ((family, label), n) in &table {
        println!("{family:<12} {label:<42} {n:>8}");
    }
    for f in failures.iter().take(20) {
        eprintln!("{f}");
    }
    if !failures.is_empty() {
        eprintln!("ir_corpus: {} input(s) did not end in a typed error", failures.len());
        std::process::exit(1);
    }
}
