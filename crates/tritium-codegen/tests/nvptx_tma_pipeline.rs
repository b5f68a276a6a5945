//! A CPU model of the mbarrier phases of a TMA-pipelined loop: the pipelined
//! IR of a descriptor matmul (`Options::keep_pipelined`) is run on scalars
//! for many trip counts and stage counts, with a model of each stage's
//! barrier (a phase completes once `count` copies were armed; a copy's
//! bytes land at once, which is one order the hardware allows) and of what
//! each stage holds. Every wait must be satisfiable, by the phase of the
//! copies this iteration reads (not an earlier one); no copy may refill a
//! stage before it was read; every copy issued is read, so none is in
//! flight when the ring is invalidated.
use std::collections::HashMap;

use tritium_codegen::{compile_ptx_text, Options};
use tritium_ir::{Attr, Block, Function, Opcode, Value};

fn kernel(stages: u32) -> String {
    format!(
        r#"func @matmul(%a: ptr<f16> {{divisibility = 16, host_descriptor = [128, 64]}}, %am: i32, %ak: i32, %as: i64 {{divisibility = 8}}, %anan: i1, %b: ptr<f16> {{divisibility = 16, host_descriptor = [64, 128]}}, %bk: i32, %bn: i32, %bs: i64 {{divisibility = 8}}, %bnan: i1, %K: i32) attributes {{kernel}} {{
  %one64 = "const"() {{value = 1}} : () -> i64
  %zeros = "const"() {{value = 0.0}} : () -> tensor<128x128xf32>
  %c64 = "const"() {{value = 64}} : () -> i32
  %c0 = "const"() {{value = 0}} : () -> i32
  %c1 = "const"() {{value = 1}} : () -> i32
  %k1 = "add"(%K, %c64) : (i32, i32) -> i32
  %k2 = "sub"(%k1, %c1) : (i32, i32) -> i32
  %nk = "div"(%k2, %c64) : (i32, i32) -> i32
  %pad = "const"() {{value = 0.0}} : () -> f16
  %acc = "for"(%c0, %nk, %c1, %zeros) ({{
  ^bb(%k: i32, %x: tensor<128x128xf32>):
    %kk = "mul"(%k, %c64) : (i32, i32) -> i32
    %ta = "block_load"(%a, %am, %ak, %as, %one64, %c0, %kk, %pad) {{boundary_check = [0, 1], cache = "", descriptor = true, eviction = "", order = [1, 0], volatile = false}} : (ptr<f16>, i32, i32, i64, i64, i32, i32, f16) -> tensor<128x64xf16>
    %tb = "block_load"(%b, %bk, %bn, %bs, %one64, %kk, %c0, %pad) {{boundary_check = [0, 1], cache = "", descriptor = true, eviction = "", order = [1, 0], volatile = false}} : (ptr<f16>, i32, i32, i64, i64, i32, i32, f16) -> tensor<64x128xf16>
    %y = "dot"(%ta, %tb, %x) {{input_precision = "tf32", max_num_imprecise_acc = 0}} : (tensor<128x64xf16>, tensor<64x128xf16>, tensor<128x128xf32>) -> tensor<128x128xf32>
    "yield"(%y) : (tensor<128x128xf32>) -> ()
  }}) {{num_stages = {stages}}} : (i32, i32, i32, tensor<128x128xf32>) -> tensor<128x128xf32>
  %h = "cast"(%acc) : (tensor<128x128xf32>) -> tensor<128x128xf16>
  %cp = "splat"(%a) : (ptr<f16>) -> tensor<128x128xptr<f16>>
  "store"(%cp, %h) {{cache = "", eviction = ""}} : (tensor<128x128xptr<f16>>, tensor<128x128xf16>) -> ()
  "return"() : () -> ()
}}"#
    )
}

/// A ring of barriers and the tiles they guard.
#[derive(Default)]
struct Ring {
    count: u32,
    /// per stage: phases completed, copies armed in the current phase
    done: Vec<u32>,
    armed: Vec<u32>,
}

