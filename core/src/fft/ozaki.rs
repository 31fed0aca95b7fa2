//! `Precision::Ozaki`: the DFT-GEMM and W8 products evaluated exactly on bf16 slices, so
//! that tensor cores (bf16 multiply, f32 accumulate) give the CPU's bits.
//!
//! In a Stockham plan only the radix-8 stages use the sliced W8 product; the radix-4/2
//! stages (entries 0, +-1, +-i) and the mixed-radix 3/5/7 stages keep their butterfly
//! DAGs (butterflies.rs), as under `Precision::F32`: a 3x3, 5x5 or 7x7 product is too
//! small for a tensor-core tile to pay, and the DAG's m products per output are already
//! fewer than the dense product's.
//!
//! Split. A vector x (one butterfly's 8 complex inputs as 16 reals, or one DFT-GEMM row's
//! 2n reals) gets **one** power-of-two scale sigma = 2^e > max |x_k| (e from the exponent
//! bits of the max, which is exact), and every element is cut into S balanced base-256
//! digits on the grids sigma 2^-7, sigma 2^-15, sigma 2^-23, sigma 2^-31:
//! ```text
//! t = x sigma^-1 2^7                (exact: a power-of-two scaling, |t| < 128)
//! d_1 = rint(t);  t = (t - d_1) 256 (exact: |t - d_1| <= 1/2 on the grid of t)
//! d_2 = rint(t);  t = (t - d_2) 256 ...   d_S = rint(t)
//! ```
//! so |d_i| <= 128: integers a bf16 holds exactly. rint is (t + 1.5 2^23) - 1.5 2^23,
//! round-to-nearest-even, exact for |t| < 2^22. The matrix (entries |w| <= 1, sigma = 1)
//! is cut the same way at plan time from its f64 values (error 2^-53, far below the last
//! grid).
//!
//! Products. For each kept slice pair (i, j), `P_ij = sum_k W_i[r][k] d_j[k]` is a sum of
//! K integer products of magnitude <= 2^7 * 2^7, so every partial sum is an integer of
//! magnitude <= K 2^14. **Bit budget: 2 * 7 + log2(K) <= 24** (K = 16 for W8: 18 bits;
//! K = 32 for the n = 16 DFT-GEMM: 19 bits) means every partial sum is exactly
//! representable in f32: P_ij is exact, whatever the order of accumulation or the
//! tensor-core adder tree. Slices are +0 for zero digits (rint's -0 becomes +0), so
//! not even the sign of a zero depends on the order.
//!
//! Combination, in this fixed order on both devices (the only roundings):
//! ```text
//! acc = +0; for level = S + 1 down to 2: for i = 1.. with j = level - i in 1..=S:
//!     acc = acc + P_ij * 2^(-8 (level - 2))
//! out = (acc * 2^(e - 14 - h)) * 2^h     (two power-of-two factors, each representable)
//! ```
//! Pairs with i + j <= S + 1 are kept. With S = 4 (10 products) the dropped pairs and
//! the split are below 2^-31 sigma, so the result carries f32 rounding error only; S = 3
//! (6 products, the split measured at 2.3e-7 per W8 application) loses too much over the
//! log8 n stages of a transform (measured in tests/fft_accuracy.rs), hence S = 4.
//!
//! Non-finite input: a vector whose max is inf or NaN gives NaN in every output of that
//! product (the split has no meaning there).

use super::scalar::{Cx, FftScalar};

/// Slices per operand.
#[doc(hidden)]
pub const SLICES: usize = 4;
/// Magnitude bits of a digit: |d| <= 2^7.
#[doc(hidden)]
pub const DIGIT_BITS: u32 = 7;

/// The bit budget of one slice product of length k: true when every partial sum is an
/// integer exactly representable in f32.
#[doc(hidden)]
pub const fn products_are_exact(k: usize) -> bool {
    // ceil(log2 k)
    let k = if k == 0 { 1 } else { k };
    let log2k = usize::BITS - (k - 1).leading_zeros();
    2 * DIGIT_BITS + log2k <= 24
}

/// 2^k as f32 for -126 <= k <= 127.
#[inline(always)]
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

const RINT_MAGIC: f32 = 12582912.0; // 1.5 * 2^23 = 0x4B400000

