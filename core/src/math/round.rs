//! Rounding an f64 value once to the output format (f32, bf16, f16), and the rounding test
//! that decides whether an approximation is close enough to round correctly.
//!
//! Every function of the math core computes an f64 approximation `y` of the exact result
//! with a known relative error bound `e` (the fast path), or an f64 that is the exact result
//! rounded to odd (the accurate path, see `crate::math::dd::round_odd`). Rounding either
//! one to a format here is one IEEE round-to-nearest-even step, done with integer and exact
//! f64 operations only, so the CUDA mirror performs the same steps.
//!
//! * Rounding an odd-rounded f64 (53 bits) to any format of at most 51 bits is the same as
//!   rounding the exact value (Boldo and Melquiond, "When double rounding is odd", 2005).
//! * The rounding test: if `y - e|y|` and `y + e|y|` round to the same value, so does every
//!   number in between, the exact result included (rounding is monotonic).
//!
//! NaN outputs are always the canonical quiet NaN of the format.

use half::{bf16, f16};

/// A storage format of the elementwise ops: f32, bf16 or f16.
pub trait Format: Copy + Send + Sync + 'static {
    /// Canonical quiet NaN bits.
    const NAN_BITS: u32;
    /// The sign bit of the bit pattern.
    const SIGN_BIT: u32;
    /// The power of two one ulp above the largest finite value: where rounding overflows
    /// (the midpoint below it is the overflow threshold).
    const OVERFLOW: f64;
    /// The value with these bits (widened from u32).
    fn from_bits(bits: u32) -> Self;
    /// The input, widened exactly to f32.
    fn to_f32(self) -> f32;
    /// Round an f64 to this format, to nearest, ties to even; NaN becomes the canonical NaN.
    fn round(y: f64) -> Self;
    /// The bits, widened to u32, for bit comparisons.
    fn bits(self) -> u32;
    /// The rounding test of the vector loops: `(round(y), true)` only when every number
    /// within relative distance `err` of `y` rounds to that value. May answer false more
    /// often than `round_if_certain` (the caller then runs the full test), never less
    /// soundly. `normal`, where known: whether y is exactly 0 or at least f32's smallest
    /// normal in magnitude (`CrUnary::fast_result_normal`; the f32 test then need not look,
    /// and answers false where it is `Some(false)`). The default is `round_if_certain`
    /// itself.
    #[inline(always)]
    fn round_if_certain_fast(y: f64, err: f64, _normal: Option<bool>) -> (Self, bool) {
        round_if_certain::<Self>(y, err)
    }
}

/// 2^k as an f64, for -1022 <= k <= 1023, built from its bits.
#[inline(always)]
#[doc(hidden)]
pub fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// 1.5 * 2^52 (0x4338000000000000): adding and subtracting it rounds an f64 of magnitude
/// below 2^51 to an integer, ties to even, with one IEEE addition each way.
const ROUND_INT_MAGIC: f64 = f64::from_bits(0x4338_0000_0000_0000);

/// Round |a| (a >= 0, finite) to a binary format with `p` significant bits whose smallest
/// normal is 2^emin, ignoring overflow. All operations are exact except the one addition
/// that rounds to an integer.
#[inline(always)]
#[doc(hidden)]
pub fn round_magnitude(a: f64, p: i32, emin: i32) -> f64 {
    // Exponent of a (a is an f64 normal or zero here: our values are far above 2^-1022
    // or they land in the format's subnormal branch below).
    let e = ((a.to_bits() >> 52) as i32) - 1023;
    let e = if e < emin { emin } else { e };
    let quantum = pow2(e - p + 1);
    let scaled = a / quantum; // exact: division by a power of two, result < 2^p
    let n = (scaled + ROUND_INT_MAGIC) - ROUND_INT_MAGIC; // integer, ties to even
    n * quantum // exact
}

