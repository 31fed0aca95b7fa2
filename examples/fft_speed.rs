//! Complex FFT speed on one thread: candle-repro's `FftPlan::forward` (Precision::F32)
//! against rustfft's f32 forward transform (its AVX code on an AVX machine), in thread CPU
//! time, alternating the two for several rounds and keeping each one's best, so that other
//! work on a shared machine moves the ratio less than it moves wall-clock benches.
//!
//! `cargo run --release --example fft_speed [-- N...]` (Linux; default n = 1024, 65536,
//! 262144; the criterion bench `cargo bench --bench fft` measures the same pairs in wall
//! time).

mod common;

use candle_repro::fft::{FftPlan, Precision};
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
    for n in sizes {
        // Transforms per timing: enough work (~1M points) to dwarf the clock's resolution.
        let reps = (1usize << 20).div_ceil(n);
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let x: Vec<Complex32> = (0..n).map(|_| Complex32::new(next(), next())).collect();
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
}
