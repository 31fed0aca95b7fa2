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
#[doc(hidden)]
pub fn round_by_comparison<F: Format>(
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

/// w sqrt(n) correctly rounded to F, for a finite f64 `w` that is a multiple of 2^-1074
/// below 2^900 (any finite f64 of that size) and an integer 1 <= n < 2^40: Gemma's
/// embedding scale (the row's exact values times sqrt(hidden size), rounded once).
///
/// Fast path: sqrt(n) as a double-double (c, e) (c = the correctly rounded f64 square
/// root, e = (n - c^2) / (2c) with c^2 split exactly by TwoProduct; c + e is within 2^-104
/// c of sqrt(n)), w c split exactly into p + q by TwoProduct, and y = p + (q + w e),
/// within 2^-53 |y| + 2^-103 |w c| <= 2^-52 |y| of w sqrt(n): accepted when that interval
/// rounds to one value.
/// Otherwise the exact comparison of squares: w sqrt(n) against a midpoint m of F (same
/// sign) is w^2 n against m^2, decided in integers (`super::bigint`). w sqrt(n) is never
/// exactly a midpoint unless n is a square, which the comparison then handles as a tie.
#[doc(hidden)]
pub fn round_mul_sqrt<F: Format>(w: f64, n: u64) -> F {
    use super::bigint::{Big, decompose_f64};
    use super::dd::two_prod;
    debug_assert!((1..1u64 << 40).contains(&n) && w.is_finite());
    if w == 0.0 {
        return F::round(w); // +-0 keeps its sign
    }
    let nf = n as f64;
    let c = nf.sqrt();
    let (c2, c2_lo) = two_prod(c, c);
    let e = ((nf - c2) - c2_lo) / (2.0 * c);
    let (p, q) = two_prod(w, c);
    let y = p + (q + w * e);
    // |y - w sqrt(n)| <= 2^-53 |y| (the last addition) + about 2^-103 |w c| (the rest).
    if let Some(r) =
        super::round::round_within::<F>(y, y.abs() * f64::from_bits(0x3CB0_0000_0000_0000))
    {
        return r; // 2^-52 |y|
    }
    // Exact: compare |w| sqrt(n) with |m| through w^2 n vs m^2, both scaled to integers.
    let (neg, mw, ew) = decompose_f64(w);
    let cmp = |m: f64| -> Ordering {
        if m == 0.0 || (m < 0.0) != neg {
            return if neg {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (_, mm, em) = decompose_f64(m);
        let base = (2 * ew).min(2 * em);
        let lhs = Big::from_u128(mw as u128 * mw as u128)
            .mul_u64(n)
            .shl((2 * ew - base) as u32);
        let rhs = Big::from_u128(mm as u128 * mm as u128).shl((2 * em - base) as u32);
        let mag = lhs.cmp(&rhs);
        if neg { mag.reverse() } else { mag }
    };
    let widen = y.abs() * f64::from_bits(0x3D70_0000_0000_0000); // 2^-40
    round_by_comparison::<F>(F::round(y - widen), F::round(y + widen), cmp, || neg)
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
    fn mul_sqrt_against_squares_in_integers() {
        // w with at most 24 bits and small n: the rounding r of w sqrt(n) in f32 is checked
        // by the squares of its neighbours' midpoints, in u128 (an independent method).
        let mut s = 7u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s >> 11
        };
        for i in 0..200_000 {
            let n = [640u64, 2, 3, 1152, 4096, 5, 2048][i % 7];
            let m = (next() >> 29) | 1 << 23; // 24 bits
            let k = (next() % 40) as i32 + 10;
            let w = m as f64 * 2f64.powi(-k);
            let w = if next() & 1 == 0 { w } else { -w };
            let r: f32 = round_mul_sqrt(w, n);
            // |w| sqrt(n) in [lo, hi] with lo, hi the midpoints around |r|: in units where
            // both are integers, (|w| 2^a)^2 n vs (mid 2^a)^2.
            let rv = r.abs() as f64;
            let ulp = 2f64.powi(((rv.to_bits() >> 52) as i32 - 1023) - 23);
            let (lo, hi) = (rv - ulp / 2.0, rv + ulp / 2.0);
            // Scaled by 2^(k + 1), |w| and both midpoints are integers (r's ulp is at
            // least 2^-k for these n).
            let int = |v: f64| {
                let x = v * 2f64.powi(k + 1);
                assert_eq!(x.fract(), 0.0);
                x as u128
            };
            let lhs = int(w.abs()) * int(w.abs()) * n as u128;
            assert!(
                int(lo) * int(lo) <= lhs && lhs <= int(hi) * int(hi),
                "{w:e} sqrt({n})"
            );
            if int(lo) * int(lo) == lhs || int(hi) * int(hi) == lhs {
                assert_eq!(r.to_bits() & 1, 0, "a tie goes to even");
            }
            assert_eq!(r.is_sign_negative(), w < 0.0);
        }
        // n = 4: w sqrt(4) = 2w exactly, so r = 2w; and ties exist for square n.
        assert_eq!(round_mul_sqrt::<f32>(1.5, 4), 3.0);
        assert_eq!(
            round_mul_sqrt::<f32>(-0.0, 640).to_bits(),
            (-0.0f32).to_bits()
        );
        // 1 + 2^-24 (a tie in f32) times sqrt(1): to even, 1.
        assert_eq!(round_mul_sqrt::<f32>(1.0 + 2f64.powi(-24), 1), 1.0);
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
