//! Softplus ln(1 + e^x), correctly rounded as a whole.
//!
//! softplus(x) = max(x, 0) + log1p(e^-|x|): the exponential never overflows, log1p's
//! argument lies in (0, 1], and for x > 0 both terms are positive (no cancellation).
//!
//! * Fast path: E = `exp_f32_fast(-|x|)` in (0, 1], then log1p(E) = 2 atanh(s) with
//!   s = E/(2 + E) = E `recip`(2 + E) in (0, 1/3]: 2 atanh(s) = 2s (1 + t H(t)),
//!   t = s^2 <= 1/9, H a degree-9 polynomial (Estrin; `tools/gen_softplus_coeffs.py`,
//!   relative error of 1 + tH 2^-56.96 on a 6001-point grid). No table, no f64 division
//!   and no cancellation. Result max(x, 0) + L. Error, with u = 2^-53,
//!   e1 = F32_FAST_REL_ERR = 2^-44 and p = RECIP_REL_ERR = 2^-45:
//!   - s: d ln s / d ln E = 2/(2 + E) <= 1, so E's error moves s by at most e1; the sum
//!     2 + E (u), the reciprocal (p) and the product (u) add: |ds/s| <= e1 + p + 2u.
//!   - 2 atanh(s) as a function of s: d ln / d ln s = s/((1 - s^2) atanh s) <= 9/8
//!     (atanh s >= s, s <= 1/3): (9/8)(1.5 e1 + 2u) = 1.6875 e1 + 2.25u.
//!   - evaluation: t H(t) <= 0.04, so the roundings of t, of the Estrin steps (all terms
//!     positive, H ~ 1/3, every partial sum within 4u relative) and of the products move
//!     L by < 0.04 * 7u; the final sum 2s + 2s(tH) adds u; polynomial 2^-56.96 = 0.07u.
//!     L: < 1.6875 e1 + 3.6u. The multiply-adds are `madd`s, fused (one rounding) in the
//!     FMA copies and on CUDA, unfused in the x86-64 baseline: two roundings are counted.
//!   - for x > 0, x + L (both positive) adds u: below 1.6875 e1 + 4.6u < 1.7 e1
//!     (second-order terms are far below u). FAST_REL_ERR = 2 e1 = 2^-43.
//!
//!   Fast domain: |x| <= 128, where `exp_f32_fast` holds (softplus(-128) < 2^-184 is below
//!   every output format; beyond 40 the accurate path answers at once).
//! * Accurate path: x <= 0: `log1p_dd(exp_dd(x))`; x > 0: x + `log1p_dd(exp_dd(-x))`.
//!   exp_dd and log1p_dd are ~2^-100 relative; exp's error is carried through log1p with
//!   a factor at most 1 (as above), the final double-double addition adds 3u^2: ~2^-98.
//!   Near 0, softplus = ln 2 + x/2 + x^2/8 - ...: the double-double keeps these terms at
//!   2^-100 absolute, enough for the structural near-ties there. Saturated ranges:
//!   x >= 40: softplus = x + e^-x (1 - ...) with 0 < e^-x < 2^-57 < ulp(x)/2, strictly
//!   between x and the next f64 up, whose round-to-odd is that next f64 (odd, since x is
//!   an f32). x < -128: 0 < softplus < e^-128 < 2^-184, below half of every format's
//!   smallest subnormal -> 2^-1074 (not the round-to-odd f64, but it rounds to +0 in
//!   every format exactly as the result does).
//! * Exceptional inputs: softplus(+inf) = +inf, softplus(-inf) = +0, NaN -> NaN.

use super::dd::{DD, round_odd};
use super::exp::{F32_FAST_REL_ERR, exp_dd, exp_f32_fast};
use super::log::log1p_dd;
use super::madd::madd;
use super::recip::{RECIP_REL_ERR, recip};
use super::unary::CrUnary;

#[doc(hidden)]
pub struct Softplus;

