//! Rounding a value that can only be compared exactly: given a test that says whether the
//! exact value lies above, at or below any dyadic number, find its correct rounding
//! (nearest, ties to even) in a format by bisection over the format's values between two
//! candidates that bracket it. Used where the exact value is irrational (the norms' square
//! roots): the comparisons are exact integer arithmetic (`super::bigint`), so the result
//! is the correctly rounded value whatever the candidates were. CUDA mirror:
//! `kernels/math/exact_round.cuh`.

use super::round::Format;
use std::cmp::Ordering;

/// The position of a finite value in the order of the format's values: -|bits| for
/// negative values, |bits| for positive (both zeros at 0), infinities one past the
/// largest finite value.
#[inline]
fn key<F: Format>(v: F) -> i64 {
    let b = v.bits();
    let mag = (b & !F::SIGN_BIT) as i64;
    if b & F::SIGN_BIT != 0 { -mag } else { mag }
}

/// The value at a key (a positive key for 0: +0).
#[inline]
fn value<F: Format>(k: i64) -> F {
    if k < 0 {
        F::from_bits((-k) as u32 | F::SIGN_BIT)
    } else {
        F::from_bits(k as u32)
    }
}

/// The value at a key as an f64, with +-inf standing for the overflow power of two (the
/// rounding boundary between the largest finite value and infinity is their midpoint).
#[inline]
fn as_f64<F: Format>(k: i64) -> f64 {
    let v = value::<F>(k).to_f32() as f64;
    if v.is_infinite() {
        v.signum() * F::OVERFLOW
    } else {
        v
    }
}

/// The correctly rounded value of x, where `cmp(m)` is the exact ordering of x against
/// m (an f64 that is a value of the format or the midpoint of two neighbours, always
/// exact), `lo <= x`'s rounding `<= hi` are finite-or-infinite values of the format, and
/// `zero_sign_negative` gives the sign of the result when x rounds to zero (x's own sign,
/// or the sign rule of an exact zero).
pub(crate) fn round_by_comparison<F: Format>(
    lo: F,
    hi: F,
    cmp: impl Fn(f64) -> Ordering,
    zero_sign_negative: impl FnOnce() -> bool,
) -> F {
    let (mut a, mut b) = (key(lo), key(hi));
    debug_assert!(a <= b);
    // Invariant: the rounding of x has a key in [a, b].
    while a < b {
        let c = a + (b - a) / 2; // a <= c < b
        // The boundary between c and c + 1: their midpoint.
        let m = (as_f64::<F>(c) + as_f64::<F>(c + 1)) * 0.5;
        match cmp(m) {
            Ordering::Greater => a = c + 1,
            Ordering::Less => b = c,
            Ordering::Equal => {
                // A tie: the neighbour whose last bit is even (0 counts as even; the two
                // keys are adjacent, so exactly one is).
                let even = if value::<F>(c).bits() & 1 == 0 {
                    c
                } else {
                    c + 1
                };
                a = even;
                b = even;
            }
        }
    }
    if a == 0 {
        let z = F::round(0.0);
        return if zero_sign_negative() {
            F::from_bits(z.bits() | F::SIGN_BIT)
        } else {
            z
        };
    }
    value::<F>(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    /// x = p / q exactly (rationals of f64 integers): the comparison by cross products.
    fn check<F: Format>(p: f64, q: f64) {
        let want = F::round(p / q); // exact enough: p, q small integers, p/q rounded once
        let cmp = |m: f64| {
            // p/q vs m <=> p vs m q (q > 0), exact in f64 for these sizes.
            p.partial_cmp(&(m * q)).unwrap()
        };
        let lo = F::round(p / q - (p / q).abs() * 1e-3 - 1e-30);
        let hi = F::round(p / q + (p / q).abs() * 1e-3 + 1e-30);
        let got = round_by_comparison::<F>(lo, hi, cmp, || p < 0.0);
        assert_eq!(got.bits(), want.bits(), "{p}/{q}");
    }

    #[test]
    fn bisection_finds_the_rounding() {
        for p in [-7.0, -1.0, 1.0, 3.0, 5.0, 1000001.0, 1.0e-3] {
            for q in [1.0, 3.0, 7.0, 1024.0, 3.0e6] {
                check::<f32>(p, q);
                check::<bf16>(p, q);
                check::<f16>(p, q);
            }
        }
        // Ties to even: 1 + 2^-24 is between 1 and 1 + 2^-23 in f32.
        let x = 1.0 + 2f64.powi(-24);
        let cmp = |m: f64| x.partial_cmp(&m).unwrap();
        let r = round_by_comparison::<f32>(1.0, 1.0 + f32::EPSILON, cmp, || false);
        assert_eq!(r, 1.0);
        // Overflow: above the midpoint of f32::MAX and 2^128.
        let big = 2f64.powi(128);
        let cmp = |m: f64| big.partial_cmp(&m).unwrap();
        let r = round_by_comparison::<f32>(f32::MAX, f32::INFINITY, cmp, || false);
        assert_eq!(r, f32::INFINITY);
        // A tiny negative value rounds to -0.
        let t = -1e-50;
        let cmp = |m: f64| t.partial_cmp(&m).unwrap();
        let r = round_by_comparison::<f32>(-f32::from_bits(1), f32::from_bits(1), cmp, || t < 0.0);
        assert_eq!(r.to_bits(), 0x8000_0000);
    }
}