struct Model {
    types: tritium_ir::TypeTable,
    env: HashMap<Value, i64>,
    rings: HashMap<Value, Ring>,
    /// per (buffer, stage): the offsets of the tile it holds, and whether it was read
    tiles: HashMap<(Value, i64), (Vec<i64>, bool)>,
    /// the iteration running (its induction variable), and reads seen
    iteration: i64,
    reads: u32,
    log: Vec<String>,
}

impl Model {
    fn get(&self, v: Value) -> i64 {
        *self.env.get(&v).unwrap_or_else(|| panic!("%{} has no value in the model", v.0))
    }

    fn run_block(&mut self, f: &Function, block: Block) -> Result<Vec<i64>, String> {
        for &op in &f.blocks[block].ops {
            let d = &f.ops[op];
            let arg = |i: usize| self.get(d.operands[i]);
            let scalar = d.results.len() == 1 && !self.types.is_tensor(f.value_type(d.results[0]));
            let out = match d.opcode {
                Opcode::Const if scalar => d.attrs.get("value").and_then(Attr::as_int),
                Opcode::Add if scalar => Some(arg(0) + arg(1)),
                Opcode::Sub if scalar => Some(arg(0) - arg(1)),
                Opcode::Mul if scalar => Some(arg(0) * arg(1)),
                Opcode::Div if scalar => Some(arg(0) / arg(1)),
                Opcode::Xor if scalar => Some(arg(0) ^ arg(1)),
                Opcode::Select if scalar => Some(if arg(0) != 0 { arg(1) } else { arg(2) }),
                Opcode::Cmp if scalar => {
                    let (a, b) = (arg(0), arg(1));
                    Some(match d.attrs.get("pred").and_then(Attr::as_str).unwrap_or("") {
                        "lt" => (a < b) as i64,
                        "eq" => (a == b) as i64,
                        p => return Err(format!("cmp {p} not modelled")),
                    })
                }
                Opcode::MbarrierInit => {
                    let stages = self.stages(f, d.operands[0]);
                    let count = d.attrs.get("count").and_then(Attr::as_int).unwrap_or(0) as u32;
                    self.rings.insert(d.operands[0], Ring { count, done: vec![0; stages], armed: vec![0; stages] });
                    None
                }
                Opcode::TmaCopy => {
                    let (buf, stage, bars, guard) = (d.operands[0], arg(1), d.operands[2], arg(3));
                    if guard != 0 {
                        if let Some((tile, false)) = self.tiles.get(&(buf, stage)) {
                            return Err(format!("stage {stage} refilled before its tile {tile:?} was read"));
                        }
                        // the offsets: after buf, stage, bars, guard, map, base, 2 shapes, 2 strides
                        let offsets = vec![arg(10), arg(11)];
                        self.tiles.insert((buf, stage), (offsets, false));
                        let ring = self.rings.get_mut(&bars).ok_or("a copy on a ring never initialised")?;
                        let s = stage as usize;
                        ring.armed[s] += 1;
                        if ring.armed[s] == ring.count {
                            ring.armed[s] = 0;
                            ring.done[s] += 1;
                        }
                    }
                    None
                }
                Opcode::MbarrierWait => {
                    let (stage, parity) = (arg(1) as usize, arg(2));
                    let ring = self.rings.get(&d.operands[0]).ok_or("a wait on a ring never initialised")?;
                    // try_wait.parity(p) passes once the phase of parity p completed:
                    // while the barrier is in a phase of parity p it blocks
                    if (ring.done[stage] % 2) as i64 == parity {
                        return Err(format!("iteration {}: wait on stage {stage} parity {parity} never passes", self.iteration));
                    }
                    self.log.push(format!("wait s{stage} p{parity}"));
                    None
                }
                Opcode::LocalView => {
                    let (buf, stage) = (d.operands[0], arg(1));
                    let kk = self.iteration * 64;
                    // A's tiles (128x64) sit at (0, k * 64), B's (64x128) at (k * 64, 0)
                    let want = if self.types.dims(f.value_type(buf))[1] == 128 { vec![0, kk] } else { vec![kk, 0] };
                    match self.tiles.get_mut(&(buf, stage)) {
                        Some((tile, read)) if *tile == want => *read = true,
                        other => return Err(format!("iteration {}: stage {stage} holds {other:?}, not {want:?}", self.iteration)),
                    }
                    self.reads += 1;
                    None
                }
                Opcode::MbarrierInval => {
                    let ring = &self.rings[&d.operands[0]];
                    if ring.armed.iter().any(|&a| a != 0) {
                        return Err("a phase was armed but not completed when the ring was invalidated".into());
                    }
                    if let Some(((_, s), _)) = self.tiles.iter().find(|(_, (_, read))| !read) {
                        return Err(format!("stage {s} was filled but never read (a copy issued past the end)"));
                    }
                    None
                }
                Opcode::For => {
                    let (lb, ub, step) = (arg(0), arg(1), arg(2));
                    let body = f.regions[d.regions[0]].block;
                    let args = f.blocks[body].args.clone();
                    let mut carried: Vec<i64> = d.operands[3..].iter().map(|&v| *self.env.get(&v).unwrap_or(&0)).collect();
                    let mut iv = lb;
                    while iv < ub {
                        self.iteration = iv;
                        self.env.insert(args[0], iv);
                        for (a, &c) in args[1..].iter().zip(&carried) {
                            self.env.insert(*a, c);
                        }
                        carried = self.run_block(f, body)?;
                        iv += step;
                    }
                    for (r, &c) in d.results.iter().zip(&carried) {
                        self.env.insert(*r, c);
                    }
                    None
                }
                Opcode::Yield => return Ok(d.operands.iter().map(|&v| *self.env.get(&v).unwrap_or(&0)).collect()),
                _ => None,
            };
            if let Some(v) = out {
                self.env.insert(d.results[0], v);
            }
        }
        Ok(Vec::new())
    }

