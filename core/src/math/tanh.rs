//! Hyperbolic tangent, correctly rounded.
//!
//! tanh is odd, so everything works on a = |x| and the sign of x is put back last with a
//! bit operation (so tanh(-0) = -0 in every path).
//!
//! * Fast path: with M = expm1(-2a) in (-1, 0], tanh(a) = -M / (2 + M). No cancellation
//!   anywhere: 2 + M lies in (1, 2], and expm1 keeps its relative accuracy for tiny a
//!   (where 1 - e^-2a would cancel). a is clamped to 20 first: tanh(20) > 1 - 2^-56, so
//!   the clamp moves the value by less than 2^-56 relative, and keeps expm1's argument in
//!   its domain for every lane. Error, with u = 2^-53 and e_m = EXPM1_FAST_F64_REL_ERR:
//!   M = m(1 + t1), |t1| <= e_m; fl(2 + M) = (2 + m)(1 + t1 m/(2+m))(1 + t2) with
//!   |m/(2+m)| <= 1 and |t2| <= u; the quotient adds one more rounding (1 + t3). So
//!   |err| <= (1 + e_m)(1 + u)^2 / (1 - e_m) - 1 + 2^-56 < e_m * 2.001 + 2.001 u + 2^-56,
//!   FAST_REL_ERR = 2 e_m + 3u (generous: the first-order term is e_m + 2u).
//!   Fast domain: every non-NaN input.
//! * Accurate path (`tanh_dd`): for a < 2^-25 the series a - a^3/3 + 2a^5/15 (the next
//!   term, 17a^7/315, is below 2^-103 relative); otherwise -M / (2 + M) in double-double
//!   with M = `expm1_dd(-2a)` (~2^-100): the double-double add (3u^2, condition <= 1)
//!   and division (15u^2) keep the total below 2^-99 relative. For a >= 20 the result is
//!   1 - 2e^-2a/(1 + e^-2a) with 0 < 1 - tanh(a) < 2^-57: strictly between 1 - 2^-53 and
//!   1, so its round-to-odd is 1 - 2^-53.
//! * Exceptional inputs: tanh(±0) = ±0 (exact), tanh(±inf) = ±1 (exact), NaN -> NaN.

use super::dd::{DD, fast_two_sum, round_odd};
use super::exp::{EXPM1_FAST_F64_REL_ERR, expm1_dd, expm1_fast_f64};
use super::unary::CrUnary;

#[doc(hidden)]
pub struct Tanh;

/// 2^-53 (0x3CA0000000000000): the unit roundoff of f64.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);
/// 20.0 (0x4034000000000000): beyond it tanh(a) > 1 - 2^-56.
const SATURATE: f64 = f64::from_bits(0x4034_0000_0000_0000);
/// 2^-25 (0x3E60000000000000): below it the odd series to a^5 is accurate to 2^-103.
const SERIES_MAX: f64 = f64::from_bits(0x3E60_0000_0000_0000);
/// 1 - 2^-53 (0x3FEFFFFFFFFFFFFF): the odd f64 just below 1.
const ONE_MINUS_U: f64 = f64::from_bits(0x3FEF_FFFF_FFFF_FFFF);
/// The sign bit of an f64.
const SIGN: u64 = 0x8000_0000_0000_0000;

/// tanh(x) as a double-double with relative error below 2^-99, for |x| <= 20 (x = ±0
/// gives ±0 exactly). Also the core of sigmoid and silu: sigmoid(x) = (1 + tanh(x/2))/2.
#[doc(hidden)]
pub fn tanh_dd(x: f64) -> DD {
    let a = x.abs();
    let r = if a == 0.0 {
        return DD::from_f64(x);
    } else if a < SERIES_MAX {
        // a - a^3/3 + 2a^5/15: the correction is below 2^-50 a, so its own f64 rounding
        // (a few ulps of it) is far below 2^-100 a.
        let a2 = a * a;
        let c = a * a2 / 3.0 - 2.0 * a * a2 * a2 / 15.0;
        let (h, l) = fast_two_sum(a, -c);
        DD::new(h, l)
    } else {
        let m = expm1_dd(DD::from_f64(-2.0 * a));
        m.neg().div(m.add_f64(2.0))
    };
    if x < 0.0 { r.neg() } else { r }
}

impl CrUnary for Tanh {
    const FAST_REL_ERR: f64 = 2.0 * EXPM1_FAST_F64_REL_ERR + 3.0 * U;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        !x.is_nan()
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        let x = x as f64;
        let a = x.abs();
        let a = if a > SATURATE { SATURATE } else { a };
        let m = expm1_fast_f64(-2.0 * a);
        let t = -m / (2.0 + m);
        // |t| with x's sign (t >= 0 or -0: clear its sign first).
        f64::from_bits((t.to_bits() & !SIGN) | (x.to_bits() & SIGN))
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() {
            return x;
        }
        let a = x.abs();
        let r = if a == f64::INFINITY {
            1.0
        } else if a >= SATURATE {
            ONE_MINUS_U
        } else {
            round_odd(tanh_dd(a))
        };
        f64::from_bits(r.to_bits() | (x.to_bits() & SIGN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials() {
        assert_eq!(Tanh::accurate(0.0).to_bits(), 0);
        assert_eq!(Tanh::accurate(-0.0).to_bits(), SIGN);
        assert_eq!(Tanh::fast::<true>(-0.0).to_bits(), SIGN);
        assert_eq!(Tanh::fast::<true>(0.0).to_bits(), 0);
        assert_eq!(Tanh::accurate(f32::INFINITY), 1.0);
        assert_eq!(Tanh::accurate(f32::NEG_INFINITY), -1.0);
        assert_eq!(Tanh::accurate(30.0), ONE_MINUS_U);
        assert_eq!(Tanh::accurate(-30.0), -ONE_MINUS_U);
        assert!(Tanh::accurate(f32::NAN).is_nan());
        assert!(Tanh::fast::<true>(f32::NAN).is_nan() || !Tanh::in_fast_domain(f32::NAN));
    }

    #[test]
    fn fast_agrees_with_accurate() {
        for i in 0..20000 {
            let x = (i as f32 - 10000.0) * 0.0013;
            let f = Tanh::fast::<true>(x);
            let a = Tanh::accurate(x);
            assert!(
                (f - a).abs() <= Tanh::FAST_REL_ERR * a.abs() + f64::EPSILON * a.abs(),
                "{x}: {f} {a}"
            );
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
            let ours = <f32 as Format>::round(Tanh::accurate(x));
            let cr = cr_f32(Func::Tanh, x);
            assert_eq!(ours.to_bits(), cr.to_bits(), "tanh({x:e}) ({b:#x})");
        }
    }
}
