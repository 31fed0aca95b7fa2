//! The Burn op against the slice kernel it runs, on the same values (issue 29's speed goal:
//! the Flex path within 10% of the kernel, i.e. no copy and no overhead beyond the output
//! allocation that any op returning a new tensor pays). Both run over rayon's threads in
//! the same chunks; the kernel side allocates its output too.

use burn_tensor::{Device, Tensor, TensorData};
use criterion::{Criterion, criterion_group, criterion_main};
use repro_core::buffer::map_parallel;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let n = 1 << 22;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % 20_001) as f32 - 10_000.0) / 997.0)
        .collect();
    let device = Device::flex();
    let x = Tensor::<1>::from_data(TensorData::new(v.clone(), [n]), &device);
    for (name, kernel) in [
        (
            "exp",
            repro_core::math::exp_slice_uninit::<f32> as fn(&[f32], &mut [_]),
        ),
        ("tanh", repro_core::math::tanh_slice_uninit::<f32>),
    ] {
        let f = burn_repro::by_name::<1>(name).unwrap();
        let mut g = c.benchmark_group(format!("{name} f32 4M"));
        g.sample_size(20);
        g.bench_function("burn-repro on Flex", |b| {
            b.iter(|| black_box(f(black_box(x.clone())).unwrap()))
        });
        g.bench_function("slice kernel (repro-core)", |b| {
            b.iter(|| black_box(map_parallel(black_box(&v), kernel)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