impl Format for f32 {
    const NAN_BITS: u32 = 0x7FC0_0000;
    const SIGN_BIT: u32 = 0x8000_0000;
    const OVERFLOW: f64 = f64::from_bits(0x47F0_0000_0000_0000); // 2^128
    #[inline(always)]
    fn from_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn round(y: f64) -> f32 {
        if y.is_nan() {
            f32::from_bits(Self::NAN_BITS)
        } else {
            // IEEE conversion: round to nearest even, subnormals and overflow included.
            y as f32
        }
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self.to_bits()
    }
    /// The test read off y's bits, for results in f32's normal range: y's f64 significand
    /// has 29 bits below f32's last one, and the midpoints between f32 neighbours are the
    /// doubles whose low 29 bits are 2^28. e|y| is below `err` 2^53 ulps of y (|y| <
    /// 2^(e_y + 1), ulp(y) = 2^(e_y - 52)); an interval of that many ulps around y that keeps
    /// its low bits away from 2^28 holds no midpoint, also where it reaches into a
    /// neighbouring binade (the bits there are near 0 or 2^29, far from 2^28). Then the
    /// one IEEE conversion `y as f32` is the rounding of every point. Four integer and
    /// compare operations instead of two conversions with NaN handling.
    #[inline(always)]
    fn round_if_certain_fast(y: f64, err: f64, normal: Option<bool>) -> (f32, bool) {
        const LOW_MASK: u64 = (1 << 29) - 1;
        const MIDPOINT: u64 = 1 << 28;
        // Tolerance in ulps of y, rounded up. err <= 2^-30 for every caller, so this is far
        // below 2^28.
        let tol = (err * f64::from_bits(0x4340_0000_0000_0000)) as u64 + 1; // err * 2^53
        let low = y.to_bits() & LOW_MASK;
        // low in [2^28 - tol, 2^28 + tol] <=> (low + tol - 2^28) mod 2^64 <= 2 tol.
        let far = low.wrapping_add(tol.wrapping_sub(MIDPOINT)) > 2 * tol;
        // At or above f32's smallest normal (NaN fails the comparison), as the caller may
        // know from x: subnormal results take the full test. No upper check: a y in f32's
        // overflow range converts to inf, which is right once the interval clears the
        // overflow midpoint 2^128 - 2^103 (the same low-bits test), and y = inf only where
        // f(x) itself is beyond f64 (every fast path's bound is relative, on a domain where
        // f is finite).
        let normal = normal.unwrap_or(y.abs() >= f64::from_bits(0x3810_0000_0000_0000)); // 2^-126
        (y as f32, far & normal)
    }
}

