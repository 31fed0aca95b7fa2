//! FFT accuracy: relative L2 error against an f64 reference (rustfft in f64, an
//! independent implementation with error ~1e-16), normal(0,1) input, per n and precision,
//! next to rustfft's own f32 error in the same run.

use candle_repro::fft::{FftPlan, Precision};
use num_complex::{Complex32, Complex64};
use rustfft::FftPlanner;

/// Deterministic normal(0,1) samples (xorshift + Box-Muller in f64; test code).
fn normal_input(n: usize, seed: u64) -> Vec<Complex32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u, v) = (uniform(), uniform());
            let r = (-2.0 * u.ln()).sqrt();
            let t = 2.0 * std::f64::consts::PI * v;
            Complex32::new((r * t.cos()) as f32, (r * t.sin()) as f32)
        })
        .collect()
}

fn reference(x: &[Complex32]) -> Vec<Complex64> {
    let mut v: Vec<Complex64> = x
        .iter()
        .map(|z| Complex64::new(z.re as f64, z.im as f64))
        .collect();
    FftPlanner::<f64>::new()
        .plan_fft_forward(v.len())
        .process(&mut v);
    v
}

fn rel_l2(got: &[Complex32], want: &[Complex64]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (g, w) in got.iter().zip(want) {
        num += (g.re as f64 - w.re).powi(2) + (g.im as f64 - w.im).powi(2);
        den += w.re * w.re + w.im * w.im;
    }
    (num / den).sqrt()
}

fn ours(n: usize, p: Precision, x: &[Complex32]) -> Vec<Complex32> {
    let mut y = x.to_vec();
    FftPlan::new(n, p).unwrap().forward(&mut y).unwrap();
    y
}

fn rustfft_f32(x: &[Complex32]) -> Vec<Complex32> {
    let mut y = x.to_vec();
    FftPlanner::<f32>::new()
        .plan_fft_forward(y.len())
        .process(&mut y);
    y
}

#[test]
fn accuracy_table() {
    let sizes = [
        2usize, 3, 8, 16, 64, 100, 1000, 1024, 4096, 12345, 65536, 262144,
    ];
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>10}",
        "n", "rustfft", "F32", "Ozaki", "F64Int"
    );
    for &n in &sizes {
        let x = normal_input(n, n as u64);
        let want = reference(&x);
        let r = rel_l2(&rustfft_f32(&x), &want);
        let f = rel_l2(&ours(n, Precision::F32, &x), &want);
        let o = rel_l2(&ours(n, Precision::Ozaki, &x), &want);
        let d = rel_l2(&ours(n, Precision::F64Internal, &x), &want);
        println!("{n:>8} {r:>10.3e} {f:>10.3e} {o:>10.3e} {d:>10.3e}");
    }
}
