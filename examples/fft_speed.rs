//! Complex FFT speed on one thread: candle-repro's `FftPlan::forward` (Precision::F32)
//! against rustfft's f32 forward transform (its AVX code on an AVX machine), in thread CPU
//! time, alternating the two for several rounds and keeping each one's best, so that other
//! work on a shared machine moves the ratio less than it moves wall-clock benches.
//!
//! `cargo run --release --example fft_speed [-- N...]` (Linux; default n = 1024, 65536,
//! 262144; the criterion bench `cargo bench --bench fft` measures the same pairs in wall
//! time).
//!
//! A second table times the tensor ops (`fft`, `rfft`, `irfft` on a contiguous batch of
//! rows, ~1M points) against the in-place row kernel on the same batch: what the op
//! costs beyond the transform (layout, planning, allocation, conversions, the output).
//! The ops run inside a one-thread rayon pool, so the calling thread's CPU time covers
//! all their work. The copy column is candle's `Tensor::copy` of the complex batch: the
//! cost of a fresh output that any op returning a new tensor pays. `FFT_OP_POINTS`
//! (default 2^20) sets the batch size in complex points.

mod common;

use candle_core::{Device, Tensor};
use candle_repro::fft::{FftPlan, Norm, Precision};
use common::best_cpu_time;
use num_complex::Complex32;
use rustfft::FftPlanner;
use std::hint::black_box;

/// Rounds of (ours, rustfft); each round takes the best of `RUNS` timings of each.
const ROUNDS: usize = 8;
const RUNS: usize = 10;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("lengths are integers"))
        .collect();
    let sizes = if args.is_empty() {
        vec![1024, 65536, 262144]
    } else {
        args
    };
    println!(
        "{:>8} {:>12} {:>12} {:>11}",
        "n", "ours us", "rustfft us", "ours/rustfft"
    );
    for &n in &sizes {
        // Transforms per timing: enough work (~1M points) to dwarf the clock's resolution.
        let reps = (1usize << 20).div_ceil(n);
        let x = complex_values(&signal(2 * n, 0x2545_F491_4F6C_DD1D));
        let plan = FftPlan::new(n, Precision::F32).unwrap();
        let stock = FftPlanner::<f32>::new().plan_fft_forward(n);
        let mut scratch = vec![Complex32::new(0.0, 0.0); stock.get_inplace_scratch_len()];
        // In place on one buffer, over and over (reset at each timing): neither transform
        // has value-dependent work at this precision, and the values only grow (to inf and
        // NaN after many passes, which cost the same on x86), never into subnormals.
        let mut buf = x.clone();
        let (mut ours, mut theirs) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..ROUNDS {
            ours = ours.min(best_cpu_time(RUNS, || {
                buf.copy_from_slice(&x);
                for _ in 0..reps {
                    plan.forward(black_box(&mut buf)).unwrap();
                }
            }));
            theirs = theirs.min(best_cpu_time(RUNS, || {
                buf.copy_from_slice(&x);
                for _ in 0..reps {
                    stock.process_with_scratch(black_box(&mut buf), &mut scratch);
                }
            }));
        }
        let us = |t: f64| t * 1e6 / reps as f64;
        println!(
            "{:>8} {:>12.2} {:>12.2} {:>10.2}x",
            n,
            us(ours),
            us(theirs),
            ours / theirs
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    println!(
        "\n{:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "n", "rows", "rows", "fft op", "rfft op", "irfft op", "fft", "rfft", "irfft"
    );
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "", "", "us/row", "us/row", "us/row", "us/row", "us/row", "/rows", "/rows", "/rows"
    );
    for n in sizes {
        pool.install(|| op_overhead(n));
    }
}

/// `len` values in [-1, 1) from a xorshift generator seeded with `seed`.
fn signal(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Interleaved (re, im) values as complex numbers.
fn complex_values(v: &[f32]) -> Vec<Complex32> {
    v.chunks_exact(2)
        .map(|p| Complex32::new(p[0], p[1]))
        .collect()
}

/// The tensor ops on a batch of rows against the in-place rows (one thread).
fn op_overhead(n: usize) {
    let points: usize = std::env::var("FFT_OP_POINTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let rows = points.div_ceil(n);
    let v = signal(2 * n * rows, 0x9E37_79B9_7F4A_7C15);
    let x = complex_values(&v);
    let complex = Tensor::from_vec(v.clone(), (rows, n, 2), &Device::Cpu).unwrap();
    let real = Tensor::from_vec(v[..n * rows].to_vec(), (rows, n), &Device::Cpu).unwrap();
    let half = candle_repro::fft::rfft(&real, Norm::Backward).unwrap();
    let plan = FftPlan::new(n, Precision::F32).unwrap();
    let mut buf = x.clone();
    let inf = f64::INFINITY;
    let (mut t_rows, mut t_fft, mut t_rfft, mut t_irfft) = (inf, inf, inf, inf);
    let mut t_copy = inf;
    for _ in 0..ROUNDS {
        // In place, over and over (as above: no value-dependent work at this precision).
        t_rows = t_rows.min(best_cpu_time(RUNS, || {
            plan.forward(black_box(&mut buf)).unwrap();
        }));
        // What any op that returns a new tensor of this size pays (candle's own copy).
        t_copy = t_copy.min(best_cpu_time(RUNS, || {
            black_box(black_box(&complex).copy().unwrap());
        }));
        t_fft = t_fft.min(best_cpu_time(RUNS, || {
            black_box(candle_repro::fft::fft(black_box(&complex), Norm::Backward).unwrap());
        }));
        t_rfft = t_rfft.min(best_cpu_time(RUNS, || {
            black_box(candle_repro::fft::rfft(black_box(&real), Norm::Backward).unwrap());
        }));
        t_irfft = t_irfft.min(best_cpu_time(RUNS, || {
            black_box(candle_repro::fft::irfft(black_box(&half), Some(n), Norm::Backward).unwrap());
        }));
    }
    let us = |t: f64| t * 1e6 / rows as f64;
    println!(
        "{:>8} {:>10} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>8.2}x {:>8.2}x {:>8.2}x",
        n,
        rows,
        us(t_rows),
        us(t_copy),
        us(t_fft),
        us(t_rfft),
        us(t_irfft),
        t_fft / t_rows,
        t_rfft / t_rows,
        t_irfft / t_rows
    );
}