impl Format for bf16 {
    const NAN_BITS: u32 = 0x7FC0;
    const SIGN_BIT: u32 = 0x8000;
    const OVERFLOW: f64 = f64::from_bits(0x47F0_0000_0000_0000); // 2^128
    #[inline(always)]
    fn from_bits(bits: u32) -> bf16 {
        bf16::from_bits(bits as u16)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f32::from_bits((self.to_bits() as u32) << 16)
    }
    #[inline(always)]
    fn round(y: f64) -> bf16 {
        if y.is_nan() {
            return bf16::from_bits(Self::NAN_BITS as u16);
        }
        let a = y.abs();
        // bf16: 8 significant bits, exponent range of f32 (emin = -126).
        let r = if a >= f64::from_bits(0x47F0_0000_0000_0000) {
            f64::INFINITY // a >= 2^128
        } else {
            round_magnitude(a, 8, -126)
        };
        // r is 0, a bf16 value or 2^128 (carry out of the top binade): all convert to f32
        // exactly (2^128 as infinity), and a bf16 is the top half of its f32.
        let bits = ((r as f32).to_bits() >> 16) as u16;
        bf16::from_bits(bits | (((y.to_bits() >> 48) as u16) & 0x8000))
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

impl Format for f16 {
    const NAN_BITS: u32 = 0x7E00;
    const SIGN_BIT: u32 = 0x8000;
    const OVERFLOW: f64 = 65536.0;
    #[inline(always)]
    fn from_bits(bits: u32) -> f16 {
        f16::from_bits(bits as u16)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16_bits_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn round(y: f64) -> f16 {
        if y.is_nan() {
            return f16::from_bits(Self::NAN_BITS as u16);
        }
        let a = y.abs();
        // f16: 11 significant bits, emin = -14, largest finite 65504.
        let r = if a >= 65536.0 {
            65536.0
        } else {
            round_magnitude(a, 11, -14)
        };
        let bits = if r >= 65536.0 {
            0x7C00
        } else {
            f64_exact_to_f16_bits(r)
        };
        f16::from_bits(bits | (((y.to_bits() >> 48) as u16) & 0x8000))
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self.to_bits() as u32
    }
}

/// Encode a non-negative f64 that is exactly an f16 value (0, subnormal or normal).
#[inline(always)]
fn f64_exact_to_f16_bits(r: f64) -> u16 {
    // Subnormals are multiples of 2^-24; normals have an 11-bit significand.
    if r < f64::from_bits(0x3F10_0000_0000_0000) {
        // r < 2^-14: r / 2^-24 is the integer significand.
        (r * f64::from_bits(0x4170_0000_0000_0000)) as u16 // * 2^24
    } else {
        let b = r.to_bits();
        let e = ((b >> 52) as i32) - 1023 + 15;
        let m = ((b >> 42) & 0x3FF) as u16;
        ((e as u16) << 10) | m
    }
}

/// Widen f16 bits to f32 exactly, with integer operations only (NaN payloads are kept;
/// every function canonicalizes NaN outputs anyway).
#[inline(always)]
#[doc(hidden)]
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1F) as u32;
    let man = (h & 0x3FF) as u32;
    let mag = if exp == 0x1F {
        0x7F80_0000 | (man << 13)
    } else if exp != 0 {
        ((exp + 112) << 23) | (man << 13)
    } else {
        // zero or subnormal: man * 2^-24, exact in f32
        (man as f32 * f32::from_bits(0x3380_0000)).to_bits() // 2^-24
    };
    f32::from_bits(sign | mag)
}

/// The rounding test: true when every number within relative distance `err` of `y` rounds
/// to the same value of format `F`, which is then returned. `err` must already include the
/// rounding error of this test's own two operations (one ulp of y: 2^-52 relative).
#[inline(always)]
#[doc(hidden)]
pub fn round_if_certain<F: Format>(y: f64, err: f64) -> (F, bool) {
    let d = y * err;
    let lo = F::round(y - d);
    let hi = F::round(y + d);
    (lo, lo.bits() == hi.bits())
}

/// The rounding test for an absolute error bound: `Some(r)` when every number within `err`
/// of `y` (the bound of |y - exact|) rounds to the same value r of `F`, which is then the
/// correctly rounded exact value. See [`round_within_parts`].
#[inline(always)]
#[doc(hidden)]
pub fn round_within<F: Format>(y: f64, err: f64) -> Option<F> {
    let (r, sure) = round_within_parts::<F>(y, err);
    sure.then_some(r)
}

/// [`round_within`] without branches, for vector loops: (the rounding of the interval's
/// lower end, whether the whole interval rounds to it). The test's own two operations are
/// covered by widening the interval to err (1 + 2^-36) + |y| 2^-51: each of y - d and
/// y + d rounds by at most 2^-53 |y +- d|, less than the widening. Never sure for a
/// non-finite y or err. An exact zero (y = 0, err = 0) counts as sure with +0: callers
/// that need the sign IEEE gives an exact zero sum decide that case first.
#[inline(always)]
#[doc(hidden)]
pub fn round_within_parts<F: Format>(y: f64, err: f64) -> (F, bool) {
    const WIDEN: f64 = f64::from_bits(0x3FF0_0000_0001_0000); // 1 + 2^-36
    const REL: f64 = f64::from_bits(0x3CC0_0000_0000_0000); // 2^-51
    let d = err * WIDEN + y.abs() * REL;
    let lo = F::round(y - d);
    let hi = F::round(y + d);
    // d >= 0 is finite only if err and y are (NaN included).
    (lo, (lo.bits() == hi.bits()) & d.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_matches_half_on_f32_inputs() {
        // An f32 input goes through f64 exactly; half's f32 -> bf16 rounds once, correctly.
        for bits in (0u32..=u32::MAX).step_by(4093) {
            let x = f32::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            let ours = bf16::round(x as f64);
            let theirs = bf16::from_f32(x);
            assert_eq!(ours.to_bits(), theirs.to_bits(), "x = {x:e} ({bits:#x})");
        }
    }

    #[test]
    fn f16_rounding_matches_half_on_f32_inputs() {
        for bits in (0u32..=u32::MAX).step_by(4093) {
            let x = f32::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            let ours = f16::round(x as f64);
            let theirs = f16::from_f32(x);
            assert_eq!(ours.to_bits(), theirs.to_bits(), "x = {x:e} ({bits:#x})");
        }
    }

    #[test]
    fn f16_widening_matches_half() {
        for h in 0..=u16::MAX {
            let v = f16::from_bits(h);
            if v.is_nan() {
                assert!(f16_bits_to_f32(h).is_nan());
            } else {
                assert_eq!(f16_bits_to_f32(h).to_bits(), v.to_f32().to_bits());
            }
        }
    }

    /// The f32 bit test never claims more than the interval allows: whenever it is sure,
    /// both ends of the interval (computed exactly: y +- y err with err a power of two)
    /// round to its answer. Inputs crowd the midpoints, the binade edges, f32's normal
    /// limits and overflow, where an unsound test would fail.
    #[test]
    fn f32_bit_test_is_sound() {
        let mut s = 0x853C_49E6_748F_EA9Bu64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let (mut sure, mut total) = (0u64, 0u64);
        for i in 0..3_000_000u64 {
            let r = next();
            // An f32 neighbourhood: a random f32 (exponents across f32's range and just
            // beyond), plus an offset of a few hundred f64 ulps around a midpoint or a
            // representable value.
            let e = (r % 300) as i64 - 150 + 1023;
            let f32_sig = (next() & ((1 << 23) - 1)) << 29;
            let base = ((e as u64) << 52) | f32_sig;
            let off = (next() % 4096) as i64 - 2048;
            let center = if i % 2 == 0 { 1i64 << 28 } else { 0 };
            let bits = (base as i64 + center + off) as u64 | ((r >> 63) << 63);
            let y = f64::from_bits(bits);
            let err = pow2(-(40 + (next() % 12) as i32)); // 2^-40 .. 2^-51
            let (v, ok) = <f32 as Format>::round_if_certain_fast(y, err, None);
            total += 1;
            if ok {
                sure += 1;
                // d = |y| err is exact (err is a power of two); y +- d round to within half
                // an f64 ulp of the true ends, far below the f32 spacing being tested.
                let d = y.abs() * err;
                for end in [y - d, y + d] {
                    assert_eq!(
                        <f32 as Format>::round(end).to_bits(),
                        v.to_bits(),
                        "y = {y:e} ({bits:#x}), err = {err:e}"
                    );
                }
            }
        }
        // Half the inputs sit right on a midpoint: roughly the other half must be settled.
        assert!(sure * 3 > total, "settled only {sure} of {total}");
    }

    #[test]
    fn rounding_ties_and_boundaries() {
        // bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1.
        assert_eq!(bf16::round(1.0 + pow2(-8)).to_bits(), 0x3F80);
        // slightly above the tie rounds up
        assert_eq!(bf16::round(1.0 + pow2(-8) + pow2(-40)).to_bits(), 0x3F81);
        // smallest bf16 subnormal is 2^-133; half of it ties to 0, above rounds up
        assert_eq!(bf16::round(pow2(-134)).to_bits(), 0x0000);
        assert_eq!(
            bf16::round(pow2(-134) * (1.0 + pow2(-30))).to_bits(),
            0x0001
        );
        // overflow: the largest bf16 plus half an ulp rounds to infinity
        let max_bf16 = f32::from_bits(0x7F7F_0000) as f64;
        assert_eq!(bf16::round(max_bf16 + pow2(119)).to_bits(), 0x7F80);
        assert_eq!(bf16::round(-(max_bf16 + pow2(118))).to_bits(), 0xFF7F);
        // f16: 65504 + 16 is the tie to infinity
        assert_eq!(f16::round(65520.0).to_bits(), 0x7C00);
        assert_eq!(f16::round(65519.99).to_bits(), 0x7BFF);
        assert_eq!(f16::round(pow2(-25)).to_bits(), 0x0000);
        assert_eq!(f16::round(pow2(-25) * 1.0000001).to_bits(), 0x0001);
        assert_eq!(f16::round(-0.0).to_bits(), 0x8000);
        // canonical NaN whatever the payload
        let weird_nan = f64::from_bits(0xFFF0_0000_0000_1234);
        assert_eq!(<f32 as Format>::round(weird_nan).to_bits(), 0x7FC0_0000);
        assert_eq!(bf16::round(weird_nan).to_bits(), 0x7FC0);
        assert_eq!(f16::round(weird_nan).to_bits(), 0x7E00);
    }
}
