//! Fixed-size unsigned integers for exact decisions: whether an exact value lies above,
//! at or below a rounding midpoint, when the value is a quotient or a square root of sums
//! (the norms' last tier, `crate::norm`). [`LIMBS`] 64-bit limbs (2048 bits), little-endian;
//! every operation is exact or panics on overflow (the callers' bounds keep far below).
//! Integer operations only; the CUDA mirror is `kernels/math/bigint.cuh`.

// Named like the operator traits on purpose: these are exact-arithmetic helpers with
// their own semantics (no overflow wrap, explicit rounding), not operator overloads.
#![allow(clippy::should_implement_trait)]

use std::cmp::Ordering;

/// Limbs of a [`Big`]: 2048 bits.
#[doc(hidden)]
pub const LIMBS: usize = 32;

/// An unsigned integer below 2^(64 LIMBS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct Big {
    pub limbs: [u64; LIMBS],
}

impl Big {
    pub const ZERO: Big = Big { limbs: [0; LIMBS] };

    pub fn from_u128(v: u128) -> Big {
        let mut b = Big::ZERO;
        b.limbs[0] = v as u64;
        b.limbs[1] = (v >> 64) as u64;
        b
    }

    pub fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    /// self * m.
    pub fn mul_u64(&self, m: u64) -> Big {
        let mut out = Big::ZERO;
        let mut carry = 0u128;
        for i in 0..LIMBS {
            let t = self.limbs[i] as u128 * m as u128 + carry;
            out.limbs[i] = t as u64;
            carry = t >> 64;
        }
        assert_eq!(carry, 0, "Big::mul_u64 overflow");
        out
    }

    /// self * other.
    pub fn mul(&self, other: &Big) -> Big {
        let la = self.len();
        let lb = other.len();
        assert!(la + lb <= LIMBS, "Big::mul overflow");
        let mut out = Big::ZERO;
        for i in 0..la {
            let mut carry = 0u128;
            for j in 0..lb {
                let t = self.limbs[i] as u128 * other.limbs[j] as u128
                    + out.limbs[i + j] as u128
                    + carry;
                out.limbs[i + j] = t as u64;
                carry = t >> 64;
            }
            let mut k = i + lb;
            while carry != 0 {
                let t = out.limbs[k] as u128 + carry;
                out.limbs[k] = t as u64;
                carry = t >> 64;
                k += 1;
            }
        }
        out
    }

    /// self + other.
    pub fn add(&self, other: &Big) -> Big {
        let mut out = Big::ZERO;
        let mut carry = 0u128;
        for i in 0..LIMBS {
            let t = self.limbs[i] as u128 + other.limbs[i] as u128 + carry;
            out.limbs[i] = t as u64;
            carry = t >> 64;
        }
        assert_eq!(carry, 0, "Big::add overflow");
        out
    }

    /// self - other, for self >= other.
    pub fn sub(&self, other: &Big) -> Big {
        let mut out = Big::ZERO;
        let mut borrow = 0u64;
        for i in 0..LIMBS {
            let (d1, b1) = self.limbs[i].overflowing_sub(other.limbs[i]);
            let (d2, b2) = d1.overflowing_sub(borrow);
            out.limbs[i] = d2;
            borrow = (b1 | b2) as u64;
        }
        assert_eq!(borrow, 0, "Big::sub underflow");
        out
    }

    /// self * 2^s.
    pub fn shl(&self, s: u32) -> Big {
        let (words, bits) = ((s / 64) as usize, s % 64);
        assert!(
            self.len() + words < LIMBS || self.is_zero(),
            "Big::shl overflow"
        );
        let mut out = Big::ZERO;
        for i in (0..LIMBS).rev() {
            if i < words {
                break;
            }
            let src = i - words;
            let mut v = self.limbs[src] << bits;
            if bits > 0 && src > 0 {
                v |= self.limbs[src - 1] >> (64 - bits);
            }
            out.limbs[i] = v;
        }
        out
    }

    /// The number of limbs up to the highest nonzero one.
    fn len(&self) -> usize {
        (0..LIMBS)
            .rev()
            .find(|&i| self.limbs[i] != 0)
            .map_or(0, |i| i + 1)
    }

