//! The correctly rounded matmul against stock candle's `Tensor::matmul` on the CPU, same
//! run, same inputs: SmolLM2's MLP product x (2048, 576) times a transposed weight
//! (1536, 576), 1024^3, and the decode GEMV (1, 4096) x (4096, 4096)^T, in f32 and bf16.
//!
//! `cargo bench --bench matmul` (RAYON_NUM_THREADS=1 for the one-thread figures;
//! MATMUL_BENCH_CASE=<substring> to run one case).

mod common;

use candle_core::{DType, Device, Tensor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn tensor(shape: (usize, usize), dtype: DType) -> Tensor {
    Tensor::from_vec(common::input(shape.0 * shape.1, 1.0), shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let cases = [
        ("2048x576x1536_wT", 2048, 576, 1536, true),
        ("1024x1024x1024", 1024, 1024, 1024, false),
        ("gemv_1x4096x4096_wT", 1, 4096, 4096, true),
    ];
    let only = std::env::var("MATMUL_BENCH_CASE").ok();
    for (name, m, k, n, weight) in cases {
        for dtype in [DType::F32, DType::BF16] {
            let case = format!("{name}_{dtype:?}").to_lowercase();
            if only.as_deref().is_some_and(|o| !case.contains(o)) {
                continue;
            }
            let x = tensor((m, k), dtype);
            let b = if weight {
                tensor((n, k), dtype).t().unwrap()
            } else {
                tensor((k, n), dtype)
            };
            let mut g = c.benchmark_group(format!("matmul_{case}"));
            g.sample_size(10);
            g.throughput(Throughput::Elements((2 * m * n * k) as u64));
            g.bench_function("candle_repro", |bch| {
                bch.iter(|| candle_repro::matmul(black_box(&x), black_box(&b)).unwrap())
            });
            g.bench_function("stock_candle", |bch| {
                bch.iter(|| black_box(&x).matmul(black_box(&b)).unwrap())
            });
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
