//! Order-independent sums: a fixed-point accumulator whose result does not depend on the
//! order, the grouping or the number of partial sums, used by softmax and its backward pass.
//!
//! # Scheme
//! Every summand v is first scaled into |v| <= 1 + 2^-40 by a power of two chosen from the
//! whole row (an order-free maximum), then split into two pieces with fixed quanta:
//! * hi = round(v to a multiple of 2^-40) = (v + C_HI) - C_HI, C_HI = 1.5 * 2^12, whose ulp
//!   is 2^-40 (one IEEE addition rounds v to the quantum, ties to even; the subtraction is
//!   exact, Sterbenz);
//! * lo = round(v - hi to a multiple of 2^-80) = ((v - hi) + C_LO) - C_LO, C_LO = 1.5 *
//!   2^-28. v - hi is exact: |v - hi| <= 2^-41 and both are multiples of ulp(v) or of 2^-40.
//!
//! The part of v below 2^-80 (at most 2^-81 per summand) is dropped: that quantization is
//! a function of v alone, so it is deterministic, and from there on everything is exact.
//! The pieces are summed in f64 lanes: a lane of hi pieces holds multiples of 2^-40 of
//! magnitude below 2^13 (at most [`FLUSH_CHUNKS`] + LANES summands of magnitude <= 1 + 2^-40
//! per lane between flushes), a lane of lo pieces multiples of 2^-80 below 2^-28: both need
//! at most 53 bits, so every lane addition is exact. A flush converts each lane to an
//! integer (exact: the value is an integer below 2^53) and adds it to 128-bit totals. Exact
//! integer addition is associative and commutative, so any split of a row into chunks,
//! lanes, threads, CUDA blocks or warps gives the same totals (up to 2^37 summands).
//!
//! The value is (H 2^40 + L) 2^-80 with H, L the hi and lo totals, returned as a
//! double-double built by fixed operations ([`FixedSum::to_dd`]), relative error below
//! 2^-104 when the value is not tiny.
//!
//! The CUDA mirror (`kernels/softmax/row.cuh`) performs the same splits and integer sums.

use super::dd::DD;
use super::round::pow2;

/// 1.5 * 2^12 = 6144 (0x40B8000000000000): ulp 2^-40, rounds |v| <= 2 to a multiple of
/// 2^-40.
#[doc(hidden)]
pub const C_HI: f64 = f64::from_bits(0x40B8_0000_0000_0000);
/// 1.5 * 2^-28 (0x3E38000000000000): ulp 2^-80, rounds |v| <= 2^-30 to a multiple of 2^-80.
#[doc(hidden)]
pub const C_LO: f64 = f64::from_bits(0x3E38_0000_0000_0000);
/// 2^40 (0x4270000000000000): hi lane sums times this are integers.
const TWO_P40: f64 = f64::from_bits(0x4270_0000_0000_0000);
/// 2^80 (0x44F0000000000000): lo lane sums times this are integers.
const TWO_P80: f64 = f64::from_bits(0x44F0_0000_0000_0000);
/// 2^64 (0x43F0000000000000).
const TWO_P64: f64 = f64::from_bits(0x43F0_0000_0000_0000);
/// 2^32 (0x41F0000000000000).
const TWO_P32: f64 = f64::from_bits(0x41F0_0000_0000_0000);

/// f64 lanes of the accumulator: a multiple of every vector width (4 in AVX2, 8 in
/// AVX-512).
#[doc(hidden)]
pub const LANES: usize = 8;
/// Chunks of [`LANES`] summands between flushes: each lane then holds at most 2048 + 8
/// summands of magnitude <= 1 + 2^-40, so |lane| < 2^12 and every lane addition is exact.
#[doc(hidden)]
pub const FLUSH_CHUNKS: usize = 2048;

