//! The correctly rounded matmul against stock candle's `Tensor::matmul` on the CPU, same
//! run, same inputs: SmolLM2's MLP product x (2048, 576) times a transposed weight
//! (1536, 576), 1024^3, and the decode GEMV (1, 4096) x (4096, 4096)^T, in f32, bf16 and
//! f16; for bf16 and f16 also our product on each route (float, f64) forced.
//!
//! `cargo bench --bench matmul` (RAYON_NUM_THREADS=1 for the one-thread figures;
//! MATMUL_BENCH_CASE=<substring> to run one case; MATMUL_BENCH_PATH=avx2 or baseline to
//! cap our vector path).

mod common;

use candle_core::{DType, Device, Tensor};
use candle_repro::math::VectorPath;
use candle_repro::matmul::{CpuConfig, matmul_with_config};
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
    // MATMUL_BENCH_PATH=avx2 (or baseline): cap our vector path (stock candle keeps its own).
    match std::env::var("MATMUL_BENCH_PATH").as_deref() {
        Ok("avx2") => candle_repro::math::force_vector_path(Some(VectorPath::Avx2)),
        Ok("baseline") => candle_repro::math::force_vector_path(Some(VectorPath::Baseline)),
        _ => {}
    }
    for (name, m, k, n, weight) in cases {
        for dtype in [DType::F32, DType::BF16, DType::F16] {
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
            if dtype != DType::F32 {
                // The same product on each route (the default takes one of them): same bits.
                for (route, on) in [("float_route", true), ("f64_route", false)] {
                    let cfg = CpuConfig {
                        float_route: Some(on),
                        ..CpuConfig::default()
                    };
                    g.bench_function(format!("candle_repro_{route}"), |bch| {
                        bch.iter(|| {
                            matmul_with_config(black_box(&x), black_box(&b), None, None, cfg)
                                .unwrap()
                        })
                    });
                }
            }
            g.bench_function("stock_candle", |bch| {
                bch.iter(|| black_box(&x).matmul(black_box(&b)).unwrap())
            });
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
