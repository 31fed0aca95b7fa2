//! Bluestein's algorithm for any n with a prime factor >= 11 (above the DFT-GEMM sizes;
//! the 7-smooth n run the mixed-radix Stockham): the DFT as a chirp-weighted cyclic convolution of length m = 2^ceil(log2(2n-1)),
//! computed with power-of-two transforms.
//!
//! With c_j = exp(-pi i j^2 / n) (j^2 reduced mod 2n in integers, twiddles.rs) and
//! jk = (j^2 + k^2 - (k-j)^2) / 2:
//! ```text
//! a_j = x_j c_j  (j < n), 0 (n <= j < m)
//! A   = FFT_m(a)
//! A_k = A_k B_k,  B = FFT_m(b) / m,  b_l = conj(c_l) for l < n and b_{m-l} = conj(c_l)
//! y   = conj(FFT_m(conj(A)))          (the unnormalized inverse; 1/m is inside B)
//! X_k = y_k c_k  (k < n)
//! ```
//! Multiplications are the complex products of butterflies.rs, in the order written.
//! B is computed once at plan time in f64 (Stockham) and rounded once to the working
//! type, so it adds a single rounding; the two length-m transforms run at the plan's
//! precision. The error is about sqrt(2) times a power-of-two transform of length m
//! (measured in tests/fft_accuracy.rs).

use super::butterflies::Cx;
use super::scalar::FftScalar;
use super::stockham::Stockham;
use super::twiddles::chirp_dd;

#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct Bluestein<T> {
    pub n: usize,
    pub m: usize,
    pub chirp_re: Vec<T>,
    pub chirp_im: Vec<T>,
    pub kernel_re: Vec<T>,
    pub kernel_im: Vec<T>,
    pub inner: Stockham<T>,
}

impl<T: FftScalar> Bluestein<T> {
    pub fn new(n: usize, ozaki: bool) -> Self {
        let m = (2 * n - 1).next_power_of_two();
        let chirp: Vec<(f64, f64, T, T)> = (0..n as u64)
            .map(|j| {
                let (c, s) = chirp_dd(j, n as u64);
                (c.hi + c.lo, s.hi + s.lo, T::from_dd(c), T::from_dd(s))
            })
            .collect();
        // b in f64, then its transform in f64, scaled by 1/m (exact) and rounded once.
        let (mut b_re, mut b_im) = (vec![0f64; m], vec![0f64; m]);
        for (l, &(c, s, _, _)) in chirp.iter().enumerate() {
            b_re[l] = c;
            b_im[l] = -s;
            if l > 0 {
                b_re[m - l] = c;
                b_im[m - l] = -s;
            }
        }
        let (mut sr, mut si) = (vec![0f64; m], vec![0f64; m]);
        Stockham::<f64>::new(m, false).forward(&mut b_re, &mut b_im, &mut sr, &mut si);
        let inv_m = 1.0 / m as f64;
        Bluestein {
            n,
            m,
            chirp_re: chirp.iter().map(|c| c.2).collect(),
            chirp_im: chirp.iter().map(|c| c.3).collect(),
            kernel_re: b_re.iter().map(|&v| T::from_f64(v * inv_m)).collect(),
            kernel_im: b_im.iter().map(|&v| T::from_f64(v * inv_m)).collect(),
            inner: Stockham::new(m, ozaki),
        }
    }

    /// Scratch length in T: four buffers of m.
    pub fn scratch_len(&self) -> usize {
        4 * self.m
    }

    /// Forward transform of (re, im) (length n) in place.
    pub fn forward(&self, re: &mut [T], im: &mut [T], scratch: &mut [T]) {
        let (n, m) = (self.n, self.m);
        let (a_re, rest) = scratch.split_at_mut(m);
        let (a_im, rest) = rest.split_at_mut(m);
        let (s_re, s_im) = rest.split_at_mut(m);
        for j in 0..n {
            let a = Cx::new(re[j], im[j]).mul(Cx::new(self.chirp_re[j], self.chirp_im[j]));
            a_re[j] = a.re;
            a_im[j] = a.im;
        }
        a_re[n..].fill(T::ZERO);
        a_im[n..].fill(T::ZERO);
        self.inner.forward(a_re, a_im, s_re, s_im);
        // Pointwise product, then conjugate for the inverse transform.
        for k in 0..m {
            let p = Cx::new(a_re[k], a_im[k]).mul(Cx::new(self.kernel_re[k], self.kernel_im[k]));
            a_re[k] = p.re;
            a_im[k] = -p.im;
        }
        self.inner.forward(a_re, a_im, s_re, s_im);
        for k in 0..n {
            let y = Cx::new(a_re[k], -a_im[k]);
            let x = y.mul(Cx::new(self.chirp_re[k], self.chirp_im[k]));
            re[k] = x.re;
            im[k] = x.im;
        }
    }
}
