//! AxisInfo soundness on random programs: chains of integer ops over
//! `arange`, splats of arguments and constants are analysed, then evaluated
//! with argument values that satisfy the argument attributes; every fact the
//! analysis states must hold of the concrete values (runs consecutive and
//! starting at multiples of the divisibility, constancy blocks equal).
use tritium_analysis::{AxisFacts, CallGraph, ModuleAxisInfo};
use tritium_ir::{parse, verify, Value};

/// A small deterministic generator (no dependency needed for this).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const N: usize = 64;

#[derive(Clone)]
struct Prog {
    text: String,
    /// Per `%k` (k >= the args), its concrete values.
    vals: Vec<Vec<i64>>,
}

fn wrap(v: i64, unsigned: bool) -> i64 {
    if unsigned {
        v as u32 as i64
    } else {
        v as i32 as i64
    }
}

/// Builds one random program and its concrete evaluation for `args`.
fn build(rng: &mut Rng, unsigned: bool, args: &[(i64, i64)]) -> Prog {
    let ty = if unsigned { "u32" } else { "i32" };
    let tt = format!("tensor<{N}x{ty}>");
    let mut text = String::from("func @k(");
    text.push_str(
        &args
            .iter()
            .enumerate()
            .map(|(i, &(div, _))| format!("%{i}: {ty} {{divisibility = {div}}}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    text.push_str(") attributes {kernel} {\n");
    let mut vals: Vec<Vec<i64>> = args.iter().map(|&(_, v)| vec![v]).collect();
    let mut tensors: Vec<usize> = Vec::new();
    let mut next = args.len();
    let mut emit = |text: &mut String, vals: &mut Vec<Vec<i64>>, line: String, v: Vec<i64>| -> usize {
        text.push_str(&format!("  %{next} = {line}\n"));
        vals.push(v);
        next += 1;
        next - 1
    };
    for _ in 0..14 {
        let choice = if tensors.len() < 2 { rng.below(4) } else { rng.below(11) };
        let id = match choice {
            0 => {
                let start = [0i64, 4, 16, 3, 32][rng.below(5) as usize];
                let v: Vec<i64> = (0..N as i64).map(|i| i + start).collect();
                let it = format!("tensor<{N}xi32>");
                let r = emit(&mut text, &mut vals, format!("\"arange\"() {{end = {}, start = {start}}} : () -> {it}", start + N as i64), v.clone());
                if unsigned {
                    emit(&mut text, &mut vals, format!("\"cast\"(%{r}) : ({it}) -> {tt}"), v)
                } else {
                    r
                }
            }
            1 => {
                let a = rng.below(args.len() as u64) as usize;
                let v = vec![vals[a][0]; N];
                emit(&mut text, &mut vals, format!("\"splat\"(%{a}) : ({ty}) -> {tt}"), v)
            }
            2 => {
                let c = [0i64, 1, 2, 3, 4, 8, 15, 16, 31, 48][rng.below(10) as usize];
                emit(&mut text, &mut vals, format!("\"const\"() {{value = {c}}} : () -> {tt}"), vec![c; N])
            }
            3 => {
                // arg + arange(start): the common index form, negative for negative args
                let a = rng.below(args.len() as u64) as usize;
                let start = [0i64, 8, 3][rng.below(3) as usize];
                let sv = vec![vals[a][0]; N];
                let sp = emit(&mut text, &mut vals, format!("\"splat\"(%{a}) : ({ty}) -> {tt}"), sv);
                let it = format!("tensor<{N}xi32>");
                let av: Vec<i64> = (0..N as i64).map(|i| i + start).collect();
                let mut ar = emit(&mut text, &mut vals, format!("\"arange\"() {{end = {}, start = {start}}} : () -> {it}", start + N as i64), av.clone());
                if unsigned {
                    ar = emit(&mut text, &mut vals, format!("\"cast\"(%{ar}) : ({it}) -> {tt}"), av);
                }
                let v: Vec<i64> = vals[sp].iter().zip(&vals[ar]).map(|(&x, &y)| wrap(x + y, unsigned)).collect();
                emit(&mut text, &mut vals, format!("\"add\"(%{sp}, %{ar}) : ({tt}, {tt}) -> {tt}"), v)
            }
            _ => {
                let a = tensors[rng.below(tensors.len() as u64) as usize];
                let b = tensors[rng.below(tensors.len() as u64) as usize];
                let ops = ["add", "sub", "mul", "shl", "shr", "and", "rem", "div"];
                let op = ops[rng.below(ops.len() as u64) as usize];
                let (x, y) = (&vals[a], &vals[b]);
                // shifts and divisions by constants keep the test meaningful and defined
                if matches!(op, "shl" | "shr" | "rem" | "div") && !y.iter().all(|&k| k == y[0] && (1..8).contains(&k)) {
                    continue;
                }
                let v: Vec<i64> = x
                    .iter()
                    .zip(y)
                    .map(|(&p, &q)| {
                        let r = match op {
                            "add" => p.wrapping_add(q),
                            "sub" => p.wrapping_sub(q),
                            "mul" => p.wrapping_mul(q),
                            "shl" => p << q,
                            "shr" if unsigned => ((p as u32) >> q) as i64,
                            "shr" => ((p as i32) >> q) as i64,
                            "and" => p & q,
                            "rem" if unsigned => ((p as u32) % (q as u32)) as i64,
                            "rem" => ((p as i32).wrapping_rem(q as i32)) as i64,
                            "div" if unsigned => ((p as u32) / (q as u32)) as i64,
                            _ => ((p as i32).wrapping_div(q as i32)) as i64,
                        };
                        wrap(r, unsigned)
                    })
                    .collect();
                emit(&mut text, &mut vals, format!("\"{op}\"(%{a}, %{b}) : ({tt}, {tt}) -> {tt}"), v)
            }
        };
        tensors.push(id);
    }
    text.push_str("  \"return\"() : () -> ()\n}\n");
    Prog { text, vals }
}

fn check(f: &AxisFacts, v: &[i64], unsigned: bool) -> Result<(), String> {
    let (div, contig, cst) = (f.divisibility[0] as i64, f.contiguity[0] as usize, f.constancy[0] as usize);
    for start in (0..v.len()).step_by(contig) {
        if v[start].rem_euclid(div) != 0 && !(div >= 1 << 30 && v[start] == 0) {
            return Err(format!("run at {start} starts at {} (not a multiple of {div})", v[start]));
        }
        for j in 1..contig {
            if wrap(v[start + j] - v[start + j - 1], unsigned) != 1 {
                return Err(format!("run at {start} is not consecutive at {j}"));
            }
        }
    }
    for start in (0..v.len()).step_by(cst) {
        if v[start..start + cst].iter().any(|&x| x != v[start]) {
            return Err(format!("block at {start} of {cst} is not constant"));
        }
    }
    if let Some(x) = f.value {
        if v.iter().any(|&e| e != wrap(x, unsigned)) {
            return Err(format!("value {x} claimed"));
        }
    }
    Ok(())
}

#[test]
fn facts_hold_on_random_programs() {
    let mut rng = Rng(0x5eed);
    let mut checked = 0;
    for case in 0..4000 {
        let unsigned = case % 2 == 1;
        // argument values: multiples of their declared divisibility, some negative
        let args: Vec<(i64, i64)> = (0..3)
            .map(|_| {
                let div = [1i64, 2, 4, 16, 64][rng.below(5) as usize];
                let k = rng.below(40) as i64 - if unsigned { 0 } else { 20 };
                (div, div * k)
            })
            .collect();
        let p = build(&mut rng, unsigned, &args);
        let module = parse(&p.text).unwrap_or_else(|e| panic!("{e}\n{}", p.text));
        verify(&module).unwrap_or_else(|e| panic!("{e}\n{}", p.text));
        let info = ModuleAxisInfo::compute(&module, &CallGraph::build(&module).unwrap());
        let (fid, _) = module.funcs.iter().next().unwrap();
        let fi = info.func(fid).unwrap();
        // values are numbered in definition order here (no regions)
        for (k, concrete) in p.vals.iter().enumerate().skip(args.len()) {
            let v = Value(k as u32);
            let f = fi.dims(v).expect("every value has facts");
            if let Err(e) = check(f, concrete, unsigned) {
                panic!("case {case}, %{k} ({}): {e}\nvalues {concrete:?}\n{}", f.render(), p.text);
            }
            checked += 1;
        }
    }
    assert!(checked > 1000);
}
