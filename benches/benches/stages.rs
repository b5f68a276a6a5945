//! Compile time of each compiler stage on each bench kernel, as criterion
//! groups `stage/kernel` (benches/stage_table.py turns them into a table).
//! A new stage lands with its line in `STAGES` in the same change.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tritium_benches::{kernels_dir, load_kernels, Kernel};

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
];

fn stages(c: &mut Criterion) {
    let kernels = match load_kernels(&kernels_dir()) {
        Ok(k) => k,
        Err(e) => panic!("cannot load bench kernels: {e}"),
    };
    for &(stage, run) in STAGES {
        let mut group = c.benchmark_group(stage);
        for k in &kernels {
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
