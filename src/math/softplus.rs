//! Softplus ln(1 + e^x), correctly rounded as a whole.
//!
//! softplus(x) = max(x, 0) + log1p(e^-|x|): the exponential never overflows, log1p's
//! argument lies in (0, 1], and for x > 0 both terms are positive (no cancellation).
//!
//! * Fast path: E = `exp_fast_f64(-|x|)` (total: it clamps its argument, so every lane
//!   is safe), L = `log1p_fast_f64(E)`, result max(x, 0) + L. Error,
//!   with u = 2^-53, e1 = EXP_FAST_F64_REL_ERR, e2 = LOG1P_FAST_F64_REL_ERR:
//!   E = e^-|x| (1 + t), |t| <= e1, moves log1p by at most |t| e^-|x|/(1 + e^-|x|) (mean
//!   value theorem, to first order), and log1p(s) >= s/(1 + s) for s >= 0, so relatively
//!   by at most e1 (1 + e1); log1p_fast adds e2; for x > 0 the sum of two positive terms
//!   adds u. Total < e1 + e2 + u + 2^-90; FAST_REL_ERR = e1 + e2 + 2u.
//!   Fast domain: -700 <= x < +inf (e^-700 > 2^-1011 is a normal f64, so E keeps its
//!   relative accuracy; for x > 700, E may underflow but L < 2^-1000 x is negligible).
//! * Accurate path: x <= 0: `log1p_dd(exp_dd(x))`; x > 0: x + `log1p_dd(exp_dd(-x))`.
//!   exp_dd and log1p_dd are ~2^-100 relative; exp's error is carried through log1p with
//!   a factor at most 1 (as above), the final double-double addition adds 3u^2: ~2^-98.
//!   Near 0, softplus = ln 2 + x/2 + x^2/8 - ...: the double-double keeps these terms at
//!   2^-100 absolute, enough for the structural near-ties there. Saturated ranges:
//!   x >= 40: softplus = x + e^-x (1 - ...) with 0 < e^-x < 2^-57 < ulp(x)/2, strictly
//!   between x and the next f64 up, whose round-to-odd is that next f64 (odd, since x is
//!   an f32); x < -200: 0 < softplus < e^-200 < 2^-288 -> 2^-1074 (rounds to +0).
//! * Exceptional inputs: softplus(+inf) = +inf, softplus(-inf) = +0, NaN -> NaN.

use super::dd::{DD, round_odd};
use super::exp::{EXP_FAST_F64_REL_ERR, exp_dd, exp_fast_f64};
use super::log::{LOG1P_FAST_F64_REL_ERR, log1p_dd, log1p_fast_f64};
use super::unary::CrUnary;

pub(crate) struct Softplus;

/// 2^-53 (0x3CA0000000000000): the unit roundoff of f64.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);
/// -700.0 (0xC085E00000000000): fast-domain limit.
const FAST_MIN: f64 = f64::from_bits(0xC085_E000_0000_0000);
/// 40.0 (0x4044000000000000): above it 0 < softplus(x) - x < e^-40 < 2^-57.
const SAT_HIGH: f64 = f64::from_bits(0x4044_0000_0000_0000);
/// -200.0 (0xC069000000000000): below it softplus(x) < e^-200 < 2^-288.
const SAT_LOW: f64 = f64::from_bits(0xC069_0000_0000_0000);
/// 2^-1074 (0x0000000000000001): the smallest positive f64, odd.
const TINY: f64 = f64::from_bits(1);

impl CrUnary for Softplus {
    const FAST_REL_ERR: f64 = EXP_FAST_F64_REL_ERR + LOG1P_FAST_F64_REL_ERR + 2.0 * U;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        let x = x as f64;
        x >= FAST_MIN && x < f64::INFINITY
    }

    #[inline(always)]
    fn fast(x: f32) -> f64 {
        let x = x as f64;
        // exp_fast_f64 clamps its argument itself: total for every lane.
        let l = log1p_fast_f64(exp_fast_f64(-x.abs()));
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
            let f = Softplus::fast(x);
            let a = Softplus::accurate(x);
            assert!(
                (f - a).abs() <= Softplus::FAST_REL_ERR * a.abs() + f64::EPSILON * a.abs(),
                "{x}: {f} {a}"
            );
        }
    }

    #[test]
    fn accurate_path_matches_mpfr() {
        use crate::math::round::Format;
        use mpfr_oracle::{Func, cr_f32};
        // Every 100003rd bit pattern (~43000 inputs, all exponents and both signs).
        for b in (0..=u32::MAX).step_by(100_003) {
            let x = f32::from_bits(b);
            for (func, acc) in [(Func::Softplus, Softplus::accurate as fn(f32) -> f64)] {
                let ours = <f32 as Format>::round(acc(x));
                let cr = cr_f32(func, x);
                assert_eq!(ours.to_bits(), cr.to_bits(), "{func:?}({x:e}) ({b:#x})");
            }
        }
    }
}