/// Round to nearest even integer for |t| < 2^22, with -0 mapped to +0.
#[inline(always)]
fn rint(t: f32) -> f32 {
    ((t + RINT_MAGIC) - RINT_MAGIC) + 0.0
}

/// e with 2^(e-1) <= m < 2^e for a finite m > 0 (from the exponent bits; subnormals
/// included).
#[inline(always)]
#[doc(hidden)]
pub fn scale_exponent(m: f32) -> i32 {
    let b = m.to_bits();
    let biased = (b >> 23) as i32;
    if biased == 0 {
        // Subnormal: m = mant 2^-149, floor(log2 m) = 31 - lz(mant) - 149 - 1 + 1.
        let mant = b & 0x7F_FFFF;
        (31 - mant.leading_zeros() as i32) - 149 + 1
    } else {
        biased - 127 + 1
    }
}

/// The matrix, cut once at plan time: `digits[i][r * k + c]`, row-major rows x k.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct SlicedMatrix {
    pub rows: usize,
    pub k: usize,
    pub digits: Vec<Vec<f32>>,
}

impl SlicedMatrix {
    /// Cuts a real matrix with entries |w| <= 1 (given in f64) into SLICES digit matrices.
    pub fn new(rows: usize, k: usize, w: &[f64]) -> Self {
        assert!(
            products_are_exact(k),
            "slice products of length {k} exceed the f32 budget"
        );
        let mut digits = vec![vec![0f32; rows * k]; SLICES];
        for (idx, &x) in w.iter().enumerate() {
            assert!(x.abs() <= 1.0);
            let mut t = x * 128.0;
            for d in digits.iter_mut() {
                let r = t.round_ties_even();
                d[idx] = (r + 0.0) as f32;
                t = (t - r) * 256.0;
            }
        }
        SlicedMatrix { rows, k, digits }
    }

    /// The real 2m x 2m matrix [[W_re, -W_im], [W_im, W_re]] of a complex m x m matrix
    /// given by (re, im) row-major, acting on [x_re; x_im].
    pub fn complex(m: usize, w_re: &[f64], w_im: &[f64]) -> Self {
        let k = 2 * m;
        let mut w = vec![0f64; k * k];
        for r in 0..m {
            for c in 0..m {
                let (a, b) = (w_re[r * m + c], w_im[r * m + c]);
                w[r * k + c] = a;
                w[r * k + m + c] = -b;
                w[(m + r) * k + c] = b;
                w[(m + r) * k + m + c] = a;
            }
        }
        SlicedMatrix::new(k, k, &w)
    }

    /// out = W x exactly per slice product, combined in the fixed order (module comment).
    /// `x` and `out` have length k (= rows; the matrices here are square).
    pub fn apply(&self, x: &[f32], out: &mut [f32]) {
        let k = self.k;
        debug_assert_eq!(x.len(), k);
        let m = max_abs(x);
        if !m.is_finite() {
            out.fill(f32::from_bits(0x7FC0_0000));
            return;
        }
        if m == 0.0 {
            out.fill(0.0);
            return;
        }
        let e = scale_exponent(m);
        let mut xd = [[0f32; 32]; SLICES];
        split_vector(x, e, &mut xd);
        let h = (e - 14) / 2;
        let (s1, s2) = (pow2(e - 14 - h), pow2(h));
        for (row, o) in out.iter_mut().enumerate().take(self.rows) {
            let mut acc = 0f32;
            for level in (0..SLICES).rev() {
                for i in 0..=level {
                    let j = level - i;
                    let w = &self.digits[i][row * k..(row + 1) * k];
                    let mut p = 0f32;
                    for c in 0..k {
                        p += w[c] * xd[j][c];
                    }
                    acc += p * pow2(-8 * level as i32);
                }
            }
            *o = (acc * s1) * s2;
        }
    }
}

/// max |x_k| (exact, so order-free), or NaN when any x_k is NaN (a NaN loses every `>`,
/// so it is tested for explicitly).
#[inline(always)]
fn max_abs(x: &[f32]) -> f32 {
    let mut m = 0f32;
    for &v in x {
        let a = v.abs();
        if a > m || a.is_nan() {
            m = if a.is_nan() { f32::NAN } else { a };
        }
    }
    m
}

