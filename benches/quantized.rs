//! Products with quantized weights against stock candle's `QMatMul`, same run, same
//! inputs, and against a copy of the weight's bytes (the memory floor of a GEMV, which
//! reads each byte once): the decode GEMV (1, 4096) x (4096, 4096)^T in Q4_K, Q8_0 and
//! Q6_K, and a prefill product (32, 2048) x (2048, 2048)^T in Q4_K and Q8_0.
//!
//! `cargo bench --bench quantized` (RAYON_NUM_THREADS=1 for the one-thread figures;
//! QUANTIZED_BENCH_CASE=<substring> to run one case).

mod common;

use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Module, Tensor};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use std::hint::black_box;
use std::sync::Arc;

fn bench(c: &mut Criterion) {
    let cases = [
        ("gemv_1x4096x4096", 1, 4096, 4096, GgmlDType::Q4K),
        ("gemv_1x4096x4096", 1, 4096, 4096, GgmlDType::Q8_0),
        ("gemv_1x4096x4096", 1, 4096, 4096, GgmlDType::Q6K),
        ("prefill_32x2048x2048", 32, 2048, 2048, GgmlDType::Q4K),
        ("prefill_32x2048x2048", 32, 2048, 2048, GgmlDType::Q8_0),
    ];
    let only = std::env::var("QUANTIZED_BENCH_CASE").ok();
    for (name, m, k, n, ty) in cases {
        let case = format!("{name}_{ty:?}").to_lowercase();
        if only.as_deref().is_some_and(|o| !case.contains(o)) {
            continue;
        }
        let dev = &Device::Cpu;
        let w = Tensor::from_vec(common::input(n * k, 1.0), (n, k), dev).unwrap();
        let q = Arc::new(QTensor::quantize(&w, ty).unwrap());
        let x = Tensor::from_vec(common::input(m * k, 1.0), (m, k), dev).unwrap();
        let ours = candle_repro::quantized::QMatMul::from_arc(q.clone()).unwrap();
        let stock = candle_core::quantized::QMatMul::from_arc(q.clone()).unwrap();
        let bytes = q.data().unwrap().to_vec();
        let mut dst = vec![0u8; bytes.len()];
        let mut g = c.benchmark_group(format!("quantized_{case}"));
        g.sample_size(20);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("candle_repro", |b| {
            b.iter(|| ours.forward(black_box(&x)).unwrap())
        });
        g.bench_function("stock_candle", |b| {
            b.iter(|| stock.forward(black_box(&x)).unwrap())
        });
        if m == 1 {
            g.bench_function("copy_weight_bytes", |b| {
                b.iter(|| {
                    dst.par_chunks_mut(1 << 16)
                        .zip(black_box(&bytes).par_chunks(1 << 16))
                        .for_each(|(d, s)| d.copy_from_slice(s))
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