/// 1 + t H(t) ~ atanh(sqrt t)/sqrt t on [0, 1/9]: coefficients printed by
/// `tools/gen_softplus_coeffs.py` (relative error 2^-56.96).
/// H_0 ~ 0.3333333333333333
const H0: f64 = f64::from_bits(0x3FD5_5555_5555_5555);
/// H_1 ~ 0.20000000000007292
const H1: f64 = f64::from_bits(0x3FC9_9999_9999_A3DD);
/// H_2 ~ 0.1428571428355438
const H2: f64 = f64::from_bits(0x3FC2_4924_923D_44C6);
/// H_3 ~ 0.11111111358713932
const H3: f64 = f64::from_bits(0x3FBC_71C7_2714_3318);
/// H_4 ~ 0.09090894718066429
const H4: f64 = f64::from_bits(0x3FB7_45CF_0B0E_03BD);
/// H_5 ~ 0.07692785032479312
const H5: f64 = f64::from_bits(0x3FB3_B18B_294B_EBF9);
/// H_6 ~ 0.06657072104827468
const H6: f64 = f64::from_bits(0x3FB1_0AC7_5DC6_02B1);
/// H_7 ~ 0.06000536404795356
const H7: f64 = f64::from_bits(0x3FAE_B905_E857_5054);
/// H_8 ~ 0.04400369243072337
const H8: f64 = f64::from_bits(0x3FA6_87A6_E7C9_5176);
/// H_9 ~ 0.08082022805971766
const H9: f64 = f64::from_bits(0x3FB4_B0A2_6C5F_2AEF);
/// 128.0 (0x4060000000000000): fast-domain limit, that of `exp_f32_fast`.
const FAST_MAX: f64 = f64::from_bits(0x4060_0000_0000_0000);
/// 40.0 (0x4044000000000000): above it 0 < softplus(x) - x < e^-40 < 2^-57.
const SAT_HIGH: f64 = f64::from_bits(0x4044_0000_0000_0000);
/// -128.0 (0xC060000000000000): below it softplus(x) < e^-128 < 2^-184; the fast domain
/// ends here too, so no input takes the double-double path only to round to zero.
const SAT_LOW: f64 = f64::from_bits(0xC060_0000_0000_0000);
/// 2^-1074 (0x0000000000000001): the smallest positive f64, odd.
const TINY: f64 = f64::from_bits(1);

impl CrUnary for Softplus {
    // 2 e1 = 2^-43 (header), e1 = F32_FAST_REL_ERR; the header's sum takes p <= e1/2.
    const FAST_REL_ERR: f64 = {
        assert!(RECIP_REL_ERR <= 0.5 * F32_FAST_REL_ERR);
        2.0 * F32_FAST_REL_ERR
    };

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        (x as f64).abs() <= FAST_MAX
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        // Total for every lane: exp_f32_fast masks its table index.
        let e = exp_f32_fast::<FUSED>(-x.abs());
        let x = x as f64;
        let s = e * recip::<FUSED>(2.0 + e);
        let t = s * s;
        // Estrin's scheme: short dependency chains for the vector loop.
        let t2 = t * t;
        let t4 = t2 * t2;
        let m = madd::<FUSED>;
        let b0 = m(t2, m(t, H3, H2), m(t, H1, H0));
        let b1 = m(t2, m(t, H7, H6), m(t, H5, H4));
        let h = m(t4 * t4, m(t, H9, H8), m(t4, b1, b0));
        let s2 = s + s;
        let l = m(s2, t * h, s2);
        let p = if x > 0.0 { x } else { 0.0 };
        p + l
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() || x == f64::INFINITY {
            x
        } else if x >= SAT_HIGH {
            f64::from_bits(x.to_bits() + 1)
        } else if x < SAT_LOW {
            // -inf included: its limit is +0, every finite x there gives a positive tiny.
            if x == f64::NEG_INFINITY { 0.0 } else { TINY }
        } else if x > 0.0 {
            round_odd(log1p_dd(exp_dd(DD::from_f64(-x))).add_f64(x))
        } else {
            round_odd(log1p_dd(exp_dd(DD::from_f64(x))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials() {
        assert_eq!(Softplus::accurate(f32::INFINITY), f64::INFINITY);
        assert_eq!(Softplus::accurate(f32::NEG_INFINITY).to_bits(), 0);
        assert!(Softplus::accurate(f32::NAN).is_nan());
        assert_eq!(Softplus::accurate(-1000.0), TINY);
        assert_eq!(Softplus::accurate(50.0) as f32, 50.0);
    }

    #[test]
    fn fast_agrees_with_accurate() {
        for i in 0..20000 {
            let x = (i as f32 - 10000.0) * 0.011;
            let a = Softplus::accurate(x);
            for f in [Softplus::fast::<true>(x), Softplus::fast::<false>(x)] {
                assert!(
                    (f - a).abs() <= Softplus::FAST_REL_ERR * a.abs() + f64::EPSILON * a.abs(),
                    "{x}: {f} {a}"
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
            let ours = <f32 as Format>::round(Softplus::accurate(x));
            let cr = cr_f32(Func::Softplus, x);
            assert_eq!(ours.to_bits(), cr.to_bits(), "softplus({x:e}) ({b:#x})");
        }
    }
}
