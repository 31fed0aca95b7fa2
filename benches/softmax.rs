//! softmax_last_dim / log_softmax_last_dim against stock candle (`candle_nn::ops`) on the
//! CPU, same run, same machine: 4096 x 4096 in f32 and bf16, and an attention-shaped bf16
//! tensor (1, 32, 2048, 2048).
//!
//! `cargo bench --bench softmax` (RAYON_NUM_THREADS=1 for the one-thread figures).

mod common;

use candle_core::{DType, Device, Tensor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn tensor(shape: &[usize], dtype: DType) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec(common::input(n, 8.0), shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let cases: [(&str, &[usize], DType); 3] = [
        ("4096x4096_f32", &[4096, 4096], DType::F32),
        ("4096x4096_bf16", &[4096, 4096], DType::BF16),
        ("1x32x2048x2048_bf16", &[1, 32, 2048, 2048], DType::BF16),
    ];
    let only = std::env::var("SOFTMAX_BENCH_CASE").ok();
    for (name, shape, dtype) in cases {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let x = tensor(shape, dtype);
        let mut g = c.benchmark_group(format!("softmax_{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(x.elem_count() as u64));
        g.bench_function("candle_repro", |b| {
            b.iter(|| candle_repro::softmax_last_dim(black_box(&x)).unwrap())
        });
        g.bench_function("stock_candle", |b| {
            b.iter(|| candle_nn::ops::softmax_last_dim(black_box(&x)).unwrap())
        });
        g.bench_function("log_softmax/candle_repro", |b| {
            b.iter(|| candle_repro::log_softmax_last_dim(black_box(&x)).unwrap())
        });
        g.bench_function("log_softmax/stock_candle", |b| {
            b.iter(|| candle_nn::ops::log_softmax(black_box(&x), candle_core::D::Minus1).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
