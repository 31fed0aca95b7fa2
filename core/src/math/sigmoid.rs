//! Logistic sigmoid 1/(1 + e^-x) and SiLU x/(1 + e^-x), correctly rounded as a whole.
//!
//! * Fast path, with a = |x|: E = `exp_f32_fast(-a)` in (0, 1], d = 1 + E in (1, 2],
//!   r = `recip(d)` (no f64 division); sigmoid = r for x >= 0 and E r for x < 0
//!   (1/(1 + e^a) = e^-a/(1 + e^-a)), silu = x times that. Neither the sum nor the
//!   reciprocal can overflow, and there is no cancellation. Error, with u = 2^-53,
//!   e = F32_FAST_REL_ERR = 2^-44 and p = RECIP_REL_ERR = 2^-45 = e/2: E = e^-a (1 + t1),
//!   |t1| <= e, so 1 + E = (1 + e^-a)(1 + t1 e^-a/(1 + e^-a)) is off by at most e/2
//!   (e^-a <= 1); the sum rounds (u), the reciprocal adds p, E r adds e and u, and x
//!   times it adds u: at most e/2 + p + e + 3u = 2e + 3u to first order; FAST_REL_ERR =
//!   1.5e + p + 4u = 2e + 4u covers the second-order terms (~2^-86).
//!   Fast domain: |x| <= 128 (where `exp_f32_fast` holds; sigmoid(-128) < 2^-184 is far
//!   below every output format anyway, and the accurate path answers beyond).
//! * Accurate path: sigmoid(x) = 1/2 + tanh(x/2)/2 with `tanh_dd` (~2^-99, relative,
//!   also for tiny x where it uses the odd series), for x >= -1: adding 1/2 cancels at most
//!   a factor 1/(2 sigmoid(-1)) < 2, and the tiny-x structure 1/2 + x/4 - x^3/48 (whose
//!   value sits within 2^-75 of f32 midpoints, e.g. x = 2^-23) is represented exactly.
//!   silu(x) = x/2 (1 + tanh(x/2)) the same way (the low part keeps x^2/4 even for
//!   subnormal x, where x/2 is itself a midpoint). For -128 <= x < -1: E = `exp_dd(x)`
//!   and sigmoid = E/(1 + E), silu = x E/(1 + E) (~2^-99). Saturated ranges, each
//!   returning the round-to-odd value of a result known to lie strictly inside one f64
//!   interval: x >= 40: sigmoid in (1 - 2^-57, 1) -> 1 - 2^-53, silu in (x - 2^-52 x, x) ->
//!   the f64 just below x (odd: x is an f32). x < -128: 0 < sigmoid < e^-128 < 2^-184,
//!   |silu| < 2^-176, far below half the smallest subnormal of every output format
//!   (f32 2^-150), so ±2^-1074 stands in for the result: not its round-to-odd f64, but
//!   it rounds to ±0 in every format exactly as the result does (as exp's x < -110).
//! * Exceptional inputs: sigmoid(0) = 1/2 exactly, sigmoid(+inf) = 1, sigmoid(-inf) = +0;
//!   silu(±0) = ±0, silu(+inf) = +inf, silu(-inf) = -0; NaN -> NaN.

use super::dd::{DD, round_odd};
use super::exp::{F32_FAST_REL_ERR, exp_dd, exp_f32_fast};
use super::recip::{RECIP_REL_ERR, recip};
use super::tanh::tanh_dd;
use super::unary::CrUnary;

#[doc(hidden)]
pub struct Sigmoid;
#[doc(hidden)]
pub struct Silu;

/// 2^-53 (0x3CA0000000000000): the unit roundoff of f64.
const U: f64 = f64::from_bits(0x3CA0_0000_0000_0000);
/// 128.0 (0x4060000000000000): fast-domain limit, that of `exp_f32_fast`.
const FAST_MAX: f64 = f64::from_bits(0x4060_0000_0000_0000);
/// 40.0 (0x4044000000000000): above it 1 - sigmoid(x) < e^-40 < 2^-57.
const SAT_HIGH: f64 = f64::from_bits(0x4044_0000_0000_0000);
/// -128.0 (0xC060000000000000): below it sigmoid(x) < e^-128 < 2^-184; the fast domain
/// ends here too, so no input takes the double-double path only to round to zero.
const SAT_LOW: f64 = f64::from_bits(0xC060_0000_0000_0000);
/// 1 - 2^-53 (0x3FEFFFFFFFFFFFFF): the odd f64 just below 1.
const ONE_MINUS_U: f64 = f64::from_bits(0x3FEF_FFFF_FFFF_FFFF);
/// 2^-1074 (0x0000000000000001): the smallest positive f64, odd.
const TINY: f64 = f64::from_bits(1);

