//! Compile time of each compiler stage on each bench kernel, as criterion
//! groups `stage/kernel` (benches/stage_table.py turns them into a table).
//! A new stage lands with its line in `STAGES` in the same change.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tritium_benches::{kernels_dir, load_kernels, Kernel};
use tritium_analysis::CallGraph;
use tritium_codegen::{compile_ptx_until, Options, StopAfter};
use std::collections::HashMap;

use tritium_transforms::{assign_layouts, LayoutOptions, MmaSupport};

/// The compiler stages, in pipeline order: a name and what it runs on a
/// kernel prepared outside the timed loop. A stage that mutates the module
/// clones `k.module` first; the `clone` row shows what the clone itself costs.
type Stage = (&'static str, fn(&Kernel));

const STAGES: &[Stage] = &[
    ("parse", |k| {
        drop(black_box(tritium_ir::parse(black_box(&k.text))))
    }),
    ("decode", |k| {
        drop(black_box(tritium_ir::decode(black_box(&k.bytes))))
    }),
    ("verify", |k| {
        drop(black_box(tritium_ir::verify(black_box(&k.module))))
    }),
    ("encode", |k| {
        drop(black_box(tritium_ir::encode(black_box(&k.module))))
    }),
    ("print", |k| {
        drop(black_box(tritium_ir::print(black_box(&k.module))))
    }),
    ("clone", |k| drop(black_box(black_box(&k.module).clone()))),
    // analyses and transforms, per function, as codegen runs them
    ("call_graph", |k| drop(black_box(CallGraph::build(black_box(&k.module))))),
    ("axis_info", |k| {
        let graph = CallGraph::build(&k.module).expect("bench kernels have a valid call graph");
        drop(black_box(tritium_analysis::ModuleAxisInfo::compute(&k.module, &graph)))
    }),
    // tile-level passes, each on a fresh clone (subtract the `clone` row)
    ("fold", |k| { black_box(tritium_transforms::fold_constants(&mut k.module.clone())); }),
    ("canonicalize", |k| { black_box(tritium_transforms::canonicalize(&mut k.module.clone())); }),
    ("cse", |k| { black_box(tritium_transforms::eliminate_common_subexpressions(&mut k.module.clone())); }),
    ("dce", |k| { black_box(tritium_transforms::eliminate_dead_code(&mut k.module.clone())); }),
    ("run_passes", |k| {
        let opts = tritium_transforms::PassOptions { verify_each: false, ..Default::default() };
        drop(black_box(tritium_transforms::run_passes(&mut k.module.clone(), &opts, None)))
    }),
    ("assign_layouts", |k| {
        let mut m = k.module.clone();
        let opts = LayoutOptions { num_warps: 4, warp_size: 32, max_access_bytes: 16, mma: MmaSupport::V2 { fp8: true }, fast_dims: Default::default() };
        let funcs: Vec<_> = m.funcs.keys().collect();
        let mut maps = HashMap::new();
        for f in funcs {
            let map = assign_layouts(&mut m, f, &opts, &maps);
            maps.insert(f, map);
        }
        drop(black_box(maps));
    }),
    // Codegen stages are prefixes of one pipeline (LLVM's context cannot
    // outlive a stage), so each row includes the ones before it:
    // optimize - lower is LLVM's O3, emit - optimize is PTX emission.
    ("llvm_lower", |k| codegen(k, StopAfter::Lower)),
    ("llvm_optimize", |k| codegen(k, StopAfter::Optimize)),
    ("ptx_emit", |k| codegen(k, StopAfter::Emit)),
];

fn codegen(k: &Kernel, stop: StopAfter) {
    let options = Options::new("sm_90", 4).expect("sm_90 with 4 warps is a valid target");
    drop(black_box(compile_ptx_until(black_box(&k.module), &options, stop)))
}

/// Codegen stages only run on kernels the backend can compile (it does not
/// lower every op yet); timing an early error would mislead.
fn supported(stage: &str, k: &Kernel) -> bool {
    if !stage.starts_with("llvm_") && stage != "ptx_emit" {
        return true;
    }
    let options = Options::new("sm_90", 4).expect("valid target");
    compile_ptx_until(&k.module, &options, StopAfter::Lower).is_ok()
}

fn stages(c: &mut Criterion) {
    let kernels = match load_kernels(&kernels_dir()) {
        Ok(k) => k,
        Err(e) => panic!("cannot load bench kernels: {e}"),
    };
    for &(stage, run) in STAGES {
        let mut group = c.benchmark_group(stage);
        for k in kernels.iter().filter(|k| supported(stage, k)) {
            group.throughput(Throughput::Elements(k.ops));
            group.bench_function(&k.name, |b| b.iter(|| run(k)));
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // small budgets: the whole suite should run in a few minutes on 2 cores
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = stages
}
criterion_main!(benches);