/// The two pieces of a scaled summand |v| <= 1 + 2^-40 (see the module header).
#[inline(always)]
#[doc(hidden)]
pub fn split(v: f64) -> (f64, f64) {
    let hi = (v + C_HI) - C_HI;
    let lo = ((v - hi) + C_LO) - C_LO;
    (hi, lo)
}

/// An exact sum: `hi` in units of 2^-40 and `lo` in units of 2^-80.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[doc(hidden)]
pub struct FixedSum {
    pub hi: i128,
    pub lo: i128,
}

impl FixedSum {
    /// The exact sum of two partial sums (associative and commutative).
    #[inline(always)]
    pub fn merge(self, other: FixedSum) -> FixedSum {
        FixedSum {
            hi: self.hi + other.hi,
            lo: self.lo + other.lo,
        }
    }

    /// The exact total of one flush period of lanes (every lane an integer multiple of its
    /// quantum below 2^53 quanta, so the conversions are exact).
    #[inline(always)]
    pub fn from_lanes(hi: &[f64; LANES], lo: &[f64; LANES]) -> FixedSum {
        let mut h = 0i64;
        let mut l = 0i64;
        for i in 0..LANES {
            h += (hi[i] * TWO_P40) as i64;
            l += (lo[i] * TWO_P80) as i64;
        }
        FixedSum {
            hi: h as i128,
            lo: l as i128,
        }
    }

    /// The integer N = hi 2^40 + lo (the value is N 2^-80).
    #[inline(always)]
    pub fn units(self) -> i128 {
        (self.hi << 40) + self.lo
    }

    /// The value N 2^-80 times 2^`exp` (exp >= -1000), as a double-double. |N| < 2^117:
    /// |N| = a 2^64 + b1 2^32 + b0 with a < 2^53 and b1, b0 < 2^32, three exact doubles
    /// added in a fixed order (relative error below 2^-104); the scalings by powers of two
    /// are exact unless the result is below 2^-969.
    pub fn to_dd(self, exp: i32) -> DD {
        let n = self.units();
        let neg = n < 0;
        let a = n.unsigned_abs();
        let top = ((a >> 64) as u64) as f64 * TWO_P64;
        let mid = (((a >> 32) as u64) & 0xFFFF_FFFF) as f64 * TWO_P32;
        let low = ((a as u64) & 0xFFFF_FFFF) as f64;
        let v = DD::from_f64(top).add_f64(mid).add_f64(low);
        // 2^-80 2^exp in two steps so that neither factor leaves the normal range.
        let e1 = -80;
        let v = v.scale(pow2(e1)).scale(pow2(exp));
        if neg { v.neg() } else { v }
    }
}

/// The accumulator lanes (see the module header). Feed chunks with [`Lanes::add_chunk`] and
/// odd summands with [`Lanes::add_one`]; [`Lanes::finish`] gives the exact total.
#[doc(hidden)]
pub struct Lanes {
    hi: [f64; LANES],
    lo: [f64; LANES],
    chunks: usize,
    total: FixedSum,
}

#[allow(clippy::new_without_default)] // an accumulator is made by `new` only, like its CUDA mirror
impl Lanes {
    #[inline(always)]
    pub fn new() -> Lanes {
        Lanes {
            hi: [0.0; LANES],
            lo: [0.0; LANES],
            chunks: 0,
            total: FixedSum::default(),
        }
    }

    /// Add LANES scaled summands (each |v| <= 1 + 2^-40).
    #[inline(always)]
    pub fn add_chunk(&mut self, v: &[f64; LANES]) {
        for (l, &v) in v.iter().enumerate() {
            let (h, lo) = split(v);
            self.hi[l] += h;
            self.lo[l] += lo;
        }
        self.chunks += 1;
        if self.chunks == FLUSH_CHUNKS {
            self.flush();
        }
    }

    /// Add one scaled summand (into lane 0; at most LANES - 1 of them between flushes).
    #[inline(always)]
    pub fn add_one(&mut self, v: f64) {
        let (h, lo) = split(v);
        self.hi[0] += h;
        self.lo[0] += lo;
    }

