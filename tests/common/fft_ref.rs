//! FFT test helpers (`#[path = "common/fft_ref.rs"] mod fft_ref;`): deterministic inputs,
//! the rustfft f64 reference oracle (an independent implementation, error ~1e-16) and
//! error measures. Test code: it may use any platform math.
#![allow(dead_code)]

use candle_repro::fft::{FftPlan, Precision};
use num_complex::{Complex32, Complex64};
use rustfft::FftPlanner;

/// A xorshift64 stream of uniform f64 in (0, 1).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Uniform in 0..k.
    pub fn below(&mut self, k: usize) -> usize {
        (((self.next_u64() >> 32) * k as u64) >> 32) as usize
    }
}

/// `len` complex normal(0,1) samples (Box-Muller in f64, rounded to f32).
pub fn normal_input(len: usize, seed: u64) -> Vec<Complex32> {
    let mut r = Rng::new(seed);
    (0..len)
        .map(|_| {
            let (u, v) = (r.uniform(), r.uniform());
            let rad = (-2.0 * u.ln()).sqrt();
            let t = 2.0 * std::f64::consts::PI * v;
            Complex32::new((rad * t.cos()) as f32, (rad * t.sin()) as f32)
        })
        .collect()
}

/// `len` complex samples with re, im uniform in [-1, 1).
pub fn uniform_input(len: usize, seed: u64) -> Vec<Complex32> {
    let mut r = Rng::new(seed);
    (0..len)
        .map(|_| {
            Complex32::new(
                (2.0 * r.uniform() - 1.0) as f32,
                (2.0 * r.uniform() - 1.0) as f32,
            )
        })
        .collect()
}

/// `len` real normal(0,1) samples.
pub fn normal_real(len: usize, seed: u64) -> Vec<f32> {
    normal_input(len.div_ceil(2), seed)
        .iter()
        .flat_map(|z| [z.re, z.im])
        .take(len)
        .collect()
}

/// The unnormalized rustfft f64 transform of every row of n of `x`.
pub fn reference(x: &[Complex32], n: usize, inverse: bool) -> Vec<Complex64> {
    let mut v: Vec<Complex64> = x
        .iter()
        .map(|z| Complex64::new(z.re as f64, z.im as f64))
        .collect();
    let mut planner = FftPlanner::<f64>::new();
    let plan = if inverse {
        planner.plan_fft_inverse(n)
    } else {
        planner.plan_fft_forward(n)
    };
    for row in v.chunks_exact_mut(n) {
        plan.process(row);
    }
    v
}

/// rustfft's own f32 transform of every row of n.
pub fn rustfft_f32(x: &[Complex32], n: usize) -> Vec<Complex32> {
    let mut y = x.to_vec();
    let plan = FftPlanner::<f32>::new().plan_fft_forward(n);
    for row in y.chunks_exact_mut(n) {
        plan.process(row);
    }
    y
}

/// Our forward (or inverse) transform of every row of n.
pub fn ours(n: usize, p: Precision, x: &[Complex32], inverse: bool) -> Vec<Complex32> {
    let mut y = x.to_vec();
    let plan = FftPlan::new(n, p).unwrap();
    if inverse {
        plan.inverse(&mut y).unwrap();
    } else {
        plan.forward(&mut y).unwrap();
    }
    y
}

/// ||got - want||_2 / ||want||_2 over all values.
pub fn rel_l2(got: &[Complex32], want: &[Complex64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let (mut num, mut den) = (0.0, 0.0);
    for (g, w) in got.iter().zip(want) {
        num += (g.re as f64 - w.re).powi(2) + (g.im as f64 - w.im).powi(2);
        den += w.re * w.re + w.im * w.im;
    }
    (num / den).sqrt()
}

/// The same for real values.
pub fn rel_l2_real(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let (mut num, mut den) = (0.0, 0.0);
    for (g, w) in got.iter().zip(want) {
        num += (*g as f64 - w).powi(2);
        den += w * w;
    }
    (num / den).sqrt()
}

/// max |got - want| over all real and imaginary parts.
pub fn max_abs(got: &[Complex32], want: &[Complex64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (g.re as f64 - w.re).abs().max((g.im as f64 - w.im).abs()))
        .fold(0.0, f64::max)
}

/// Interleaved (re, im) f32 values of complex values.
pub fn interleave(x: &[Complex32]) -> Vec<f32> {
    x.iter().flat_map(|z| [z.re, z.im]).collect()
}

/// Complex values of interleaved (re, im) f32 values.
pub fn deinterleave(v: &[f32]) -> Vec<Complex32> {
    v.chunks_exact(2)
        .map(|c| Complex32::new(c[0], c[1]))
        .collect()
}

/// Rows of interleaved (re, im) f32 for the bit comparisons of the CUDA mirror (host check
/// and GPU test): row r % 8 picks the kind (ordinary values at scales
/// 1, 2^-100, 2^100, 1e-3; a NaN; an infinity; all zeros with signs; subnormals).
pub fn special_rows(rows: usize, n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let mut v = Vec::with_capacity(rows * n * 2);
    for r in 0..rows {
        for j in 0..2 * n {
            let u = next();
            let x = match r % 8 {
                0 => u,
                1 => u * 2f32.powi(-100),
                2 => u * 2f32.powi(100),
                3 => u * 1e-3,
                4 if j == (7 * n / 5) % (2 * n) => f32::NAN,
                5 if j == n / 3 => f32::NEG_INFINITY,
                6 => {
                    if u < 0.0 {
                        -0.0
                    } else {
                        0.0
                    }
                }
                7 => u * f32::from_bits(0x007F_FFFF),
                _ => u,
            };
            v.push(x);
        }
    }
    v
}