    fn stages(&self, f: &Function, buf: Value) -> usize {
        self.types.dims(f.value_type(buf))[0] as usize
    }
}

#[test]
fn barrier_phases_follow_the_ring_for_every_trip_count() {
    for stages in [2, 3, 4] {
        let mut options = Options::new("sm_90a", 4).unwrap();
        options.keep_pipelined = true;
        let out = compile_ptx_text(&kernel(stages), &options).unwrap_or_else(|e| panic!("compile failed: {e}"));
        let m = tritium_ir::parse(&out.pipelined).unwrap_or_else(|e| panic!("the pipelined IR does not parse: {e}\n{}", out.pipelined));
        let (_, f) = m.funcs.iter().find(|(_, f)| f.kernel).expect("a kernel");
        assert!(out.pipelined.contains("\"tma_copy\""), "not pipelined through TMA:\n{}", out.pipelined);
        let k_arg = f.args()[10];
        for trips in 0..(3 * stages as i64 + 2) {
            let mut model = Model {
                types: m.types.clone(),
                env: HashMap::new(),
                rings: HashMap::new(),
                tiles: HashMap::new(),
                iteration: 0,
                reads: 0,
                log: Vec::new(),
            };
            model.env.insert(k_arg, trips * 64);
            for &a in f.args().iter() {
                model.env.entry(a).or_insert(0);
            }
            model.run_block(f, f.entry_block()).unwrap_or_else(|e| panic!("{stages} stages, {trips} trips: {e}\n{:?}", model.log));
            // both tiles of every iteration were read from the stage of their own copies
            assert_eq!(model.reads, 2 * trips as u32, "{stages} stages, {trips} trips");
            // the parities flip each time the read stage wraps
            let want: Vec<String> = (0..trips).map(|i| format!("wait s{} p{}", i % stages as i64, (i / stages as i64) % 2)).collect();
            assert_eq!(model.log, want, "{stages} stages, {trips} trips");
        }
    }
}
