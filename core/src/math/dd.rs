//! Double-double arithmetic for the accurate (slow) paths: a value is `hi + lo` with
//! `|lo| <= ulp(hi)/2`, about 106 bits of precision.
//!
//! No fused multiply-add: exact products use Veltkamp/Dekker splitting, so the results are
//! the same bits whether or not the CPU has FMA, and the CUDA mirror (compiled with
//! `--fmad=false`) performs the same operations. Relative error bounds, with u = 2^-53
//! (Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
//! double-word arithmetic", 2017): add 3u^2, mul 7u^2 (Dekker product), div 15u^2.
//! Callers keep operands well inside the range where splitting cannot overflow (|x| < 2^996).

// Named like the operator traits on purpose: these are exact-arithmetic helpers with
// their own semantics (no overflow wrap, explicit rounding), not operator overloads.
#![allow(clippy::should_implement_trait)]

/// A double-double number: the unevaluated sum `hi + lo`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub struct DD {
    pub hi: f64,
    pub lo: f64,
}

/// 2^27 + 1 (0x41A0000002000000): Veltkamp's splitting constant for 53-bit doubles.
const SPLITTER: f64 = f64::from_bits(0x41A0_0000_0200_0000);

/// s + e = a + b exactly (Knuth's TwoSum, any magnitudes).
#[inline(always)]
#[doc(hidden)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// s + e = a + b exactly, requires |a| >= |b| or a = 0 (Dekker's FastTwoSum).
#[inline(always)]
#[doc(hidden)]
pub fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let e = b - (s - a);
    (s, e)
}

/// a = h + l with h holding the top 26 bits (Veltkamp).
#[inline(always)]
#[doc(hidden)]
pub fn split(a: f64) -> (f64, f64) {
    let t = SPLITTER * a;
    let h = t - (t - a);
    (h, a - h)
}

/// p + e = a * b exactly (Dekker's TwoProduct, no FMA).
#[inline(always)]
#[doc(hidden)]
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, e)
}

impl DD {
    pub const fn new(hi: f64, lo: f64) -> DD {
        DD { hi, lo }
    }

    pub const fn from_f64(x: f64) -> DD {
        DD { hi: x, lo: 0.0 }
    }

    /// A double-double constant from the bit patterns of its two parts.
    pub const fn from_bits(hi: u64, lo: u64) -> DD {
        DD {
            hi: f64::from_bits(hi),
            lo: f64::from_bits(lo),
        }
    }

    #[inline(always)]
    pub fn neg(self) -> DD {
        DD::new(-self.hi, -self.lo)
    }

    /// self + other (accurate variant, relative error <= 3u^2).
    #[inline(always)]
    pub fn add(self, other: DD) -> DD {
        let (s, e) = two_sum(self.hi, other.hi);
        let (t, f) = two_sum(self.lo, other.lo);
        let e = e + t;
        let (s, e) = fast_two_sum(s, e);
        let e = e + f;
        let (hi, lo) = fast_two_sum(s, e);
        DD::new(hi, lo)
    }

    #[inline(always)]
    pub fn sub(self, other: DD) -> DD {
        self.add(other.neg())
    }

    /// self + b for a double b (relative error <= 2u^2).
    #[inline(always)]
    pub fn add_f64(self, b: f64) -> DD {
        let (s, e) = two_sum(self.hi, b);
        let e = e + self.lo;
        let (hi, lo) = fast_two_sum(s, e);
        DD::new(hi, lo)
    }

    /// self * other (relative error <= 7u^2).
    #[inline(always)]
    pub fn mul(self, other: DD) -> DD {
        let (p, e) = two_prod(self.hi, other.hi);
        let e = e + (self.hi * other.lo + self.lo * other.hi);
        let (hi, lo) = fast_two_sum(p, e);
        DD::new(hi, lo)
    }

    /// self * b for a double b (relative error <= 3u^2).
    #[inline(always)]
    pub fn mul_f64(self, b: f64) -> DD {
        let (p, e) = two_prod(self.hi, b);
        let e = e + self.lo * b;
        let (hi, lo) = fast_two_sum(p, e);
        DD::new(hi, lo)
    }

    /// self / other (relative error <= 15u^2).
    #[inline(always)]
    pub fn div(self, other: DD) -> DD {
        let q1 = self.hi / other.hi;
        let r = self.sub(other.mul_f64(q1));
        let q2 = r.hi / other.hi;
        let r = r.sub(other.mul_f64(q2));
        let q3 = r.hi / other.hi;
        let (q1, q2) = fast_two_sum(q1, q2);
        DD::new(q1, q2).add_f64(q3)
    }

    /// Multiply by a power of two (exact unless the result leaves the normal range).
    #[inline(always)]
    pub fn scale(self, pow2: f64) -> DD {
        DD::new(self.hi * pow2, self.lo * pow2)
    }
}

/// The value `hi + lo` (with |lo| <= ulp(hi)/2, as every DD operation returns) rounded to
/// odd to 53 bits: `hi` when exact or already odd, else the neighbour of `hi` towards `lo`.
/// Rounding the result once more to a format of at most 51 bits equals rounding `hi + lo`
/// directly (Boldo and Melquiond), so one accurate result serves f32, bf16 and f16.
#[inline(always)]
#[doc(hidden)]
pub fn round_odd(x: DD) -> f64 {
    let DD { hi, lo } = x;
    if lo == 0.0 || !hi.is_finite() || hi.to_bits() & 1 == 1 {
        return hi;
    }
    // hi's last bit is even and the exact value lies strictly between hi and its
    // neighbour towards lo: the odd one of the two is that neighbour.
    let towards_larger_magnitude = (lo > 0.0) == (hi > 0.0);
    let b = hi.to_bits();
    f64::from_bits(if towards_larger_magnitude {
        b + 1
    } else {
        b - 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_prod_is_exact() {
        let a = 1.0 + f64::EPSILON * 3.0;
        let b = 1.0 - f64::EPSILON * 5.0;
        let (p, e) = two_prod(a, b);
        // (1+3e)(1-5e) = 1 - 2e - 15e^2
        assert_eq!(p, 1.0 - 2.0 * f64::EPSILON);
        assert_eq!(e, -15.0 * f64::EPSILON * f64::EPSILON);
    }

    #[test]
    fn round_odd_sticky_bit() {
        let one = 1.0f64;
        assert_eq!(round_odd(DD::new(one, 0.0)), one);
        // exact value slightly above 1: the odd neighbour above
        assert_eq!(round_odd(DD::new(one, 1e-30)).to_bits(), one.to_bits() + 1);
        // exact value slightly below 1: the odd neighbour below
        assert_eq!(round_odd(DD::new(one, -1e-30)).to_bits(), one.to_bits() - 1);
        assert_eq!(
            round_odd(DD::new(-one, -1e-30)).to_bits(),
            (-one).to_bits() + 1
        );
        let odd = f64::from_bits(one.to_bits() + 1);
        assert_eq!(round_odd(DD::new(odd, 1e-30)), odd);
    }

    #[test]
    fn division_recovers_quotient() {
        let a = DD::new(1.0, 0.0);
        let b = DD::new(3.0, 0.0);
        let q = a.div(b);
        let back = q.mul(b);
        assert!((back.hi - 1.0).abs() + back.lo.abs() < 1e-31);
    }
}
