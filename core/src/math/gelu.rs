//! GELU with PyTorch's tanh approximation (`gelu_pytorch_tanh`, candle's `Tensor::gelu`),
//! correctly rounded: gelu(x) = x/2 (1 + tanh(√(2/π) (x + 0.044715 x^3))), with √(2/π) and
//! 0.044715 taken as exact reals, rounded once.
//!
//! Since 1 + tanh(z) = 2/(1 + e^(-2z)): gelu(x) = x σ(w) = x / (1 + e^(-w)) with
//! w = x (A + B x^2), A = 2√(2/π) and B = 0.044715 A (`tools/gen_gelu_coeffs.py` prints
//! them and the figures below). w has x's sign, and for x < 0 the result
//! x e^w / (1 + e^w) is computed without the cancellation of 1 + tanh(z) near -1, down to
//! the subnormals. Notation: u = 2^-53.
//!
//! * Fast path, domain -12 <= x <= f32::MAX (gelu(-12) = -2^-201.9: below, the accurate
//!   path answers at once): w = x `madd`(B, x^2, A) with x^2 exact; E = `exp_fast_f64`(-|w|)
//!   in (0, 1]; r = `recip`(1 + E); σ = r for x >= 0 and E r for x < 0 (as in sigmoid);
//!   result x σ. Nothing overflows (x^3 < 2^385; E underflows to 0 for large x, giving x
//!   exactly). Error:
//!   - w: A and B are rounded to f64 (u each), both terms of the sum are positive so they
//!     move it by u at most, the multiply-add rounds once or twice (2u: fused in the FMA
//!     copies and on CUDA, two roundings in the x86-64 baseline), the product by x u:
//!     w (1 + d), |d| <= 4.01u.
//!   - E: exp's own error 2^-51 = 4u (the result is normal: |w| <= |w(-12)| = 142.46),
//!     and the argument's error |w| d: e_E <= 142.46 * 4.01u + 4u = 575.3u. This is what
//!     dominates, for the most negative x only.
//!   - x < 0: 1 + E is off by e_E E/(1 + E) <= e_E/2 plus its rounding u, the reciprocal
//!     p = 2^-45, E r by e_E + u, x σ by u: 1.5 e_E + 3u + p = 866u + 2^-45 < 2^-42.87.
//!     x >= 0: E's error only enters scaled by E/(1 + E), and |w| d E <= 4.01u |w| e^-|w|
//!     <= 1.48u: below 6u + p.
//!
//!   FAST_REL_ERR = 2^-42 (a compile-time assertion checks the sum).
//! * Accurate path (double-double, ~u^2 = 2^-106 per operation): w = (B x^2 + A) x with A
//!   and B as double-doubles: relative error <= 11u^2.
//!   - |x| < 1: gelu(x) = (x + x t)/2 with t = tanh(w/2) = -m/(2 + m), m = `expm1_dd`(-w):
//!     m within 64u^2 (2^-100) plus 2.0 * 11u^2 (|d ln expm1(v) / d ln v| <= 2 for
//!     |v| <= 1.67), 2 + m >= 1.19, the quotient 15u^2: t within 189u^2; x t (3u^2) and
//!     x + x t, where |t| <= tanh(0.834) = 0.683 amplifies by 2.16: < 417u^2 = 2^-97.3.
//!     The sum stays a double-double, which matters for tiny x: x/2 is then itself a
//!     rounding midpoint of the output format (x subnormal) and only the low part
//!     A x^2/4 decides.
//!   - 1 <= x < 8: x / (1 + E), E = `exp_dd`(-w) (16u^2 + 49.3 * 11u^2; E <= 0.189 scales
//!     it by 0.159 in 1 + E), the quotient 15u^2: < 106u^2 = 2^-99.3.
//!   - -12 <= x < -1: x E / (1 + E), E = `exp_dd`(w): 16u^2 + 142.46 * 11u^2 = 1583u^2
//!     (the argument's error, times |w|, dominates), 1 + E 0.159 of it, the quotient and
//!     the product: < 1856u^2 = 2^-95.1 (2^-97.3 for x >= -4).
//!   - Saturated ranges: x >= 8: 0 < x - gelu(x) = x e^-w / (1 + e^-w) < 2^-71 x, so
//!     gelu(x) lies strictly between x and the f64 below it, which is odd (x is an f32)
//!     and is its round-to-odd. x < -12: 0 < -gelu(x) < 2^-201, below half the smallest
//!     subnormal of every output format, so -2^-1074 stands for it (not its round-to-odd,
//!     but it rounds to -0 in every format exactly as the result does, as silu's).
//! * Exceptional inputs: gelu(±0) = ±0, gelu(+inf) = +inf, gelu(-inf) = -0 (the limit,
//!   approached from below, as silu's), NaN -> NaN.