    /// Move the lanes into the integer totals (exact: every lane is an integer multiple of
    /// its quantum below 2^53 quanta).
    #[inline(always)]
    pub fn flush(&mut self) {
        let mut h = 0i64;
        let mut l = 0i64;
        for i in 0..LANES {
            h += (self.hi[i] * TWO_P40) as i64;
            l += (self.lo[i] * TWO_P80) as i64;
            self.hi[i] = 0.0;
            self.lo[i] = 0.0;
        }
        self.total.hi += h as i128;
        self.total.lo += l as i128;
        self.chunks = 0;
    }

    /// The exact sum of everything added.
    #[inline(always)]
    pub fn finish(mut self) -> FixedSum {
        self.flush();
        self.total
    }
}

/// The exact (quantized, see the module header) sum of `v(i) * 2^-scale_exp` for i in
/// 0..n, where every |v(i)| <= 2^scale_exp (1 + 2^-40): the fixed-point total.
#[inline(always)]
#[doc(hidden)]
pub fn sum_scaled(n: usize, scale: f64, v: impl Fn(usize) -> f64) -> FixedSum {
    let mut acc = Lanes::new();
    let full = n / LANES * LANES;
    let mut i = 0;
    while i < full {
        let mut c = [0.0; LANES];
        for (l, c) in c.iter_mut().enumerate() {
            *c = v(i + l) * scale;
        }
        acc.add_chunk(&c);
        i += LANES;
    }
    while i < n {
        acc.add_one(v(i) * scale);
        i += 1;
    }
    acc.finish()
}

/// The binary exponent E with 2^E <= |x| < 2^(E+1) for a finite nonzero normal x; -1022 for
/// zero and subnormals (so that 2^-(E+1) scales every |v| <= |x| into [0, 1]).
#[inline(always)]
#[doc(hidden)]
pub fn exponent_floor(x: f64) -> i32 {
    let e = ((x.to_bits() >> 52) & 0x7FF) as i32;
    let e = if e == 0 { 1 } else { e };
    e - 1023
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(s: &mut u64) -> u64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *s >> 11
    }

    #[test]
    fn order_and_grouping_do_not_matter() {
        let mut s = 7u64;
        let v: Vec<f64> = (0..20_000)
            .map(|_| {
                let m = lcg(&mut s) as f64 / (1u64 << 53) as f64;
                let e = (lcg(&mut s) % 90) as i32;
                let sign = if lcg(&mut s) & 1 == 0 { 1.0 } else { -1.0 };
                sign * m * pow2(-e)
            })
            .collect();
        let whole = sum_scaled(v.len(), 1.0, |i| v[i]);
        // Permuted order.
        let mut p = v.clone();
        for i in (1..p.len()).rev() {
            let j = (lcg(&mut s) as usize) % (i + 1);
            p.swap(i, j);
        }
        assert_eq!(sum_scaled(p.len(), 1.0, |i| p[i]), whole);
        // Split into odd-sized blocks.
        let mut acc = FixedSum::default();
        for c in v.chunks(777) {
            acc = acc.merge(sum_scaled(c.len(), 1.0, |i| c[i]));
        }
        assert_eq!(acc, whole);
        // Close to the f64 sum.
        let f: f64 = v.iter().sum();
        assert!(
            (whole.to_dd(0).hi - f).abs() < 1e-9,
            "{f} {:?}",
            whole.to_dd(0)
        );
    }

    #[test]
    fn exact_for_representable_values() {
        let v = [
            1.0,
            0.5,
            0.25,
            2f64.powi(-70),
            -2f64.powi(-79),
            1.0 - f64::EPSILON,
        ];
        let s = sum_scaled(v.len(), 1.0, |i| v[i]).to_dd(0);
        let want = 2.75 - f64::EPSILON + 2f64.powi(-70) - 2f64.powi(-79);
        assert_eq!(s.hi + s.lo, want);
    }
}
