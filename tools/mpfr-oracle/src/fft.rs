//! Oracle of the FFT's twiddle factors (candle_repro's `fft::twiddles`): cos and sin of
//! 2 pi p / d for 0 < p / d < 1/4, correctly rounded to a format, and how far the exact
//! values lie from the format's rounding boundaries.
//!
//! Every twiddle entry's magnitude is one of these values (cos(2 pi k / n) and sin(2 pi k
//! / n) for any k reduce to them by the quadrant symmetries, or are 0 or 1). Both are
//! bracketed by directed roundings: pi between its two roundings, the angle between
//! products rounded down and up, then cos (decreasing on (0, pi/2)) and sin (increasing)
//! evaluated at the ends, rounded outwards.

use super::{Mpfr, Num, RNDD, RNDU, Rnd};
use std::os::raw::{c_int, c_ulong};

#[link(name = "libmpfr.so.6", kind = "dylib", modifiers = "+verbatim")]
unsafe extern "C" {
    fn mpfr_const_pi(r: *mut Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_mul_ui(r: *mut Mpfr, x: *const Mpfr, u: c_ulong, rnd: Rnd) -> c_int;
    fn mpfr_div_ui(r: *mut Mpfr, x: *const Mpfr, u: c_ulong, rnd: Rnd) -> c_int;
    fn mpfr_sin(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_cos(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_set(r: *mut Mpfr, x: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_add(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_sub(r: *mut Mpfr, x: *const Mpfr, y: *const Mpfr, rnd: Rnd) -> c_int;
    fn mpfr_get_d(x: *const Mpfr, rnd: Rnd) -> f64;
}

/// Working precision of the brackets: their width is about 2^-250 relative.
const PREC: i64 = 256;

/// The angle 2 pi p / d rounded in direction `rnd` (every step rounded the same way, all
/// quantities positive, so the result bounds the exact angle).
fn angle(p: u64, d: u64, rnd: Rnd) -> Num {
    let mut pi = Num::new(PREC);
    let mut two_p_pi = Num::new(PREC);
    let mut a = Num::new(PREC);
    unsafe {
        mpfr_const_pi(pi.p(), rnd);
        mpfr_mul_ui(two_p_pi.p(), pi.c(), 2 * p as c_ulong, rnd);
        mpfr_div_ui(a.p(), two_p_pi.c(), d as c_ulong, rnd);
    }
    a
}

/// Brackets [lo, hi] of cos(2 pi p / d) (`cos`) or sin(2 pi p / d), 0 < p / d < 1/4.
fn bracket(p: u64, d: u64, cos: bool) -> (Num, Num) {
    assert!(p > 0 && 4 * p < d, "{p}/{d} outside (0, 1/4)");
    let (a_lo, a_hi) = (angle(p, d, RNDD), angle(p, d, RNDU));
    let (mut lo, mut hi) = (Num::new(PREC), Num::new(PREC));
    unsafe {
        if cos {
            mpfr_cos(lo.p(), a_hi.c(), RNDD);
            mpfr_cos(hi.p(), a_lo.c(), RNDU);
        } else {
            mpfr_sin(lo.p(), a_lo.c(), RNDD);
            mpfr_sin(hi.p(), a_hi.c(), RNDU);
        }
    }
    (lo, hi)
}

/// `x` rounded to `precision` bits in direction `rnd` (the values here, at least
/// sin(2 pi / 2^20), are normal in f32 and f64, so no exponent range applies).
fn round(x: &Num, precision: i64, rnd: Rnd) -> Num {
    let mut y = Num::new(precision);
    unsafe { mpfr_set(y.p(), x.c(), rnd) };
    y
}

/// One exact value's rounding to a `precision`-bit format (24: f32, 53: f64).
#[derive(Clone, Copy, Debug)]
pub struct Rounding {
    /// The value correctly rounded (to nearest, ties to even).
    pub value: f64,
    /// Its relative distance |v - m| / v to the nearest rounding boundary m of the format
    /// (the midpoint of v's two neighbours there): a method whose relative error stays
    /// below it rounds v correctly. Infinite where v is representable (1/2 = sin(pi / 6)).
    /// A lower bound up to the last f64 division's rounding (for ranking, not a proof).
    pub distance: f64,
}

/// cos(2 pi p / d) (`cos`) or sin(2 pi p / d), 0 < p / d < 1/4, rounded to each of
/// `precisions`, with the distance of the exact value to that format's boundaries.
pub fn cos_sin(p: u64, d: u64, cos: bool, precisions: &[i64]) -> Vec<Rounding> {
    // The one rational value here (Niven: sin and cos at rational multiples of pi are
    // rational only at 0, 1/2, 1): cos(pi / 3) = sin(pi / 6) = 1/2, which a bracket
    // straddles.
    if (cos && 6 * p == d) || (!cos && 12 * p == d) {
        let half = Rounding {
            value: 0.5,
            distance: f64::INFINITY,
        };
        return vec![half; precisions.len()];
    }
    let (lo, hi) = bracket(p, d, cos);
    precisions
        .iter()
        .map(|&precision| {
            let (a, b) = (round(&lo, precision, RNDD), round(&hi, precision, RNDU));
            let (a_f, b_f) = (a.to_f64(), b.to_f64());
            let mut sum = Num::new(PREC);
            let mut m = Num::new(PREC);
            let (mut dlo, mut dhi) = (Num::new(PREC), Num::new(PREC));
            let (l, h) = unsafe {
                mpfr_add(sum.p(), a.c(), b.c(), super::RNDN); // exact: at most 53 bits each
                mpfr_div_ui(m.p(), sum.c(), 2, super::RNDN); // exact
                mpfr_sub(dlo.p(), lo.c(), m.c(), RNDD);
                mpfr_sub(dhi.p(), hi.c(), m.c(), RNDU);
                (mpfr_get_d(dlo.c(), RNDD), mpfr_get_d(dhi.c(), RNDU))
            };
            // Both ends on one side of m (else the bracket, 2^-250 wide, holds a midpoint
            // and no decision is possible at this precision).
            assert!(
                l.signum() == h.signum() && l != 0.0 && h != 0.0,
                "{p}/{d}: the bracket holds a rounding boundary"
            );
            // The neighbour on the value's side of m, and the nearer end's distance
            // (rounded towards zero).
            let (value, near) = if l > 0.0 { (b_f, l) } else { (a_f, -h) };
            Rounding {
                value,
                distance: near / unsafe { mpfr_get_d(hi.c(), RNDU) },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // cos(pi / 4) = sqrt(1/2); sin(pi / 6) = 1/2 and cos(pi / 3) = 1/2 exactly.
        let r = cos_sin(1, 8, true, &[24, 53]);
        assert_eq!(r[0].value, std::f32::consts::FRAC_1_SQRT_2 as f64);
        assert_eq!(r[1].value, std::f64::consts::FRAC_1_SQRT_2);
        assert!(r[0].distance > 0.0 && r[0].distance < 2f64.powi(-24));
        for (p, d, cos) in [(1, 12, false), (1, 6, true)] {
            let r = cos_sin(p, d, cos, &[24, 53]);
            assert_eq!((r[0].value, r[1].value), (0.5, 0.5));
            assert!(r[0].distance.is_infinite());
        }
        // sin(2 pi / 1000) against the f64 library's (1 ulp is plenty here).
        let v = cos_sin(1, 1000, false, &[53])[0].value;
        assert!((v - (2.0 * std::f64::consts::PI / 1000.0).sin()).abs() <= 2e-19);
    }
}
