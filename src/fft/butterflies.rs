//! The small DFTs the Stockham stages apply, each as one fixed operation DAG.
//!
//! Both devices evaluate exactly these DAGs (CUDA: `kernels/fft/butterflies.cuh`), with
//! no fused multiply-add, so a butterfly's output bits are a pure function of its inputs.
//! Forward transforms only (w = exp(-2 pi i / R)); inverses conjugate around them.
//!
//! DFT2: `(a + b, a - b)`.
//!
//! DFT4 (u0..u3):
//! ```text
//! p0 = u0 + u2   p1 = u0 - u2   p2 = u1 + u3   p3 = -i (u1 - u3)
//! Y0 = p0 + p2   Y1 = p1 + p3   Y2 = p0 - p2   Y3 = p1 - p3
//! ```
//!
//! DFT8, the W8 matrix (w = (1 - i)/sqrt 2) in its radix-2 factorization: one
//! decimation-in-frequency step, then two DFT4s.
//! ```text
//! a_k = v_k + v_{k+4}                     k = 0..3
//! b_0 = v_0 - v_4
//! b_1 = w   (v_1 - v_5):  (x, y) -> ((x + y) c, (y - x) c)
//! b_2 = -i  (v_2 - v_6):  (x, y) -> (y, -x)
//! b_3 = w^3 (v_3 - v_7):  (x, y) -> ((y - x) c, -((x + y) c))
//! (X_0, X_2, X_4, X_6) = DFT4(a)   (X_1, X_3, X_5, X_7) = DFT4(b)
//! ```
//! with c = 1/sqrt 2 rounded to nearest. Relative to the dense 8x8 W8 product this DAG
//! has fewer roundings, and it is the same product: W8 = (I_2 (x) DFT4) P D (DFT2 (x) I_4).
//!
//! Complex multiplication (twiddles): `(a, b) (c, d) = (a c - b d, a d + b c)`.

use super::scalar::FftScalar;
use std::ops::{Add, Mul, Neg, Sub};

/// What the DAGs need of a real type: IEEE +, -, *, exact negation and the W8 constant.
/// Implemented by the scalar types (f32, f64) and by the Stockham stages' lane vectors
/// (stockham.rs), which apply the same scalar operation to every lane, so a lane's bits
/// are those of the scalar DAG.
pub(crate) trait Arith:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self>
{
    /// 1/sqrt(2) rounded to nearest (`FftScalar::FRAC_1_SQRT_2`, in every lane).
    const W8_C: Self;
}

impl<T: FftScalar> Arith for T {
    const W8_C: T = T::FRAC_1_SQRT_2;
}

pub(crate) use super::scalar::Cx;

impl<T: Arith> Cx<T> {
    #[inline(always)]
    pub fn new(re: T, im: T) -> Self {
        Cx { re, im }
    }
    #[inline(always)]
    pub fn add(self, o: Self) -> Self {
        Cx::new(self.re + o.re, self.im + o.im)
    }
    #[inline(always)]
    pub fn sub(self, o: Self) -> Self {
        Cx::new(self.re - o.re, self.im - o.im)
    }
    /// `(a c - b d, a d + b c)`, in that order.
    #[inline(always)]
    pub fn mul(self, w: Self) -> Self {
        Cx::new(
            self.re * w.re - self.im * w.im,
            self.re * w.im + self.im * w.re,
        )
    }
    /// Multiplication by -i (exact).
    #[inline(always)]
    pub fn mul_neg_i(self) -> Self {
        Cx::new(self.im, -self.re)
    }
}

#[inline(always)]
pub(crate) fn dft2<T: Arith>(v: &mut [Cx<T>; 2]) {
    let (a, b) = (v[0], v[1]);
    v[0] = a.add(b);
    v[1] = a.sub(b);
}

#[inline(always)]
pub(crate) fn dft4<T: Arith>(v: &mut [Cx<T>; 4]) {
    let p0 = v[0].add(v[2]);
    let p1 = v[0].sub(v[2]);
    let p2 = v[1].add(v[3]);
    let p3 = v[1].sub(v[3]).mul_neg_i();
    v[0] = p0.add(p2);
    v[1] = p1.add(p3);
    v[2] = p0.sub(p2);
    v[3] = p1.sub(p3);
}

#[inline(always)]
pub(crate) fn dft8<T: Arith>(v: &mut [Cx<T>; 8]) {
    let c = T::W8_C;
    let mut a = [
        v[0].add(v[4]),
        v[1].add(v[5]),
        v[2].add(v[6]),
        v[3].add(v[7]),
    ];
    let d1 = v[1].sub(v[5]);
    let d3 = v[3].sub(v[7]);
    let mut b = [
        v[0].sub(v[4]),
        Cx::new((d1.re + d1.im) * c, (d1.im - d1.re) * c),
        v[2].sub(v[6]).mul_neg_i(),
        Cx::new((d3.im - d3.re) * c, -((d3.re + d3.im) * c)),
    ];
    dft4(&mut a);
    dft4(&mut b);
    *v = [a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3]];
}

/// The radix-R DFT of `v` (R = 2, 4 or 8).
#[inline(always)]
pub(crate) fn dft<T: Arith, const R: usize>(v: &mut [Cx<T>; R]) {
    // The casts are between identical types once R is fixed; `match` on a constant
    // disappears after monomorphization.
    match R {
        2 => dft2((v.as_mut_slice()).try_into().unwrap()),
        4 => dft4((v.as_mut_slice()).try_into().unwrap()),
        8 => dft8((v.as_mut_slice()).try_into().unwrap()),
        _ => unreachable!("radix {R} is not planned"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::twiddles::twiddle;

    /// The DAGs against the defining sum, in f64 with f64 twiddles.
    fn check<const R: usize>() {
        let input: [Cx<f64>; R] =
            std::array::from_fn(|k| Cx::new(k as f64 * 0.37 - 1.1, 0.5 - (k * k) as f64 * 0.11));
        let mut v = input;
        dft::<f64, R>(&mut v);
        for (k, out) in v.iter().enumerate() {
            let mut acc = Cx::new(0.0, 0.0);
            for (j, x) in input.iter().enumerate() {
                let (wr, wi) = twiddle::<f64>((j * k) as u64, R as u64);
                acc = acc.add(x.mul(Cx::new(wr, wi)));
            }
            assert!((acc.re - out.re).abs() < 1e-14 && (acc.im - out.im).abs() < 1e-14);
        }
    }

    #[test]
    fn butterflies_are_dfts() {
        check::<2>();
        check::<4>();
        check::<8>();
    }
}