    pub fn cmp(&self, other: &Big) -> Ordering {
        for i in (0..LIMBS).rev() {
            match self.limbs[i].cmp(&other.limbs[i]) {
                Ordering::Equal => continue,
                o => return o,
            }
        }
        Ordering::Equal
    }
}

/// A signed [`Big`] (sign and magnitude), for sums whose sign is not known in advance.
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct SBig {
    pub neg: bool,
    pub mag: Big,
}

impl SBig {
    pub fn new(neg: bool, mag: Big) -> SBig {
        SBig {
            neg: neg && !mag.is_zero(),
            mag,
        }
    }

    pub fn add(&self, o: &SBig) -> SBig {
        if self.neg == o.neg {
            return SBig::new(self.neg, self.mag.add(&o.mag));
        }
        match self.mag.cmp(&o.mag) {
            Ordering::Less => SBig::new(o.neg, o.mag.sub(&self.mag)),
            _ => SBig::new(self.neg, self.mag.sub(&o.mag)),
        }
    }

    pub fn mul(&self, o: &SBig) -> SBig {
        SBig::new(self.neg != o.neg, self.mag.mul(&o.mag))
    }

    pub fn is_zero(&self) -> bool {
        self.mag.is_zero()
    }
}

/// A finite f64 as (negative, m, e) with |x| = m 2^e, m < 2^53 an integer.
#[doc(hidden)]
pub fn decompose_f64(x: f64) -> (bool, u64, i32) {
    let b = x.to_bits();
    let neg = b >> 63 == 1;
    let field = ((b >> 52) & 0x7FF) as i32;
    let frac = b & ((1u64 << 52) - 1);
    if field == 0 {
        (neg, frac, -1074)
    } else {
        (neg, frac | (1u64 << 52), field - 1075)
    }
}

/// A dyadic value m 2^e (m signed) as an [`SBig`] scaled by 2^-`base`: requires e >= base
/// unless m = 0.
#[doc(hidden)]
pub fn scaled(neg: bool, m: u128, e: i32, base: i32) -> SBig {
    if m == 0 {
        return SBig::new(false, Big::ZERO);
    }
    assert!(e >= base, "scaled: exponent {e} below the base {base}");
    SBig::new(neg, Big::from_u128(m).shl((e - base) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_against_u128() {
        let mut s = 3u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s
        };
        for _ in 0..10_000 {
            let (a, b) = (next() >> 1, next() >> 1);
            let (ba, bb) = (Big::from_u128(a as u128), Big::from_u128(b as u128));
            assert_eq!(ba.mul(&bb), Big::from_u128(a as u128 * b as u128));
            assert_eq!(ba.add(&bb), Big::from_u128(a as u128 + b as u128));
            assert_eq!(ba.mul_u64(b), Big::from_u128(a as u128 * b as u128));
            let sh = (next() % 60) as u32;
            assert_eq!(ba.shl(sh), Big::from_u128((a as u128) << sh));
            assert_eq!(ba.cmp(&bb), a.cmp(&b));
            if a >= b {
                assert_eq!(ba.sub(&bb), Big::from_u128((a - b) as u128));
            }
            let (sa, sb) = (SBig::new(a % 2 == 0, ba), SBig::new(b % 3 == 0, bb));
            let want = |x: &SBig| {
                if x.neg {
                    -(x.mag.limbs[0] as i128)
                } else {
                    x.mag.limbs[0] as i128
                }
            };
            let sum = sa.add(&sb);
            assert_eq!(
                want(&sum) + ((sum.mag.limbs[1] as i128) << 64) * if sum.neg { -1 } else { 1 },
                want(&sa) + want(&sb)
            );
        }
        // Carries across many limbs.
        let big = Big::from_u128(u128::MAX).shl(1000);
        let one = Big::from_u128(1).shl(1000);
        assert_eq!(big.add(&one).sub(&one), big);
        assert_eq!(big.mul(&Big::from_u128(1 << 64)), big.shl(64));
    }
}
