//! Complex FFT, one row, one thread: candle-repro's `FftPlan::forward` (Precision::F32)
//! against rustfft's f32 forward transform (its AVX code on an AVX machine), same run,
//! same machine, at n = 1024, 65536 and 262144; candle-repro's F64Internal and Ozaki
//! precisions at n = 1024 for information.
//!
//! `cargo bench --bench fft` (`FFT_BENCH_N=65536` runs one length only).
//!
//! Both transforms run in place, over and over, on the same buffer: neither has
//! value-dependent work at F32 / F64Internal (no branches on the data, and magnitudes only
//! grow, so no subnormals appear), so the values the buffer drifts to do not change the
//! time. Ozaki's split has value-dependent shortcuts (an all-zero or non-finite vector),
//! so it is timed on a fresh copy of the input each iteration.

mod common;

use candle_repro::fft::{FftPlan, Precision};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use num_complex::Complex32;
use rustfft::FftPlanner;
use std::hint::black_box;

fn complex_input(n: usize) -> Vec<Complex32> {
    common::input(2 * n, 1.0)
        .chunks_exact(2)
        .map(|p| Complex32::new(p[0], p[1]))
        .collect()
}

fn bench(c: &mut Criterion) {
    let only: Option<usize> = std::env::var("FFT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok());
    for n in [1024usize, 65536, 262144] {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let x = complex_input(n);
        let mut g = c.benchmark_group(format!("fft_{n}"));
        g.throughput(Throughput::Elements(n as u64));
        if n > 1024 {
            g.sample_size(20);
        }

        let plan = FftPlan::new(n, Precision::F32).unwrap();
        let mut buf = x.clone();
        g.bench_function("candle_repro_f32", |b| {
            b.iter(|| plan.forward(black_box(&mut buf)).unwrap())
        });

        let fft = FftPlanner::<f32>::new().plan_fft_forward(n);
        let mut scratch = vec![Complex32::new(0.0, 0.0); fft.get_inplace_scratch_len()];
        let mut buf = x.clone();
        g.bench_function("rustfft_f32", |b| {
            b.iter(|| fft.process_with_scratch(black_box(&mut buf), &mut scratch))
        });

        if n == 1024 {
            let plan = FftPlan::new(n, Precision::F64Internal).unwrap();
            let mut buf = x.clone();
            g.bench_function("candle_repro_f64internal", |b| {
                b.iter(|| plan.forward(black_box(&mut buf)).unwrap())
            });
            let plan = FftPlan::new(n, Precision::Ozaki).unwrap();
            g.bench_function("candle_repro_ozaki", |b| {
                b.iter_batched_ref(
                    || x.clone(),
                    |buf| plan.forward(black_box(buf)).unwrap(),
                    BatchSize::SmallInput,
                )
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