use super::dd::{DD, round_odd};
use super::exp::{EXP_FAST_F64_REL_ERR, exp_dd, exp_fast_f64, expm1_dd};
use super::madd::madd;
use super::recip::{RECIP_REL_ERR, recip};
use super::unary::CrUnary;

#[doc(hidden)]
pub struct Gelu;

/// 2^-53 (0x3CA0000000000000): the unit roundoff of f64.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);
/// Relative error of `Gelu::fast` (module header): 2^-42.
const GELU_FAST_REL_ERR: f64 = f64::from_bits(0x3D50_0000_0000_0000);
/// 142.5 (0x4061D00000000000): a bound of |w| on the fast domain (|w(-12)| = 142.4504).
const W_MAX: f64 = f64::from_bits(0x4061_D000_0000_0000);
/// -12.0 (0xC028000000000000): the fast domain starts here; below, |gelu(x)| < 2^-201.
const LOW: f64 = f64::from_bits(0xC028_0000_0000_0000);
/// 8.0 (0x4020000000000000): from here on x - gelu(x) < 2^-71 x.
const HIGH: f64 = f64::from_bits(0x4020_0000_0000_0000);
/// 1.0 (0x3FF0000000000000): below it (in magnitude) the accurate path uses tanh.
const TANH_MAX: f64 = f64::from_bits(0x3FF0_0000_0000_0000);
/// 2^-1074 (0x0000000000000001): the smallest positive f64, odd.
const TINY: f64 = f64::from_bits(1);
/// 2 sqrt(2/pi) = 1.5957691216057307118, rounded (fast path)
const A_F64: f64 = f64::from_bits(0x3FF9_8845_33D4_3651);
/// 2 sqrt(2/pi) 0.044715 = 0.071354816272600248776, rounded (fast path)
const B_F64: f64 = f64::from_bits(0x3FB2_444F_2A4D_8B4B);
/// 2 sqrt(2/pi) as a double-double
const A_DD: DD = DD::from_bits(0x3FF9_8845_33D4_3651, 0xBC9C_BC0D_30EB_FD15);
/// 2 sqrt(2/pi) 0.044715 as a double-double
const B_DD: DD = DD::from_bits(0x3FB2_444F_2A4D_8B4B, 0xBC26_C843_A29D_1C70);

/// gelu(x) as a double-double for -12 <= x < 8, x != 0 (module header).
fn gelu_dd(x: f64) -> DD {
    let w = B_DD.mul_f64(x * x).add(A_DD).mul_f64(x);
    if x.abs() < TANH_MAX {
        let m = expm1_dd(w.neg());
        let t = m.neg().div(m.add_f64(2.0));
        t.mul_f64(x).add_f64(x).scale(0.5)
    } else if x > 0.0 {
        DD::from_f64(x).div(exp_dd(w.neg()).add_f64(1.0))
    } else {
        let e = exp_dd(w);
        e.div(e.add_f64(1.0)).mul_f64(x)
    }
}