/// sigmoid(x) in f64, for |x| <= 128 (module header); total (garbage, never a panic,
/// elsewhere).
#[inline(always)]
fn sigmoid_fast<const FUSED: bool>(x: f32) -> f64 {
    let e = exp_f32_fast::<FUSED>(-x.abs());
    let r = recip::<FUSED>(1.0 + e);
    if x >= 0.0 { r } else { e * r }
}

/// sigmoid(x) as a double-double (~2^-99 relative) for -128 <= x < 40.
fn sigmoid_dd(x: f64) -> DD {
    if x >= -1.0 {
        tanh_dd(0.5 * x).scale(0.5).add_f64(0.5)
    } else {
        let e = exp_dd(DD::from_f64(x));
        e.div(e.add_f64(1.0))
    }
}

impl CrUnary for Sigmoid {
    const FAST_REL_ERR: f64 = 1.5 * F32_FAST_REL_ERR + RECIP_REL_ERR + 4.0 * U;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        (x as f64).abs() <= FAST_MAX
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        sigmoid_fast::<FUSED>(x)
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() {
            x
        } else if x == f64::INFINITY {
            1.0
        } else if x >= SAT_HIGH {
            ONE_MINUS_U
        } else if x == f64::NEG_INFINITY {
            0.0
        } else if x < SAT_LOW {
            TINY
        } else {
            round_odd(sigmoid_dd(x))
        }
    }
}

impl CrUnary for Silu {
    const FAST_REL_ERR: f64 = 1.5 * F32_FAST_REL_ERR + RECIP_REL_ERR + 4.0 * U;

    #[inline(always)]
    fn in_fast_domain(x: f32) -> bool {
        (x as f64).abs() <= FAST_MAX
    }

    #[inline(always)]
    fn fast<const FUSED: bool>(x: f32) -> f64 {
        (x as f64) * sigmoid_fast::<FUSED>(x)
    }

    fn accurate(x: f32) -> f64 {
        let x = x as f64;
        if x.is_nan() || x == 0.0 || x == f64::INFINITY {
            x
        } else if x >= SAT_HIGH {
            f64::from_bits(x.to_bits() - 1)
        } else if x == f64::NEG_INFINITY {
            -0.0
        } else if x < SAT_LOW {
            -TINY
        } else if x >= -1.0 {
            // x/2 (1 + t) = (x + x t)/2, with x t >= 0 exact-ish in double-double.
            let t = tanh_dd(0.5 * x);
            round_odd(t.mul_f64(x).add_f64(x).scale(0.5))
        } else {
            round_odd(sigmoid_dd(x).mul_f64(x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials() {
        assert_eq!(Sigmoid::accurate(0.0), 0.5);
        assert_eq!(Sigmoid::accurate(-0.0), 0.5);
        assert_eq!(Sigmoid::accurate(f32::INFINITY), 1.0);
        assert_eq!(Sigmoid::accurate(f32::NEG_INFINITY).to_bits(), 0);
        assert!(Sigmoid::accurate(f32::NAN).is_nan());
        assert_eq!(Silu::accurate(0.0).to_bits(), 0);
        assert_eq!(Silu::accurate(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(Silu::fast::<true>(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(Silu::accurate(f32::INFINITY), f64::INFINITY);
        assert_eq!(
            Silu::accurate(f32::NEG_INFINITY).to_bits(),
            (-0.0f64).to_bits()
        );
        assert!(Silu::accurate(f32::NAN).is_nan());
        // silu(2^-149) = 2^-150 + 2^-300 - ...: just above the f32 midpoint.
        let x = f32::from_bits(1);
        assert_eq!(Silu::accurate(x) as f32, x);
    }

    #[test]
    fn fast_agrees_with_accurate() {
        for i in 0..20000 {
            let x = (i as f32 - 10000.0) * 0.011;
            for (f, a) in [
                (Sigmoid::fast::<true>(x), Sigmoid::accurate(x)),
                (Sigmoid::fast::<false>(x), Sigmoid::accurate(x)),
                (Silu::fast::<true>(x), Silu::accurate(x)),
                (Silu::fast::<false>(x), Silu::accurate(x)),
            ] {
                assert!(
                    (f - a).abs() <= Sigmoid::FAST_REL_ERR * a.abs() + f64::EPSILON * a.abs(),
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
            for (func, acc) in [
                (Func::Sigmoid, Sigmoid::accurate as fn(f32) -> f64),
                (Func::Silu, Silu::accurate),
            ] {
                let ours = <f32 as Format>::round(acc(x));
                let cr = cr_f32(func, x);
                assert_eq!(ours.to_bits(), cr.to_bits(), "{func:?}({x:e}) ({b:#x})");
            }
        }
    }
}
