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
//! DFT3, DFT5, DFT7: the symmetric form of an odd radix R = 2m + 1 (m = 1, 2, 3), with
//! C_k = cos(2 pi k / R) and S_k = sin(2 pi k / R) (k = 1..m) rounded to nearest
//! (`FftScalar::BFLY`, from `tools/gen_fft_butterfly_consts.py`). Sums run left to right,
//! every product is rounded on its own, a real constant times a complex value is two real
//! products:
//! ```text
//! a_k = v_k + v_{R-k}    b_k = v_k - v_{R-k}                 k = 1..m
//! Y_0 = ((v_0 + a_1) + a_2) + a_3                            (as many terms as m)
//! for q = 1..m, with p = q k mod R:
//!   A_q = ((v_0 + c_{q,1} a_1) + c_{q,2} a_2) + c_{q,3} a_3   c_{q,k} = C_p, or C_{R-p} when p > m
//!   B_q = ((S_q b_1) +- S_p' b_2) +- S_p'' b_3                + S_p when p <= m, - S_{R-p} when p > m
//!   Y_q     = A_q - i B_q = (A_q.re + B_q.im, A_q.im - B_q.re)
//!   Y_{R-q} = A_q + i B_q = (A_q.re - B_q.im, A_q.im + B_q.re)
//! ```
//! Written out for R = 3 (C_1 = -1/2, whose product is exact):
//! ```text
//! a = v1 + v2   b = v1 - v2   Y0 = v0 + a   A = v0 + C_1 a   B = S_1 b
//! Y1 = (A.re + B.im, A.im - B.re)   Y2 = (A.re - B.im, A.im + B.re)
//! ```
//! and for R = 5, q = 2 (2 * 2 = 4 > 2): A_2 = (v_0 + C_2 a_1) + C_1 a_2,
//! B_2 = S_2 b_1 - S_1 b_2. This is the sum the DFT defines, grouped by the conjugate
//! symmetry of its matrix: every output has m products per real part, no FMA.
//!
//! Complex multiplication (twiddles): `(a, b) (c, d) = (a c - b d, a d + b c)`.

use super::scalar::{BFLY_LEN, FftScalar, bfly_cos};
use std::ops::{Add, Mul, Neg, Sub};

/// What the DAGs need of a real type: IEEE +, -, *, exact negation and the W8 constant.
/// Implemented by the scalar types (f32, f64) and by the Stockham stages' lane vectors
/// (stockham.rs), which apply the same scalar operation to every lane, so a lane's bits
/// are those of the scalar DAG.
#[doc(hidden)]
pub trait Arith:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self>
{
    /// 1/sqrt(2) rounded to nearest (`FftScalar::FRAC_1_SQRT_2`, in every lane).
    const W8_C: Self;
    /// The odd-radix constants (`FftScalar::BFLY`, in every lane).
    const BFLY: [Self; BFLY_LEN];
}

impl<T: FftScalar> Arith for T {
    const W8_C: T = T::FRAC_1_SQRT_2;
    const BFLY: [T; BFLY_LEN] = T::BFLY;
}

#[doc(hidden)]
pub use super::scalar::Cx;

// Named steps of the butterflies' operation DAGs (each one rounding per component), not
// operator overloads: the DAGs read as the fixed sequence the CUDA mirror evaluates.
#[allow(clippy::should_implement_trait)]
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
#[doc(hidden)]
pub fn dft2<T: Arith>(v: &mut [Cx<T>; 2]) {
    let (a, b) = (v[0], v[1]);
    v[0] = a.add(b);
    v[1] = a.sub(b);
}

#[inline(always)]
#[doc(hidden)]
pub fn dft4<T: Arith>(v: &mut [Cx<T>; 4]) {
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
#[doc(hidden)]
pub fn dft8<T: Arith>(v: &mut [Cx<T>; 8]) {
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

/// DFT_R for an odd radix R = 3, 5 or 7: the symmetric DAG of the module comment.
#[inline(always)]
#[doc(hidden)]
pub fn dft_odd<T: Arith, const R: usize>(v: &mut [Cx<T>; R]) {
    let m = (R - 1) / 2;
    let c0 = bfly_cos(R);
    let x0 = v[0];
    let mut a = [x0; 3];
    let mut b = [x0; 3];
    for k in 1..=m {
        a[k - 1] = v[k].add(v[R - k]);
        b[k - 1] = v[k].sub(v[R - k]);
    }
    let mut y0 = x0;
    for ak in a.iter().take(m) {
        y0 = y0.add(*ak);
    }
    v[0] = y0;
    for q in 1..=m {
        let (mut ar, mut ai) = (x0.re, x0.im);
        let (mut br, mut bi) = (x0.re, x0.im);
        for k in 1..=m {
            let p = (q * k) % R;
            let (i, neg) = if p <= m { (p, false) } else { (R - p, true) };
            let c = T::BFLY[c0 + i - 1];
            let s = T::BFLY[c0 + m + i - 1];
            ar = ar + c * a[k - 1].re;
            ai = ai + c * a[k - 1].im;
            let (tr, ti) = (s * b[k - 1].re, s * b[k - 1].im);
            if k == 1 {
                (br, bi) = (tr, ti);
            } else if neg {
                (br, bi) = (br - tr, bi - ti);
            } else {
                (br, bi) = (br + tr, bi + ti);
            }
        }
        v[q] = Cx::new(ar + bi, ai - br);
        v[R - q] = Cx::new(ar - bi, ai + br);
    }
}

/// The radix-R DFT of `v` (R = 2, 3, 4, 5, 7 or 8).
#[inline(always)]
#[doc(hidden)]
pub fn dft<T: Arith, const R: usize>(v: &mut [Cx<T>; R]) {
    // The casts are between identical types once R is fixed; `match` on a constant
    // disappears after monomorphization.
    match R {
        2 => dft2((v.as_mut_slice()).try_into().unwrap()),
        3 | 5 | 7 => dft_odd::<T, R>(v),
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
        check::<3>();
        check::<4>();
        check::<5>();
        check::<7>();
        check::<8>();
    }
}
