//! DFT as a matrix product, for small n: X = W x with `W[k][j] = w_n^{jk}`, complex numbers
//! as split real and imaginary parts and four real matrix-vector products:
//! ```text
//! X_re[k] = S(W_re[k], x_re) - S(W_im[k], x_im)
//! X_im[k] = S(W_re[k], x_im) + S(W_im[k], x_re)
//! S(a, b) = (..((a_0 b_0 + a_1 b_1) + a_2 b_2) + ..) + a_{n-1} b_{n-1}
//! ```
//! The summation order is fixed (j ascending) on both devices. Entries are the correctly
//! rounded twiddles; the error bound is about (n + 1) 2^-24 relative per output in the
//! worst case and sqrt(n) 2^-24 typically, which is why the planner uses this only for
//! n <= 16. Under [`Precision::Ozaki`](super::Precision::Ozaki) the same product is
//! evaluated exactly on bf16 slices instead (ozaki.rs).

use super::scalar::FftScalar;
use super::twiddles::twiddle;

#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct DftGemm<T> {
    pub n: usize,
    /// W row-major, n x n.
    pub w_re: Vec<T>,
    pub w_im: Vec<T>,
}

impl<T: FftScalar> DftGemm<T> {
    pub fn new(n: usize) -> Self {
        let (w_re, w_im) = (0..n * n)
            .map(|idx| twiddle::<T>(((idx / n) * (idx % n)) as u64, n as u64))
            .unzip();
        DftGemm { n, w_re, w_im }
    }

    /// out = W x (forward).
    pub fn forward(&self, x_re: &[T], x_im: &[T], out_re: &mut [T], out_im: &mut [T]) {
        let n = self.n;
        for k in 0..n {
            let wr = &self.w_re[k * n..(k + 1) * n];
            let wi = &self.w_im[k * n..(k + 1) * n];
            let rr = dot(wr, x_re);
            let ii = dot(wi, x_im);
            let ri = dot(wr, x_im);
            let ir = dot(wi, x_re);
            out_re[k] = rr - ii;
            out_im[k] = ri + ir;
        }
    }
}

/// S(a, b) in the fixed order j = 0, 1, .., n-1.
#[inline(always)]
fn dot<T: FftScalar>(a: &[T], b: &[T]) -> T {
    let mut acc = a[0] * b[0];
    for j in 1..a.len() {
        acc = acc + a[j] * b[j];
    }
    acc
}