impl CrUnary for Gelu {
    const FAST_REL_ERR: f64 = {
        // 1.5 e_E + 3u + p, e_E = W_MAX * 4.01u + 2^-51 (module header).
        let e_e = W_MAX * 4.01 * U + EXP_FAST_F64_REL_ERR;
        assert!(1.5 * e_e + 3.0 * U + RECIP_REL_ERR <= GELU_FAST_REL_ERR);
        GELU_FAST_REL_ERR
    };

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        (x as f64) >= LOW && x <= f32::MAX
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let x = x as f64;
        let w = x * madd::<FUSED>(B_F64, x * x, A_F64);
        let e = exp_fast_f64(-w.abs());
        let r = recip::<FUSED>(1.0 + e);
        let s = if x >= 0.0 { r } else { e * r };
        x * s
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() || x == 0.0 || x == f64::INFINITY {
            x
        } else if x >= HIGH {
            f64::from_bits(x.to_bits() - 1)
        } else if x == f64::NEG_INFINITY {
            -0.0
        } else if x < LOW {
            -TINY
        } else {
            round_odd(gelu_dd(x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials() {
        let neg0 = (-0.0f64).to_bits();
        assert_eq!(Gelu::accurate(0.0).to_bits(), 0);
        assert_eq!(Gelu::accurate(-0.0).to_bits(), neg0);
        assert_eq!(Gelu::fast::<true>(-0.0).to_bits(), neg0);
        assert_eq!(Gelu::fast::<false>(0.0).to_bits(), 0);
        assert_eq!(Gelu::accurate(f32::INFINITY), f64::INFINITY);
        assert_eq!(Gelu::accurate(f32::NEG_INFINITY).to_bits(), neg0);
        assert_eq!(Gelu::accurate(-13.0), -TINY);
        assert_eq!(Gelu::accurate(9.0), f64::from_bits(9f64.to_bits() - 1));
        assert!(Gelu::accurate(f32::NAN).is_nan());
        assert!(!Gelu::in_fast_domain(f32::NAN) && !Gelu::in_fast_domain(f32::INFINITY));
        // Large x: E underflows to 0 and the fast path gives x itself.
        assert_eq!(Gelu::fast::<true>(1e30), 1e30f32 as f64);
        assert_eq!(Gelu::fast::<false>(f32::MAX), f32::MAX as f64);
        // gelu(2^-149) = 2^-150 + A 2^-300 / 4 + ...: just above the f32 midpoint.
        let x = f32::from_bits(1);
        assert_eq!(Gelu::accurate(x) as f32, x);
        assert_eq!((Gelu::accurate(-x) as f32).to_bits(), 0x8000_0000);
    }

    /// Both flavours of the fast path within the bound of the accurate path.
    #[test]
    fn fast_agrees_with_accurate() {
        let mut xs: Vec<f32> = (0..40_000)
            .map(|i| (i as f32 - 24_000.0) * 0.000_5)
            .collect();
        xs.extend((-149..0).map(|e| 2f32.powi(e)));
        xs.extend((-149..0).map(|e| -(2f32.powi(e) * 1.375)));
        for x in xs.into_iter().filter(|&x| Gelu::in_fast_domain(x)) {
            let a = Gelu::accurate(x);
            for f in [Gelu::fast::<true>(x), Gelu::fast::<false>(x)] {
                assert!(
                    (f - a).abs() <= (Gelu::FAST_REL_ERR + f64::EPSILON) * a.abs(),
                    "{x:e}: fast {f:e}, accurate {a:e}"
                );
            }
        }
    }

    // The oracle is a workspace tool, absent from the packaged crate (see build.rs).
    #[cfg(repro_workspace)]
    #[test]
    fn accurate_path_matches_mpfr() {
        use crate::math::round::Format;
        use mpfr_oracle::{Func, cr_f32};
        // Every 100003rd bit pattern (~43000 inputs, all exponents and both signs).
        for b in (0..=u32::MAX).step_by(100_003) {
            let x = f32::from_bits(b);
            let ours = <f32 as Format>::round(Gelu::accurate(x));
            let cr = cr_f32(Func::Gelu, x);
            assert_eq!(ours.to_bits(), cr.to_bits(), "gelu({x:e}) ({b:#x})");
        }
    }

    /// The double-double path against MPFR at 200 bits in each regime: within the
    /// header's bounds.
    #[cfg(repro_workspace)]
    #[test]
    fn double_double_path_is_within_its_bounds() {
        use mpfr_oracle::{Func, approx_wide};
        let mut worst = [0f64; 3];
        let mut x = 2f64.powi(-30);
        while x < 12.0 {
            let xf = x as f32 as f64;
            for s in [xf, -xf] {
                if (LOW..HIGH).contains(&s) {
                    let (h, l) = approx_wide(Func::Gelu, s);
                    let d = gelu_dd(s);
                    let e = (((d.hi - h) + (d.lo - l)) / h).abs();
                    let k = if s.abs() < 1.0 {
                        0
                    } else if s > 0.0 {
                        1
                    } else {
                        2
                    };
                    worst[k] = worst[k].max(e);
                }
            }
            x = if x < 0.25 { x * 1.07 } else { x + 0.000_913 };
        }
        eprintln!(
            "gelu_dd: |x| < 1 2^{:.1}, x >= 1 2^{:.1}, x <= -1 2^{:.1}",
            worst[0].log2(),
            worst[1].log2(),
            worst[2].log2()
        );
        let u2 = 2f64.powi(-106);
        assert!(worst[0] < 417.0 * u2, "{:e}", worst[0]);
        assert!(worst[1] < 106.0 * u2, "{:e}", worst[1]);
        assert!(worst[2] < 1856.0 * u2, "{:e}", worst[2]);
    }
}
