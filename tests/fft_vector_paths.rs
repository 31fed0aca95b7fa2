//! The FFT's vector paths give identical bits: the baseline (SSE2 / NEON), AVX2 and
//! AVX-512 copies of the Stockham stage loops differ only in vector width, and every lane
//! evaluates the same scalar operation DAG. Checked for every power of two 2^1..2^20 and
//! for mixed-radix lengths 2^a 3^b 5^c 7^d (stages on vectors of every width and on one
//! lane, odd n, long power-of-two factors) (forward and inverse) at F32 and F64Internal,
//! on the paths this CPU has.

use candle_repro::fft::{FftPlan, Precision};
use candle_repro::math::VectorPath;
use num_complex::Complex32;

fn input(n: usize, seed: u64) -> Vec<Complex32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
    };
    let mut v: Vec<Complex32> = (0..n).map(|_| Complex32::new(next(), next())).collect();
    // Special values travel through every lane position of some vector.
    if n >= 8 {
        v[n / 2 + 1].re = f32::NAN;
        v[n - 3].im = f32::INFINITY;
        v[3].re = -0.0;
        v[5].im = f32::from_bits(1); // subnormal
    }
    v
}

fn bits(v: &[Complex32]) -> Vec<(u32, u32)> {
    v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
}

/// Mixed-radix lengths: odd n (every stage on one lane), short and long power-of-two
/// factors before the radix-7/5/3 stages, the audio lengths (400, 480, 44100, 48000),
/// power-of-two stages whose stride the vector width does not divide (an overlapping last
/// block: 180, 210, 360, 400, 480, 864, 1000) and odd-radix stages on half or a quarter of
/// the widest vector (ns = 8, 4 or 2 below W: 180, 360, 1000).
const MIXED: [usize; 34] = [
    18,
    20,
    21,
    24,
    27,
    45,
    48,
    49,
    60,
    80,
    96,
    105,
    120,
    125,
    180,
    210,
    240,
    343,
    360,
    384,
    400,
    480,
    864,
    1000,
    1536,
    2187,
    2401,
    3125,
    6144,
    10080,
    20480,
    44100,
    48000,
    3 << 15,
];

#[test]
fn every_path_gives_the_same_bits() {
    let paths = VectorPath::available();
    println!("paths on this CPU: {paths:?}");
    for (p, n) in (1..=20)
        .map(|p| (p, 1usize << p))
        .chain(MIXED.map(|n| (n as u32, n)))
    {
        for precision in [Precision::F32, Precision::F64Internal] {
            let plan = FftPlan::new(n, precision).unwrap();
            // Two rows: the second reuses the scratch and holds the NaN and the infinity
            // (`input` puts them in the second half), so the first row stays finite and
            // its outputs are compared bit for bit, not as NaNs.
            let rows = 2;
            let x = input(n * rows, p as u64);
            for inverse in [false, true] {
                let mut want = x.clone();
                plan.transform_with_path(VectorPath::Baseline, &mut want, inverse)
                    .unwrap();
                for &path in &paths[1..] {
                    let mut got = x.clone();
                    plan.transform_with_path(path, &mut got, inverse).unwrap();
                    assert!(
                        bits(&got) == bits(&want),
                        "n = {n}, {precision:?}, inverse = {inverse}: {path:?} differs from the baseline"
                    );
                }
                // The public entry points take the widest path: the same bits again.
                let mut public = x.clone();
                if inverse {
                    plan.inverse(&mut public).unwrap();
                } else {
                    plan.forward(&mut public).unwrap();
                }
                assert!(bits(&public) == bits(&want), "n = {n}, {precision:?}");
            }
        }
    }
}

/// Real rows read by the first stage (`forward_real`, what `rfft` uses) give the bits of
/// the forward transform of the same rows with +0 imaginary parts, on every path, for the
/// Stockham lengths (vector and scalar stages), the Ozaki precision and the other
/// algorithms (Bluestein, the small DFT).
#[test]
fn real_rows_give_the_bits_of_their_complex_rows() {
    let paths = VectorPath::available();
    let mut lengths: Vec<usize> = (1..=20).map(|p| 1usize << p).collect();
    lengths.extend([1, 3, 5, 12, 100, 400, 1000]);
    lengths.extend(MIXED);
    for &n in &lengths {
        for precision in [Precision::F32, Precision::F64Internal, Precision::Ozaki] {
            if precision == Precision::Ozaki && n > 4096 {
                continue; // the scalar reference of the tensor-core stage: slow, same code
            }
            let plan = FftPlan::new(n, precision).unwrap();
            // At least two rows, so that the first is finite (see above).
            let rows = if n <= 4096 { 3 } else { 2 };
            let real: Vec<f32> = input(n * rows, n as u64 ^ 0x5EED)
                .iter()
                .map(|z| z.re)
                .collect();
            let mut want: Vec<Complex32> = real.iter().map(|&v| Complex32::new(v, 0.0)).collect();
            plan.forward(&mut want).unwrap();
            for &path in &paths {
                let mut got = vec![Complex32::new(1.0, 1.0); n * rows];
                plan.forward_real_with_path(path, &real, &mut got).unwrap();
                assert!(
                    bits(&got) == bits(&want),
                    "n = {n}, {precision:?}: real rows on {path:?} differ from their complex rows"
                );
            }
        }
    }
    // Bad lengths are errors.
    let plan = FftPlan::new(8, Precision::F32).unwrap();
    let mut out = [Complex32::new(0.0, 0.0); 8];
    assert!(plan.forward_real(&[0.0; 7], &mut out[..7]).is_err());
    assert!(plan.forward_real(&[0.0; 8], &mut out[..4]).is_err());
}