/// Cuts x (length <= 32, finite, scale exponent e of its max) into SLICES digit
/// vectors `xd[i][..x.len()]` (module comment).
#[inline(always)]
fn split_vector(x: &[f32], e: i32, xd: &mut [[f32; 32]; SLICES]) {
    // x * 2^(7 - e) in two exact power-of-two steps (7 - e may exceed 127).
    let a = 7 - e;
    let (a1, a2) = (a / 2, a - a / 2);
    for (c, &v) in x.iter().enumerate() {
        let mut t = (v * pow2(a1)) * pow2(a2);
        for d in xd.iter_mut() {
            let r = rint(t);
            d[c] = r;
            t = (t - r) * 256.0;
        }
    }
}

/// Test hook: the scale exponent e and the SLICES digit vectors that [`SlicedMatrix`]'s
/// product cuts a vector x (length <= 32) into, by the same code; `None` when the max
/// |x_k| is zero or not finite (the product does not slice those).
#[doc(hidden)]
pub fn slice_vector_for_tests(x: &[f32]) -> Option<(i32, Vec<Vec<f32>>)> {
    assert!(x.len() <= 32);
    let m = max_abs(x);
    if !m.is_finite() || m == 0.0 {
        return None;
    }
    let e = scale_exponent(m);
    let mut xd = [[0f32; 32]; SLICES];
    split_vector(x, e, &mut xd);
    Some((e, xd.iter().map(|d| d[..x.len()].to_vec()).collect()))
}

/// Test hook: the digit matrices of [`w8`] (SLICES of them, 16 x 16 row-major, on the
/// real vector [re; im]).
#[doc(hidden)]
pub fn w8_digits_for_tests() -> Vec<Vec<f32>> {
    w8().digits
}

/// The 8-point DFT matrix cut into slices, as the 16 x 16 real matrix on [re; im].
#[doc(hidden)]
pub fn w8() -> SlicedMatrix {
    let (re, im): (Vec<f64>, Vec<f64>) = (0..64u64)
        .map(|idx| super::twiddles::twiddle::<f64>((idx / 8) * (idx % 8), 8))
        .unzip();
    SlicedMatrix::complex(8, &re, &im)
}

/// The Ozaki product of a sliced matrix with complex values in any FFT type: f32 only (the
/// planner never pairs Ozaki with f64).
#[inline(always)]
#[doc(hidden)]
pub fn apply_sliced<T: FftScalar>(w: &SlicedMatrix, v: &mut [Cx<T>]) {
    match T::as_f32_values(v) {
        Some(v) => apply_complex(w, v),
        None => unreachable!("Ozaki products run in f32 only"),
    }
}

/// Applies a sliced complex matrix (2m x 2m real) to m complex values in place.
#[doc(hidden)]
pub fn apply_complex(w: &SlicedMatrix, v: &mut [Cx<f32>]) {
    let m = v.len();
    let mut x = [0f32; 32];
    let mut y = [0f32; 32];
    for (c, z) in v.iter().enumerate() {
        x[c] = z.re;
        x[m + c] = z.im;
    }
    w.apply(&x[..2 * m], &mut y[..2 * m]);
    for (c, z) in v.iter_mut().enumerate() {
        *z = Cx::new(y[c], y[m + c]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget() {
        assert!(products_are_exact(16));
        assert!(products_are_exact(32));
        assert!(products_are_exact(1024));
        assert!(!products_are_exact(1025));
    }

    #[test]
    fn scale_exponent_brackets_the_max() {
        for &m in &[
            1.0f32,
            1.5,
            0.75,
            3.0e38,
            1.0e-40,
            f32::from_bits(1),
            1.0e-30,
        ] {
            let e = scale_exponent(m);
            // 2^e as an f64, exact from its bits (e is within f64's normal range here).
            let p = |e: i32| f64::from_bits(((e + 1023) as u64) << 52);
            let m = m as f64;
            assert!(m < p(e) && m >= p(e - 1), "{m} {e}");
        }
    }

    #[test]
    fn digits_reconstruct_the_input() {
        let w = SlicedMatrix::new(1, 1, &[std::f64::consts::FRAC_1_SQRT_2]);
        let v: f64 = (0..SLICES)
            .map(|i| w.digits[i][0] as f64 * 2f64.powi(-7 - 8 * i as i32))
            .sum();
        assert!((v - std::f64::consts::FRAC_1_SQRT_2).abs() <= 2f64.powi(-8 * SLICES as i32));
        assert!(w.digits.iter().all(|d| d[0].abs() <= 128.0));
    }
}
